//! [`Rubric`]: a criterion an answer is judged by, in words.

use serde::{Deserialize, Serialize};

/// A criterion an answer is judged by, in words (ADK's `Rubric`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Rubric {
    /// The rubric's id.
    #[serde(alias = "rubricId")]
    pub rubric_id: String,
    /// What is judged.
    #[serde(alias = "rubricContent")]
    pub rubric_content: RubricContent,
    /// How to read the verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A kind of rubric (`FINAL_RESPONSE_QUALITY`, `TOOL_USE_QUALITY`, ...).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

impl Rubric {
    /// A rubric `rubric_id` saying `property`.
    pub fn new(rubric_id: impl Into<String>, property: impl Into<String>) -> Self {
        Self {
            rubric_id: rubric_id.into(),
            rubric_content: RubricContent {
                text_property: Some(property.into()),
            },
            description: None,
            kind: None,
        }
    }

    /// The property the rubric states, or an empty string.
    pub fn property(&self) -> &str {
        self.rubric_content.text_property.as_deref().unwrap_or("")
    }
}

/// The text of a rubric.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RubricContent {
    /// The property judged, as a sentence.
    #[serde(
        default,
        alias = "textProperty",
        skip_serializing_if = "Option::is_none"
    )]
    pub text_property: Option<String>,
}
