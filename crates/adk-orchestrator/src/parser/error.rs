//! [`XmlError`]: why an analyzer's answer could not be read as a plan, with dspy-go's codes.

use std::fmt;

use serde_json::{Map, Value};

/// Which step of reading a plan failed, with dspy-go's codes (`ErrNoTasksSection`,
/// `ErrInvalidXML`, `ErrMalformedTasks`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum XmlErrorCode {
    /// The answer holds no `<tasks>` section, not even a bare `<task>` element.
    NoTasksSection,
    /// The tasks section is not XML even after normalisation.
    InvalidXml,
    /// The XML is read, but its tasks are not a usable plan: a required field is missing, a
    /// priority is not a number, two tasks share an id, or there is no task at all.
    MalformedTasks,
}

impl XmlErrorCode {
    /// The code as a short lowercase name, for messages and event metadata.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoTasksSection => "no_tasks_section",
            Self::InvalidXml => "invalid_xml",
            Self::MalformedTasks => "malformed_tasks",
        }
    }
}

impl fmt::Display for XmlErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why an analyzer's answer could not be read as tasks: a [code](XmlErrorCode) to branch on, a
/// message that says what was wrong (and is fed back to the analyzer when it retries), and
/// details such as the task id or the position in the normalised XML.
///
/// ```
/// use adk_orchestrator::{TaskParser as _, XmlErrorCode, XmlTaskParser};
///
/// let error = XmlTaskParser::default().parse("I could not make a plan.").unwrap_err();
/// assert_eq!(error.code, XmlErrorCode::NoTasksSection);
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code}: {message}")]
#[non_exhaustive]
pub struct XmlError {
    /// Which step failed.
    pub code: XmlErrorCode,
    /// What was wrong and what to do about it.
    pub message: String,
    /// Where and on what it failed (`task`, `field`, `position`, ...).
    pub details: Map<String, Value>,
}

impl XmlError {
    /// An error with `code` and `message` and no details.
    pub fn new(code: XmlErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            details: Map::new(),
        }
    }

    /// Adds a detail.
    pub fn with_detail(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_owned(), value.into());
        self
    }
}
