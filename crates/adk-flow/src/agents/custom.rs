//! [`CustomAgent`]: an agent whose run is a closure, with the usual lifecycle callbacks
//! (ADK Go's `agent.New`).

use std::sync::Arc;

use adk_core::{Agent, EventStream, InvocationContext, Result};

use crate::agent_builder::{agent_base_accessors, agent_base_builder_methods};
use crate::agent_lifecycle::AgentBase;

/// The body of a custom agent: given the invocation, the events it yields.
pub type RunFn = Arc<dyn Fn(InvocationContext) -> EventStream + Send + Sync>;

/// An agent whose behaviour is a closure.
///
/// ```
/// use adk_core::Content;
/// use adk_flow::CustomAgent;
/// use futures::StreamExt as _;
///
/// let agent = CustomAgent::builder("greeter", |ctx| {
///     let event = ctx.new_event().with_content(Content::model("Hello!"));
///     futures::stream::iter([Ok(event)]).boxed()
/// })
/// .description("Greets the user.")
/// .build()
/// .unwrap();
/// # let _ = agent;
/// ```
pub struct CustomAgent {
    base: AgentBase,
    run: RunFn,
}

impl CustomAgent {
    /// Starts building an agent named `name` that runs `run`.
    pub fn builder(
        name: impl Into<String>,
        run: impl Fn(InvocationContext) -> EventStream + Send + Sync + 'static,
    ) -> CustomAgentBuilder {
        CustomAgentBuilder {
            agent: Self {
                base: AgentBase::new(name),
                run: Arc::new(run),
            },
        }
    }
}

impl Agent for CustomAgent {
    agent_base_accessors!();

    fn run(self: Arc<Self>, ctx: InvocationContext) -> EventStream {
        let ctx = ctx.with_agent(self.clone());
        let run = self.run.clone();
        self.base.run_with_callbacks(ctx, move |ctx| run(ctx))
    }
}

/// Builds a [`CustomAgent`]; made by [`CustomAgent::builder`].
#[must_use]
pub struct CustomAgentBuilder {
    agent: CustomAgent,
}

agent_base_builder_methods!(CustomAgentBuilder, agent.base);

impl CustomAgentBuilder {
    /// Builds the agent; fails when the name is not an identifier.
    pub fn build(self) -> Result<CustomAgent> {
        self.agent.base.validate()?;
        Ok(self.agent)
    }
}
