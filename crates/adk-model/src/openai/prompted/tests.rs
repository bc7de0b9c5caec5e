//! The steps of prompted tool calling against a loopback server that answers each step as a
//! model would, checking what each request asks and what comes of the answers.

use adk_core::{FunctionCallingConfig, FunctionResponse, Llm as _, ToolConfig};
use adk_test::{MockResponse, MockServer, ReceivedRequest};
use futures::TryStreamExt as _;

use super::*;
use crate::OpenAi;

fn weather() -> FunctionDeclaration {
    FunctionDeclaration::new("get_weather", "Returns the weather in a city.").with_parameters(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city, for example \"Paris\"."}},
        "required": ["city"]
    }))
}

fn clock() -> FunctionDeclaration {
    FunctionDeclaration::new("now", "Returns the time.")
}

/// A Chat Completions answer whose message says `content`.
fn says(content: &str) -> MockResponse {
    MockResponse::json(
        200,
        &json!({
            "id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}
        }),
    )
}

/// A streamed Chat Completions answer of `chunks`, each one server-sent event.
fn streams(chunks: &[&str]) -> MockResponse {
    MockResponse::sse(
        &chunks
            .iter()
            .map(|chunk| format!("data: {chunk}\n\n"))
            .collect::<String>(),
    )
}

/// The texts of `responses`, partial ones and the whole one.
fn texts(responses: &[LlmResponse]) -> Vec<String> {
    responses
        .iter()
        .filter_map(|response| response.content.as_ref()?.text())
        .collect()
}

fn request(contents: Vec<Content>, tools: Vec<FunctionDeclaration>) -> LlmRequest {
    let mut request = LlmRequest::new("", contents);
    request.append_instructions(["You answer questions about the weather."]);
    request.append_tools(tools);
    request
}

fn asked_weather(city: &str) -> Vec<Content> {
    vec![Content::user(format!("What is the weather in {city}?"))]
}

/// The history after a call of `get_weather` for `city` and its result.
fn answered_weather(city: &str, result: Value) -> Vec<Content> {
    let call = FunctionCall::new("get_weather", json!({"city": city})).with_id("adk-1");
    let mut contents = asked_weather(city);
    contents.push(Content::new(Role::Model, [Part::function_call(call)]));
    contents.push(Content::new(
        Role::User,
        [Part::function_response(
            FunctionResponse::new("get_weather", result).with_id("adk-1"),
        )],
    ));
    contents
}

/// Runs one turn on a server answering `answers` in order; returns the responses and requests.
async fn turn(
    request: LlmRequest,
    stream: bool,
    answers: Vec<MockResponse>,
) -> (Vec<LlmResponse>, Vec<ReceivedRequest>) {
    let server = MockServer::start(answers).await;
    let model = OpenAi::builder("m")
        .base_url(server.base_url())
        .api_key("k")
        .prompted_tools(true)
        .build()
        .unwrap();
    let responses: Vec<LlmResponse> = model
        .generate(request, mode(stream))
        .try_collect()
        .await
        .unwrap();
    assert_eq!(server.remaining(), 0, "every scripted answer is asked for");
    (responses, server.requests())
}

fn last_message(request: &ReceivedRequest) -> Value {
    request.json()["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone()
}

/// The first function call of `response`, which the test expects to exist.
fn first_call(response: &LlmResponse) -> FunctionCall {
    response
        .content
        .as_ref()
        .and_then(|content| content.function_calls().next())
        .expect("the response holds a call")
        .clone()
}

fn schema(request: &ReceivedRequest) -> Value {
    request.json()["response_format"]["json_schema"]["schema"].clone()
}

#[tokio::test]
async fn a_grounded_call_is_filled_under_the_tools_schema() {
    let (responses, requests) = turn(
        request(asked_weather("Tokyo"), vec![weather()]),
        false,
        // Punctuation around an argument is the model's noise: it goes before the check.
        vec![says(r#"{"city": " Tokyo,"}"#)],
    )
    .await;
    let call = first_call(&responses[0]);
    assert_eq!(
        (call.name.as_str(), &call.args["city"]),
        ("get_weather", &json!("Tokyo"))
    );
    let body = requests[0].json();
    assert!(
        body.get("tools").is_none() && body.get("tool_choice").is_none(),
        "{body}"
    );
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "You answer questions about the weather."})
    );
    assert_eq!(
        last_message(&requests[0])["content"],
        "Give the arguments of get_weather as JSON."
    );
    let schema = schema(&requests[0]);
    assert_eq!(schema["additionalProperties"], false);
    assert!(schema.get("$schema").is_none(), "{schema}");
}

#[tokio::test]
async fn a_made_up_argument_is_not_called_and_the_model_answers() {
    let (responses, requests) = turn(
        request(vec![Content::user("Hello!")], vec![weather()]),
        false,
        vec![
            says(r#"{"city": "Paris"}"#),
            says(r#"{"answer": "Hello! Ask me about the weather."}"#),
        ],
    )
    .await;
    assert_eq!(
        responses[0].content.as_ref().unwrap().text().as_deref(),
        Some("Hello! Ask me about the weather.")
    );
    let pattern = schema(&requests[1])["properties"]["answer"]["pattern"].clone();
    let vocabulary = pattern::Vocabulary::of(["You answer questions about the weather.", "Hello!"]);
    assert_eq!(
        pattern,
        json!(pattern::sentence(&vocabulary, pattern::SENTENCE_WORDS))
    );
    assert_eq!(
        requests[1].json()["frequency_penalty"],
        json!(ANSWER_FREQUENCY_PENALTY)
    );
    assert_eq!(
        last_message(&requests[1]),
        json!({"role": "user", "content": "Hello!"})
    );
}

#[tokio::test]
async fn a_free_answer_ends_before_it_says_a_phrase_again() {
    let chunks = [
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"{\"answer\": \"Weather agent, a weather"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":" agent, I am a weather"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":" agent, here to help.\"}"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
    ];
    let (responses, _) = turn(
        request(vec![Content::user("Who are you?")], vec![weather()]),
        true,
        vec![says(r#"{"city": "Paris"}"#), streams(&chunks)],
    )
    .await;
    let texts = texts(&responses);
    // The last two words wait until no repeat can start at them, the loop never goes out, and
    // the partials add up to the answer.
    assert_eq!(
        texts,
        [
            "Weather",
            " agent, a weather agent, I",
            " am",
            ".",
            "Weather agent, a weather agent, I am."
        ]
    );
    assert!(responses[..4].iter().all(LlmResponse::is_partial));
    assert!(!responses[4].is_partial());
}

#[tokio::test]
async fn a_further_call_takes_its_argument_from_this_turn_only() {
    // Tokyo was asked about in an earlier turn; this turn asked for Paris and has its result.
    let mut history = answered_weather("Tokyo", json!({"sky": "rainy"}));
    history.push(Content::model("It is rainy in Tokyo."));
    history.extend(answered_weather("Paris", json!({"sky": "sunny"})));
    let (responses, requests) = turn(
        request(history, vec![weather()]),
        false,
        vec![
            says(r#"{"city": "Tokyo"}"#),
            says(r#"{"answer": "It is sunny in Paris."}"#),
        ],
    )
    .await;
    assert_eq!(requests.len(), 2, "the Tokyo call is not made");
    assert_eq!(
        responses[0].content.as_ref().unwrap().text().as_deref(),
        Some("It is sunny in Paris.")
    );

    // A city this turn's message names is called for.
    let mut history = vec![Content::user("What is the weather in Paris and in Rome?")];
    history.extend(answered_weather("Paris", json!({"sky": "sunny"})).split_off(1));
    let (responses, _) = turn(
        request(history, vec![weather()]),
        false,
        vec![says(r#"{"city": "Rome"}"#)],
    )
    .await;
    let calls: Vec<_> = responses[0]
        .content
        .as_ref()
        .unwrap()
        .function_calls()
        .collect();
    assert_eq!(calls[0].args["city"], "Rome");
}

#[tokio::test]
async fn after_a_result_the_call_is_not_repeated_and_the_answer_quotes_it() {
    let history = answered_weather(
        "Tokyo",
        json!({"city": "Tokyo", "sky": "rainy", "celsius": 19.0}),
    );
    let (responses, requests) = turn(
        request(history, vec![weather()]),
        true,
        vec![
            says(r#"{"city": "Tokyo"}"#),
            streams(&[
                r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"{\"answer\": \"It is "}}]}"#,
                r#"{"choices":[{"index":0,"delta":{"content":"rainy in Tokyo.\"}"}}]}"#,
                r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            ]),
        ],
    )
    .await;
    let texts = texts(&responses);
    assert_eq!(
        texts,
        ["It is ", "rainy in Tokyo.", "It is rainy in Tokyo."]
    );
    assert!(responses[2].partial != Some(true));
    let answer = &requests[1];
    let pattern = schema(answer)["properties"]["answer"]["pattern"]
        .as_str()
        .unwrap()
        .to_owned();
    // The strings and, while there is room, the numbers: the temperature is a fact too.
    assert!(
        pattern.contains("[tT]okyo")
            && pattern.contains("[rR]ainy")
            && pattern.contains(r"19\.0(?:'s)?"),
        "{pattern}"
    );
    assert_eq!(
        answer.json()["frequency_penalty"],
        json!(QUOTING_FREQUENCY_PENALTY)
    );
    assert_eq!(
        answer.json()["messages"][2],
        json!({"role": "assistant", "content": "{\"tool\": \"get_weather\", \"args\": {\"city\":\"Tokyo\"}}"})
    );
    assert_eq!(
        last_message(answer),
        json!({"role": "user", "content": "Tool result of get_weather: {\"celsius\":19.0,\"city\":\"Tokyo\",\"sky\":\"rainy\"}"})
    );
}

#[tokio::test]
async fn a_forced_call_is_neither_checked_nor_answered() {
    let mut forced = request(vec![Content::user("Hello!")], vec![weather(), clock()]);
    let mut calling = FunctionCallingConfig::new(FunctionCallingMode::Any);
    calling.allowed_function_names = vec!["get_weather".into()];
    let mut tool_config = ToolConfig::default();
    tool_config.function_calling_config = Some(calling);
    forced.config.tool_config = Some(tool_config);
    let (responses, requests) = turn(forced, false, vec![says(r#"{"city": "Paris"}"#)]).await;
    let call = first_call(&responses[0]);
    assert_eq!(call.args["city"], "Paris");
    assert_eq!(requests.len(), 1);
}

#[tokio::test]
async fn a_tool_without_arguments_to_check_is_confirmed_after_examples() {
    let (responses, requests) = turn(
        request(vec![Content::user("What time is it?")], vec![clock()]),
        false,
        vec![says("\"yes\"")],
    )
    .await;
    assert_eq!(first_call(&responses[0]).name, "now");
    let messages = requests[0].json()["messages"].clone();
    assert_eq!(
        messages[1]["content"],
        "I need now now.\n\nShould the tool now (Returns the time.) be called to answer this? Reply yes or no."
    );
    assert_eq!(
        messages[2],
        json!({"role": "assistant", "content": "\"yes\""})
    );
    assert_eq!(schema(&requests[0]), json!({"enum": ["yes", "no"]}));

    let (responses, _) = turn(
        request(vec![Content::user("Hi")], vec![clock()]),
        false,
        vec![says("\"no\""), says(r#"{"answer": "Hi!"}"#)],
    )
    .await;
    assert_eq!(
        responses[0].content.as_ref().unwrap().text().as_deref(),
        Some("Hi!")
    );
}

#[tokio::test]
async fn with_several_tools_the_model_chooses_first() {
    let (responses, requests) = turn(
        request(asked_weather("Paris"), vec![clock(), weather()]),
        false,
        vec![says("\"get_weather\""), says(r#"{"city": "Paris"}"#)],
    )
    .await;
    assert_eq!(first_call(&responses[0]).name, "get_weather");
    assert_eq!(
        schema(&requests[0]),
        json!({"enum": ["now", "get_weather"]})
    );
    assert!(
        last_message(&requests[0])["content"]
            .as_str()
            .unwrap()
            .contains("- get_weather: Returns the weather in a city.")
    );
}

#[tokio::test]
async fn a_response_schema_shapes_the_answer_and_none_sends_no_tools() {
    let mut structured = request(vec![Content::user("Hello")], vec![weather()]);
    structured.config.response_schema =
        Some(json!({"type": "object", "properties": {"temp": {"type": "number"}}}));
    structured.config.response_mime_type = Some("application/json".into());
    let (responses, requests) = turn(
        structured,
        false,
        vec![
            says(r#"{"city": "Nowhere"}"#),
            says(r#"{"answer": {"temp": 21.5}}"#),
        ],
    )
    .await;
    assert_eq!(
        responses[0].content.as_ref().unwrap().text().as_deref(),
        Some(r#"{"temp":21.5}"#)
    );
    assert_eq!(
        schema(&requests[1])["properties"]["answer"]["properties"]["temp"]["type"],
        "number"
    );

    let mut off = request(vec![Content::user("Hello")], vec![weather()]);
    let mut tool_config = ToolConfig::default();
    tool_config.function_calling_config =
        Some(FunctionCallingConfig::new(FunctionCallingMode::None));
    off.config.tool_config = Some(tool_config);
    let (responses, requests) = turn(off, false, vec![says("Hello there")]).await;
    assert_eq!(
        responses[0].content.as_ref().unwrap().text().as_deref(),
        Some("Hello there")
    );
    assert!(requests[0].json().get("response_format").is_none());
}

#[test]
fn only_required_free_strings_are_checked() {
    let tool = FunctionDeclaration::new("book", "Books a trip.").with_parameters(json!({
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "class": {"type": "string", "enum": ["economy", "business"]},
            "date": {"type": "string", "format": "date"},
            "seats": {"type": "integer"},
            "note": {"type": "string"}
        },
        "required": ["city", "class", "date", "seats"]
    }));
    assert_eq!(groundable(&tool), ["city"]);
    assert!(groundable(&clock()).is_empty());
}

#[test]
fn forcing_an_unknown_tool_is_an_error() {
    let mut forced = request(vec![Content::user("x")], vec![weather()]);
    let mut calling = FunctionCallingConfig::new(FunctionCallingMode::Any);
    calling.allowed_function_names = vec!["nope".into()];
    let mut tool_config = ToolConfig::default();
    tool_config.function_calling_config = Some(calling);
    forced.config.tool_config = Some(tool_config);
    let error = Turn::of(forced).err().unwrap();
    assert!(
        error.to_string().contains("allowed_function_names"),
        "{error}"
    );
}

/// The streaming mode a test's `stream` flag asks for.
fn mode(stream: bool) -> adk_core::StreamingMode {
    if stream {
        adk_core::StreamingMode::Sse
    } else {
        adk_core::StreamingMode::None
    }
}
