//! One model call, no agent: `OPENAI_BASE_URL=http://127.0.0.1:8000/v1 cargo run -p model-call -- "Why is the sky blue?"`.
//!
//! It sends the prompt (the arguments, or a default question) to an OpenAI-compatible server
//! (OpenAI, vLLM, llama.cpp, Ollama, OpenRouter) through `adk_model::OpenAi`, prints the answer
//! as it streams, then the finish reason and the token counts. Settings come from the environment:
//!
//! | variable          | meaning                                  | default        |
//! |-------------------|------------------------------------------|----------------|
//! | `OPENAI_BASE_URL` | the server, up to `/chat/completions`    | required       |
//! | `OPENAI_MODEL`    | the model name the server knows          | `gpt-4o-mini`  |
//! | `OPENAI_API_KEY`  | sent as a bearer token, when the server needs one | none  |
//!
//! Without `OPENAI_BASE_URL` it says what to set and exits successfully, so it is safe to run
//! anywhere.

#![allow(clippy::print_stdout)]

use std::io::Write as _;

use adk_core::{Content, Llm, LlmRequest, StreamingMode};
use adk_model::OpenAi;
use anyhow::Context as _;
use futures::StreamExt as _;

const DEFAULT_MODEL: &str = "gpt-4o-mini";
const DEFAULT_PROMPT: &str = "In one sentence: why is the sky blue?";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    if std::env::var("OPENAI_BASE_URL").map_or(true, |url| url.trim().is_empty()) {
        println!(
            "model-call needs an OpenAI-compatible server. Set:\n\
             \x20 OPENAI_BASE_URL  the server's base URL, e.g. https://api.openai.com/v1 or http://127.0.0.1:8000/v1 (vLLM),\n\
             \x20                  http://127.0.0.1:8080/v1 (llama.cpp), http://127.0.0.1:11434/v1 (Ollama)\n\
             \x20 OPENAI_MODEL     the model name (default {DEFAULT_MODEL})\n\
             \x20 OPENAI_API_KEY   the API key, if the server needs one\n\
             then run: cargo run -p model-call -- \"your question\""
        );
        return Ok(());
    }
    let model_name = std::env::var("OPENAI_MODEL")
        .ok()
        .filter(|name| !name.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_MODEL.to_owned());
    let prompt = std::env::args().skip(1).collect::<Vec<_>>().join(" ");
    let prompt = if prompt.trim().is_empty() {
        DEFAULT_PROMPT.to_owned()
    } else {
        prompt
    };

    let model = OpenAi::new(&model_name).context("setting up the OpenAI-compatible model")?;
    let request = LlmRequest::new(model_name.clone(), vec![Content::user(prompt)]);

    let mut responses = model.generate(request, StreamingMode::Sse);
    let mut stdout = std::io::stdout();
    while let Some(response) = responses.next().await {
        let response = response.with_context(|| format!("calling {model_name}"))?;
        if response.is_partial() {
            if let Some(text) = response.content.as_ref().and_then(Content::text) {
                write!(stdout, "{text}")?;
                stdout.flush()?;
            }
            continue;
        }
        println!();
        let reason = response.finish_reason.map(|reason| reason.to_string());
        println!("finish reason: {}", reason.as_deref().unwrap_or("none"));
        if let Some(usage) = response.usage_metadata {
            println!(
                "tokens: prompt {}, answer {}, total {}",
                usage.prompt_token_count.unwrap_or(0),
                usage.candidates_token_count.unwrap_or(0),
                usage.total_token_count.unwrap_or(0)
            );
        }
    }
    Ok(())
}
