//! Planners: how an agent plans before it acts. [`BuiltInPlanner`] uses the model's own thinking;
//! [`PlanReActPlanner`] asks the model to write a plan, act, reason and answer under tags.

use adk_core::{CallbackContext, LlmRequest, Part, PartData, ReadonlyContext, ThinkingConfig};

/// Shapes an agent's requests for planning and reads the plans out of its responses.
pub trait Planner: Send + Sync {
    /// Changes the request for planning; returns an instruction to add, if any.
    fn build_planning_instruction(
        &self,
        ctx: &ReadonlyContext,
        request: &mut LlmRequest,
    ) -> Option<String>;

    /// Rewrites the parts of a final model response; `None` keeps them.
    fn process_planning_response(&self, ctx: &CallbackContext, parts: &[Part])
    -> Option<Vec<Part>>;

    /// Whether earlier thoughts are left out of the history sent to the model.
    fn removes_thoughts_from_history(&self) -> bool {
        false
    }
}

/// Plans with the model's built-in thinking: sets the thinking config of every request.
///
/// ```
/// use adk_core::ThinkingConfig;
/// use adk_flow::BuiltInPlanner;
///
/// let mut thinking = ThinkingConfig::default();
/// thinking.include_thoughts = Some(true);
/// thinking.thinking_budget = Some(1024);
/// let planner = BuiltInPlanner::new(thinking);
/// # let _ = planner;
/// ```
#[derive(Debug, Clone)]
pub struct BuiltInPlanner {
    thinking_config: ThinkingConfig,
}

impl BuiltInPlanner {
    /// A planner that applies `thinking_config` to every request.
    pub fn new(thinking_config: ThinkingConfig) -> Self {
        Self { thinking_config }
    }
}

impl Planner for BuiltInPlanner {
    fn build_planning_instruction(
        &self,
        _ctx: &ReadonlyContext,
        request: &mut LlmRequest,
    ) -> Option<String> {
        request.config.thinking_config = Some(self.thinking_config.clone());
        None
    }

    fn process_planning_response(
        &self,
        _ctx: &CallbackContext,
        _parts: &[Part],
    ) -> Option<Vec<Part>> {
        None
    }
}

const PLANNING_TAG: &str = "/*PLANNING*/";
const REPLANNING_TAG: &str = "/*REPLANNING*/";
const REASONING_TAG: &str = "/*REASONING*/";
const ACTION_TAG: &str = "/*ACTION*/";
const FINAL_ANSWER_TAG: &str = "/*FINAL_ANSWER*/";

/// Plan-ReAct prompting for models without built-in thinking: the model writes a plan, then acts
/// with tools, reasons about what it saw, and finally answers, each under its tag. Everything but
/// the final answer and the tool calls is marked as thought.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlanReActPlanner;

impl Planner for PlanReActPlanner {
    fn build_planning_instruction(
        &self,
        _ctx: &ReadonlyContext,
        _request: &mut LlmRequest,
    ) -> Option<String> {
        Some(format!(
            "Work in steps, marking each with its tag.\n\
             First write a plan under {PLANNING_TAG}: the steps, and the tools each needs.\n\
             Then carry it out: call tools under {ACTION_TAG} and, after each result, say under \
             {REASONING_TAG} what you learned and what comes next. If the plan no longer fits, \
             write a new one under {REPLANNING_TAG}.\n\
             When you can answer, write the answer under {FINAL_ANSWER_TAG}, complete and on its own.\n\
             Use only the tools you are given, and answer from what they returned."
        ))
    }

    fn process_planning_response(
        &self,
        _ctx: &CallbackContext,
        parts: &[Part],
    ) -> Option<Vec<Part>> {
        let mut kept = Vec::with_capacity(parts.len());
        let mut calls_started = false;
        for part in parts {
            match &part.data {
                PartData::FunctionCall(call) => {
                    if !call.name.is_empty() {
                        kept.push(part.clone());
                        calls_started = true;
                    }
                }
                // Only the first run of calls is acted on; what follows it is dropped.
                _ if calls_started => break,
                PartData::Text(text) => split_reasoning(part, text, &mut kept),
                _ => kept.push(part.clone()),
            }
        }
        Some(kept)
    }

    fn removes_thoughts_from_history(&self) -> bool {
        true
    }
}

/// Splits a text part at its last final-answer tag: the reasoning before it becomes a thought, the
/// answer after it stays. A part that starts with a planning tag is all thought.
fn split_reasoning(part: &Part, text: &str, kept: &mut Vec<Part>) {
    if let Some(at) = text.rfind(FINAL_ANSWER_TAG) {
        let (reasoning, answer) = (&text[..at], &text[at + FINAL_ANSWER_TAG.len()..]);
        if !reasoning.is_empty() {
            kept.push(Part::thought(reasoning));
        }
        if !answer.is_empty() {
            kept.push(Part::text(answer));
        }
        return;
    }
    let mut part = part.clone();
    let tags = [PLANNING_TAG, REASONING_TAG, ACTION_TAG, REPLANNING_TAG];
    if tags.iter().any(|tag| text.starts_with(tag)) {
        part.thought = true;
    }
    kept.push(part);
}

adk_core::__into_shared!(
    /// A [`Planner`] as a builder takes it: the planner itself, an `Arc` of it, or an
    /// `Arc<dyn Planner>`.
    IntoPlanner,
    into_planner,
    Planner,
    "`{Self}` is not a planner"
);
