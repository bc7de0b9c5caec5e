//! The floor: the same two Gemini calls as `perf-adk`'s invocation, made with a bare reqwest
//! client and `serde_json` (request bodies built as JSON values, answers parsed into values), and
//! the tool's answer computed in between. See the crate docs.

use std::time::Instant;

use adk_perf::{ClientArgs, MODEL, QUESTION, report, weather};
use futures::StreamExt as _;
use serde_json::{Value, json};

/// The tool declaration both requests carry, as the adapter sends it.
fn tools() -> Value {
    json!([{"functionDeclarations": [{
        "name": "get_weather",
        "description": "Returns the weather in a city.",
        "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING",
            "description": "The city to report on."}}, "required": ["city"]},
    }]}])
}

/// Posts `body` and returns the answer's first candidate content; with `sse`, the contents of
/// every event, joined.
async fn call(client: &reqwest::Client, url: &str, body: &Value, sse: bool) -> Value {
    let response = client
        .post(url)
        .header("x-goog-api-key", "perf-key")
        .json(body)
        .send()
        .await
        .expect("the mock answers");
    if !sse {
        let answer: Value = response.json().await.expect("a JSON answer");
        return answer["candidates"][0]["content"].clone();
    }
    let mut parts = Vec::new();
    let mut role = Value::Null;
    let mut buffer = Vec::new();
    let mut bytes = response.bytes_stream();
    while let Some(chunk) = bytes.next().await {
        buffer.extend_from_slice(&chunk.expect("the stream's bytes"));
        // Events end with a blank line; Gemini writes CRLF line ends.
        while let Some(end) = buffer.windows(4).position(|four| four == b"\r\n\r\n") {
            let frame: Vec<u8> = buffer.drain(..end + 4).collect();
            let Some(data) = frame.strip_prefix(b"data: ") else {
                continue;
            };
            let event: Value = serde_json::from_slice(data).expect("a JSON event");
            let content = &event["candidates"][0]["content"];
            role = content["role"].clone();
            if let Some(more) = content["parts"].as_array() {
                parts.extend(more.iter().cloned());
            }
        }
    }
    json!({"role": role, "parts": parts})
}

async fn invocation(client: &reqwest::Client, url: &str, sse: bool) {
    let system = json!({"parts": [{"text": "You answer questions about the weather."}]});
    let question = json!({"role": "user", "parts": [{"text": QUESTION}]});
    let first = json!({"contents": [question], "systemInstruction": system, "tools": tools()});
    let call_content = call(client, url, &first, sse).await;
    let function_call = &call_content["parts"][0]["functionCall"];
    let city = function_call["args"]["city"].as_str().expect("a city");
    let answer = json!({"role": "user", "parts": [{"functionResponse": {
        "name": function_call["name"], "response": weather(city)}}]});
    let second = json!({"contents": [question, call_content, answer], "systemInstruction": system,
        "tools": tools()});
    let text = call(client, url, &second, sse).await;
    assert!(text["parts"][0]["text"].is_string(), "the answer is text");
}

#[tokio::main]
async fn main() {
    let started = Instant::now();
    let args = ClientArgs::from_env();
    let client = reqwest::Client::builder()
        .tcp_nodelay(true)
        .build()
        .expect("a client");
    let method = if args.sse {
        "streamGenerateContent?alt=sse"
    } else {
        "generateContent"
    };
    let url = format!("{}/models/{MODEL}:{method}", args.url);
    futures::stream::iter(0..args.invocations)
        .for_each_concurrent(args.concurrency, |_| invocation(&client, &url, args.sse))
        .await;
    report(started);
}
