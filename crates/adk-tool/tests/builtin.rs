//! The built-in tools, on a real invocation context with in-memory services.

mod support;

use adk_core::{Content, ErrorKind, FunctionResponse, LlmRequest, MemoryEntry, Part, Role};
use adk_tool::Tool;
use adk_tool::builtin::{
    LoadArtifactsTool, LoadMemoryTool, PreloadMemoryTool, exit_loop, get_user_choice,
};
use serde_json::{Value, json};
use support::{InMemoryArtifacts, InMemoryMemory, Setup, TestToolContext};

#[tokio::test]
async fn exit_loop_escalates_and_skips_summarization() {
    let tool = exit_loop();
    let ctx = TestToolContext::plain();
    let result = tool.run(ctx.clone(), json!({})).await.unwrap();
    assert_eq!(result, Value::Null);
    let actions = ctx.take_actions();
    assert_eq!(actions.escalate, Some(true));
    assert_eq!(actions.skip_summarization, Some(true));
    insta::assert_json_snapshot!(tool.declaration().unwrap());
}

#[tokio::test]
async fn get_user_choice_is_long_running_and_skips_summarization() {
    let tool = get_user_choice();
    assert!(tool.is_long_running());
    let ctx = TestToolContext::plain();
    let result = tool
        .run(ctx.clone(), json!({"options": ["tea", "coffee"]}))
        .await
        .unwrap();
    assert_eq!(result, Value::Null);
    assert_eq!(ctx.take_actions().skip_summarization, Some(true));
    insta::assert_json_snapshot!(tool.declaration().unwrap());
}

#[tokio::test]
async fn get_user_choice_needs_options() {
    let error = get_user_choice()
        .run(TestToolContext::plain(), json!({}))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert!(
        error
            .message()
            .contains("\"options\" is a required property")
    );
}

fn memories() -> std::sync::Arc<InMemoryMemory> {
    InMemoryMemory::with(vec![
        MemoryEntry::new(Content::user("My cat is called Mimi"))
            .with_origin("user", 1_700_000_000.0),
        MemoryEntry::new(Content::model("Noted, Mimi the cat"))
            .with_origin("assistant", 1_700_000_060.0),
        MemoryEntry::new(Content::user("I live in Lyon")),
    ])
}

#[tokio::test]
async fn load_memory_searches_with_the_query() {
    let memory = memories();
    let ctx = Setup::default().memory(memory.clone()).build();
    let tool = LoadMemoryTool::new();
    let result = tool.run(ctx, json!({"query": "lyon"})).await.unwrap();
    assert_eq!(
        result,
        json!({"memories": [{"content": {"parts": [{"text": "I live in Lyon"}], "role": "user"}}]})
    );
    assert_eq!(*memory.queries.lock(), ["lyon"]);
}

#[tokio::test]
async fn load_memory_declares_itself_and_tells_the_model_about_memory() {
    let tool = LoadMemoryTool::new();
    let mut request = LlmRequest::default();
    tool.process_request(&TestToolContext::plain(), &mut request)
        .await
        .unwrap();
    insta::assert_json_snapshot!(request);
}

#[tokio::test]
async fn load_memory_without_a_memory_service_is_a_readable_error() {
    let error = LoadMemoryTool::new()
        .run(TestToolContext::plain(), json!({"query": "cat"}))
        .await
        .unwrap_err();
    assert_eq!(
        error.message(),
        "config: no memory service is configured; give the runner one to search memory"
    );
}

#[tokio::test]
async fn preload_memory_adds_what_memory_knows_to_the_instruction() {
    let memory = memories();
    let ctx = Setup::default()
        .user_message("what is my cat called?")
        .memory(memory.clone())
        .build();
    let tool = PreloadMemoryTool::new();
    assert!(tool.declaration().is_none());
    let mut request = LlmRequest::default();
    request.append_instructions(["You are helpful."]);
    tool.process_request(&ctx, &mut request).await.unwrap();
    assert_eq!(*memory.queries.lock(), ["what is my cat called?"]);
    assert!(request.tools.is_empty());
    insta::assert_snapshot!(request.system_instruction.unwrap());
}

#[tokio::test]
async fn preload_memory_leaves_the_request_alone_when_nothing_matches() {
    let ctx = Setup::default()
        .user_message("zzz")
        .memory(memories())
        .build();
    let mut request = LlmRequest::default();
    PreloadMemoryTool::new()
        .process_request(&ctx, &mut request)
        .await
        .unwrap();
    assert_eq!(request, LlmRequest::default());
}

#[tokio::test]
async fn load_artifacts_lists_the_artifacts_in_the_instruction() {
    let artifacts = InMemoryArtifacts::with(&[
        (
            "report.txt",
            Part::inline_data("text/plain", b"All good.".to_vec()),
        ),
        (
            "user:photo.png",
            Part::inline_data("image/png", vec![137, 80, 78, 71]),
        ),
    ]);
    let ctx = Setup::default().artifacts(artifacts).build();
    let tool = LoadArtifactsTool::new();
    let mut request = LlmRequest::default();
    tool.process_request(&ctx, &mut request).await.unwrap();
    assert_eq!(request.tools[0].name, "load_artifacts");
    assert!(request.contents.is_empty());
    insta::assert_json_snapshot!(request);
}

#[tokio::test]
async fn load_artifacts_answers_with_the_names_and_the_next_request_carries_them() {
    let artifacts = InMemoryArtifacts::with(&[
        (
            "report.txt",
            Part::inline_data("text/plain", b"All good.".to_vec()),
        ),
        (
            "user:photo.png",
            Part::inline_data("image/png", vec![137, 80, 78, 71]),
        ),
    ]);
    let ctx = Setup::default().artifacts(artifacts).build();
    let tool = LoadArtifactsTool::new();
    let args = json!({"artifact_names": ["report.txt", "photo.png", "missing.txt"]});
    let response = tool.run(ctx.clone(), args).await.unwrap();
    assert_eq!(
        response["artifact_names"],
        json!(["report.txt", "photo.png", "missing.txt"])
    );

    let response = FunctionResponse::new("load_artifacts", response);
    let mut request = LlmRequest::new(
        "model",
        vec![Content::new(
            Role::User,
            [Part::function_response(response)],
        )],
    );
    tool.process_request(&ctx, &mut request).await.unwrap();
    assert_eq!(request.contents.len(), 3);
    let report = &request.contents[1];
    assert_eq!(report.parts[0].as_text(), Some("Artifact report.txt is:"));
    assert_eq!(report.parts[1].as_text(), Some("All good."));
    let photo = &request.contents[2];
    assert_eq!(photo.parts[0].as_text(), Some("Artifact photo.png is:"));
    assert_eq!(
        photo.parts[1].as_inline_data().unwrap().mime_type,
        "image/png"
    );
}
