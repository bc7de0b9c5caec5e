//! [`Judge`]: what judged metrics ask for a verdict, and [`LlmJudge`], a judge that is any model.
//!
//! Judged metrics are off unless the evaluator has a judge: without one they report
//! `NOT_EVALUATED`. The options ADK puts under a criterion's `judge_model_options` are read here:
//! `num_samples` (how often each invocation is judged; the majority wins) and `judge_model` (passed
//! on to the judge as the model to use).

use std::sync::Arc;

use adk_core::{Content, GenerateContentConfig, Llm, LlmRequest};
use async_trait::async_trait;
use futures::TryStreamExt as _;
use serde::Deserialize;

use crate::criterion::Criterion;
use crate::error::{EvalError, EvalErrorKind};

/// Answers a rater prompt with the text of a verdict.
///
/// ```
/// use adk_eval::{EvalError, Judge};
///
/// /// A judge that finds every answer valid, for tests of the plumbing.
/// struct Lenient;
///
/// #[async_trait::async_trait]
/// impl Judge for Lenient {
///     async fn judge(&self, _prompt: &str, _model: Option<&str>) -> Result<String, EvalError> {
///         Ok(r#"{"reasoning": "fine", "is_the_agent_response_valid": "valid"}"#.to_owned())
///     }
/// }
/// ```
#[async_trait]
pub trait Judge: Send + Sync {
    /// The judge's answer to `prompt`; `model` is the judge model the criterion names, if any.
    async fn judge(&self, prompt: &str, model: Option<&str>) -> Result<String, EvalError>;
}

/// A judge that asks a model: the prompt as the user's message, the answer's text as the verdict.
///
/// The model named by a criterion's `judge_model` is sent as the request's model, which adapters
/// honour; leave it out of the criterion to use the model's own.
#[derive(Clone)]
pub struct LlmJudge {
    llm: Arc<dyn Llm>,
    config: GenerateContentConfig,
}

impl LlmJudge {
    /// A judge asking `llm`, greedy (temperature 0).
    pub fn new(llm: impl adk_core::IntoLlm) -> Self {
        let llm = llm.into_llm();
        let mut config = GenerateContentConfig::default();
        config.temperature = Some(0.0);
        Self { llm, config }
    }

    /// Sets the sampling settings of the judge's requests.
    pub fn with_config(mut self, config: GenerateContentConfig) -> Self {
        self.config = config;
        self
    }
}

impl std::fmt::Debug for LlmJudge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmJudge")
            .field("llm", &self.llm.name())
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl Judge for LlmJudge {
    async fn judge(&self, prompt: &str, model: Option<&str>) -> Result<String, EvalError> {
        let mut request = LlmRequest::new(model.unwrap_or_default(), vec![Content::user(prompt)]);
        request.config = self.config.clone();
        let responses: Vec<_> = self
            .llm
            .generate(request, adk_core::StreamingMode::None)
            .try_collect()
            .await
            .map_err(|error| {
                EvalError::with_source(
                    EvalErrorKind::Metric,
                    format!("the judge model {} failed: {error}", self.llm.name()),
                    error,
                )
            })?;
        let text = responses
            .iter()
            .rev()
            .find_map(|response| response.content.as_ref().and_then(Content::text))
            .unwrap_or_default();
        Ok(text)
    }
}

/// A criterion's `judge_model_options`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct JudgeOptions {
    /// The model the judge should use.
    #[serde(default, alias = "judgeModel")]
    pub(crate) judge_model: Option<String>,
    /// How often to judge each invocation.
    #[serde(default = "default_samples", alias = "numSamples")]
    pub(crate) num_samples: u32,
}

impl Default for JudgeOptions {
    fn default() -> Self {
        Self {
            judge_model: None,
            num_samples: default_samples(),
        }
    }
}

/// ADK's default: five samples per invocation.
fn default_samples() -> u32 {
    5
}

impl JudgeOptions {
    /// The options of `criterion` for `metric`.
    pub(crate) fn of(criterion: &Criterion, metric: &str) -> Result<Self, EvalError> {
        let options: Self = criterion
            .option(metric, "judge_model_options")?
            .unwrap_or_default();
        if options.num_samples == 0 {
            return Err(EvalError::config(format!(
                "the criterion of `{metric}` asks for 0 judge samples; use 1 or more"
            )));
        }
        Ok(options)
    }
}

/// The judge's answers to `prompt`, `options.num_samples` of them; a sample that failed is `None`.
pub(crate) async fn samples(
    judge: &dyn Judge,
    prompt: &str,
    options: &JudgeOptions,
) -> Vec<Option<String>> {
    let mut answers = Vec::with_capacity(options.num_samples as usize);
    for _ in 0..options.num_samples {
        match judge.judge(prompt, options.judge_model.as_deref()).await {
            Ok(answer) => answers.push(Some(answer)),
            Err(error) => {
                tracing::warn!(%error, "a judge sample failed");
                answers.push(None);
            }
        }
    }
    answers
}

adk_core::__into_shared!(
    /// A [`Judge`] as a builder takes it: the judge itself, an `Arc` of it, or an
    /// `Arc<dyn Judge>`.
    IntoJudge,
    into_judge,
    Judge,
    "`{Self}` is not a judge"
);
