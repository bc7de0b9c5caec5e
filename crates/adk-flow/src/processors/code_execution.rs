//! `code_execution`: with a provider-side executor the request asks the provider to run code;
//! with a local executor, the first block of code in a model's final answer (an
//! `executableCode` part, or a ```` ```tool_code ```` / ```` ```python ```` fence in its text)
//! is run here, the answer becomes an event holding the code, a result event follows it
//! (the files the code wrote as `inlineData`, then `codeExecutionResult`), and the model is called
//! again to use it. Requests to a model with a local executor carry earlier code and results as
//! the fenced text models write and read, since a provider rejects code parts it did not run.

use adk_core::{
    BuiltinTool, Content, Event, ExecutableCode, Language, LlmRequest, LlmResponse, Part, PartData,
    Result, Role,
};

use crate::step::Step;

/// The fences that mark code to run in a model's text, in ADK's order; the first is also how
/// code is shown back to the model.
const CODE_FENCES: [(&str, &str); 2] = [("```tool_code\n", "\n```"), ("```python\n", "\n```")];

/// How a result is shown back to the model.
const RESULT_FENCE: (&str, &str) = ("```tool_output\n", "\n```");

pub(super) fn process_request(step: &Step, request: &mut LlmRequest) {
    let Some(executor) = &step.agent.code_executor else {
        return;
    };
    if executor.is_builtin() {
        if !request.builtin_tools.contains(&BuiltinTool::CodeExecution) {
            request.builtin_tools.push(BuiltinTool::CodeExecution);
        }
        return;
    }
    let has_code = |content: &Content| {
        content.parts.iter().any(|part| {
            matches!(
                part.data,
                PartData::ExecutableCode(_) | PartData::CodeExecutionResult(_)
            )
        })
    };
    // The history is shared with the step; it is copied only when there is code in it.
    if request.contents.iter().any(has_code) {
        for content in std::sync::Arc::make_mut(&mut request.contents) {
            code_parts_to_text(content);
        }
    }
}

/// Shows code and results as fenced text. A content of results (and the files they carry) is
/// what the model reads back, so it is sent as the user's.
fn code_parts_to_text(content: &mut Content) {
    let mut converted = false;
    let mut only_results = true;
    for part in &mut content.parts {
        match &part.data {
            PartData::ExecutableCode(code) => {
                let (open, close) = CODE_FENCES[0];
                *part = Part::text(format!("{open}{}{close}", code.code));
                converted = true;
                only_results = false;
            }
            PartData::CodeExecutionResult(result) => {
                let (open, close) = RESULT_FENCE;
                let output = result.output.as_deref().unwrap_or_default();
                *part = Part::text(format!("{open}{output}{close}"));
                converted = true;
            }
            PartData::InlineData(_) => {}
            _ => only_results = false,
        }
    }
    if converted && only_results {
        content.role = Some(Role::User);
    }
}

/// Runs the first block of code of a final response with a local executor. The response's
/// content (up to the code) moves into the code event, a result event follows it, and the
/// response itself is left empty.
pub(super) async fn process_response(
    step: &Step,
    response: &mut LlmResponse,
) -> Result<Vec<Event>> {
    let Some(executor) = &step.agent.code_executor else {
        return Ok(Vec::new());
    };
    if executor.is_builtin() || response.is_partial() {
        return Ok(Vec::new());
    }
    let Some(code) = response.content.as_mut().and_then(extract_code) else {
        return Ok(Vec::new());
    };
    let Some(content) = response.content.take() else {
        return Ok(Vec::new());
    };
    let execution = executor.execute(&step.ctx, &code).await?;
    // The files come first: a result event ends with its result, which is how the flow (and
    // ADK's rule for final answers) knows the model must be called again.
    let mut results: Vec<Part> = execution
        .files
        .into_iter()
        .map(|file| Part::new(PartData::InlineData(file)))
        .collect();
    results.push(Part::new(PartData::CodeExecutionResult(execution.result)));
    let code_event = step.ctx.new_event().with_content(content);
    let result_event = step
        .ctx
        .new_event()
        .with_content(Content::new(Role::Model, results));
    Ok(vec![code_event, result_event])
}

/// The first code to run in `content`, which is cut to end with it: an `executableCode` part
/// not already followed by its result, or else the earliest fenced block in the text, which
/// becomes an `executableCode` part after the text before it. Thoughts stay as they are.
fn extract_code(content: &mut Content) -> Option<ExecutableCode> {
    let parts = &content.parts;
    for (index, part) in parts.iter().enumerate() {
        if let PartData::ExecutableCode(code) = &part.data {
            let answered = parts
                .get(index + 1)
                .is_some_and(|next| matches!(next.data, PartData::CodeExecutionResult(_)));
            if !answered {
                let code = code.clone();
                content.parts.truncate(index + 1);
                return Some(code);
            }
        }
    }
    let text: Vec<&str> = parts
        .iter()
        .filter(|part| !part.thought)
        .filter_map(|part| match &part.data {
            PartData::Text(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    if text.is_empty() {
        return None;
    }
    let text = text.join("\n");
    let (start, code) = CODE_FENCES
        .iter()
        .filter_map(|(open, close)| {
            let start = text.find(open)?;
            let body = start + open.len();
            let end = body + text[body..].find(close)?;
            Some((start, &text[body..end]))
        })
        .min_by_key(|(start, _)| *start)?;
    if code.is_empty() {
        return None;
    }
    let code = ExecutableCode {
        language: Language::Python,
        code: code.to_owned(),
    };
    let mut kept: Vec<Part> = content
        .parts
        .drain(..)
        .filter(|part| part.thought)
        .collect();
    if start > 0 {
        kept.push(Part::text(&text[..start]));
    }
    kept.push(Part::new(PartData::ExecutableCode(code.clone())));
    content.parts = kept;
    Some(code)
}
