//! `contents`: the session history the model sees (ADK's `ContentsRequestProcessor`).
//!
//! Events are kept when they have content, belong to this agent's branch, and are not the flow's
//! own credential or confirmation requests. Other agents' turns are shown as context from the
//! user. Function responses are placed right after the calls they answer (a long-running call's
//! response may arrive many events later), and client-generated call ids are stripped.
//!
//! History grows by appending, so the converted contents of each (agent, branch) are cached for the
//! invocation and each step converts only the events added since the last one: the cost of a step
//! does not grow with the history. The rare reordering of a late response costs one shift.
//!
//! Rewound invocations are left out and a compaction's summary stands in for the events it covers
//! (see `live_events.rs`); a compaction or rewind among the new events rebuilds the cache once.

use std::collections::HashMap;
use std::sync::Arc;

use adk_core::internal::InvocationControl as _;
use adk_core::{Content, Event, FunctionCallId, LlmRequest, Part, PartData, Role, USER_AUTHOR};
use parking_lot::Mutex;
use serde_json::Value;

use super::file_uploads::clean_content;
use crate::IncludeContents;
use crate::client_calls::{REQUEST_CONFIRMATION_FUNCTION, REQUEST_CREDENTIAL_FUNCTION};
use crate::live_events;
use crate::step::Step;

pub(super) fn process(step: &Step, request: &mut LlmRequest) {
    let options = Conversion {
        agent_name: &step.agent.base.name,
        branch: step.ctx.branch(),
        scope: step.ctx.isolation_scope().map(|scope| &**scope),
        node_path: step.ctx.node_path(),
        drop_thoughts: step
            .agent
            .planner
            .as_ref()
            .is_some_and(|planner| planner.removes_thoughts_from_history()),
    };
    request.contents = match step.agent.include_contents {
        IncludeContents::Default => {
            let cache = step.ctx.invocation_data::<HistoryCache>();
            let history = cache.branch(options.agent_name, options.branch);
            let mut history = history.lock();
            step.ctx
                .with_session(|session| history.catch_up(&session.events, &options));
            history.request_contents()
        }
        IncludeContents::None => step
            .ctx
            .with_session(|session| current_turn(&session.events, &options)),
    };
    // A task agent's first turn is the task it was given: the arguments of the call that started
    // it, which lives outside its scope.
    if let Some(scope) = options.scope
        && let Some(task) = step
            .ctx
            .with_session(|session| crate::task::task_input(&session.events, scope))
    {
        Arc::make_mut(&mut request.contents).insert(0, task);
    }
}

/// How events become contents for one agent on one branch.
struct Conversion<'a> {
    agent_name: &'a str,
    branch: Option<&'a str>,
    /// The agent's isolation scope: it sees only the events of its scope.
    scope: Option<&'a str>,
    /// The agent's node path: a user turn given to another node is not this agent's.
    node_path: &'a adk_core::NodePath,
    drop_thoughts: bool,
}

/// An agent's name and its branch.
type BranchKey = (String, Option<String>);

/// The converted history of each (agent, branch) in this invocation.
#[derive(Default)]
pub(crate) struct HistoryCache {
    branches: Mutex<HashMap<BranchKey, Arc<Mutex<BranchHistory>>>>,
}

impl HistoryCache {
    fn branch(&self, agent_name: &str, branch: Option<&str>) -> Arc<Mutex<BranchHistory>> {
        self.branches
            .lock()
            .entry((agent_name.to_owned(), branch.map(str::to_owned)))
            .or_default()
            .clone()
    }
}

/// The contents built so far from a prefix of the session's events.
#[derive(Default)]
struct BranchHistory {
    /// How many session events were converted.
    seen: usize,
    /// The contents in the order the model sees them.
    contents: Arc<Vec<Content>>,
    /// For the contents that hold function calls: the index of the content holding their
    /// responses, once there is one.
    responses_of: HashMap<usize, Option<usize>>,
    /// The content index of each function call, by call id (the newest call, should an id repeat
    /// in a history stored before ids were made unique).
    call_index: HashMap<FunctionCallId, usize>,
    /// Where the response to each answered call is among the parts of a responses' content, by
    /// that content's index and the call id.
    response_part: HashMap<(usize, FunctionCallId), usize>,
    /// The ids of the calls seen so far, which tell a tool's branch (`<tool>@<call id>`) from a
    /// node's.
    call_ids: std::collections::HashSet<FunctionCallId>,
    /// Set when the newest event was a response placed after its call with other contents after
    /// it (a long-running call's late result): the model then sees the history only up to that
    /// response, as ADK shows it, and the contents in between again from the next event on.
    latest_late_response: Option<usize>,
}

impl BranchHistory {
    /// Converts the events added since the last call.
    fn catch_up(&mut self, events: &[Event], options: &Conversion<'_>) {
        if events.len() < self.seen || live_events::reshapes_history(&events[self.seen..]) {
            // The session was replaced by a shorter one, or a compaction or a rewind changed
            // which earlier events count; start over.
            *self = Self::default();
        }
        match live_events::live_events(&events[self.seen..], options.agent_name) {
            Some(live) => live.iter().for_each(|event| self.add(event, options)),
            None => events[self.seen..]
                .iter()
                .for_each(|event| self.add(event, options)),
        }
        self.seen = events.len();
    }

    fn request_contents(&self) -> Arc<Vec<Content>> {
        match self.latest_late_response {
            Some(end) => Arc::new(self.contents[..=end].to_vec()),
            None => self.contents.clone(),
        }
    }

    fn add(&mut self, event: &Event, options: &Conversion<'_>) {
        self.call_ids
            .extend(event.function_calls().filter_map(|call| call.id.clone()));
        if !is_included(event, options, &self.call_ids) {
            return;
        }
        self.latest_late_response = None;
        let foreign = is_foreign(event, options.agent_name);
        if !foreign && event.function_responses().next().is_some() {
            self.add_responses(event);
            return;
        }
        let Some(content) = convert(event, foreign, options) else {
            return;
        };
        let index = self.contents.len();
        if !foreign {
            let mut has_calls = false;
            for id in event.function_calls().filter_map(|call| call.id.clone()) {
                self.call_index.insert(id, index);
                has_calls = true;
            }
            if has_calls {
                self.responses_of.insert(index, None);
            }
        }
        Arc::make_mut(&mut self.contents).push(content);
    }

    /// Places each response after the content holding its call; responses to calls that are not in
    /// this history are dropped, as the model could not relate them to anything.
    fn add_responses(&mut self, event: &Event) {
        let mut by_call: Vec<(usize, Vec<(FunctionCallId, Part)>)> = Vec::new();
        for response in event.function_responses() {
            let Some(id) = response.id.clone() else {
                continue;
            };
            let Some(&call_index) = self.call_index.get(&id) else {
                continue;
            };
            let mut part = Part::function_response(response.clone());
            strip_client_id(&mut part);
            match by_call.iter_mut().find(|(index, _)| *index == call_index) {
                Some((_, parts)) => parts.push((id, part)),
                None => by_call.push((call_index, vec![(id, part)])),
            }
        }
        by_call.sort_by_key(|(index, _)| *index);
        // Later calls first, so that an insertion does not move the calls still to place.
        for (call_index, parts) in by_call.into_iter().rev() {
            self.place_responses(call_index, parts);
        }
    }

    fn place_responses(&mut self, call_index: usize, parts: Vec<(FunctionCallId, Part)>) {
        let response_index = match self.responses_of.get(&call_index).copied().flatten() {
            Some(index) => index,
            None => {
                let position = call_index + 1;
                let contents = Arc::make_mut(&mut self.contents);
                let late = position < contents.len();
                contents.insert(position, Content::new(Role::User, []));
                if late {
                    self.shift_indices_from(position);
                }
                self.responses_of.insert(call_index, Some(position));
                position
            }
        };
        if response_index + 1 < self.contents.len() {
            self.latest_late_response = self.latest_late_response.max(Some(response_index));
        }
        let content = &mut Arc::make_mut(&mut self.contents)[response_index];
        for (id, part) in parts {
            // A newer response to the same call replaces the older one (a tool re-run after the
            // user confirmed it, say).
            let key = (response_index, id);
            match self.response_part.get(&key).copied() {
                Some(index) if index < content.parts.len() => content.parts[index] = part,
                _ => {
                    self.response_part.insert(key, content.parts.len());
                    content.parts.push(part);
                }
            }
        }
    }

    /// Moves every stored index at or after `position` one place on, after an insertion there.
    fn shift_indices_from(&mut self, position: usize) {
        let shift = |index: usize| if index >= position { index + 1 } else { index };
        for index in self.call_index.values_mut() {
            *index = shift(*index);
        }
        self.responses_of = self
            .responses_of
            .drain()
            .map(|(call, response)| (shift(call), response.map(shift)))
            .collect();
        self.response_part = self
            .response_part
            .drain()
            .map(|((content, id), part)| ((shift(content), id), part))
            .collect();
        self.latest_late_response = self.latest_late_response.map(shift);
    }
}

/// The current turn only: from the latest event of the user or of another agent.
fn current_turn(events: &[Event], options: &Conversion<'_>) -> Arc<Vec<Content>> {
    let call_ids = events
        .iter()
        .flat_map(Event::function_calls)
        .filter_map(|call| call.id.clone())
        .collect();
    let start = events
        .iter()
        .rposition(|event| {
            is_included(event, options, &call_ids)
                && (event.author == USER_AUTHOR || is_foreign(event, options.agent_name))
        })
        .unwrap_or(events.len());
    let mut history = BranchHistory::default();
    for event in &events[start..] {
        history.add(event, options);
    }
    history.request_contents()
}

fn is_included(
    event: &Event,
    options: &Conversion<'_>,
    call_ids: &std::collections::HashSet<FunctionCallId>,
) -> bool {
    let Some(content) = event.content() else {
        return false;
    };
    content.role.is_some()
        && content.parts.iter().any(has_data)
        && event.isolation_scope.as_deref() == options.scope
        && !is_other_nodes_input(event, options.node_path)
        && belongs_to_branch(event, options.branch)
        && !is_tool_branch_event(event, options, call_ids)
        && !is_request_for_user(event)
}

/// A user turn given to another node (a single-turn agent's input): only that node sees it.
fn is_other_nodes_input(event: &Event, node_path: &adk_core::NodePath) -> bool {
    event.author == USER_AUTHOR
        && event.function_responses().next().is_none()
        && !event.node_info.path.is_empty()
        && &event.node_info.path != node_path
}

/// An event a tool published on its own branch below the agent's (`<tool>@<call id>`, a
/// single-turn agent's answer, say): the agent gets the tool's response, not its progress.
fn is_tool_branch_event(
    event: &Event,
    options: &Conversion<'_>,
    call_ids: &std::collections::HashSet<FunctionCallId>,
) -> bool {
    let Some(event_branch) = event.branch.as_deref() else {
        return false;
    };
    let below = match options.branch {
        None => event_branch,
        Some(branch) => match event_branch.strip_prefix(branch) {
            Some(rest) if rest.starts_with('.') => &rest[1..],
            _ => return false,
        },
    };
    below.split('.').any(|segment| {
        segment.rsplit_once('@').is_some_and(|(name, id)| {
            name != options.agent_name && call_ids.contains(&FunctionCallId::from(id))
        })
    })
}

fn has_data(part: &Part) -> bool {
    !matches!(&part.data, PartData::Text(text) if text.is_empty() && part.thought_signature.is_none())
}

/// An event belongs to branch `a.b` when it was made on `a.b` or on an ancestor branch (`a`).
fn belongs_to_branch(event: &Event, branch: Option<&str>) -> bool {
    match (branch, event.branch.as_deref()) {
        (None, _) | (_, None) => true,
        (Some(branch), Some(event_branch)) => {
            branch == event_branch
                || branch
                    .strip_prefix(event_branch)
                    .is_some_and(|rest| rest.starts_with('.'))
        }
    }
}

/// The flow's own requests for credentials or confirmations, and the user's answers to them: they
/// are for the client, not for the model.
fn is_request_for_user(event: &Event) -> bool {
    let is_request =
        |name: &str| name == REQUEST_CONFIRMATION_FUNCTION || name == REQUEST_CREDENTIAL_FUNCTION;
    event.function_calls().any(|call| is_request(&call.name))
        || event
            .function_responses()
            .any(|response| is_request(&response.name))
}

fn is_foreign(event: &Event, agent_name: &str) -> bool {
    event.author != agent_name && event.author != USER_AUTHOR
}

fn convert(event: &Event, foreign: bool, options: &Conversion<'_>) -> Option<Content> {
    let source = event.content()?;
    let mut content = if foreign {
        present_as_context(&event.author, source)?
    } else {
        source.clone()
    };
    clean_content(&mut content);
    if options.drop_thoughts {
        content.parts.retain(|part| !part.thought);
    }
    for part in &mut content.parts {
        strip_client_id(part);
    }
    (!content.parts.is_empty()).then_some(content)
}

/// Another agent's turn, told to this agent by the user: `[author] said: ...`, calls and results
/// described in text. Its thoughts are left out.
fn present_as_context(author: &str, content: &Content) -> Option<Content> {
    let mut parts = vec![Part::text("For context:")];
    for part in content.parts.iter().filter(|part| !part.thought) {
        let described = match &part.data {
            PartData::Text(text) if text.trim().is_empty() => continue,
            PartData::Text(text) => Part::text(format!("[{author}] said: {text}")),
            PartData::FunctionCall(call) => Part::text(format!(
                "[{author}] called tool `{}` with parameters: {}",
                call.name,
                Value::Object(call.args.clone())
            )),
            PartData::FunctionResponse(response) => Part::text(format!(
                "[{author}] `{}` tool returned result: {}",
                response.name,
                Value::Object(response.response.clone())
            )),
            _ => part.clone(),
        };
        parts.push(described);
    }
    (parts.len() > 1).then(|| Content::new(Role::User, parts))
}

/// Removes an `adk-` id the client generated: the model never saw it.
fn strip_client_id(part: &mut Part) {
    let id = match &mut part.data {
        PartData::FunctionCall(call) => &mut call.id,
        PartData::FunctionResponse(response) => &mut response.id,
        _ => return,
    };
    if id.as_ref().is_some_and(FunctionCallId::is_client_generated) {
        *id = None;
    }
}

#[cfg(test)]
mod tests {
    use adk_core::{FunctionCall, FunctionResponse, InvocationId};
    use serde_json::json;

    use super::*;

    fn event(author: &str, branch: Option<&str>, content: Content) -> Event {
        Event::new(InvocationId::from("e-1"), author)
            .with_content(content)
            .with_branch(branch.map(str::to_owned))
    }

    fn call(author: &str, id: &str, name: &str) -> Event {
        let call = FunctionCall::new(name, json!({})).with_id(id);
        event(
            author,
            None,
            Content::new(Role::Model, [Part::function_call(call)]),
        )
    }

    fn response(author: &str, id: &str, name: &str, result: &str) -> Event {
        let response = FunctionResponse::new(name, json!(result)).with_id(id);
        event(
            author,
            None,
            Content::new(Role::User, [Part::function_response(response)]),
        )
    }

    /// The contents `agent` on `branch` sees, one line per content.
    fn contents(events: &[Event], agent: &str, branch: Option<&str>) -> String {
        let root = adk_core::NodePath::default();
        let options = Conversion {
            agent_name: agent,
            branch,
            scope: None,
            node_path: &root,
            drop_thoughts: false,
        };
        let mut history = BranchHistory::default();
        history.catch_up(events, &options);
        render(&history.request_contents())
    }

    fn render(contents: &[Content]) -> String {
        contents
            .iter()
            .map(|content| {
                format!(
                    "{}: {}\n",
                    content.role.map_or("-", |role| role.as_str()),
                    serde_json::to_string(&content.parts).unwrap()
                )
            })
            .collect()
    }

    #[test]
    fn other_branches_are_hidden_and_ancestors_shown() {
        let events = [
            event("user", None, Content::user("q")),
            event("a", Some("par.a"), Content::model("from a")),
            event("b", Some("par.b"), Content::model("from b")),
            event("a", Some("par"), Content::model("from the parent branch")),
        ];
        assert_eq!(
            contents(&events, "a", Some("par.a")),
            "user: [{\"text\":\"q\"}]\nmodel: [{\"text\":\"from a\"}]\nmodel: [{\"text\":\"from the parent branch\"}]\n"
        );
        // `par.ab` is not below `par.a`.
        assert!(!belongs_to_branch(&events[1], Some("par.ab")));
    }

    #[test]
    fn other_agents_are_shown_as_context_without_thoughts() {
        let mut thinking = event("expert", None, Content::model("answer"));
        thinking
            .response
            .content
            .as_mut()
            .unwrap()
            .parts
            .insert(0, Part::thought("private reasoning"));
        let rendered = contents(&[thinking], "me", None);
        assert_eq!(
            rendered,
            "user: [{\"text\":\"For context:\"},{\"text\":\"[expert] said: answer\"}]\n"
        );
    }

    #[test]
    fn requests_for_the_user_and_empty_events_are_skipped() {
        let events = [
            event("user", None, Content::user("q")),
            call("me", "adk-r1", "adk_request_confirmation"),
            response("user", "adk-r1", "adk_request_confirmation", "yes"),
            event("me", None, Content::new(Role::Model, [Part::text("")])),
            event("me", None, Content::model("done")),
        ];
        assert_eq!(
            contents(&events, "me", None),
            "user: [{\"text\":\"q\"}]\nmodel: [{\"text\":\"done\"}]\n"
        );
    }

    #[test]
    fn responses_follow_their_calls_and_orphans_are_dropped() {
        let events = [
            call("me", "adk-1", "slow"),
            event("me", None, Content::model("working on it")),
            response("me", "adk-1", "slow", "first"),
            response("me", "unknown", "ghost", "nobody asked"),
            event("me", None, Content::model("next")),
        ];
        assert_eq!(
            contents(&events, "me", None),
            "model: [{\"functionCall\":{\"args\":{},\"name\":\"slow\"}}]\n\
             user: [{\"functionResponse\":{\"name\":\"slow\",\"response\":{\"result\":\"first\"}}}]\n\
             model: [{\"text\":\"working on it\"}]\n\
             model: [{\"text\":\"next\"}]\n"
        );
    }

    #[test]
    fn a_late_response_as_the_newest_event_cuts_the_history_after_it() {
        let events = [
            call("me", "adk-1", "slow"),
            event("me", None, Content::model("working on it")),
            response("me", "adk-1", "slow", "done"),
        ];
        assert_eq!(
            contents(&events, "me", None),
            "model: [{\"functionCall\":{\"args\":{},\"name\":\"slow\"}}]\n\
             user: [{\"functionResponse\":{\"name\":\"slow\",\"response\":{\"result\":\"done\"}}}]\n"
        );
    }

    /// Review finding 1: a provider that reuses call ids across turns (`call_0` each time) made
    /// the second answered call write into a response content that did not hold its part.
    #[test]
    fn review_01_reused_call_ids_in_a_stored_history_do_not_panic() {
        let events = [
            event("user", None, Content::user("one")),
            call("me", "call_0", "f"),
            response("me", "call_0", "f", "first"),
            event("me", None, Content::model("done once")),
            event("user", None, Content::user("two")),
            call("me", "call_0", "f"),
            response("me", "call_0", "f", "second"),
            response("me", "call_0", "f", "second, again"),
            event("me", None, Content::model("done twice")),
        ];
        assert_eq!(
            contents(&events, "me", None),
            "user: [{\"text\":\"one\"}]\n\
             model: [{\"functionCall\":{\"id\":\"call_0\",\"args\":{},\"name\":\"f\"}}]\n\
             user: [{\"functionResponse\":{\"id\":\"call_0\",\"name\":\"f\",\"response\":{\"result\":\"first\"}}}]\n\
             model: [{\"text\":\"done once\"}]\n\
             user: [{\"text\":\"two\"}]\n\
             model: [{\"functionCall\":{\"id\":\"call_0\",\"args\":{},\"name\":\"f\"}}]\n\
             user: [{\"functionResponse\":{\"id\":\"call_0\",\"name\":\"f\",\"response\":{\"result\":\"second, again\"}}}]\n\
             model: [{\"text\":\"done twice\"}]\n"
        );
    }

    /// One part of a generated event.
    #[derive(Debug, Clone)]
    enum GeneratedPart {
        Text(&'static str),
        Call(&'static str, &'static str),
        Response(&'static str, &'static str),
    }

    fn generated_event() -> impl proptest::strategy::Strategy<Value = Event> {
        use proptest::prelude::*;
        // Few ids and names, so that repeats and mismatches are common.
        let ids = prop::sample::select(vec!["", "call_0", "call_0", "call_1", "adk-1"]);
        let names = prop::sample::select(vec!["f", "f", "g", REQUEST_CONFIRMATION_FUNCTION]);
        let part = prop_oneof![
            prop::sample::select(vec!["", "hi", " "]).prop_map(GeneratedPart::Text),
            (ids.clone(), names.clone()).prop_map(|(id, name)| GeneratedPart::Call(id, name)),
            (ids, names).prop_map(|(id, name)| GeneratedPart::Response(id, name)),
        ];
        (
            prop::sample::select(vec!["me", "me", "me", "other", "user"]),
            prop::sample::select(vec![None, None, None, Some("par.me"), Some("par.other")]),
            prop::sample::select(vec![
                None,
                Some(Role::User),
                Some(Role::Model),
                Some(Role::Model),
            ]),
            prop::collection::vec(part, 1..3),
        )
            .prop_map(|(author, branch, role, parts)| {
                let parts = parts.into_iter().map(|part| match part {
                    GeneratedPart::Text(text) => Part::text(text),
                    GeneratedPart::Call(id, name) => {
                        Part::function_call(FunctionCall::new(name, json!({})).with_id(id))
                    }
                    GeneratedPart::Response(id, name) => {
                        Part::function_response(FunctionResponse::new(name, json!("r")).with_id(id))
                    }
                });
                let mut content = Content::new(Role::User, parts);
                content.role = role;
                event(author, branch, content)
            })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// Review finding 1: building the contents cannot panic on any stored history, whatever
        /// ids, authors, branches and orders it holds, and building step by step gives what one
        /// build gives.
        #[test]
        fn review_01_contents_never_panic_on_any_history(
            events in proptest::collection::vec(generated_event(), 0..24),
            cut in 0usize..24,
        ) {
            for (agent, branch) in [("me", None), ("me", Some("par.me")), ("other", Some("par"))] {
                let root = adk_core::NodePath::default();
                let options = Conversion { agent_name: agent, branch, scope: None, node_path: &root, drop_thoughts: false };
                let mut incremental = BranchHistory::default();
                for end in 0..=events.len() {
                    incremental.catch_up(&events[..end], &options);
                }
                let mut fresh = BranchHistory::default();
                fresh.catch_up(&events, &options);
                proptest::prop_assert_eq!(
                    render(&incremental.request_contents()),
                    render(&fresh.request_contents())
                );
                // A session replaced by a shorter one starts the cache over.
                incremental.catch_up(&events[..cut.min(events.len())], &options);
                let _ = current_turn(&events, &options);
            }
        }
    }

    #[test]
    fn the_cache_extends_to_the_same_contents_as_a_fresh_build() {
        let events = [
            event("user", None, Content::user("q")),
            call("me", "adk-1", "slow"),
            event("me", None, Content::model("working")),
            response("me", "adk-1", "slow", "done"),
            call("me", "call-2", "fast"),
            response("me", "call-2", "fast", "ok"),
            event("other", None, Content::model("hi")),
            event("me", None, Content::model("bye")),
        ];
        let root = adk_core::NodePath::default();
        let options = Conversion {
            agent_name: "me",
            branch: None,
            scope: None,
            node_path: &root,
            drop_thoughts: false,
        };
        let mut incremental = BranchHistory::default();
        for end in 1..=events.len() {
            incremental.catch_up(&events[..end], &options);
        }
        assert_eq!(
            render(&incremental.request_contents()),
            contents(&events, "me", None)
        );
        // A model-generated id is kept; a client-generated one is not.
        assert!(render(&incremental.request_contents()).contains("\"id\":\"call-2\""));
        assert!(!render(&incremental.request_contents()).contains("adk-1"));
    }
}
