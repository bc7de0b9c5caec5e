//! `instructions`: the root agent's global instruction, then the agent's own instruction, each
//! templated from the session unless it comes from a provider.

use adk_core::{LlmRequest, ReadonlyContext, Result};

use crate::LlmAgent;
use crate::instruction_template::inject_session_state;
use crate::llm_agent::Instruction;
use crate::step::Step;

pub(super) async fn process(step: &Step, request: &mut LlmRequest) -> Result<()> {
    let root = step.ctx.agent_tree().root();
    if let Some(root) = root.downcast_ref::<LlmAgent>()
        && let Some(text) = render(&root.global_instruction, step).await?
    {
        request.append_instructions([text]);
    }
    if let Some(text) = render(&step.agent.instruction, step).await? {
        request.append_instructions([text]);
    }
    Ok(())
}

async fn render(instruction: &Instruction, step: &Step) -> Result<Option<String>> {
    Ok(match instruction {
        Instruction::None => None,
        Instruction::Template(template) => Some(inject_session_state(template, &step.ctx).await?),
        Instruction::Provider(provider) => Some(provider(&ReadonlyContext::new(step.ctx.clone()))?),
    })
}
