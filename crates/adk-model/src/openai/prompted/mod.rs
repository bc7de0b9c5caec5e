//! Prompted tool calling, for servers and models without native tool calls (llama.cpp serving
//! SmolLM2, say): each model turn is a few small requests whose answers a `response_format` JSON
//! schema constrains, and what comes back is turned into ordinary function calls and text.
//!
//! A turn with tools runs these steps, each a request of its own:
//!
//! 1. **Choose** the tool, when there is more than one: the answer is one of their names.
//! 2. **Confirm**, for a tool with no argument to check: a yes or no, after examples built from the
//!    tool's name (a request for it is a yes, greetings and thanks are a no).
//! 3. **Fill** the arguments: the answer follows the tool's parameters schema.
//! 4. **Check** the call: a string argument the tool requires must appear in the instruction or
//!    the conversation (for a further call of the same turn, in this turn), and a call already
//!    made and answered since the user's last message is not made again. A call that fails the
//!    check is not made: the model answers instead. A small model fills arguments well but
//!    decides poorly whether to call at all; an argument it did not find in the conversation is
//!    one it made up.
//! 5. **Answer**: `{"answer": <one sentence>}`, a sentence of a bounded number of words, each a
//!    word or number of the instruction or of this turn (the user's message, calls, results), or
//!    a common English word (see `pattern.rs`). After tool results the sentence must also quote
//!    their string values and, while no more than three values are quoted, their numbers, with a
//!    few words around them. So the answer states what the tool returned, cannot state what nobody
//!    said, and cannot run on. A sentence that quotes nothing ends before it says a phrase of
//!    three words again (see `answer.rs`). With a response schema the answer follows it instead.
//!
//! `FunctionCallingMode::Any` (a forced call) skips confirming and checking; `None` sends the
//! request without tools, as does a request that has none. In the history, earlier calls are
//! written as `{"tool": <name>, "args": {...}}` in the model's turns and function responses as user
//! messages that begin with [`RESULT_PREFIX`](history::RESULT_PREFIX), so no `tool` message is ever sent. Steps 1 to 4 are
//! not streamed; the answer streams its text.

mod answer;
mod history;
mod pattern;

use std::sync::Arc;

use adk_core::{
    Content, FunctionCall, FunctionCallingMode, FunctionDeclaration, LlmRequest, LlmResponse, Part,
    Role,
};
use futures::{Stream, StreamExt as _};
use serde_json::{Map, Value, json};

use self::answer::{AnswerKind, AnswerStream};
use super::Inner;
use crate::error::Error;

/// Most tokens of a step's answer that is a name or a yes or no.
const CHOICE_TOKENS: u32 = 16;

/// Most tokens of the arguments, when the request sets no limit.
const FILL_TOKENS: u32 = 256;

/// The frequency penalty of the answer when the request sets none: a small model held to a few
/// words otherwise repeats them ("New York, New York, ...").
const ANSWER_FREQUENCY_PENALTY: f32 = 0.5;

/// The frequency penalty of an answer that quotes tool results, when the request sets none. The
/// words it may use are mostly the result's own, which a small model otherwise states twice
/// ("try Paris, London, Tokyo, New York or Paris, London"); on a free answer a penalty this high
/// turns SmolLM2-135M's sentences into word salad, so it is kept to answers after results.
const QUOTING_FREQUENCY_PENALTY: f32 = 1.5;

/// The responses of one turn of prompted tool calling on `request`.
pub(super) fn generate(
    inner: Arc<Inner>,
    request: LlmRequest,
    stream: bool,
) -> impl Stream<Item = Result<LlmResponse, Error>> + Send + 'static {
    async_stream::stream! {
        let turn = match Turn::of(request) {
            Ok(turn) => turn,
            Err(error) => {
                yield Err(error);
                return;
            }
        };
        let Some(tools) = turn.tools.clone() else {
            let mut responses = Box::pin(inner.send(turn.base, stream));
            while let Some(response) = responses.next().await {
                yield response;
            }
            return;
        };
        match turn.call(&inner, &tools).await {
            Ok(Some(call)) => {
                yield Ok(call);
                return;
            }
            Ok(None) => {}
            Err(error) => {
                yield Err(error);
                return;
            }
        }
        let (request, kind) = turn.answer_request();
        let mut reading = AnswerStream::new(kind);
        let mut responses = Box::pin(inner.send(request, stream));
        while let Some(response) = responses.next().await {
            match response {
                Ok(response) if response.is_partial() => {
                    if let Some(partial) = reading.partial(response) {
                        yield Ok(partial);
                    }
                }
                Ok(response) => {
                    let whole = answer::read(kind, response);
                    // What was held back goes out last, so that the partials add up to the
                    // answer.
                    if stream && let Some(rest) = reading.rest(&whole) {
                        yield Ok(rest);
                    }
                    yield Ok(whole);
                }
                Err(error) => yield Err(error),
            }
        }
    }
}

/// What a turn works with.
struct Turn {
    /// The request with the history rewritten for the model and no tools.
    base: LlmRequest,
    /// The tools it may call, `None` when it may call none.
    tools: Option<Vec<FunctionDeclaration>>,
    /// Whether a call is forced (`FunctionCallingMode::Any`).
    forced: bool,
    /// The request's response schema, which the answer then follows.
    answer_schema: Option<Value>,
    /// The original history, for checking calls.
    contents: Arc<Vec<Content>>,
}

impl Turn {
    fn of(request: LlmRequest) -> Result<Self, Error> {
        let contents = request.contents.clone();
        let mut base = request;
        base.contents = Arc::new(contents.iter().map(history::content).collect());
        let declared = std::mem::take(&mut base.tools);
        let calling = base
            .config
            .tool_config
            .take()
            .and_then(|config| config.function_calling_config);
        let mut turn = Self {
            answer_schema: None,
            forced: false,
            tools: None,
            contents,
            base,
        };
        if declared.is_empty() {
            return Ok(turn);
        }
        match &calling {
            Some(calling) if calling.mode == Some(FunctionCallingMode::None) => return Ok(turn),
            Some(calling) if calling.mode == Some(FunctionCallingMode::Any) => {
                let allowed = &calling.allowed_function_names;
                let tools: Vec<_> = declared
                    .into_iter()
                    .filter(|tool| allowed.is_empty() || allowed.contains(&tool.name))
                    .collect();
                if tools.is_empty() {
                    return Err(Error::config(format!(
                        "function calling is forced to {allowed:?}, but no declared tool has such a name; fix allowed_function_names"
                    )));
                }
                turn.forced = true;
                turn.tools = Some(tools);
            }
            _ => turn.tools = Some(declared),
        }
        turn.answer_schema = turn.base.config.response_schema.take();
        turn.base.config.response_mime_type = None;
        Ok(turn)
    }

    /// The call this turn makes, if it makes one.
    async fn call(
        &self,
        inner: &Arc<Inner>,
        tools: &[FunctionDeclaration],
    ) -> Result<Option<LlmResponse>, Error> {
        let tool = match tools {
            [only] => only,
            _ => self.choose(inner, tools).await?,
        };
        let checked = !self.forced && !groundable(tool).is_empty();
        if !self.forced && !checked && !self.confirm(inner, tool).await? {
            return Ok(None);
        }
        let (args, mut response) = self.fill(inner, tool).await?;
        let Some(mut args) = args else {
            return Ok(None);
        };
        let earlier_calls = history::calls_this_turn(&self.contents);
        if checked && !self.ground(tool, &mut args, earlier_calls.is_empty()) {
            return Ok(None);
        }
        let call = FunctionCall::new(tool.name.clone(), Value::Object(args));
        let repeated = earlier_calls
            .iter()
            .any(|earlier| earlier.name == call.name && earlier.args == call.args);
        if !self.forced && repeated {
            return Ok(None);
        }
        response.content = Some(Content::new(Role::Model, [Part::function_call(call)]));
        Ok(Some(response))
    }

    /// Step 1: the model names the tool that fits best.
    async fn choose<'t>(
        &self,
        inner: &Arc<Inner>,
        tools: &'t [FunctionDeclaration],
    ) -> Result<&'t FunctionDeclaration, Error> {
        let listed: String = tools
            .iter()
            .map(|tool| format!("- {}: {}\n", tool.name, tool.description))
            .collect();
        let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
        let request = self.step(
            vec![Content::user(format!(
                "Which of these tools fits my last message best?\n{listed}Reply with the tool's name."
            ))],
            json!({"enum": names}),
            CHOICE_TOKENS,
        );
        let reply = text_of(&inner.complete(request).await?);
        let chosen: Option<String> = serde_json::from_str(&reply).ok();
        Ok(chosen
            .and_then(|name| tools.iter().find(|tool| tool.name == name))
            .unwrap_or(&tools[0]))
    }

    /// Step 2: whether to call a tool that has no argument to check, by a yes or no after
    /// examples.
    async fn confirm(&self, inner: &Arc<Inner>, tool: &FunctionDeclaration) -> Result<bool, Error> {
        let question = format!(
            "Should the tool {} ({}) be called to answer this? Reply yes or no.",
            tool.name, tool.description
        );
        let mut examples = Vec::new();
        for (message, reply) in [
            (format!("I need {} now.", tool.name), "yes"),
            ("Hello!".to_owned(), "no"),
            ("Thank you!".to_owned(), "no"),
        ] {
            examples.push(Content::user(format!("{message}\n\n{question}")));
            examples.push(Content::model(format!("\"{reply}\"")));
        }
        let mut request = self.step(
            vec![Content::user(format!(
                "Should the tool {} ({}) be called to answer my last message? Reply yes or no.",
                tool.name, tool.description
            ))],
            json!({"enum": ["yes", "no"]}),
            CHOICE_TOKENS,
        );
        let contents = Arc::make_mut(&mut request.contents);
        contents.splice(0..0, examples);
        let reply = text_of(&inner.complete(request).await?);
        Ok(reply.trim() == "\"yes\"")
    }

    /// Step 3: the arguments, under the tool's schema; `None` when the reply is not an object.
    async fn fill(
        &self,
        inner: &Arc<Inner>,
        tool: &FunctionDeclaration,
    ) -> Result<(Option<Map<String, Value>>, LlmResponse), Error> {
        let Some(parameters) = tool.parameters.as_deref().cloned() else {
            return Ok((Some(Map::new()), LlmResponse::default()));
        };
        let request = self.step(
            vec![
                Content::model(format!("I will call {} ({}).", tool.name, tool.description)),
                Content::user(format!("Give the arguments of {} as JSON.", tool.name)),
            ],
            closed(hoist_definitions(parameters)),
            self.base.config.max_output_tokens.unwrap_or(FILL_TOKENS),
        );
        let response = inner.complete(request).await?;
        let args = match serde_json::from_str::<Value>(&text_of(&response)) {
            Ok(Value::Object(args)) => Some(args),
            _ => None,
        };
        Ok((args, response))
    }

    /// Step 4: whether every argument that can be checked appears in what was said. Spaces and
    /// punctuation around such an argument are removed first (a small model writes `"Paris,"`).
    /// The turn's first call may take it from anywhere in the conversation or the instruction
    /// ("there" is the city asked about before); a further call only from this turn, the user's
    /// message and the results since: a small model otherwise calls again for a city of an
    /// earlier question once it has the answer to this one.
    fn ground(
        &self,
        tool: &FunctionDeclaration,
        args: &mut Map<String, Value>,
        first_of_turn: bool,
    ) -> bool {
        let said = if first_of_turn {
            history::said(self.base.system_instruction.as_deref(), &self.contents)
        } else {
            history::said(None, history::this_turn(&self.contents))
        };
        groundable(tool).iter().all(|name| {
            let Some(Value::String(value)) = args.get_mut(*name) else {
                return false;
            };
            let trimmed =
                value.trim_matches(|c: char| c.is_whitespace() || c.is_ascii_punctuation());
            if trimmed.is_empty() || !said.contains(&trimmed.to_lowercase()) {
                return false;
            }
            *value = trimmed.to_owned();
            true
        })
    }

    /// Step 5's request: the answer's shape and how to read it.
    fn answer_request(&self) -> (LlmRequest, AnswerKind) {
        let (answer, kind) = match &self.answer_schema {
            Some(schema) => (schema.clone(), AnswerKind::Json),
            None => {
                // The words of the instruction and of this turn: words of earlier turns are about
                // other questions (another city's sky, say).
                let texts = history::texts(
                    self.base.system_instruction.as_deref(),
                    history::this_turn(&self.contents),
                );
                let vocabulary = pattern::Vocabulary::of(texts.iter().map(String::as_str));
                let quoting = history::ends_with_results(&self.contents)
                    .then(|| {
                        pattern::quoting(
                            &vocabulary,
                            &history::latest_result_values(
                                &self.contents,
                                pattern::MAX_QUOTED_VALUES,
                            ),
                        )
                    })
                    .flatten();
                let (pattern, kind) = match quoting {
                    Some(pattern) => (pattern, AnswerKind::Text),
                    None => (
                        pattern::sentence(&vocabulary, pattern::SENTENCE_WORDS),
                        AnswerKind::Sentence,
                    ),
                };
                (json!({"type": "string", "pattern": pattern}), kind)
            }
        };
        let mut definitions = Map::new();
        let answer = hoist_into(answer, &mut definitions);
        let mut schema = json!({
            "type": "object",
            "properties": {"answer": answer},
            "required": ["answer"],
            "additionalProperties": false,
        });
        if !definitions.is_empty() {
            schema["$defs"] = Value::Object(definitions);
        }
        let mut request = self.base.clone();
        request.config.response_schema = Some(schema);
        let penalty = match kind {
            AnswerKind::Text => Some(QUOTING_FREQUENCY_PENALTY),
            AnswerKind::Sentence => Some(ANSWER_FREQUENCY_PENALTY),
            AnswerKind::Json => None,
        };
        if let Some(penalty) = penalty {
            request.config.frequency_penalty.get_or_insert(penalty);
        }
        (request, kind)
    }

    /// A request of one step: the conversation followed by `extra` contents, the answer held to
    /// `schema` and `max_tokens`.
    fn step(&self, extra: Vec<Content>, schema: Value, max_tokens: u32) -> LlmRequest {
        let mut request = self.base.clone();
        Arc::make_mut(&mut request.contents).extend(extra);
        request.config.response_schema = Some(schema);
        request.config.max_output_tokens = Some(max_tokens);
        request
    }
}

/// The arguments of `tool` that a call is checked by: required strings free to hold any text
/// (not an `enum`, `const` or `format`).
fn groundable(tool: &FunctionDeclaration) -> Vec<&str> {
    let Some(parameters) = tool.parameters.as_deref() else {
        return Vec::new();
    };
    let required: Vec<&str> = parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    required
        .into_iter()
        .filter(|name| {
            parameters
                .get("properties")
                .and_then(|properties| properties.get(*name))
                .is_some_and(|property| {
                    property.get("type") == Some(&json!("string"))
                        && ["enum", "const", "format"]
                            .iter()
                            .all(|key| property.get(*key).is_none())
                })
        })
        .collect()
}

/// An object schema that allows no properties besides those it names, so the grammar keeps the
/// model to the tool's arguments.
fn closed(mut schema: Value) -> Value {
    if let Some(object) = schema.as_object_mut()
        && object.get("type") == Some(&json!("object"))
        && !object.contains_key("additionalProperties")
    {
        object.insert("additionalProperties".to_owned(), json!(false));
    }
    schema
}

/// `schema` with its definitions moved to its root, where its `#/$defs/...` references point.
fn hoist_definitions(schema: Value) -> Value {
    let mut definitions = Map::new();
    let mut schema = hoist_into(schema, &mut definitions);
    if !definitions.is_empty()
        && let Some(object) = schema.as_object_mut()
    {
        object.insert("$defs".to_owned(), Value::Object(definitions));
    }
    schema
}

/// `schema` without `$schema` and its definitions, which go into `definitions` (first one wins).
fn hoist_into(mut schema: Value, definitions: &mut Map<String, Value>) -> Value {
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
        for key in ["$defs", "definitions"] {
            if let Some(Value::Object(defs)) = object.remove(key) {
                for (name, definition) in defs {
                    definitions.entry(name).or_insert(definition);
                }
            }
        }
    }
    schema
}

/// The text of a response's content.
fn text_of(response: &LlmResponse) -> String {
    response
        .content
        .as_ref()
        .map(|content| {
            content
                .parts
                .iter()
                .filter(|part| !part.thought)
                .filter_map(Part::as_text)
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
