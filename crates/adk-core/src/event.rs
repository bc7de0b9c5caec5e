//! [`Event`], the unit of a session's history and of every run's output, and its [`EventActions`].
//!
//! The JSON of both is the persistence and wire format of adk-rs and matches ADK Python's: camelCase,
//! absent fields omitted, the four maps of `actions` and `nodeInfo.path` always written.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::ids::{Clock, IdGen, SystemClock, UuidIdGen};
use crate::state::StateScope;
use crate::{Content, EventId, FunctionCall, FunctionCallId, FunctionResponse, InvocationId};
use crate::{LlmResponse, NodeInfo, PartData, Route};

/// One step of a conversation: a model response, a tool result, a user message or a control signal,
/// with who wrote it and the state and flow changes it carries.
///
/// The fields of the [`LlmResponse`] it records are flattened into the event's JSON, as in ADK.
///
/// ```
/// use adk_core::{Content, Event, InvocationId};
///
/// let event = Event::new(InvocationId::from("e-1"), "weather_agent")
///     .with_content(Content::model("It is sunny"));
/// assert!(event.is_final_response());
/// assert_eq!(event.text().as_deref(), Some("It is sunny"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Event {
    /// The model response this event records (content, partial flag, finish reason, usage, ...).
    #[serde(flatten)]
    pub response: LlmResponse,
    /// The invocation that produced the event.
    pub invocation_id: InvocationId,
    /// `"user"` for user messages, else the name of the agent that produced the event.
    pub author: String,
    /// State, artifact and flow changes the event carries.
    pub actions: EventActions,
    /// The output of the node that made the event (a workflow node's result).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// The node run the event comes from: its path, and whose output the event carries.
    pub node_info: NodeInfo,
    /// The ids of long-running function calls in this event that get no response yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub long_running_tool_ids: Option<Vec<FunctionCallId>>,
    /// The dotted path of agents (`root.child.grandchild`) whose history the event belongs to; events
    /// of parallel branches are not shown to each other.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The conversation the event belongs to when it is kept apart from the rest of the session:
    /// a delegated task's events carry the id of the call that started the task, and an agent
    /// with a scope sees only the events of its scope.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub isolation_scope: Option<Arc<str>>,
    /// The event's own id.
    pub id: EventId,
    /// When the event was made, in seconds since the Unix epoch.
    pub timestamp: f64,
}

impl Event {
    /// An event of `author` in `invocation_id`, with a fresh uuid id and the system time.
    ///
    /// Inside a run, prefer [`InvocationContext::new_event`](crate::InvocationContext::new_event),
    /// which uses the run's id generator and clock and fills in the branch.
    pub fn new(invocation_id: InvocationId, author: impl Into<String>) -> Self {
        Self::with_ids_and_clock(invocation_id, author, &UuidIdGen, &SystemClock)
    }

    /// An event with its id and timestamp taken from `ids` and `clock`.
    pub fn with_ids_and_clock(
        invocation_id: InvocationId,
        author: impl Into<String>,
        ids: &dyn IdGen,
        clock: &dyn Clock,
    ) -> Self {
        Self {
            response: LlmResponse::default(),
            invocation_id,
            author: author.into(),
            actions: EventActions::default(),
            output: None,
            node_info: NodeInfo::default(),
            long_running_tool_ids: None,
            branch: None,
            isolation_scope: None,
            id: ids.event_id(),
            timestamp: clock.now(),
        }
    }

    /// Sets the content.
    pub fn with_content(mut self, content: Content) -> Self {
        self.response.content = Some(content);
        self
    }

    /// Sets the actions.
    pub fn with_actions(mut self, actions: EventActions) -> Self {
        self.actions = actions;
        self
    }

    /// Sets the branch.
    pub fn with_branch(mut self, branch: Option<String>) -> Self {
        self.branch = branch;
        self
    }

    /// Sets the node output.
    pub fn with_output(mut self, output: Value) -> Self {
        self.output = Some(output);
        self
    }

    /// Adds the run's metadata ([`RunConfig::custom_metadata`](crate::RunConfig)) to the event's
    /// own custom metadata; a key the event already has keeps its value.
    ///
    /// ```
    /// use adk_core::{Event, InvocationId};
    /// use serde_json::json;
    ///
    /// let mut event = Event::new(InvocationId::from("e-1"), "agent");
    /// let run = json!({"tenant": "acme", "trace": "run"}).as_object().unwrap().clone();
    /// event.response.custom_metadata = json!({"trace": "event"}).as_object().cloned();
    /// event.add_run_metadata(&run);
    /// assert_eq!(
    ///     event.response.custom_metadata.unwrap(),
    ///     *json!({"tenant": "acme", "trace": "event"}).as_object().unwrap()
    /// );
    /// ```
    pub fn add_run_metadata(&mut self, metadata: &Map<String, Value>) {
        if metadata.is_empty() {
            return;
        }
        let own = self.response.custom_metadata.get_or_insert_with(Map::new);
        for (key, value) in metadata {
            if !own.contains_key(key) {
                own.insert(key.clone(), value.clone());
            }
        }
    }

    /// The content, if any.
    pub fn content(&self) -> Option<&Content> {
        self.response.content.as_ref()
    }

    /// The text of the content's non-thought text parts, if any.
    pub fn text(&self) -> Option<String> {
        self.content()?.text()
    }

    /// Whether this is a streamed chunk, never stored in a session.
    pub fn is_partial(&self) -> bool {
        self.response.is_partial()
    }

    /// The function calls in the content.
    pub fn function_calls(&self) -> impl Iterator<Item = &FunctionCall> {
        self.content().into_iter().flat_map(Content::function_calls)
    }

    /// The function responses in the content.
    pub fn function_responses(&self) -> impl Iterator<Item = &FunctionResponse> {
        self.content()
            .into_iter()
            .flat_map(Content::function_responses)
    }

    /// Whether the content ends with a code execution result (the model will go on from it).
    pub fn has_trailing_code_execution_result(&self) -> bool {
        self.content()
            .and_then(|content| content.parts.last())
            .is_some_and(|part| matches!(part.data, PartData::CodeExecutionResult(_)))
    }

    /// Whether this event is the agent's final answer for the turn, by ADK's rule: a response the
    /// tool asked not to summarise, or one with long-running calls, is final; otherwise an event is
    /// final when it is not partial and holds no function calls or responses and no trailing code
    /// execution result.
    pub fn is_final_response(&self) -> bool {
        if self.actions.skip_summarization == Some(true)
            || self
                .long_running_tool_ids
                .as_ref()
                .is_some_and(|ids| !ids.is_empty())
        {
            return true;
        }
        self.function_calls().next().is_none()
            && self.function_responses().next().is_none()
            && !self.is_partial()
            && !self.has_trailing_code_execution_result()
    }

    /// Removes `temp:` keys from the state delta: they live for one invocation and are never stored.
    pub fn trim_temp_state(&mut self) {
        self.actions
            .state_delta
            .retain(|key, _| StateScope::of(key) != StateScope::Temp);
    }
}

impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EventVisitor)
    }
}

/// Reads an event's own keys directly and hands every other key to [`LlmResponse`], so that the
/// response fields at the event's top level are read without buffering (sessions load thousands of
/// events at a time). Keys may be camelCase or snake_case; absent or null values take defaults.
struct EventVisitor;

impl<'de> Visitor<'de> for EventVisitor {
    type Value = Event;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an event object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Event, A::Error> {
        let mut event = Event {
            response: LlmResponse::default(),
            invocation_id: InvocationId::default(),
            author: String::new(),
            actions: EventActions::default(),
            output: None,
            node_info: NodeInfo::default(),
            long_running_tool_ids: None,
            branch: None,
            isolation_scope: None,
            id: EventId::default(),
            timestamp: 0.0,
        };
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "invocationId" | "invocation_id" => {
                    event.invocation_id = map.next_value::<Option<_>>()?.unwrap_or_default();
                }
                "author" => event.author = map.next_value::<Option<_>>()?.unwrap_or_default(),
                "actions" => event.actions = map.next_value::<Option<_>>()?.unwrap_or_default(),
                "longRunningToolIds" | "long_running_tool_ids" => {
                    event.long_running_tool_ids = map.next_value()?;
                }
                "branch" => event.branch = map.next_value()?,
                "output" => event.output = map.next_value()?,
                "nodeInfo" | "node_info" => {
                    event.node_info = map.next_value::<Option<_>>()?.unwrap_or_default();
                }
                "isolationScope" | "isolation_scope" => event.isolation_scope = map.next_value()?,
                "id" => event.id = map.next_value::<Option<_>>()?.unwrap_or_default(),
                "timestamp" => event.timestamp = map.next_value::<Option<_>>()?.unwrap_or_default(),
                other => {
                    if !event.response.read_field(other, &mut map)? {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
        }
        Ok(event)
    }
}

/// What an event changes besides the conversation: state, artifacts, and the flow of control.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EventActions {
    /// Do not call the model to summarise this function response; it is the final answer.
    #[serde(
        default,
        alias = "skip_summarization",
        skip_serializing_if = "Option::is_none"
    )]
    pub skip_summarization: Option<bool>,
    /// State keys to set (scoped by `app:`, `user:`, `temp:` prefixes).
    #[serde(default, alias = "state_delta")]
    pub state_delta: Map<String, Value>,
    /// Artifacts saved by this event: file name to the new version.
    #[serde(default, alias = "artifact_delta")]
    pub artifact_delta: BTreeMap<String, u64>,
    /// Hand the conversation to the agent of this name.
    #[serde(
        default,
        alias = "transfer_to_agent",
        skip_serializing_if = "Option::is_none"
    )]
    pub transfer_to_agent: Option<String>,
    /// Stop the enclosing loop agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalate: Option<bool>,
    /// Credentials a tool asks the user for, by function-call id.
    #[serde(default, alias = "requested_auth_configs")]
    pub requested_auth_configs: BTreeMap<FunctionCallId, Value>,
    /// Confirmations a tool asks the user for, by function-call id.
    #[serde(default, alias = "requested_tool_confirmations")]
    pub requested_tool_confirmations: BTreeMap<FunctionCallId, ToolConfirmation>,
    /// A summary that replaces a range of older events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compaction: Option<EventCompaction>,
    /// The agent finished its run (a checkpoint for resuming).
    #[serde(
        default,
        alias = "end_of_agent",
        skip_serializing_if = "Option::is_none"
    )]
    pub end_of_agent: Option<bool>,
    /// The agent's progress (a checkpoint for resuming).
    #[serde(
        default,
        alias = "agent_state",
        skip_serializing_if = "Option::is_none"
    )]
    pub agent_state: Option<Value>,
    /// Undo the state and artifact changes made since this invocation began.
    #[serde(
        default,
        alias = "rewind_before_invocation_id",
        skip_serializing_if = "Option::is_none"
    )]
    pub rewind_before_invocation_id: Option<InvocationId>,
    /// The route a workflow node took: the edges of this route leave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<Route>,
}

impl EventActions {
    /// Whether the actions change nothing.
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }

    /// Merges `other` into `self`; where both set a value, `other`'s wins. Used to merge the
    /// responses of parallel function calls into one event.
    pub fn merge(&mut self, other: EventActions) {
        self.state_delta.extend(other.state_delta);
        self.artifact_delta.extend(other.artifact_delta);
        self.requested_auth_configs
            .extend(other.requested_auth_configs);
        self.requested_tool_confirmations
            .extend(other.requested_tool_confirmations);
        let overwrite = |mine: &mut Option<_>, theirs: Option<_>| {
            if theirs.is_some() {
                *mine = theirs;
            }
        };
        overwrite(&mut self.skip_summarization, other.skip_summarization);
        overwrite(&mut self.escalate, other.escalate);
        overwrite(&mut self.end_of_agent, other.end_of_agent);
        if other.transfer_to_agent.is_some() {
            self.transfer_to_agent = other.transfer_to_agent;
        }
        if other.compaction.is_some() {
            self.compaction = other.compaction;
        }
        if other.agent_state.is_some() {
            self.agent_state = other.agent_state;
        }
        if other.rewind_before_invocation_id.is_some() {
            self.rewind_before_invocation_id = other.rewind_before_invocation_id;
        }
        if other.route.is_some() {
            self.route = other.route;
        }
    }
}

/// A tool's request that the user confirm a call, and the user's answer.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolConfirmation {
    /// What to show the user.
    #[serde(default)]
    pub hint: String,
    /// Whether the user confirmed.
    #[serde(default)]
    pub confirmed: bool,
    /// Structured data for the user to fill in or review.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
}

/// A summary of the events between two timestamps, which stands for them in later model requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventCompaction {
    /// The timestamp of the first event summarised.
    #[serde(alias = "start_timestamp")]
    pub start_timestamp: f64,
    /// The timestamp of the last event summarised.
    #[serde(alias = "end_timestamp")]
    pub end_timestamp: f64,
    /// The summary.
    #[serde(alias = "compacted_content")]
    pub compacted_content: Content,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Part, Role};
    use serde_json::json;

    fn event(content: Content) -> Event {
        Event::new(InvocationId::from("e-1"), "agent").with_content(content)
    }

    #[test]
    fn function_calls_and_responses_are_not_final() {
        let call = event(Content::new(
            Role::Model,
            [Part::function_call(FunctionCall::new("f", json!({})))],
        ));
        assert!(!call.is_final_response());
        let response = event(Content::new(
            Role::User,
            [Part::function_response(FunctionResponse::new(
                "f",
                json!({}),
            ))],
        ));
        assert!(!response.is_final_response());
    }

    #[test]
    fn skip_summarization_and_long_running_calls_are_final() {
        let mut response = event(Content::new(
            Role::User,
            [Part::function_response(FunctionResponse::new(
                "f",
                json!({}),
            ))],
        ));
        response.actions.skip_summarization = Some(true);
        assert!(response.is_final_response());

        let mut call = event(Content::new(
            Role::Model,
            [Part::function_call(
                FunctionCall::new("f", json!({})).with_id("c1"),
            )],
        ));
        call.long_running_tool_ids = Some(vec!["c1".into()]);
        assert!(call.is_final_response());
    }

    #[test]
    fn partial_events_are_not_final() {
        let mut chunk = event(Content::model("It is"));
        chunk.response.partial = Some(true);
        assert!(!chunk.is_final_response());
    }

    #[test]
    fn actions_always_write_the_four_maps() {
        assert_eq!(
            serde_json::to_value(EventActions::default()).unwrap(),
            json!({"stateDelta": {}, "artifactDelta": {}, "requestedAuthConfigs": {}, "requestedToolConfirmations": {}})
        );
    }

    #[test]
    fn merge_lets_the_later_value_win() {
        let mut first = EventActions::default();
        first.state_delta.insert("a".into(), json!(1));
        first.state_delta.insert("b".into(), json!(1));
        first.escalate = Some(true);
        let mut second = EventActions::default();
        second.state_delta.insert("b".into(), json!(2));
        second.transfer_to_agent = Some("other".into());
        first.merge(second);
        assert_eq!(
            Value::Object(first.state_delta.clone()),
            json!({"a": 1, "b": 2})
        );
        assert_eq!(first.escalate, Some(true));
        assert_eq!(first.transfer_to_agent.as_deref(), Some("other"));
    }

    #[test]
    fn events_read_snake_case_nulls_and_unknown_keys() {
        let event: Event = serde_json::from_value(json!({
            "invocation_id": "e-1",
            "author": "agent",
            "content": {"parts": [{"text": "hi"}], "role": "model"},
            "turn_complete": true,
            "finish_reason": "STOP",
            "long_running_tool_ids": ["c1"],
            "branch": null,
            "actions": null,
            "nodeInfo": {"path": "agent@1"},
            "id": "x",
            "timestamp": 1.5
        }))
        .unwrap();
        assert_eq!(event.invocation_id, "e-1");
        assert_eq!(event.text().as_deref(), Some("hi"));
        assert_eq!(event.response.turn_complete, Some(true));
        assert_eq!(
            event.response.finish_reason,
            Some(crate::FinishReason::Stop)
        );
        assert_eq!(event.long_running_tool_ids, Some(vec!["c1".into()]));
        assert_eq!(event.actions, EventActions::default());
        assert_eq!(event.node_info.path, "agent@1");
        assert_eq!(event.timestamp, 1.5);
    }

    #[test]
    fn node_fields_round_trip_and_the_path_is_always_written() {
        let plain = Event::new(InvocationId::from("e-1"), "agent");
        let json = serde_json::to_value(&plain).unwrap();
        assert_eq!(json["nodeInfo"], json!({"path": ""}));
        assert!(json.get("output").is_none() && json.get("isolationScope").is_none());

        let mut event = Event::new(InvocationId::from("e-1"), "wf").with_output(json!({"a": 1}));
        event.node_info.path = crate::NodePath::new("wf@1/a@1");
        event.node_info.output_for = Some(vec![event.node_info.path.clone()]);
        event.isolation_scope = Some("t1".into());
        event.actions.route = Some(Route::from("long"));
        let json = serde_json::to_value(&event).unwrap();
        assert_eq!(json["output"], json!({"a": 1}));
        assert_eq!(json["isolationScope"], "t1");
        assert_eq!(json["actions"]["route"], "long");
        assert_eq!(json["nodeInfo"]["outputFor"], json!(["wf@1/a@1"]));
        let read: Event = serde_json::from_value(json).unwrap();
        assert_eq!(read, event);
    }

    #[test]
    fn a_malformed_event_is_an_error_naming_the_problem() {
        let error = serde_json::from_str::<Event>(r#"{"timestamp": "soon"}"#).unwrap_err();
        assert!(error.to_string().contains("invalid type"), "{error}");
    }

    #[test]
    fn temp_state_is_trimmed() {
        let mut event = event(Content::model("x"));
        event
            .actions
            .state_delta
            .insert("temp:scratch".into(), json!(1));
        event
            .actions
            .state_delta
            .insert("user:name".into(), json!("Ada"));
        event.trim_temp_state();
        assert_eq!(
            Value::Object(event.actions.state_delta),
            json!({"user:name": "Ada"})
        );
    }
}
