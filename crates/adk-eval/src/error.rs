//! [`EvalError`]: why an eval could not be read, configured or run.

use std::fmt;
use std::path::Path;

use adk_core::BoxError;

/// What kind of failure an [`EvalError`] is, for callers that branch on it.
///
/// New kinds may be added in minor releases, so match with a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EvalErrorKind {
    /// A file could not be read or written.
    Io,
    /// An eval set, a test file or a config file is not valid JSON of its schema; the message
    /// names the file and the JSON path of the first problem.
    Malformed,
    /// The eval is set up wrongly: a metric nobody registered, a criterion a metric cannot use,
    /// a judge metric without a judge, an eval case the evaluator cannot run.
    Config,
    /// The agent could not be run on an eval case (the runner or a service failed).
    Run,
    /// A metric failed while scoring.
    Metric,
}

/// An error of `adk-eval`: a [`kind`](Self::kind), a message that says what was wrong and what to
/// do, and the error underneath, if any.
///
/// ```
/// use adk_eval::{EvalErrorKind, EvalSet};
///
/// let error = EvalSet::from_json(r#"{"eval_set_id": "s", "eval_cases": [{"eval_id": 7}]}"#, "weather.evalset.json")
///     .unwrap_err();
/// assert_eq!(error.kind(), EvalErrorKind::Malformed);
/// assert!(error.to_string().starts_with("weather.evalset.json: at eval_cases[0].eval_id:"), "{error}");
/// ```
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct EvalError {
    kind: EvalErrorKind,
    message: String,
    #[source]
    source: Option<BoxError>,
}

impl EvalError {
    /// An error of `kind` saying `message`.
    pub fn new(kind: EvalErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            source: None,
        }
    }

    /// An error of `kind` saying `message`, caused by `source`.
    pub fn with_source(
        kind: EvalErrorKind,
        message: impl Into<String>,
        source: impl Into<BoxError>,
    ) -> Self {
        Self {
            kind,
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> EvalErrorKind {
        self.kind
    }

    /// A file that could not be read.
    pub(crate) fn read(path: &Path, source: std::io::Error) -> Self {
        Self::with_source(
            EvalErrorKind::Io,
            format!("cannot read {}: {source}", path.display()),
            source,
        )
    }

    /// A file that could not be written.
    pub(crate) fn write(path: &Path, source: std::io::Error) -> Self {
        Self::with_source(
            EvalErrorKind::Io,
            format!("cannot write {}: {source}", path.display()),
            source,
        )
    }

    /// A configuration problem.
    pub(crate) fn config(message: impl Into<String>) -> Self {
        Self::new(EvalErrorKind::Config, message)
    }

    /// A file whose JSON does not fit its schema: `source` names it, `path` is the JSON path of
    /// the problem (empty for the document itself).
    pub(crate) fn malformed(source: &str, path: &JsonPath, message: impl fmt::Display) -> Self {
        let message = if path.is_root() {
            format!("{source}: {message}")
        } else {
            format!("{source}: at {path}: {message}")
        };
        Self::new(EvalErrorKind::Malformed, message)
    }
}

/// The location of a value in a JSON document, written like `eval_cases[3].conversation[0]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct JsonPath(String);

impl JsonPath {
    /// The document itself.
    pub(crate) fn root() -> Self {
        Self::default()
    }

    /// The path serde_path_to_error tracked, in the same notation.
    pub(crate) fn from_tracked(path: &serde_path_to_error::Path) -> Self {
        let mut written = Self::root();
        for segment in path.iter() {
            written = match segment {
                serde_path_to_error::Segment::Seq { index } => written.index(*index),
                serde_path_to_error::Segment::Map { key } => written.key(key),
                serde_path_to_error::Segment::Enum { variant } => written.key(variant),
                serde_path_to_error::Segment::Unknown => written.key("?"),
            };
        }
        written
    }

    /// This path followed by the object key `key`.
    pub(crate) fn key(&self, key: &str) -> Self {
        if self.0.is_empty() {
            Self(key.to_owned())
        } else {
            Self(format!("{}.{key}", self.0))
        }
    }

    /// This path followed by the array index `index`.
    pub(crate) fn index(&self, index: usize) -> Self {
        Self(format!("{}[{index}]", self.0))
    }

    fn is_root(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads `text` as a `T`, naming `source` and the JSON path of the first problem on failure.
pub(crate) fn parse_json<T: serde::de::DeserializeOwned>(
    text: &str,
    source: &str,
) -> Result<T, EvalError> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let path = JsonPath::from_tracked(error.path());
        let inner = error.into_inner();
        match inner.classify() {
            // JSON that does not fit the schema: the path says where, better than a position.
            serde_json::error::Category::Data => {
                EvalError::malformed(source, &path, strip_position(&inner.to_string()))
            }
            // Text that is not JSON at all: the line and column say where.
            _ => EvalError::malformed(source, &JsonPath::root(), inner),
        }
    })?;
    deserializer
        .end()
        .map_err(|error| EvalError::malformed(source, &JsonPath::root(), error))?;
    Ok(value)
}

/// `message` without serde_json's trailing ` at line L column C`.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(cut) => message[..cut].to_owned(),
        None => message.to_owned(),
    }
}

/// The name a file is reported under: its path as given.
pub(crate) fn source_name(path: &Path) -> String {
    path.display().to_string()
}

/// The text of the file at `path` and the name it is reported under.
pub(crate) async fn read_source(path: &Path) -> Result<(String, String), EvalError> {
    let text = tokio::fs::read_to_string(path)
        .await
        .map_err(|error| EvalError::read(path, error))?;
    Ok((text, source_name(path)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_written_with_dots_and_brackets() {
        let path = JsonPath::root()
            .key("eval_cases")
            .index(3)
            .key("conversation")
            .index(0);
        assert_eq!(path.to_string(), "eval_cases[3].conversation[0]");
    }

    #[test]
    fn broken_json_names_line_and_column() {
        let error = parse_json::<serde_json::Value>("{\n  \"a\": ", "x.json").unwrap_err();
        assert!(
            error.to_string().starts_with("x.json: EOF while parsing"),
            "{error}"
        );
        assert!(error.to_string().contains("line 2"), "{error}");
    }
}
