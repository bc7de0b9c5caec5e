//! Conversation simulation: a model plays the user of an eval case that has a
//! [`ConversationScenario`] instead of a fixed conversation, as ADK's LLM-backed user simulator
//! does.
//!
//! The simulated user's first message is the scenario's starting prompt, as written. Each later
//! one is the simulator model's answer to a prompt holding the plan, the persona if any, and the
//! conversation so far; the conversation ends when that answer holds [`STOP_SIGNAL`], or after
//! [`UserSimulatorConfig::max_allowed_invocations`] user messages.

mod prompt;

use std::sync::Arc;

use adk_core::{Content, Event, GenerateContentConfig, Llm, LlmRequest, StreamingMode};
use futures::TryStreamExt as _;
use serde::{Deserialize, Deserializer};

use crate::error::{EvalError, EvalErrorKind};
use crate::eval_set::ConversationScenario;

/// What the simulated user writes when it considers the conversation over.
pub const STOP_SIGNAL: &str = "</finished>";

/// How the simulated user is run: ADK's `user_simulator_config` of an eval config (its
/// `llm_backed` type, the only one adk-eval has).
///
/// ```
/// use adk_eval::EvalConfig;
///
/// let config = EvalConfig::from_json(
///     r#"{"criteria": {}, "user_simulator_config": {"type": "llm_backed", "max_allowed_invocations": 4}}"#,
///     "test_config.json",
/// )
/// .unwrap();
/// assert_eq!(config.user_simulator_config.unwrap().max_allowed_invocations, 4);
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct UserSimulatorConfig {
    /// The model name sent with the simulator's requests; the simulator model's own when unset.
    #[serde(default)]
    pub model: Option<String>,
    /// Sampling settings of the simulator's requests.
    #[serde(default, alias = "modelConfiguration")]
    pub model_configuration: Option<GenerateContentConfig>,
    /// How many user messages the conversation may have, the starting prompt included; a
    /// negative number means no limit.
    #[serde(default = "default_invocations", alias = "maxAllowedInvocations")]
    pub max_allowed_invocations: i64,
    /// The simulator's own prompt, in place of adk-eval's. It must name `{{ stop_signal }}`,
    /// `{{ conversation_plan }}` and `{{ conversation_history }}` (and `{{ persona }}` for a
    /// scenario with a persona), which are filled in; no other template syntax is read.
    #[serde(
        default,
        alias = "customInstructions",
        deserialize_with = "checked_instructions"
    )]
    pub custom_instructions: Option<String>,
    /// Whether the conversation shown to the simulator holds tool calls and results.
    #[serde(default, alias = "includeFunctionCalls")]
    pub include_function_calls: bool,
    /// The simulator's kind (ADK's `type`).
    #[serde(default, rename = "type")]
    pub kind: UserSimulatorKind,
}

/// What plays the simulated user; ADK's `type` of a user simulator config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum UserSimulatorKind {
    /// A model given the plan and the conversation writes each message (`llm_backed`).
    #[default]
    LlmBacked,
}

impl Default for UserSimulatorConfig {
    fn default() -> Self {
        Self {
            model: None,
            model_configuration: None,
            max_allowed_invocations: default_invocations(),
            custom_instructions: None,
            include_function_calls: false,
            kind: UserSimulatorKind::LlmBacked,
        }
    }
}

impl UserSimulatorConfig {
    /// Limits the conversation to `limit` user messages.
    pub fn with_max_allowed_invocations(mut self, limit: i64) -> Self {
        self.max_allowed_invocations = limit;
        self
    }

    /// Uses `instructions` as the simulator's prompt (see
    /// [`custom_instructions`](Self::custom_instructions)).
    ///
    /// # Errors
    ///
    /// [`EvalErrorKind::Config`] when a required placeholder is
    /// missing.
    pub fn with_custom_instructions(
        mut self,
        instructions: impl Into<String>,
    ) -> Result<Self, EvalError> {
        let instructions = instructions.into();
        prompt::check_custom(&instructions).map_err(EvalError::config)?;
        self.custom_instructions = Some(instructions);
        Ok(self)
    }
}

/// ADK's default limit of user messages in a simulated conversation.
fn default_invocations() -> i64 {
    20
}

fn checked_instructions<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    let instructions = Option::<String>::deserialize(deserializer)?;
    if let Some(text) = &instructions {
        prompt::check_custom(text).map_err(serde::de::Error::custom)?;
    }
    Ok(instructions)
}

/// What the simulated user does next.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum NextMessage {
    /// Sends this message.
    Say(String),
    /// Ends the conversation: the plan is done, or the agent failed it.
    Finished,
    /// Says nothing more: the conversation has as many user messages as allowed.
    TurnLimitReached,
}

/// The simulated user of one eval case.
pub(crate) struct SimulatedUser<'a> {
    llm: &'a Arc<dyn Llm>,
    config: &'a UserSimulatorConfig,
    scenario: &'a ConversationScenario,
    /// How many messages it has sent.
    sent: i64,
}

impl<'a> SimulatedUser<'a> {
    pub(crate) fn new(
        llm: &'a Arc<dyn Llm>,
        config: &'a UserSimulatorConfig,
        scenario: &'a ConversationScenario,
    ) -> Self {
        Self {
            llm,
            config,
            scenario,
            sent: 0,
        }
    }

    /// The next message after the conversation `events` (the user's messages and the agent's
    /// events, in order).
    ///
    /// # Errors
    ///
    /// [`EvalErrorKind::Run`] when the simulator model fails or
    /// answers nothing.
    pub(crate) async fn next(&mut self, events: &[Event]) -> Result<NextMessage, EvalError> {
        let limit = self.config.max_allowed_invocations;
        if limit >= 0 && self.sent >= limit {
            return Ok(NextMessage::TurnLimitReached);
        }
        let text = if self.sent == 0 {
            self.scenario.starting_prompt.clone()
        } else {
            self.ask(events).await?
        };
        self.sent += 1;
        if text.to_lowercase().contains(STOP_SIGNAL) {
            return Ok(NextMessage::Finished);
        }
        Ok(NextMessage::Say(text))
    }

    async fn ask(&self, events: &[Event]) -> Result<String, EvalError> {
        let history = prompt::history(events, self.config.include_function_calls);
        let text = prompt::render(
            self.config.custom_instructions.as_deref(),
            self.scenario,
            &history,
        );
        let mut request = LlmRequest::new(
            self.config.model.clone().unwrap_or_default(),
            vec![Content::user(text)],
        );
        if let Some(config) = &self.config.model_configuration {
            request.config = config.clone();
        }
        let failed = |message: String| EvalError::new(EvalErrorKind::Run, message);
        let responses: Vec<_> = self
            .llm
            .generate(request, StreamingMode::None)
            .try_collect()
            .await
            .map_err(|error| {
                EvalError::with_source(
                    EvalErrorKind::Run,
                    format!(
                        "the user simulator's model {} failed: {error}",
                        self.llm.name()
                    ),
                    error,
                )
            })?;
        if let Some(code) = responses.iter().find_map(|r| r.error_code.as_deref()) {
            return Err(failed(format!(
                "the user simulator's model {} answered with error {code}",
                self.llm.name()
            )));
        }
        let text: String = responses
            .iter()
            .filter_map(|response| response.content.as_ref().and_then(Content::text))
            .collect();
        if text.trim().is_empty() {
            return Err(failed(format!(
                "the user simulator's model {} wrote no message",
                self.llm.name()
            )));
        }
        Ok(text.trim().to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configs_without_a_type_are_llm_backed_and_other_types_are_refused() {
        let config: UserSimulatorConfig =
            serde_json::from_str(r#"{"model": "gemini-2.5-flash"}"#).unwrap();
        assert_eq!(config.kind, UserSimulatorKind::LlmBacked);
        assert_eq!(config.max_allowed_invocations, 20);
        let error = serde_json::from_str::<UserSimulatorConfig>(r#"{"type": "llm_audio"}"#)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("llm_audio") && error.contains("llm_backed"),
            "{error}"
        );
        let error = serde_json::from_str::<UserSimulatorConfig>(
            r#"{"custom_instructions": "Plan: {{ conversation_plan }}"}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("{{ stop_signal }}"), "{error}");
    }
}
