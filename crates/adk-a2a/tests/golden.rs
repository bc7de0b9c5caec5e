//! Golden tests of the protocol types against the official Python `a2a-sdk`: our JSON of each
//! type is validated by the SDK's own pydantic model and must come back unchanged, and the JSON
//! the SDK makes of the same kinds of objects must read into our types and write back unchanged.

mod support;

use std::collections::BTreeMap;

use adk_a2a::types::{
    AgentCard, AgentSkill, Artifact, FileContent, FilePart, FileSource, JsonRpcError,
    JsonRpcResponse, Message, MessageSendConfiguration, MessageSendParams, Part, Role,
    SecurityScheme, StreamEvent, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus,
    TaskStatusUpdateEvent, error_codes,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tokio::io::AsyncWriteExt as _;

fn message() -> Message {
    let mut text = Part::text("Hello");
    text.metadata_mut()
        .insert("adk_thought".to_owned(), json!(true));
    let bytes = Part::File(FilePart::new(
        FileContent::new(FileSource::Bytes(vec![0u8, 1, 2].into()))
            .with_mime_type("image/png")
            .with_name("dot.png"),
    ));
    let uri = Part::File(FilePart::new(
        FileContent::new(FileSource::Uri("gs://bucket/report.pdf".to_owned()))
            .with_mime_type("application/pdf"),
    ));
    let mut data = Part::data(Map::from_iter([
        ("id".to_owned(), json!("c1")),
        ("args".to_owned(), json!({"city": "Paris"})),
        ("name".to_owned(), json!("get_weather")),
    ]));
    data.metadata_mut()
        .insert("adk_type".to_owned(), json!("function_call"));
    Message::new(Role::Agent, vec![text, bytes, uri, data])
        .with_message_id("m-1")
        .with_task_id("t-1")
        .with_context_id("c-1")
}

fn ours() -> BTreeMap<&'static str, (&'static str, Value)> {
    let status = TaskStatus::new(TaskState::InputRequired).with_message(message());
    let mut artifact = Artifact::new(vec![Part::text("Sunny")]);
    artifact.name = Some("answer".to_owned());
    let mut task = Task::new("t-1", "c-1", status.clone());
    task.history = Some(vec![message()]);
    task.artifacts = Some(vec![artifact.clone()]);
    let mut card = AgentCard::new(
        "weather",
        "Answers questions about the weather.",
        "http://127.0.0.1:8001/",
    );
    card.skills = vec![AgentSkill::new("weather", "model", "Answers.", ["llm"])];
    card.security_schemes = Some(BTreeMap::from([(
        "bearer".to_owned(),
        SecurityScheme::Http {
            scheme: "bearer".to_owned(),
            bearer_format: Some("JWT".to_owned()),
            description: None,
        },
    )]));
    card.security = Some(vec![BTreeMap::from([("bearer".to_owned(), Vec::new())])]);
    let mut params = MessageSendParams::new(
        Message::new(Role::User, vec![Part::text("Hi")]).with_message_id("m-2"),
    );
    let mut configuration = MessageSendConfiguration::default();
    configuration.blocking = Some(false);
    configuration.history_length = Some(3);
    params.configuration = Some(configuration);
    let error = JsonRpcResponse::failure(
        json!(7),
        JsonRpcError::new(error_codes::METHOD_NOT_FOUND, "Method not found"),
    );
    BTreeMap::from([
        ("message", ("Message", value(&message()))),
        ("task", ("Task", value(&task))),
        (
            "status_update",
            (
                "TaskStatusUpdateEvent",
                value(&TaskStatusUpdateEvent::new("t-1", "c-1", status, true)),
            ),
        ),
        (
            "artifact_update",
            (
                "TaskArtifactUpdateEvent",
                value(&TaskArtifactUpdateEvent::new("t-1", "c-1", artifact)),
            ),
        ),
        ("card", ("AgentCard", value(&card))),
        ("send_params", ("MessageSendParams", value(&params))),
        ("error_response", ("JSONRPCErrorResponse", value(&error))),
    ])
}

fn value<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap()
}

async fn sdk(input: &Value) -> Value {
    let mut command = tokio::process::Command::from(adk_test::python_peers::a2a_peers().command());
    let mut child = command
        .arg(support::peer_script("golden.py"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.to_string().as_bytes()).await.unwrap();
    drop(stdin);
    let output = child.wait_with_output().await.unwrap();
    assert!(
        output.status.success(),
        "golden.py failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Reads `json` as a `T` and writes it back.
fn round_trip<T: Serialize + DeserializeOwned>(json: &Value) -> Value {
    let value: T =
        serde_json::from_value(json.clone()).unwrap_or_else(|error| panic!("{error}: {json}"));
    serde_json::to_value(value).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn our_json_is_what_the_sdk_makes_and_reads() {
    let ours = ours();
    let input: Map<String, Value> = ours
        .iter()
        .map(|(name, (kind, json))| ((*name).to_owned(), json!({"type": kind, "json": json})))
        .collect();
    let answer = sdk(&Value::Object(input)).await;

    for (name, (_, json)) in &ours {
        assert_eq!(
            &answer["checked"][name], json,
            "the SDK's JSON of our {name} differs from ours"
        );
    }

    let native = answer["native"].as_object().unwrap();
    assert_eq!(native.len(), 7);
    for (name, entry) in native {
        let json = &entry["json"];
        let back = match entry["type"].as_str().unwrap() {
            "Message" => round_trip::<Message>(json),
            "Task" => round_trip::<Task>(json),
            "TaskStatusUpdateEvent" => round_trip::<StreamEvent>(json),
            "TaskArtifactUpdateEvent" => round_trip::<StreamEvent>(json),
            "AgentCard" => round_trip::<AgentCard>(json),
            "MessageSendParams" => round_trip::<MessageSendParams>(json),
            "JSONRPCErrorResponse" => round_trip::<JsonRpcResponse>(json),
            other => panic!("no type for {other}"),
        };
        assert_eq!(&back, json, "the SDK's {name} does not survive our types");
    }
}
