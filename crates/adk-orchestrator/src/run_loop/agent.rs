//! [`RunLoopAgent`]: the run loop as an agent, on the workspace's tools and model adapters.

use std::sync::Arc;

use adk_core::{
    Agent, Error, ErrorKind, EventStream, GenerateContentConfig, IntoLlm, InvocationContext, Llm,
    Result,
};
use adk_flow::ToolCallbacks;
use adk_tool::{IntoTool, Tool};

use super::run::{LoopSetup, run};
use super::{DefaultStrategy, IntoLoopStrategy, LoopConfig, LoopStrategy};

/// An agent that runs the seed's configurable loop: each iteration the [`LoopStrategy`] builds a
/// request from the conversation, calls the model and reads its answer; the loop runs the tools
/// the answer calls and goes on until the strategy says stop, the iteration limit or the token
/// budget is reached, an error occurs, or the invocation is cancelled ([`StopReason`](super::StopReason)).
///
/// Its events are the model's answers (partial ones too when the run streams), the tools'
/// responses, and, when it stops without a final answer, an event saying why (its `errorCode` is
/// the stop reason in upper case). The last event carries the [`LoopResult`](super::LoopResult)
/// in its `customMetadata`; with an output key, the final answer's text also goes to the state.
///
/// ```
/// use std::sync::Arc;
/// use adk_orchestrator::{LoopConfig, RunLoopAgent};
/// use adk_test::ScriptedModel;
///
/// let agent = RunLoopAgent::builder("assistant")
///     .model(ScriptedModel::new("scripted").then_text("Hello!"))
///     .instruction("Answer briefly.")
///     .config(LoopConfig::default().with_max_iterations(4).with_token_budget(10_000))
///     .build()
///     .unwrap();
/// # let _ = agent;
/// ```
pub struct RunLoopAgent {
    name: String,
    description: String,
    setup: Arc<LoopSetup>,
}

impl RunLoopAgent {
    /// Starts building a run-loop agent named `name`.
    pub fn builder(name: impl Into<String>) -> RunLoopAgentBuilder {
        RunLoopAgentBuilder {
            agent_name: name.into(),
            description: String::new(),
            model: None,
            instruction: None,
            tools: Vec::new(),
            tool_callbacks: ToolCallbacks::new(),
            strategy: Arc::new(DefaultStrategy::new()),
            config: LoopConfig::default(),
            generate_config: GenerateContentConfig::default(),
            output_key: None,
        }
    }

    /// The loop's limits and hooks.
    pub fn config(&self) -> &LoopConfig {
        &self.setup.config
    }
}

impl Agent for RunLoopAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn run(self: Arc<Self>, ctx: InvocationContext) -> EventStream {
        let ctx = ctx.with_agent(self.clone());
        adk_telemetry::trace_agent(ctx.clone(), run(self.setup.clone(), ctx))
    }
}

/// Builds a [`RunLoopAgent`]; made by [`RunLoopAgent::builder`].
#[must_use]
pub struct RunLoopAgentBuilder {
    agent_name: String,
    description: String,
    model: Option<Arc<dyn Llm>>,
    instruction: Option<String>,
    tools: Vec<Arc<dyn Tool>>,
    tool_callbacks: ToolCallbacks,
    strategy: Arc<dyn LoopStrategy>,
    config: LoopConfig,
    generate_config: GenerateContentConfig,
    output_key: Option<String>,
}

impl RunLoopAgentBuilder {
    /// What the agent does, for models that may transfer to it and for an orchestrator's analyzer.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// The model (required).
    pub fn model(mut self, model: impl IntoLlm) -> Self {
        self.model = Some(model.into_llm());
        self
    }

    /// The system instruction.
    pub fn instruction(mut self, instruction: impl Into<String>) -> Self {
        self.instruction = Some(instruction.into());
        self
    }

    /// Adds a tool.
    pub fn tool(mut self, tool: impl IntoTool) -> Self {
        self.tools.push(tool.into_tool());
        self
    }

    /// Adds tools, in order.
    pub fn tools<T: IntoTool>(mut self, tools: impl IntoIterator<Item = T>) -> Self {
        self.tools
            .extend(tools.into_iter().map(IntoTool::into_tool));
        self
    }

    /// The callbacks run around each tool call, after the runner's plugins.
    pub fn tool_callbacks(mut self, callbacks: ToolCallbacks) -> Self {
        self.tool_callbacks = callbacks;
        self
    }

    /// How the loop talks to the model (default [`DefaultStrategy`]).
    pub fn strategy(mut self, strategy: impl IntoLoopStrategy) -> Self {
        self.strategy = strategy.into_loop_strategy();
        self
    }

    /// The loop's limits and hooks.
    pub fn config(mut self, config: LoopConfig) -> Self {
        self.config = config;
        self
    }

    /// Sampling settings of the model calls.
    pub fn generate_config(mut self, config: GenerateContentConfig) -> Self {
        self.generate_config = config;
        self
    }

    /// The state key the final answer's text is written to.
    pub fn output_key(mut self, key: impl Into<String>) -> Self {
        self.output_key = Some(key.into());
        self
    }

    /// Builds the agent; fails without a model, or when two tools share a name.
    pub fn build(self) -> Result<RunLoopAgent> {
        let model = self.model.ok_or_else(|| {
            Error::new(
                ErrorKind::Config,
                format!(
                    "agent '{}' has no model; set one with `model`",
                    self.agent_name
                ),
            )
        })?;
        for (index, tool) in self.tools.iter().enumerate() {
            if self.tools[..index]
                .iter()
                .any(|other| other.name() == tool.name())
            {
                return Err(Error::new(
                    ErrorKind::Config,
                    format!(
                        "agent '{}' has two tools named '{}'; tool names must be unique",
                        self.agent_name,
                        tool.name()
                    ),
                ));
            }
        }
        Ok(RunLoopAgent {
            name: self.agent_name,
            description: self.description,
            setup: Arc::new(LoopSetup {
                model,
                instruction: self.instruction,
                tools: self.tools,
                tool_callbacks: self.tool_callbacks,
                strategy: self.strategy,
                config: self.config,
                generate_config: self.generate_config,
                output_key: self.output_key,
            }),
        })
    }
}
