//! The conformance suite every model adapter passes: the same scenarios (text, a stream, a tool
//! call, parallel calls, a tool round trip, structured output, usage, errors) against a loopback
//! server speaking the adapter's wire format, so that the next adapter is one [`Wire`] and one
//! [`AdapterCase`] row.
//!
//! The suite sees an adapter only as an `Arc<dyn Llm>` built for the server's base URL; the
//! [`Wire`] writes the provider's answers and reads the provider's requests.

mod wires;

use std::sync::Arc;

use adk_core::{
    Content, FinishReason, FunctionCall, FunctionDeclaration, FunctionResponse, Llm, LlmRequest,
    LlmResponse, Part, Role,
};
use futures::StreamExt as _;
use serde_json::{Value, json};

use crate::{MockResponse, MockServer};

pub use wires::{AnthropicWire, ChatCompletionsWire, GeminiWire, ResponsesWire};

/// One answer a scripted provider gives: text (in the pieces a stream sends it), calls, usage.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The text, as the chunks of a stream.
    pub text: Vec<String>,
    /// The function calls, in order.
    pub calls: Vec<Call>,
    /// Prompt and answer tokens.
    pub usage: (u32, u32),
}

impl Answer {
    /// The whole text.
    pub fn full_text(&self) -> String {
        self.text.concat()
    }
}

/// One function call of an [`Answer`].
#[derive(Debug, Clone)]
pub struct Call {
    /// The call's id.
    pub id: String,
    /// The function's name.
    pub name: String,
    /// The arguments object.
    pub args: Value,
}

/// What a request said, as a [`Wire`] reads it back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SentRequest {
    /// The names of the functions declared.
    pub tools: Vec<String>,
    /// The function results sent: the call id (or the function's name where the wire has no
    /// ids) and the result's text.
    pub results: Vec<(String, String)>,
    /// The JSON Schema the answer must follow, when one was sent.
    pub schema: Option<Value>,
}

/// A provider's wire format, as a loopback server writes answers and reads requests.
pub trait Wire: Send + Sync {
    /// A whole answer.
    fn answer(&self, answer: &Answer) -> MockResponse;
    /// The answer streamed: one event per text chunk, then the calls and the usage.
    fn stream(&self, answer: &Answer) -> MockResponse;
    /// An error answer of `status` in the provider's envelope, with its `code` and `message`.
    fn error(&self, status: u16, code: &str, message: &str) -> MockResponse;
    /// A stream that sends `text`, then reports an error (`code`, `message`) as the provider
    /// does mid-stream.
    fn stream_error(&self, text: &str, code: &str, message: &str) -> MockResponse;
    /// What a request body says.
    fn request(&self, body: &Value) -> SentRequest;
}

/// Builds an adapter for a server's base URL.
pub type ModelFactory = Box<dyn Fn(&str) -> Arc<dyn Llm> + Send + Sync>;

/// One adapter under test: its name, its wire, and how to build it for a server's base URL
/// (with retries fast enough for a test: the suite checks that a 429 is retried).
pub struct AdapterCase {
    /// The adapter's name, for messages.
    pub name: &'static str,
    /// The provider's wire format.
    pub wire: Box<dyn Wire>,
    /// Builds the adapter for the server at the given base URL (`http://127.0.0.1:<port>`).
    pub model: ModelFactory,
}

/// Runs every scenario of the suite on `case`, panicking with the adapter's name and the
/// scenario on the first failure.
pub async fn check_adapter(case: &AdapterCase) {
    text_and_usage(case).await;
    stream(case).await;
    tool_call(case, false).await;
    tool_call(case, true).await;
    parallel_calls(case).await;
    round_trip(case).await;
    structured_output(case).await;
    errors(case).await;
}

fn weather_tool() -> FunctionDeclaration {
    FunctionDeclaration::new("get_weather", "Returns the weather in a city.").with_parameters(
        json!({
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        }),
    )
}

fn question() -> LlmRequest {
    let mut request = LlmRequest::new("", vec![Content::user("What is the weather in Paris?")]);
    request.append_instructions(["You answer questions about the weather."]);
    request.append_tools([weather_tool()]);
    request
}

fn text_answer() -> Answer {
    Answer {
        text: vec!["It is ".into(), "sunny in ".into(), "Paris.".into()],
        calls: Vec::new(),
        usage: (21, 6),
    }
}

fn call(id: &str, city: &str) -> Call {
    Call {
        id: id.to_owned(),
        name: "get_weather".to_owned(),
        args: json!({"city": city}),
    }
}

/// Every response of one call, or the error that ended it.
async fn generate(
    model: &dyn Llm,
    request: LlmRequest,
    stream: bool,
) -> (Vec<LlmResponse>, Option<adk_core::Error>) {
    let mut responses = Vec::new();
    let mut items = model.generate(request, stream);
    while let Some(item) = items.next().await {
        match item {
            Ok(response) => responses.push(response),
            Err(error) => return (responses, Some(error)),
        }
    }
    (responses, None)
}

/// The one final response of a call that must succeed, after checking that only partial
/// responses came before it.
async fn final_response(
    case: &AdapterCase,
    server: &MockServer,
    request: LlmRequest,
    stream: bool,
    scenario: &str,
) -> (Vec<LlmResponse>, LlmResponse) {
    let model = (case.model)(&server.base_url());
    let (mut responses, error) = generate(model.as_ref(), request, stream).await;
    if let Some(error) = error {
        panic!("{}: {scenario}: the call failed: {error}", case.name);
    }
    let last = responses
        .pop()
        .unwrap_or_else(|| panic!("{}: {scenario}: no response", case.name));
    assert!(
        !last.is_partial(),
        "{}: {scenario}: the last response is final",
        case.name
    );
    assert!(
        responses.iter().all(LlmResponse::is_partial),
        "{}: {scenario}: only partial responses come before the final one",
        case.name
    );
    (responses, last)
}

fn calls_of(response: &LlmResponse) -> Vec<(String, String, Value)> {
    response
        .content
        .iter()
        .flat_map(Content::function_calls)
        .map(|call| {
            (
                call.id
                    .as_ref()
                    .map(|id| id.as_str().to_owned())
                    .unwrap_or_default(),
                call.name.clone(),
                Value::Object(call.args.clone()),
            )
        })
        .collect()
}

async fn text_and_usage(case: &AdapterCase) {
    let answer = text_answer();
    let server = MockServer::start([case.wire.answer(&answer)]).await;
    let (partials, last) = final_response(case, &server, question(), false, "text").await;
    let name = case.name;
    assert!(
        partials.is_empty(),
        "{name}: text: no partial response without streaming"
    );
    let content = last.content.as_ref().expect("content");
    assert_eq!(content.role, Some(Role::Model), "{name}: text: role");
    assert_eq!(
        content.text().as_deref(),
        Some("It is sunny in Paris."),
        "{name}: text"
    );
    assert_eq!(
        last.finish_reason,
        Some(FinishReason::Stop),
        "{name}: text: finish reason"
    );
    let usage = last.usage_metadata.expect("usage");
    assert_eq!(
        (
            usage.prompt_token_count,
            usage.candidates_token_count,
            usage.total_token_count
        ),
        (Some(21), Some(6), Some(27)),
        "{name}: usage"
    );
    let sent = case.wire.request(&server.requests()[0].json());
    assert_eq!(
        sent.tools,
        ["get_weather"],
        "{name}: text: the tool was declared"
    );
}

async fn stream(case: &AdapterCase) {
    let answer = text_answer();
    let server = MockServer::start([case.wire.stream(&answer)]).await;
    let (partials, last) = final_response(case, &server, question(), true, "stream").await;
    let name = case.name;
    let streamed: String = partials
        .iter()
        .flat_map(|partial| {
            partial
                .content
                .iter()
                .flat_map(|content| content.parts.iter())
        })
        .filter_map(Part::as_text)
        .collect();
    assert_eq!(streamed, answer.full_text(), "{name}: stream: the deltas");
    assert!(
        partials.len() >= 2,
        "{name}: stream: text arrives in pieces"
    );
    assert_eq!(
        last.content.as_ref().and_then(Content::text),
        Some(answer.full_text()),
        "{name}: stream: the final response aggregates the text"
    );
    assert_eq!(
        last.usage_metadata
            .and_then(|usage| usage.total_token_count),
        Some(27),
        "{name}: stream: usage"
    );
}

async fn tool_call(case: &AdapterCase, stream: bool) {
    let answer = Answer {
        text: Vec::new(),
        calls: vec![call("call_1", "Paris")],
        usage: (21, 9),
    };
    let response = if stream {
        case.wire.stream(&answer)
    } else {
        case.wire.answer(&answer)
    };
    let server = MockServer::start([response]).await;
    let scenario = if stream {
        "streamed tool call"
    } else {
        "tool call"
    };
    let (_, last) = final_response(case, &server, question(), stream, scenario).await;
    assert_eq!(
        calls_of(&last),
        [(
            "call_1".to_owned(),
            "get_weather".to_owned(),
            json!({"city": "Paris"})
        )],
        "{}: {scenario}",
        case.name
    );
}

async fn parallel_calls(case: &AdapterCase) {
    let answer = Answer {
        text: vec!["Checking both.".into()],
        calls: vec![call("call_1", "Paris"), call("call_2", "Tokyo")],
        usage: (21, 18),
    };
    for stream in [false, true] {
        let response = if stream {
            case.wire.stream(&answer)
        } else {
            case.wire.answer(&answer)
        };
        let server = MockServer::start([response]).await;
        let (_, last) = final_response(case, &server, question(), stream, "parallel calls").await;
        let calls = calls_of(&last);
        let cities: Vec<&Value> = calls.iter().map(|(_, _, args)| &args["city"]).collect();
        assert_eq!(
            cities,
            [&json!("Paris"), &json!("Tokyo")],
            "{}: parallel calls (stream {stream})",
            case.name
        );
        assert_eq!(
            last.content.as_ref().and_then(Content::text).as_deref(),
            Some("Checking both."),
            "{}: text beside parallel calls",
            case.name
        );
    }
}

async fn round_trip(case: &AdapterCase) {
    let mut request = question();
    let contents = Arc::make_mut(&mut request.contents);
    contents.push(Content::new(
        Role::Model,
        [Part::function_call(
            FunctionCall::new("get_weather", json!({"city": "Paris"})).with_id("call_1"),
        )],
    ));
    contents.push(Content::new(
        Role::User,
        [Part::function_response(
            FunctionResponse::new("get_weather", json!("sunny, 21 C")).with_id("call_1"),
        )],
    ));
    let server = MockServer::start([case.wire.answer(&text_answer())]).await;
    let (_, last) = final_response(case, &server, request, false, "round trip").await;
    assert!(
        last.content.as_ref().and_then(Content::text).is_some(),
        "{}: round trip: an answer",
        case.name
    );
    let sent = case.wire.request(&server.requests()[0].json());
    let (id, result) = sent
        .results
        .first()
        .unwrap_or_else(|| panic!("{}: round trip: no function result was sent", case.name));
    assert!(
        id == "call_1" || id == "get_weather",
        "{}: round trip: result of {id}",
        case.name
    );
    assert_eq!(
        result, "sunny, 21 C",
        "{}: round trip: the result's text",
        case.name
    );
}

async fn structured_output(case: &AdapterCase) {
    let schema = json!({
        "type": "object",
        "properties": {"city": {"type": "string"}, "sky": {"type": "string"}},
        "required": ["city", "sky"],
    });
    let mut request = LlmRequest::new("", vec![Content::user("The weather in Paris, as JSON.")]);
    request.config.response_schema = Some(schema.clone());
    let answer = Answer {
        text: vec![r#"{"city":"Paris","sky":"sunny"}"#.into()],
        calls: Vec::new(),
        usage: (12, 9),
    };
    let server = MockServer::start([case.wire.answer(&answer)]).await;
    let (_, last) = final_response(case, &server, request, false, "structured output").await;
    let text = last.content.as_ref().and_then(Content::text).expect("text");
    let parsed: Value = serde_json::from_str(&text).expect("the answer is JSON");
    assert_eq!(parsed["sky"], "sunny", "{}: structured output", case.name);
    let sent = case.wire.request(&server.requests()[0].json());
    assert_eq!(
        sent.schema.as_ref(),
        Some(&schema),
        "{}: structured output: the schema was sent",
        case.name
    );
}

async fn errors(case: &AdapterCase) {
    let name = case.name;
    // A client error is not retried, and its message reaches the caller.
    let server = MockServer::start([
        case.wire
            .error(400, "invalid_argument", "temperature is out of range"),
        case.wire.answer(&text_answer()),
    ])
    .await;
    let model = (case.model)(&server.base_url());
    let (responses, error) = generate(model.as_ref(), question(), false).await;
    let error = error.unwrap_or_else(|| panic!("{name}: a 400 must fail the call"));
    assert_eq!(error.kind(), adk_core::ErrorKind::Model, "{name}: 400");
    assert!(
        error.to_string().contains("temperature is out of range"),
        "{name}: 400: {error}"
    );
    assert!(responses.is_empty());
    assert_eq!(server.requests().len(), 1, "{name}: a 400 is not retried");

    // A rate limit is retried after the wait the server asks for.
    let server = MockServer::start([
        case.wire
            .error(429, "rate_limited", "slow down")
            .header("retry-after", "0"),
        case.wire.answer(&text_answer()),
    ])
    .await;
    let (_, last) = final_response(case, &server, question(), false, "429 then success").await;
    assert!(last.content.is_some(), "{name}: 429 then success");
    assert_eq!(
        server.requests().len(),
        2,
        "{name}: the 429 was retried once"
    );

    // An error in the middle of a stream ends it, after the text before it.
    let server =
        MockServer::start([case
            .wire
            .stream_error("It is ", "overloaded", "the server is busy")])
        .await;
    let model = (case.model)(&server.base_url());
    let (responses, error) = generate(model.as_ref(), question(), true).await;
    let error = error.unwrap_or_else(|| panic!("{name}: an error event must fail the stream"));
    assert!(
        error.to_string().contains("the server is busy"),
        "{name}: error event: {error}"
    );
    let streamed: String = responses
        .iter()
        .flat_map(|partial| {
            partial
                .content
                .iter()
                .flat_map(|content| content.parts.iter())
        })
        .filter_map(Part::as_text)
        .collect();
    assert_eq!(
        streamed, "It is ",
        "{name}: the text before the error event was delivered"
    );
}
