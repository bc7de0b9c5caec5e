//! The quickstart on each hosted provider, chosen by environment variables alone: `adk run
//! quickstart` against a loopback server speaking Anthropic's Messages API, OpenAI's Responses API
//! or Gemini on Vertex AI (with an authorized-user key file whose token endpoint is on loopback
//! too). Each run calls the weather tool, sends its result back in the provider's own form, and
//! prints the answer.

mod support;

use adk_test::MockServer;
use adk_test::model_conformance::{
    Answer, AnthropicWire, Call, GeminiWire, ResponsesWire, SentRequest, Wire,
};
use serde_json::json;
use support::adk_with_env;

const QUESTION: &str = "What is the weather in Paris?\n\n";

/// The model asks for the weather in Paris, then answers with the tool's result.
fn answers(wire: &dyn Wire) -> [adk_test::MockResponse; 2] {
    let call = Answer {
        text: Vec::new(),
        calls: vec![Call {
            id: "call_1".to_owned(),
            name: "get_weather".to_owned(),
            args: json!({"city": "Paris"}),
        }],
        usage: (40, 8),
    };
    let text = Answer {
        text: vec!["It is ".to_owned(), "sunny in Paris.".to_owned()],
        calls: Vec::new(),
        usage: (60, 6),
    };
    [wire.stream(&call), wire.stream(&text)]
}

/// Runs the quickstart with `env` and checks the terminal shows the call, the result and the
/// answer; returns what the two requests to the model said.
async fn quickstart(
    env: &[(&str, &str)],
    wire: &dyn Wire,
    server: &MockServer,
) -> [SentRequest; 2] {
    let (ok, stdout, stderr) =
        adk_with_env(&["run", "quickstart", "--in-memory"], QUESTION, env).await;
    assert!(ok, "stdout:\n{stdout}\nstderr:\n{stderr}");
    for line in [
        "-> weather_agent calls get_weather({\"city\":\"Paris\"})",
        "<- get_weather: {\"city\":\"Paris\",\"sky\":\"sunny\",\"temperature\":\"21 °C\"}",
        "weather_agent> It is sunny in Paris.",
    ] {
        assert!(
            stdout.contains(line),
            "no `{line}` in:\n{stdout}\nstderr:\n{stderr}"
        );
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "two model calls");
    let sent = [
        wire.request(&requests[0].json()),
        wire.request(&requests[1].json()),
    ];
    assert_eq!(sent[0].tools, ["get_weather"]);
    assert!(sent[0].results.is_empty());
    assert_eq!(
        sent[1].results.len(),
        1,
        "the second call carries the tool's result"
    );
    assert!(
        sent[1].results[0].1.contains("sunny"),
        "{:?}",
        sent[1].results
    );
    sent
}

#[tokio::test]
async fn the_quickstart_runs_on_claude_with_anthropic_variables() {
    let wire = AnthropicWire;
    let server = MockServer::start(answers(&wire)).await;
    let base_url = format!("{}/v1", server.base_url());
    let sent = quickstart(
        &[
            ("ANTHROPIC_API_KEY", "test-key"),
            ("ANTHROPIC_BASE_URL", &base_url),
        ],
        &wire,
        &server,
    )
    .await;
    assert_eq!(sent[1].results[0].0, "call_1");
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some("test-key"));
    assert_eq!(request.json()["model"], "claude-sonnet-4-5");
}

#[tokio::test]
async fn the_quickstart_runs_on_openai_responses_with_openai_variables() {
    let wire = ResponsesWire;
    let server = MockServer::start(answers(&wire)).await;
    let base_url = format!("{}/v1", server.base_url());
    let sent = quickstart(
        &[
            ("OPENAI_API_KEY", "test-key"),
            ("OPENAI_BASE_URL", &base_url),
            ("ADK_MODEL", "openai/responses/gpt-5-mini"),
        ],
        &wire,
        &server,
    )
    .await;
    assert_eq!(sent[1].results[0].0, "call_1");
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/responses");
    assert_eq!(request.header("authorization"), Some("Bearer test-key"));
    assert_eq!(request.json()["model"], "gpt-5-mini");
}

#[tokio::test]
async fn the_quickstart_runs_on_vertex_ai_with_google_cloud_variables() {
    let tokens = MockServer::start([adk_test::MockResponse::json(
        200,
        &json!({"access_token": "ya29.quickstart", "expires_in": 3600, "token_type": "Bearer"}),
    )])
    .await;
    let key = tempfile::NamedTempFile::new().unwrap();
    let credentials = json!({
        "type": "authorized_user", "client_id": "id", "client_secret": "secret",
        "refresh_token": "refresh", "token_uri": format!("{}/token", tokens.base_url()),
    });
    std::fs::write(key.path(), credentials.to_string()).unwrap();
    let wire = GeminiWire;
    let server = MockServer::start(answers(&wire)).await;
    let base_url = server.base_url();
    quickstart(
        &[
            ("GOOGLE_GENAI_USE_VERTEXAI", "true"),
            ("GOOGLE_CLOUD_PROJECT", "my-project"),
            ("GOOGLE_CLOUD_LOCATION", "us-central1"),
            (
                "GOOGLE_APPLICATION_CREDENTIALS",
                key.path().to_str().unwrap(),
            ),
            ("GOOGLE_VERTEX_BASE_URL", &base_url),
        ],
        &wire,
        &server,
    )
    .await;
    for request in server.requests() {
        assert_eq!(
            request.path,
            "/v1/projects/my-project/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent"
        );
        assert_eq!(
            request.header("authorization"),
            Some("Bearer ya29.quickstart")
        );
    }
    // One token serves both calls.
    assert_eq!(tokens.requests().len(), 1);
    assert_eq!(tokens.requests()[0].path, "/token");
}
