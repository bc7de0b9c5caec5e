//! The Task API (ADK 2.x's agent modes): a chat agent reaches its task and single-turn
//! sub-agents through tools named after them, and the flow runs them between the call and its
//! response.
//!
//! - A **task** agent runs on the call's arguments, on a branch and in an isolation scope of its
//!   own (both named after the call id), with its own path (`coordinator@1/researcher@<call id>`).
//!   A turn that ends in text waits for the user: the invocation ends there, the user's next
//!   message joins the task's scope, and the parent resumes the task before its own next model
//!   call. When the task agent calls `finish_task`, its arguments are the task's output, and the
//!   parent receives them as the call's response (authored by the user, as ADK writes it).
//! - A **single-turn** agent answers the call's request once (seeing only it), on the branch
//!   `<name>@<call id>`; its answer is the call's response, `{"result": <text>}`.
//! - [`run_single_turn`] runs an agent as a single-turn node, which workflows use too.

mod single_turn;
mod tools;

use std::sync::Arc;

use adk_core::internal::InvocationControl as _;
use adk_core::{
    Agent, Content, Event, EventStream, FunctionCall, FunctionCallId, FunctionResponse,
    InvocationContext, Part, Role, USER_AUTHOR,
};
use adk_tool::Tool;
use async_stream::try_stream;
use futures::StreamExt as _;
use serde_json::{Map, Value};

pub use single_turn::{run_single_turn, user_text};
pub use tools::{FINISH_TASK, TASK_COMPLETED};

use crate::{AgentMode, LlmAgent, node_paths};
use tools::{DelegationTool, FinishTask, RESULT_KEY, TASK_FAILED, finish_parameters};

/// The tools the Task API adds to `agent`: `finish_task` for a task agent, then one tool per task
/// or single-turn sub-agent.
pub(crate) fn implicit_tools(agent: &LlmAgent) -> Vec<Arc<dyn Tool>> {
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    if agent.mode == Some(AgentMode::Task) {
        tools.push(Arc::new(FinishTask::new(agent)));
    }
    for sub_agent in &agent.base.sub_agents {
        if let Some((copy, mode)) = delegated(sub_agent) {
            tools.push(Arc::new(DelegationTool::new(copy, mode)));
        }
    }
    tools
}

/// The agent as it runs when delegated to, and how, when `agent` is a task or single-turn
/// `LlmAgent` (the others are reached by transfer).
fn delegated(agent: &Arc<dyn Agent>) -> Option<(Arc<LlmAgent>, AgentMode)> {
    let llm = agent.downcast_ref::<LlmAgent>()?;
    let mode = llm.mode?;
    matches!(mode, AgentMode::Task | AgentMode::SingleTurn)
        .then(|| (Arc::new(llm.in_mode(mode)), mode))
}

/// Whether `agent` is reached by transfer (a chat agent, or an agent that is not an `LlmAgent`).
pub(crate) fn is_transfer_target(agent: &Arc<dyn Agent>) -> bool {
    agent
        .downcast_ref::<LlmAgent>()
        .is_none_or(|llm| matches!(llm.mode, None | Some(AgentMode::Chat)))
}

/// The sub-agent of `agent` that a call of `name` delegates to, with its mode.
pub(crate) fn delegation_target(
    agent: &LlmAgent,
    name: &str,
) -> Option<(Arc<LlmAgent>, AgentMode)> {
    agent
        .base
        .sub_agents
        .iter()
        .filter(|sub_agent| sub_agent.name() == name)
        .find_map(delegated)
}

/// The calls of a model response that delegate to sub-agents, and which calls are left for tools.
#[derive(Default)]
pub(crate) struct Delegations {
    pub(crate) single_turn: Vec<(FunctionCall, Arc<LlmAgent>)>,
    pub(crate) tasks: Vec<(FunctionCall, Arc<LlmAgent>)>,
    /// The ids of the calls tools answer; `None` when every call is a tool's.
    pub(crate) others: Option<std::collections::HashSet<FunctionCallId>>,
}

impl Delegations {
    /// Sorts the calls of `event`, made by `agent`.
    pub(crate) fn of(agent: &LlmAgent, event: &Event) -> Self {
        let mut delegations = Self::default();
        let mut others = std::collections::HashSet::new();
        for call in event.function_calls() {
            match delegation_target(agent, &call.name) {
                Some((target, AgentMode::Task)) => delegations.tasks.push((call.clone(), target)),
                Some((target, _)) => delegations.single_turn.push((call.clone(), target)),
                None => others.extend(call.id.clone()),
            }
        }
        if !delegations.single_turn.is_empty() || !delegations.tasks.is_empty() {
            delegations.others = Some(others);
        }
        delegations
    }
}

/// The event answering a model response's calls: the tools' responses (`answered`) with the
/// single-turn agents' answers added.
pub(crate) fn with_answers(
    step: &crate::step::Step,
    answered: Option<Event>,
    answers: Vec<Part>,
) -> Option<Event> {
    if answers.is_empty() {
        return answered;
    }
    let mut event = answered.unwrap_or_else(|| step.ctx.new_event());
    let content = event
        .response
        .content
        .get_or_insert_with(|| Content::new(Role::User, []));
    content.parts.extend(answers);
    Some(event)
}

/// The context of a delegated run of `target` for `call`, below the run of `ctx`: its own path
/// (numbered for a single-turn agent, named after the call for a task), the branch
/// `<branch>.<name>@<call id>`, and for a task the call id as isolation scope.
fn delegated_context(
    ctx: &InvocationContext,
    target: &Arc<LlmAgent>,
    mode: AgentMode,
    call_id: &FunctionCallId,
) -> InvocationContext {
    let name = target.base.name.as_str();
    let run_id = match mode {
        AgentMode::Task => call_id.as_str().to_owned(),
        _ => node_paths::next_run_id(ctx, ctx.node_path(), name),
    };
    let path = ctx.node_path().child(name, &run_id);
    let branch = match ctx.branch() {
        Some(branch) => format!("{branch}.{name}@{call_id}"),
        None => format!("{name}@{call_id}"),
    };
    let delegated = ctx
        .with_agent(target.clone())
        .with_node_path(path)
        .with_branch(Some(&branch));
    match mode {
        AgentMode::Task => delegated.with_isolation_scope(Some(Arc::from(call_id.as_str()))),
        _ => delegated,
    }
}

/// Runs the single-turn agent `target` for `call` of the agent of `ctx`, yielding its events; its
/// answer goes into `response` as the call's response part.
pub(crate) fn run_single_turn_call(
    ctx: &InvocationContext,
    call: &FunctionCall,
    target: Arc<LlmAgent>,
    response: Arc<parking_lot::Mutex<Option<Part>>>,
) -> EventStream {
    let call = call.clone();
    let ctx = ctx.clone();
    Box::pin(try_stream! {
        let call_id = id_of(&call)?;
        let input = match target.input_schema() {
            Some(_) => user_text(&Value::Object(call.args.clone())),
            None => match call.args.get("request") {
                Some(Value::String(text)) => text.clone(),
                Some(other) => user_text(other),
                None => String::new(),
            },
        };
        let delegated = delegated_context(&ctx, &target, AgentMode::SingleTurn, &call_id);
        let path = delegated.node_path().clone();
        let mut events = run_single_turn(target, delegated, Some(Content::user(input)));
        let mut output = None;
        while let Some(event) = events.next().await {
            let mut event = event?;
            if let Some(value) = event.output.take() {
                event.node_info.output_for = Some(vec![path.clone()]);
                if event.node_info.message_as_output != Some(true) {
                    event.output = Some(value.clone());
                }
                output = Some(value);
            }
            yield event;
        }
        let result = match output {
            Some(Value::Object(map)) => map,
            Some(value) => Map::from_iter([(RESULT_KEY.to_owned(), value)]),
            None => Map::from_iter([(RESULT_KEY.to_owned(), Value::String(String::new()))]),
        };
        let mut answer = FunctionResponse::new(call.name.clone(), Value::Object(result));
        answer.id = Some(call_id);
        *response.lock() = Some(Part::function_response(answer));
    })
}

/// Runs the task agent `target` for `call` of the agent of `ctx`, yielding its events; when it
/// finished, then the call's response (authored by the user); when it waits for the user, ends
/// the invocation instead.
pub(crate) fn run_task_call(
    ctx: &InvocationContext,
    call: &FunctionCall,
    target: Arc<LlmAgent>,
) -> EventStream {
    let call = call.clone();
    let ctx = ctx.clone();
    Box::pin(try_stream! {
        let call_id = id_of(&call)?;
        let (_, wrapper) = finish_parameters(target.output_schema());
        let delegated = delegated_context(&ctx, &target, AgentMode::Task, &call_id);
        let path = delegated.node_path().clone();
        let mut events = target.clone().run(delegated);
        let mut finish_args: Option<Map<String, Value>> = None;
        let mut output: Option<Value> = None;
        while let Some(event) = events.next().await {
            let mut event = event?;
            let finish = (!event.is_partial())
                .then(|| event.function_calls().find(|call| call.name == FINISH_TASK).map(|call| call.args.clone()))
                .flatten();
            if let Some(args) = finish {
                finish_args = Some(args);
                yield event;
                continue;
            }
            if let Some(args) = &finish_args
                && is_terminal_finish(&event)
            {
                let value = match wrapper {
                    Some(key) if args.contains_key(key) => args[key].clone(),
                    _ => Value::Object(args.clone()),
                };
                if let Some(key) = &target.output_key {
                    event.actions.state_delta.insert(key.clone(), value.clone());
                }
                event.output = Some(value.clone());
                event.node_info.output_for = Some(vec![path.clone()]);
                output = Some(value);
                yield event;
                break;
            }
            yield event;
        }
        // Stop the task agent's flow: it would call its model again after `finish_task`.
        drop(events);
        let Some(output) = output else {
            // The task waits for the user's next message.
            ctx.end_invocation();
            return;
        };
        let response = match output {
            Value::Object(map) => map,
            other => Map::from_iter([("output".to_owned(), other)]),
        };
        let mut answer = FunctionResponse::new(call.name.clone(), Value::Object(response));
        answer.id = Some(call_id);
        let mut event = ctx.new_event().with_content(Content::new(Role::User, [Part::function_response(answer)]));
        event.author = USER_AUTHOR.to_owned();
        yield event;
    })
}

/// The id of a delegating call: the task is keyed by it.
fn id_of(call: &FunctionCall) -> adk_core::Result<FunctionCallId> {
    call.id.clone().ok_or_else(|| {
        adk_core::Error::new(
            adk_core::ErrorKind::Agent,
            format!("the call of agent '{}' has no id", call.name),
        )
    })
}

/// Runs the task calls `calls` of the agent of `ctx` one after another, stopping when one waits
/// for the user (the invocation ends then).
pub(crate) fn run_task_calls(
    ctx: &InvocationContext,
    calls: &[(FunctionCall, Arc<LlmAgent>)],
) -> EventStream {
    let ctx = ctx.clone();
    let calls = calls.to_vec();
    Box::pin(try_stream! {
        for (call, target) in calls {
            let mut events = run_task_call(&ctx, &call, target);
            while let Some(event) = events.next().await {
                yield event?;
            }
            if ctx.is_ended() {
                return;
            }
        }
    })
}

/// Whether `event` holds `finish_task`'s answer that ends the task (not a validation error).
fn is_terminal_finish(event: &Event) -> bool {
    event.function_responses().any(|response| {
        response.name == FINISH_TASK
            && matches!(
                response.response.get(RESULT_KEY).and_then(Value::as_str),
                Some(TASK_COMPLETED | TASK_FAILED)
            )
    })
}

/// The task calls `agent` made in the session that have no response yet, oldest first; a task
/// agent looks only in its own scope, as the same agent may run several tasks at once.
fn unresolved_delegations(agent: &LlmAgent, ctx: &InvocationContext) -> Vec<FunctionCall> {
    ctx.with_session(|session| unresolved_in(agent, ctx, session))
}

/// [`unresolved_delegations`] in `session`, read under the context's session lock.
fn unresolved_in(
    agent: &LlmAgent,
    ctx: &InvocationContext,
    session: &adk_core::Session,
) -> Vec<FunctionCall> {
    let live = crate::without_rewound(&session.events);
    let own_scope = ctx.isolation_scope().map(|scope| &**scope);
    let scoped = agent.mode == Some(AgentMode::Task);
    let mut calls: Vec<FunctionCall> = Vec::new();
    let mut answered: std::collections::HashSet<&FunctionCallId> = Default::default();
    for event in &live {
        for response in event.function_responses() {
            if let Some(id) = &response.id {
                answered.insert(id);
            }
        }
        if event.author != agent.base.name
            || (scoped && event.isolation_scope.as_deref() != own_scope)
        {
            continue;
        }
        for call in event.function_calls() {
            if call.id.is_some()
                && matches!(
                    delegation_target(agent, &call.name),
                    Some((_, AgentMode::Task))
                )
            {
                calls.push(call.clone());
            }
        }
    }
    calls.retain(|call| call.id.as_ref().is_some_and(|id| !answered.contains(id)));
    calls
}

/// Before `agent`'s first model call of a run: resumes the tasks it delegated that wait for the
/// user, then runs `flow` unless one of them still waits.
pub(crate) fn resume_then(
    agent: Arc<LlmAgent>,
    ctx: InvocationContext,
    flow: impl FnOnce(InvocationContext) -> EventStream + Send + 'static,
) -> EventStream {
    if agent.base.sub_agents.is_empty() {
        return flow(ctx);
    }
    Box::pin(try_stream! {
        let pending: Vec<(FunctionCall, Arc<LlmAgent>)> = unresolved_delegations(&agent, &ctx)
            .into_iter()
            .filter_map(|call| {
                let (target, _) = delegation_target(&agent, &call.name)?;
                Some((call, target))
            })
            .collect();
        let mut events = run_task_calls(&ctx, &pending);
        while let Some(event) = events.next().await {
            yield event?;
        }
        if ctx.is_ended() {
            return;
        }
        let mut events = flow(ctx);
        while let Some(event) = events.next().await {
            yield event?;
        }
    })
}

/// The isolation scope of the task that waits for the user in `events`, if any: the newest scope
/// whose task has not finished. A user's message belongs to that task's conversation.
pub fn active_task_scope(events: &[Event]) -> Option<Arc<str>> {
    let live = crate::without_rewound(events);
    let finished: std::collections::HashSet<&str> = live
        .iter()
        .filter(|event| is_terminal_finish(event))
        .filter_map(|event| event.isolation_scope.as_deref())
        .collect();
    live.iter()
        .rev()
        .filter(|event| event.actions.compaction.is_none())
        .filter_map(|event| event.isolation_scope.as_ref())
        .find(|scope| !finished.contains(&***scope))
        .cloned()
}

/// The first user turn of a task agent in scope `scope`: the arguments of the call that started
/// the task, as text.
pub(crate) fn task_input(events: &[Event], scope: &str) -> Option<Content> {
    events
        .iter()
        .flat_map(Event::function_calls)
        .find(|call| call.id.as_ref().is_some_and(|id| id.as_str() == scope))
        .filter(|call| !call.args.is_empty())
        .map(|call| Content::user(user_text(&Value::Object(call.args.clone()))))
}
