//! The wire formats of the providers the adapters speak, as the conformance suite's loopback
//! server writes their answers and reads their requests: Gemini's `generateContent`, OpenAI's
//! Chat Completions and Responses, Anthropic's Messages. Each is written from the shapes the
//! shared recordings show.

use serde_json::{Value, json};

use super::{Answer, SentRequest, Wire};
use crate::MockResponse;

/// The result text of a function response object that ADK wrapped as `{"result": ...}`.
fn result_text(response: &Value) -> String {
    match &response["result"] {
        Value::String(text) => text.clone(),
        Value::Null => response.to_string(),
        other => other.to_string(),
    }
}

/// A string, or the text of a list of text blocks.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect(),
        _ => String::new(),
    }
}

fn items<'a>(value: &'a Value, pointer: &str) -> impl Iterator<Item = &'a Value> {
    value
        .pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// Gemini's `generateContent` and `streamGenerateContent?alt=sse` (CRLF-framed events, each a
/// whole response).
#[derive(Debug, Default)]
pub struct GeminiWire;

impl GeminiWire {
    fn response(parts: Vec<Value>, finish: bool, usage: (u32, u32)) -> Value {
        let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
        if finish {
            candidate["finishReason"] = json!("STOP");
        }
        json!({
            "candidates": [candidate],
            "usageMetadata": {"promptTokenCount": usage.0, "candidatesTokenCount": usage.1, "totalTokenCount": usage.0 + usage.1},
            "modelVersion": "gemini-test",
        })
    }

    fn call_parts(answer: &Answer) -> Vec<Value> {
        answer
            .calls
            .iter()
            .map(|call| json!({"functionCall": {"id": call.id, "name": call.name, "args": call.args}}))
            .collect()
    }
}

impl Wire for GeminiWire {
    fn answer(&self, answer: &Answer) -> MockResponse {
        let mut parts = Vec::new();
        if !answer.text.is_empty() {
            parts.push(json!({"text": answer.full_text()}));
        }
        parts.extend(Self::call_parts(answer));
        MockResponse::json(200, &Self::response(parts, true, answer.usage))
    }

    fn stream(&self, answer: &Answer) -> MockResponse {
        let mut body = String::new();
        for chunk in &answer.text {
            let event = Self::response(vec![json!({"text": chunk})], false, (answer.usage.0, 0));
            body.push_str(&format!("data: {event}\r\n\r\n"));
        }
        let last = Self::response(Self::call_parts(answer), true, answer.usage);
        body.push_str(&format!("data: {last}\r\n\r\n"));
        MockResponse::sse(&body)
    }

    fn error(&self, status: u16, code: &str, message: &str) -> MockResponse {
        MockResponse::json(
            status,
            &json!({"error": {"code": status, "message": message, "status": code}}),
        )
    }

    fn stream_error(&self, text: &str, code: &str, message: &str) -> MockResponse {
        let first = Self::response(vec![json!({"text": text})], false, (1, 0));
        let error = json!({"error": {"code": 500, "message": message, "status": code}});
        MockResponse::sse(&format!("data: {first}\r\n\r\ndata: {error}\r\n\r\n"))
    }

    fn request(&self, body: &Value) -> SentRequest {
        SentRequest {
            tools: items(body, "/tools")
                .flat_map(|tool| items(tool, "/functionDeclarations"))
                .filter_map(|declaration| declaration["name"].as_str().map(str::to_owned))
                .collect(),
            results: items(body, "/contents")
                .flat_map(|content| items(content, "/parts"))
                .filter_map(|part| part.get("functionResponse"))
                .map(|response| {
                    let key = response["id"].as_str().or(response["name"].as_str());
                    (
                        key.unwrap_or_default().to_owned(),
                        result_text(&response["response"]),
                    )
                })
                .collect(),
            schema: body
                .pointer("/generationConfig/responseJsonSchema")
                .cloned(),
        }
    }
}

/// OpenAI's Chat Completions (`chat.completion` and `chat.completion.chunk` events ending with
/// a usage chunk and `[DONE]`).
#[derive(Debug, Default)]
pub struct ChatCompletionsWire;

impl ChatCompletionsWire {
    fn chunk(delta: Value, finish: Option<&str>) -> String {
        let chunk = json!({
            "id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-test",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        });
        format!("data: {chunk}\n\n")
    }

    fn usage(answer: &Answer) -> Value {
        json!({"prompt_tokens": answer.usage.0, "completion_tokens": answer.usage.1, "total_tokens": answer.usage.0 + answer.usage.1})
    }

    fn finish(answer: &Answer) -> &'static str {
        if answer.calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        }
    }
}

impl Wire for ChatCompletionsWire {
    fn answer(&self, answer: &Answer) -> MockResponse {
        let text = (!answer.text.is_empty()).then(|| answer.full_text());
        let mut message = json!({"role": "assistant", "content": text, "refusal": null});
        if !answer.calls.is_empty() {
            message["tool_calls"] = answer
                .calls
                .iter()
                .map(|call| json!({"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.args.to_string()}}))
                .collect();
        }
        MockResponse::json(
            200,
            &json!({
                "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-test",
                "choices": [{"index": 0, "message": message, "finish_reason": Self::finish(answer)}],
                "usage": Self::usage(answer),
            }),
        )
    }

    fn stream(&self, answer: &Answer) -> MockResponse {
        let mut body = Self::chunk(json!({"role": "assistant", "content": ""}), None);
        for chunk in &answer.text {
            body.push_str(&Self::chunk(json!({"content": chunk}), None));
        }
        for (index, call) in answer.calls.iter().enumerate() {
            let arguments = call.args.to_string();
            let (head, tail) = arguments.split_at(arguments.len() / 2);
            body.push_str(&Self::chunk(
                json!({"tool_calls": [{"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": head}}]}),
                None,
            ));
            body.push_str(&Self::chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": tail}}]}),
                None,
            ));
        }
        body.push_str(&Self::chunk(json!({}), Some(Self::finish(answer))));
        let usage = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [], "usage": Self::usage(answer)});
        body.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
        MockResponse::sse(&body)
    }

    fn error(&self, status: u16, code: &str, message: &str) -> MockResponse {
        MockResponse::json(
            status,
            &json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": code}}),
        )
    }

    fn stream_error(&self, text: &str, code: &str, message: &str) -> MockResponse {
        let error = json!({"error": {"message": message, "type": "server_error", "code": code}});
        MockResponse::sse(&format!(
            "{}data: {error}\n\n",
            Self::chunk(json!({"content": text}), None)
        ))
    }

    fn request(&self, body: &Value) -> SentRequest {
        SentRequest {
            tools: items(body, "/tools")
                .filter_map(|tool| tool.pointer("/function/name").and_then(Value::as_str))
                .map(str::to_owned)
                .collect(),
            results: items(body, "/messages")
                .filter(|message| message["role"] == "tool")
                .map(|message| {
                    (
                        message["tool_call_id"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned(),
                        text_of(&message["content"]),
                    )
                })
                .collect(),
            schema: body.pointer("/response_format/json_schema/schema").cloned(),
        }
    }
}

/// Anthropic's Messages API (`message` bodies; `event:`/`data:` SSE of content blocks).
#[derive(Debug, Default)]
pub struct AnthropicWire;

impl AnthropicWire {
    fn event(data: &Value) -> String {
        format!(
            "event: {}\ndata: {data}\n\n",
            data["type"].as_str().unwrap_or("message")
        )
    }

    fn start(input: u32) -> String {
        Self::event(&json!({"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [], "stop_reason": null, "usage": {"input_tokens": input, "output_tokens": 1},
        }}))
    }

    fn stop_reason(answer: &Answer) -> &'static str {
        if answer.calls.is_empty() {
            "end_turn"
        } else {
            "tool_use"
        }
    }
}

impl Wire for AnthropicWire {
    fn answer(&self, answer: &Answer) -> MockResponse {
        let mut content = Vec::new();
        if !answer.text.is_empty() {
            content.push(json!({"type": "text", "text": answer.full_text()}));
        }
        content.extend(answer.calls.iter().map(|call| {
            json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.args})
        }));
        MockResponse::json(
            200,
            &json!({
                "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
                "content": content, "stop_reason": Self::stop_reason(answer), "stop_sequence": null,
                "usage": {"input_tokens": answer.usage.0, "output_tokens": answer.usage.1},
            }),
        )
    }

    fn stream(&self, answer: &Answer) -> MockResponse {
        let mut body = Self::start(answer.usage.0);
        let mut index = 0;
        if !answer.text.is_empty() {
            body.push_str(&Self::event(&json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})));
            body.push_str(&Self::event(&json!({"type": "ping"})));
            for chunk in &answer.text {
                body.push_str(&Self::event(&json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": chunk}})));
            }
            body.push_str(&Self::event(
                &json!({"type": "content_block_stop", "index": 0}),
            ));
            index = 1;
        }
        for call in &answer.calls {
            body.push_str(&Self::event(&json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}})));
            let arguments = call.args.to_string();
            let (head, tail) = arguments.split_at(arguments.len() / 2);
            for piece in ["", head, tail] {
                body.push_str(&Self::event(&json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}})));
            }
            body.push_str(&Self::event(
                &json!({"type": "content_block_stop", "index": index}),
            ));
            index += 1;
        }
        body.push_str(&Self::event(&json!({"type": "message_delta", "delta": {"stop_reason": Self::stop_reason(answer), "stop_sequence": null}, "usage": {"output_tokens": answer.usage.1}})));
        body.push_str(&Self::event(&json!({"type": "message_stop"})));
        MockResponse::sse(&body)
    }

    fn error(&self, status: u16, code: &str, message: &str) -> MockResponse {
        MockResponse::json(
            status,
            &json!({"type": "error", "error": {"type": code, "message": message}, "request_id": "req_1"}),
        )
    }

    fn stream_error(&self, text: &str, code: &str, message: &str) -> MockResponse {
        let mut body = Self::start(1);
        body.push_str(&Self::event(&json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})));
        body.push_str(&Self::event(&json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}})));
        body.push_str(&Self::event(
            &json!({"type": "error", "error": {"type": code, "message": message}}),
        ));
        MockResponse::sse(&body)
    }

    fn request(&self, body: &Value) -> SentRequest {
        SentRequest {
            tools: items(body, "/tools")
                .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
                .collect(),
            results: items(body, "/messages")
                .flat_map(|message| items(message, "/content"))
                .filter(|block| block["type"] == "tool_result")
                .map(|block| {
                    (
                        block["tool_use_id"].as_str().unwrap_or_default().to_owned(),
                        text_of(&block["content"]),
                    )
                })
                .collect(),
            schema: body.pointer("/output_config/format/schema").cloned(),
        }
    }
}

/// OpenAI's Responses API (`response` objects; typed SSE events ending with
/// `response.completed`).
#[derive(Debug, Default)]
pub struct ResponsesWire;

impl ResponsesWire {
    fn event(data: &Value) -> String {
        format!(
            "event: {}\ndata: {data}\n\n",
            data["type"].as_str().unwrap_or("event")
        )
    }

    fn output(answer: &Answer) -> Vec<Value> {
        let mut output = Vec::new();
        if !answer.text.is_empty() {
            output.push(json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": answer.full_text(), "annotations": []}]}));
        }
        output.extend(answer.calls.iter().enumerate().map(|(index, call)| {
            json!({"type": "function_call", "id": format!("fc_{index}"), "call_id": call.id, "name": call.name,
                "arguments": call.args.to_string(), "status": "completed"})
        }));
        output
    }

    fn response(answer: &Answer, status: &str, output: Vec<Value>) -> Value {
        json!({
            "id": "resp_1", "object": "response", "status": status, "model": "gpt-test", "output": output,
            "usage": {"input_tokens": answer.usage.0, "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": answer.usage.1, "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": answer.usage.0 + answer.usage.1},
        })
    }
}

impl Wire for ResponsesWire {
    fn answer(&self, answer: &Answer) -> MockResponse {
        MockResponse::json(
            200,
            &Self::response(answer, "completed", Self::output(answer)),
        )
    }

    fn stream(&self, answer: &Answer) -> MockResponse {
        let mut body = Self::event(
            &json!({"type": "response.created", "response": Self::response(answer, "in_progress", Vec::new())}),
        );
        let output = Self::output(answer);
        for (index, item) in output.iter().enumerate() {
            let mut added = item.clone();
            if item["type"] == "message" {
                added["content"] = json!([]);
                body.push_str(&Self::event(&json!({"type": "response.output_item.added", "output_index": index, "item": added})));
                for chunk in &answer.text {
                    body.push_str(&Self::event(&json!({"type": "response.output_text.delta", "output_index": index, "content_index": 0, "delta": chunk})));
                }
            } else {
                added["arguments"] = json!("");
                body.push_str(&Self::event(&json!({"type": "response.output_item.added", "output_index": index, "item": added})));
                let arguments = item["arguments"].as_str().unwrap_or_default();
                let (head, tail) = arguments.split_at(arguments.len() / 2);
                for piece in [head, tail] {
                    body.push_str(&Self::event(&json!({"type": "response.function_call_arguments.delta", "output_index": index, "delta": piece})));
                }
                body.push_str(&Self::event(&json!({"type": "response.function_call_arguments.done", "output_index": index, "arguments": arguments})));
            }
            body.push_str(&Self::event(
                &json!({"type": "response.output_item.done", "output_index": index, "item": item}),
            ));
        }
        body.push_str(&Self::event(&json!({"type": "response.completed", "response": Self::response(answer, "completed", output)})));
        MockResponse::sse(&body)
    }

    fn error(&self, status: u16, code: &str, message: &str) -> MockResponse {
        MockResponse::json(
            status,
            &json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": code}}),
        )
    }

    fn stream_error(&self, text: &str, code: &str, message: &str) -> MockResponse {
        let answer = Answer {
            text: vec![text.to_owned()],
            calls: Vec::new(),
            usage: (1, 0),
        };
        let mut body = Self::event(
            &json!({"type": "response.created", "response": Self::response(&answer, "in_progress", Vec::new())}),
        );
        body.push_str(&Self::event(&json!({"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": text})));
        body.push_str(&Self::event(
            &json!({"type": "error", "code": code, "message": message, "param": null}),
        ));
        MockResponse::sse(&body)
    }

    fn request(&self, body: &Value) -> SentRequest {
        SentRequest {
            tools: items(body, "/tools")
                .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
                .collect(),
            results: items(body, "/input")
                .filter(|item| item["type"] == "function_call_output")
                .map(|item| {
                    (
                        item["call_id"].as_str().unwrap_or_default().to_owned(),
                        text_of(&item["output"]),
                    )
                })
                .collect(),
            schema: body.pointer("/text/format/schema").cloned(),
        }
    }
}
