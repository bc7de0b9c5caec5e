//! `per_turn_user_simulator_quality_v1`: whether the simulated user of a scenario case played its
//! part, turn by turn, as ADK scores it.
//!
//! The first message must be the scenario's starting prompt, word for word (1 or 0). A judge
//! decides whether each later message follows the conversation plan (and the persona) given what
//! the agent said; then whether ending the conversation where it ended was right, as if the user
//! had written the stop signal after the last answer. A wrong ending fails the last turn. The
//! score is the share of turns that passed.

use std::fmt::Write as _;
use std::sync::Arc;

use async_trait::async_trait;

use super::judge::{JudgeOptions, samples};
use super::verdict::{majority, read_verdict_under};
use super::{EvalStatus, EvaluationResult, Judge, Metric, MetricInput, PerInvocationResult};
use crate::error::{EvalError, EvalErrorKind};
use crate::eval_set::{ConversationScenario, Invocation};
use crate::simulation::STOP_SIGNAL;

/// The judged metric of a simulated user's turns.
#[derive(Clone)]
pub struct UserSimulatorQuality {
    judge: Arc<dyn Judge>,
}

impl UserSimulatorQuality {
    /// The metric, judged by `judge`.
    pub fn new(judge: impl crate::IntoJudge) -> Self {
        Self {
            judge: judge.into_judge(),
        }
    }
}

impl std::fmt::Debug for UserSimulatorQuality {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserSimulatorQuality")
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl Metric for UserSimulatorQuality {
    async fn evaluate(&self, input: MetricInput<'_>) -> Result<EvaluationResult, EvalError> {
        let scenario = input
            .eval_case
            .conversation_scenario
            .as_ref()
            .ok_or_else(|| {
                EvalError::new(
                    EvalErrorKind::Metric,
                    format!(
                        "`{}` scores simulated users, and case `{}` has no conversation scenario",
                        input.metric_name, input.eval_case.eval_id
                    ),
                )
            })?;
        let options = JudgeOptions::of(input.criterion, input.metric_name)?;
        let stop_signal: String = input
            .criterion
            .option(input.metric_name, "stop_signal")?
            .unwrap_or_else(|| STOP_SIGNAL.to_owned());
        let threshold = input.criterion.threshold;
        let Some(first) = input.actual.first() else {
            return Ok(EvaluationResult::not_evaluated());
        };
        let starts_right = first.user_text().trim() == scenario.starting_prompt.trim();
        let mut results = vec![PerInvocationResult::scored(
            Some(f64::from(u8::from(starts_right))),
            threshold,
        )];
        let (options, stop) = (&options, stop_signal.as_str());
        let judge_turn = move |message: String, before: &[Invocation]| {
            let prompt = prompt(scenario, before, &message, stop);
            async move {
                let answers = samples(self.judge.as_ref(), &prompt, options).await;
                majority(&answers, threshold, read_is_valid)
            }
        };
        for (index, invocation) in input.actual.iter().enumerate().skip(1) {
            results.push(judge_turn(invocation.user_text(), &input.actual[..index]).await);
        }
        let ending = judge_turn(stop_signal.clone(), input.actual).await;
        if ending.eval_status == EvalStatus::Failed
            && let Some(last) = results.last_mut()
        {
            *last = ending;
        }
        let passed: f64 = results
            .iter()
            .filter(|result| result.eval_status == EvalStatus::Passed)
            .filter_map(|result| result.score)
            .sum();
        let overall_score = Some(passed / results.len() as f64);
        Ok(EvaluationResult {
            overall_score,
            overall_eval_status: EvalStatus::of(overall_score, threshold),
            per_invocation_results: results,
            overall_rubric_scores: None,
        })
    }
}

/// The verdict under `"is_valid"`.
fn read_is_valid(answer: &str) -> Option<bool> {
    read_verdict_under(answer, &[("\"is_valid\"", false)])
}

/// The judge's prompt for the user message `message`, written after the turns `before`.
fn prompt(
    scenario: &ConversationScenario,
    before: &[Invocation],
    message: &str,
    stop_signal: &str,
) -> String {
    let mut history = String::new();
    for invocation in before {
        let _ = write!(history, "user: {}\n\n", invocation.user_text());
        let answer = invocation.final_text();
        if !answer.is_empty() {
            let _ = write!(history, "agent: {answer}\n\n");
        }
    }
    let mut persona = String::new();
    if let Some(described) = &scenario.user_persona {
        let _ = write!(
            persona,
            "\nThe user plays this persona: {}\n",
            described.description
        );
        for behavior in &described.behaviors {
            let _ = writeln!(persona, "- {}: {}", behavior.name, behavior.description);
            for rubric in &behavior.violation_rubrics {
                let _ = writeln!(persona, "  - a message breaks it if: {rubric}");
            }
        }
    }
    format!(
        "You check a simulated user that tests an AI agent by following a conversation plan. \
         Decide whether the user's next message is a valid move.\n\
         \n\
         It is valid when it reacts to the agent's last message as the plan says: it answers the \
         agent's questions with what the plan holds (and says so when the plan holds nothing), \
         moves to the next request once the agent has done the current one, changes a request \
         when the plan says to, and points out the agent's mistakes. It is invalid when it \
         invents details the plan does not give, skips ahead before the agent is done, repeats a \
         request the agent already did, or ignores what the agent said.\n\
         \n\
         The message `{stop_signal}` ends the conversation. Ending is valid only when the agent \
         has done everything in the plan, or failed the same request twice, or said it cannot \
         fix a mistake, or handed the user to a human; ending earlier or never ending is \
         invalid.\n\
         {persona}\n\
         Conversation plan:\n{plan}\n\
         \n\
         Conversation so far:\n{history}\
         Next user message: {message}\n\
         \n\
         Reply with one JSON object and nothing else:\n\
         {{\"reasoning\": \"<one or two sentences>\", \"is_valid\": \"valid\" or \"invalid\"}}",
        plan = scenario.conversation_plan,
        message = serde_json::Value::String(message.to_owned()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_is_read_under_is_valid() {
        assert_eq!(
            read_is_valid(r#"{"reasoning": "ok", "is_valid": "valid"}"#),
            Some(true)
        );
        assert_eq!(read_is_valid(r#""is_valid": ["invalid"]"#), Some(false));
        assert_eq!(
            read_is_valid(r#""is_the_agent_response_valid": "valid""#),
            None
        );
    }
}
