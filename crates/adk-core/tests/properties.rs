//! Property tests of the wire format and the state scopes: events and contents survive a JSON round
//! trip, arbitrary JSON never makes the readers panic, and splitting state by scope loses nothing.
//! Each property runs `CASES` generated cases (`PROPTEST_CASES` is not read: CI runs this many).

use adk_core::{
    Content, Event, EventActions, FunctionCall, FunctionResponse, InvocationId, Part, Role,
    ScopedState, StateScope,
};
use proptest::prelude::*;
use serde_json::{Map, Value};

/// How many cases each property runs.
const CASES: u32 = 2048;

fn config() -> ProptestConfig {
    ProptestConfig::with_cases(CASES)
}

/// The field names of events, contents and parts, for the keys of generated JSON.
const FIELDS: &[&str] = &[
    "id",
    "author",
    "invocationId",
    "timestamp",
    "content",
    "parts",
    "role",
    "text",
    "thought",
    "functionCall",
    "functionResponse",
    "inlineData",
    "fileData",
    "name",
    "args",
    "response",
    "mimeType",
    "data",
    "actions",
    "stateDelta",
    "artifactDelta",
    "partial",
    "branch",
    "longRunningToolIds",
];

/// Any JSON value, with keys that often hit the fields the readers know.
fn any_json() -> impl Strategy<Value = Value> {
    adk_test::any_json(FIELDS)
}

/// A JSON object of small values (tool arguments, state deltas).
fn json_object() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec(("[a-z_:]{1,8}", any_json()), 0..4)
        .prop_map(|entries| entries.into_iter().collect())
}

/// One part of each kind the wire format carries.
fn part() -> impl Strategy<Value = Part> {
    prop_oneof![
        ".{0,40}".prop_map(Part::text),
        ".{0,20}".prop_map(Part::thought),
        (
            "[a-z_]{1,10}",
            json_object(),
            prop::option::of("[a-z0-9-]{1,12}")
        )
            .prop_map(|(name, args, id)| {
                let call = FunctionCall::new(name, Value::Object(args));
                Part::function_call(match id {
                    Some(id) => call.with_id(id),
                    None => call,
                })
            }),
        ("[a-z_]{1,10}", json_object(), "[a-z0-9-]{1,12}").prop_map(|(name, result, id)| {
            Part::function_response(FunctionResponse::new(name, Value::Object(result)).with_id(id))
        }),
        (
            prop::sample::select(vec!["image/png", "application/pdf", "text/plain"]),
            prop::collection::vec(any::<u8>(), 0..64)
        )
            .prop_map(|(mime_type, bytes)| Part::inline_data(mime_type, bytes)),
    ]
}

fn content() -> impl Strategy<Value = Content> {
    (
        prop::sample::select(vec![Role::User, Role::Model]),
        prop::collection::vec(part(), 1..5),
    )
        .prop_map(|(role, parts)| Content::new(role, parts))
}

fn event() -> impl Strategy<Value = Event> {
    (
        "[a-z0-9-]{1,16}",
        "[a-z_]{1,12}",
        prop::option::of(content()),
        json_object(),
        0.0..2.0e9f64,
        prop::option::of("[a-z.]{1,16}"),
        any::<bool>(),
    )
        .prop_map(
            |(invocation, author, content, delta, timestamp, branch, partial)| {
                let mut actions = EventActions::default();
                actions.state_delta = delta;
                let mut event =
                    Event::new(InvocationId::from(invocation), author).with_actions(actions);
                event.response.content = content;
                event.timestamp = timestamp;
                event.branch = branch;
                event.response.partial = partial.then_some(true);
                event
            },
        )
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn contents_round_trip_through_json(content in content()) {
        let json = serde_json::to_string(&content).unwrap();
        let back: Content = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(back, content);
    }

    #[test]
    fn events_round_trip_through_json(event in event()) {
        let json = serde_json::to_string(&event).unwrap();
        let back: Event = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(back, event);
    }

    #[test]
    fn arbitrary_json_never_makes_the_readers_panic(value in any_json()) {
        // Each reader gives a value or an error; a panic fails the property.
        let text = value.to_string();
        let _ = serde_json::from_str::<Event>(&text);
        let _ = serde_json::from_str::<Content>(&text);
        let _ = serde_json::from_str::<Part>(&text);
        let _ = serde_json::from_value::<Event>(value.clone());
        let _ = serde_json::from_value::<Content>(value);
    }

    #[test]
    fn arbitrary_text_never_makes_the_event_reader_panic(text in ".{0,200}") {
        let _ = serde_json::from_str::<Event>(&text);
    }

    #[test]
    fn a_state_key_is_its_scopes_prefix_and_the_rest(key in prop_oneof![
        "(app:|user:|temp:)?[a-z:]{0,10}",
        ".{0,16}",
    ]) {
        let scope = StateScope::of(&key);
        prop_assert_eq!(format!("{}{}", scope.prefix(), scope.strip(&key)), key.clone());
        prop_assert_eq!(StateScope::of(&format!("app:{key}")), StateScope::App);
    }

    #[test]
    fn splitting_state_by_scope_keeps_every_stored_key(
        entries in prop::collection::vec(("(app:|user:|temp:)?[a-z:]{0,8}", any_json()), 0..12)
    ) {
        let state: Map<String, Value> = entries.into_iter().collect();
        let merged = ScopedState::split(&state).merge();
        let stored: Map<String, Value> = state
            .into_iter()
            .filter(|(key, _)| StateScope::of(key) != StateScope::Temp)
            .collect();
        prop_assert_eq!(merged, stored);
    }
}
