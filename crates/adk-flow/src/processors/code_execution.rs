//! `code_execution`: with a provider-side executor the request asks the provider to run code;
//! with a local executor, code the model wrote is run here and its result becomes an event, after
//! which the model is called again to use it.

use adk_core::{
    BuiltinTool, Content, Event, LlmRequest, LlmResponse, Part, PartData, Result, Role,
};

use crate::step::Step;

pub(super) fn process_request(step: &Step, request: &mut LlmRequest) {
    let Some(executor) = &step.agent.code_executor else {
        return;
    };
    if executor.is_builtin() && !request.builtin_tools.contains(&BuiltinTool::CodeExecution) {
        request.builtin_tools.push(BuiltinTool::CodeExecution);
    }
}

/// Runs the code of a final response with a local executor. The response's content moves into
/// the code event, and a result event follows it; the response itself is left empty.
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
    let has_code = response.content.as_ref().is_some_and(|content| {
        content
            .parts
            .iter()
            .any(|part| matches!(part.data, PartData::ExecutableCode(_)))
    });
    if !has_code {
        return Ok(Vec::new());
    }
    let Some(content) = response.content.take() else {
        return Ok(Vec::new());
    };
    let mut results = Vec::new();
    for part in &content.parts {
        if let PartData::ExecutableCode(code) = &part.data {
            let result = executor.execute(&step.ctx, code).await?;
            results.push(Part::new(PartData::CodeExecutionResult(result)));
        }
    }
    let code_event = step.ctx.new_event().with_content(content);
    let result_event = step
        .ctx
        .new_event()
        .with_content(Content::new(Role::Model, results));
    Ok(vec![code_event, result_event])
}
