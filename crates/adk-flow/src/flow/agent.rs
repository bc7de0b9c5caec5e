//! How an [`LlmAgent`] runs, as an [`Agent`]: its lifecycle callbacks around the tasks it delegated
//! that wait for the user, then its flow; its final answer saved under its `output_key`.

use std::sync::Arc;

use adk_core::{Agent, EventStream, InvocationContext};
use futures::StreamExt as _;

use crate::LlmAgent;
use crate::agent_builder::agent_base_accessors;
use crate::task;

impl Agent for LlmAgent {
    agent_base_accessors!();

    fn run(self: Arc<Self>, ctx: InvocationContext) -> EventStream {
        let ctx = ctx.with_agent(self.clone());
        let agent = self.clone();
        self.base.run_with_callbacks(ctx, move |ctx| {
            let flow_agent = agent.clone();
            // Tasks this agent delegated that wait for the user go on before its own next step.
            task::resume_then(agent.clone(), ctx, move |ctx| super::run(flow_agent, ctx))
                .map(move |event| {
                    let mut event = event?;
                    agent.save_output_to_state(&mut event)?;
                    Ok(event)
                })
                .boxed()
        })
    }
}
