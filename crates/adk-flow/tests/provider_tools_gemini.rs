//! Gemini's built-in tools through the real Gemini adapter, against a loopback server: the request
//! body carries Gemini's own tool entry and no function declaration, and what the server answers
//! (a recorded answer; a grounded one) reaches the stored events.
//!
//! No recording of a grounded Gemini answer exists in the shared recordings (see their
//! PROVENANCE.md), so the grounded answer is written after the API reference's
//! `GroundingMetadata`; the plain answer is real recorded traffic.

use std::sync::Arc;

use adk_flow::LlmAgent;
use adk_model::Gemini;
use adk_test::{AgentRun, MockResponse, MockServer, load_recording, shared_dir};
use adk_tool::builtin;
use serde_json::json;

fn gemini(server: &MockServer) -> Arc<Gemini> {
    Arc::new(
        Gemini::builder("gemini-2.5-flash")
            .api_key("test-key")
            .base_url(server.base_url())
            .build()
            .expect("the adapter builds"),
    )
}

#[tokio::test]
async fn each_built_in_tool_is_its_own_entry_in_the_request_body() {
    let recording = shared_dir()
        .join("fixtures/recorded/gemini/adk-go__model_gemini__TestModel_Generate_ok.httprr");
    let exchanges = load_recording(&recording).expect("the recording parses");
    for (tool, entry) in [
        (builtin::google_search(), json!({"googleSearch": {}})),
        (builtin::url_context(), json!({"urlContext": {}})),
        (builtin::code_execution(), json!({"codeExecution": {}})),
    ] {
        let server = MockServer::replay(&exchanges).await;
        let agent = LlmAgent::builder("geographer")
            .model(gemini(&server))
            .tool(Arc::new(tool))
            .build()
            .unwrap();
        let run = AgentRun::new(Arc::new(agent), "What is the capital of France? One word.").await;
        assert!(run.error.is_none(), "{:?}", run.error);
        let body = server.requests()[0].json();
        assert_eq!(body["tools"], json!([entry]), "{body}");
        assert!(body.get("toolConfig").is_none(), "{body}");
        assert_eq!(
            run.session.events.last().unwrap().text().as_deref(),
            Some("Paris")
        );
    }
}

#[tokio::test]
async fn grounding_metadata_from_the_wire_is_kept_on_the_stored_event() {
    let grounded = json!({
        "candidates": [{
            "content": {"parts": [{"text": "Paris is the capital of France."}], "role": "model"},
            "finishReason": "STOP",
            "index": 0,
            "groundingMetadata": {
                "webSearchQueries": ["capital of France"],
                "searchEntryPoint": {"renderedContent": "<div>capital of France</div>"},
                "groundingChunks": [{"web": {"uri": "https://example.org/france", "title": "example.org"}}],
                "groundingSupports": [{
                    "segment": {"startIndex": 0, "endIndex": 31, "text": "Paris is the capital of France."},
                    "groundingChunkIndices": [0],
                    "confidenceScores": [0.97]
                }]
            }
        }],
        "usageMetadata": {"promptTokenCount": 11, "candidatesTokenCount": 8, "totalTokenCount": 19},
        "modelVersion": "gemini-2.5-flash"
    });
    let server = MockServer::start([MockResponse::json(200, &grounded)]).await;
    let agent = LlmAgent::builder("geographer")
        .model(gemini(&server))
        .tool(Arc::new(builtin::google_search()))
        .build()
        .unwrap();
    let run = AgentRun::new(Arc::new(agent), "What is the capital of France?").await;
    assert!(run.error.is_none(), "{:?}", run.error);
    let answer = run.session.events.last().unwrap();
    let stored = serde_json::to_value(answer).unwrap();
    assert_eq!(
        stored["groundingMetadata"], grounded["candidates"][0]["groundingMetadata"],
        "{stored}"
    );
}
