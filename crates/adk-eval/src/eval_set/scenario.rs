//! [`ConversationScenario`]: what a simulated user wants from the agent, in ADK's format, and
//! [`ConversationScenarios`], the file of scenarios ADK's `adk eval_set add_eval_case` reads, with
//! the id ADK gives the eval case it makes of each.

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use crate::error::{EvalError, parse_json};

/// A conversation between a simulated user and the agent: the user's first message, fixed, and a
/// plan the simulated user follows for the rest.
///
/// ```
/// use adk_eval::ConversationScenario;
///
/// let scenario: ConversationScenario = serde_json::from_str(
///     r#"{"starting_prompt": "I need the weather.",
///         "conversation_plan": "Ask for Paris, then for Tokyo, then stop."}"#,
/// )
/// .unwrap();
/// assert_eq!(scenario.starting_prompt, "I need the weather.");
/// assert!(scenario.user_persona.is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ConversationScenario {
    /// The first user message, sent to the agent as it is.
    #[serde(alias = "startingPrompt")]
    pub starting_prompt: String,
    /// What the simulated user wants, in order, and when the conversation is over.
    #[serde(alias = "conversationPlan")]
    pub conversation_plan: String,
    /// Who the simulated user plays.
    #[serde(
        default,
        alias = "userPersona",
        skip_serializing_if = "Option::is_none"
    )]
    pub user_persona: Option<UserPersona>,
}

impl ConversationScenario {
    /// A scenario that opens with `starting_prompt` and follows `conversation_plan`.
    pub fn new(starting_prompt: impl Into<String>, conversation_plan: impl Into<String>) -> Self {
        Self {
            starting_prompt: starting_prompt.into(),
            conversation_plan: conversation_plan.into(),
            user_persona: None,
        }
    }

    /// The simulated user plays `persona`.
    pub fn with_persona(mut self, persona: UserPersona) -> Self {
        self.user_persona = Some(persona);
        self
    }

    /// The id of the eval case made of this scenario, as ADK's `adk eval_set add_eval_case`
    /// names it: the first 8 hex digits of the SHA-256 of the scenario's every field (an absent
    /// persona as `null`) in the JSON Python's `json.dumps(..., sort_keys=True)` writes. The same
    /// scenario gets the same id from adk-rs and ADK Python, so adding a scenarios file twice,
    /// with either, adds each case once.
    ///
    /// ```
    /// use adk_eval::ConversationScenario;
    ///
    /// let scenario = ConversationScenario::new("Hi", "Say hello, then stop.");
    /// let id = scenario.case_id();
    /// assert_eq!(id.len(), 8);
    /// assert_eq!(id, scenario.clone().case_id());
    /// assert_ne!(id, ConversationScenario::new("Hi!", "Say hello, then stop.").case_id());
    /// ```
    pub fn case_id(&self) -> String {
        let digest = Sha256::digest(crate::python_json::dumps_sorted(&self.dump()).as_bytes());
        let mut id = String::with_capacity(8);
        for byte in &digest[..4] {
            let _ = write!(id, "{byte:02x}");
        }
        id
    }

    /// Every field of the scenario, as pydantic's `model_dump` gives it: snake_case keys, absent
    /// values as `null`, each behaviour's lists even when empty.
    fn dump(&self) -> Value {
        let persona = self.user_persona.as_ref().map(|persona| {
            let behaviors: Vec<Value> = persona
                .behaviors
                .iter()
                .map(|behavior| {
                    json!({
                        "name": behavior.name,
                        "description": behavior.description,
                        "behavior_instructions": behavior.behavior_instructions,
                        "violation_rubrics": behavior.violation_rubrics,
                    })
                })
                .collect();
            json!({"id": persona.id, "description": persona.description, "behaviors": behaviors})
        });
        json!({
            "starting_prompt": self.starting_prompt,
            "conversation_plan": self.conversation_plan,
            "user_persona": persona,
        })
    }
}

/// A kind of user the simulated user plays: a description and the ways it behaves.
///
/// ADK Python also accepts the id of one of its bundled personas in place of the object; adk-eval
/// bundles none, so a scenario names its persona in full.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UserPersona {
    /// A readable name for the persona.
    pub id: String,
    /// Who the persona is.
    pub description: String,
    /// How the persona behaves.
    #[serde(default)]
    pub behaviors: Vec<UserBehavior>,
}

impl UserPersona {
    /// A persona `id` described by `description`, with no behaviours yet.
    pub fn new(id: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            description: description.into(),
            behaviors: Vec::new(),
        }
    }

    /// Adds a behaviour.
    pub fn with_behavior(mut self, behavior: UserBehavior) -> Self {
        self.behaviors.push(behavior);
        self
    }
}

/// One behaviour of a persona: what the simulated user is told to do, and what a judge of its
/// messages counts as breaking it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UserBehavior {
    /// The behaviour's name.
    pub name: String,
    /// What the behaviour is.
    pub description: String,
    /// Instructions the simulated user follows.
    #[serde(default, alias = "behaviorInstructions")]
    pub behavior_instructions: Vec<String>,
    /// What a message that breaks the behaviour looks like.
    #[serde(default, alias = "violationRubrics")]
    pub violation_rubrics: Vec<String>,
}

impl UserBehavior {
    /// A behaviour `name` described by `description`, with these instructions.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        instructions: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            behavior_instructions: instructions.into_iter().map(Into::into).collect(),
            violation_rubrics: Vec::new(),
        }
    }
}

/// A file of scenarios (`{"scenarios": [...]}`), as ADK's `adk eval_set add_eval_case
/// --scenarios_file` reads it.
///
/// ```
/// use adk_eval::ConversationScenarios;
///
/// let file = ConversationScenarios::from_json(
///     r#"{"scenarios": [{"starting_prompt": "Hi", "conversation_plan": "Say hello, then stop."}]}"#,
///     "weather.scenarios.json",
/// )
/// .unwrap();
/// assert_eq!(file.scenarios.len(), 1);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ConversationScenarios {
    /// The scenarios, in order.
    #[serde(default)]
    pub scenarios: Vec<ConversationScenario>,
}

impl ConversationScenarios {
    /// Reads scenarios from JSON text; `source` names the text in errors.
    ///
    /// # Errors
    ///
    /// [`EvalErrorKind::Malformed`](crate::EvalErrorKind::Malformed) naming `source` and the JSON
    /// path of the first problem.
    pub fn from_json(text: &str, source: &str) -> Result<Self, EvalError> {
        parse_json(text, source)
    }

    /// Reads the scenarios file at `path`.
    ///
    /// # Errors
    ///
    /// [`EvalErrorKind::Io`](crate::EvalErrorKind::Io) when the file cannot be read, or
    /// [`EvalErrorKind::Malformed`](crate::EvalErrorKind::Malformed) as
    /// [`from_json`](Self::from_json).
    pub async fn load(path: impl AsRef<Path>) -> Result<Self, EvalError> {
        let (text, source) = crate::error::read_source(path.as_ref()).await?;
        Self::from_json(&text, &source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_persona_given_by_id_is_refused_with_the_place() {
        let error = ConversationScenarios::from_json(
            r#"{"scenarios": [{"starting_prompt": "Hi", "conversation_plan": "p", "user_persona": "NOVICE"}]}"#,
            "s.json",
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("s.json") && error.contains("scenarios[0].user_persona"),
            "{error}"
        );
    }

    /// The ids below are what Python's `hashlib.sha256(json.dumps(dump,
    /// sort_keys=True).encode()).hexdigest()[:8]` gives for the scenarios' `model_dump`;
    /// `crates/adk-cli/tests/eval.rs` checks the same against google-adk itself.
    #[test]
    fn case_ids_are_those_adk_python_gives() {
        let plain = ConversationScenario::new(
            "What is the weather in Paris?",
            "Ask for Paris, then Tokyo, then stop.",
        );
        assert_eq!(plain.case_id(), "73ff7a9d");

        let accented = ConversationScenario::new(
            "Quel temps fait-il à Zürich ? ☀",
            "Demande la météo à Zürich, puis à 東京, puis arrête. 🌧",
        )
        .with_persona(
            UserPersona::new("terse", "Dit peu de mots.").with_behavior(UserBehavior {
                violation_rubrics: vec!["Un message de plus de cinq mots.".to_owned()],
                ..UserBehavior::new("short", "Réponses courtes.", ["Cinq mots au plus."])
            }),
        );
        assert_eq!(
            crate::python_json::dumps_sorted(&accented.dump()),
            r#"{"conversation_plan": "Demande la m\u00e9t\u00e9o \u00e0 Z\u00fcrich, puis \u00e0 \u6771\u4eac, puis arr\u00eate. \ud83c\udf27", "starting_prompt": "Quel temps fait-il \u00e0 Z\u00fcrich ? \u2600", "user_persona": {"behaviors": [{"behavior_instructions": ["Cinq mots au plus."], "description": "R\u00e9ponses courtes.", "name": "short", "violation_rubrics": ["Un message de plus de cinq mots."]}], "description": "Dit peu de mots.", "id": "terse"}}"#
        );
        assert_eq!(accented.case_id(), "0402a4f0");
    }

    #[test]
    fn an_unknown_field_of_a_scenario_is_refused_with_its_place() {
        let error = ConversationScenarios::from_json(
            r#"{"scenarios": [{"starting_prompt": "Hi", "conversation_plan": "p", "persona": {}}]}"#,
            "s.json",
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("s.json") && error.contains("unknown field `persona`"),
            "{error}"
        );
    }

    #[test]
    fn camel_case_fields_are_read() {
        let file = ConversationScenarios::from_json(
            r#"{"scenarios": [{"startingPrompt": "Hi", "conversationPlan": "p",
                "userPersona": {"id": "terse", "description": "Says little.",
                  "behaviors": [{"name": "short", "description": "Short replies.",
                    "behaviorInstructions": ["Use five words or fewer."], "violationRubrics": []}]}}]}"#,
            "s.json",
        )
        .unwrap();
        let persona = file.scenarios[0].user_persona.as_ref().unwrap();
        assert_eq!(
            persona.behaviors[0].behavior_instructions,
            ["Use five words or fewer."]
        );
    }
}
