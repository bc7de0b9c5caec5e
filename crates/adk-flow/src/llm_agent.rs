//! [`LlmAgent`]: an agent whose steps are model calls and tool calls, and its builder.

use std::fmt;
use std::sync::Arc;

use adk_core::IntoLlm;
use adk_core::{
    CallbackContext, Error, ErrorKind, Event, GenerateContentConfig, InvocationContext, Llm,
    LlmRequest, LlmResponse, ReadonlyContext, Result,
};
use adk_tool::{ArgumentValidator, IntoTool, IntoToolset, Tool, ToolContext, Toolset};
use serde_json::Value;

use crate::agent_builder::agent_base_builder_methods;
use crate::agent_lifecycle::AgentBase;
use crate::callbacks::Callbacks;
use crate::{AgentMode, CodeExecutor, IntoCodeExecutor, IntoPlanner, Planner};

/// Makes an instruction from the invocation, for instructions that depend on more than state.
/// Its result is used as it is: `{var}` placeholders in it are not filled in.
pub type InstructionProvider = Arc<dyn Fn(&ReadonlyContext) -> Result<String> + Send + Sync>;

/// Where an agent's instruction comes from.
#[derive(Clone, Default)]
pub(crate) enum Instruction {
    #[default]
    None,
    /// A template: `{var}`, `{var?}`, `{app:var}`, `{artifact.name}` are filled in from the session.
    Template(String),
    /// A function of the invocation; its result is not templated.
    Provider(InstructionProvider),
}

/// Which session history the model sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum IncludeContents {
    /// The history of this agent's branch, other agents' turns shown as context.
    #[default]
    Default,
    /// Only the current turn: from the latest message of the user or of another agent.
    None,
}

/// An agent that thinks with a model: each step builds a request from the session, calls the model,
/// runs the tools it asks for, and hands over to another agent when it transfers.
///
/// ```
/// use adk_core::testing::ScriptedModel;
/// use adk_flow::LlmAgent;
///
/// let agent = LlmAgent::builder("weather_agent")
///     .description("Answers questions about the weather.")
///     .model(ScriptedModel::new("scripted"))
///     .instruction("You answer in the user's language. The user is {user:name?}.")
///     .output_key("last_answer")
///     .build()
///     .unwrap();
/// assert_eq!(adk_core::Agent::name(&agent), "weather_agent");
/// ```
pub struct LlmAgent {
    pub(crate) base: AgentBase,
    pub(crate) model: Option<Arc<dyn Llm>>,
    pub(crate) instruction: Instruction,
    pub(crate) global_instruction: Instruction,
    pub(crate) tools: Vec<Arc<dyn Tool>>,
    pub(crate) toolsets: Vec<Arc<dyn Toolset>>,
    pub(crate) generate_content_config: GenerateContentConfig,
    pub(crate) include_contents: IncludeContents,
    /// Whether `include_contents` was chosen explicitly (a single-turn copy keeps it then).
    pub(crate) include_contents_set: bool,
    pub(crate) input_schema: Option<Value>,
    pub(crate) output_schema: Option<Value>,
    /// The output schema compiled at build time, to check the agent's answers against.
    pub(crate) output_validator: Option<Arc<ArgumentValidator>>,
    pub(crate) output_key: Option<String>,
    pub(crate) disallow_transfer_to_parent: bool,
    pub(crate) disallow_transfer_to_peers: bool,
    pub(crate) planner: Option<Arc<dyn Planner>>,
    pub(crate) code_executor: Option<Arc<dyn CodeExecutor>>,
    pub(crate) max_repeated_tool_calls: Option<u32>,
    pub(crate) callbacks: Callbacks,
    /// How the agent is reached and returns control (the Task API); `None` for the default.
    pub(crate) mode: Option<AgentMode>,
}

impl LlmAgent {
    /// Starts building an agent named `name` (an identifier: the model transfers by name).
    pub fn builder(name: impl Into<String>) -> LlmAgentBuilder {
        LlmAgentBuilder {
            agent: LlmAgent {
                base: AgentBase::new(name),
                model: None,
                instruction: Instruction::None,
                global_instruction: Instruction::None,
                tools: Vec::new(),
                toolsets: Vec::new(),
                generate_content_config: GenerateContentConfig::default(),
                include_contents: IncludeContents::Default,
                include_contents_set: false,
                input_schema: None,
                output_schema: None,
                output_validator: None,
                output_key: None,
                disallow_transfer_to_parent: false,
                disallow_transfer_to_peers: false,
                planner: None,
                code_executor: None,
                max_repeated_tool_calls: None,
                callbacks: Callbacks::default(),
                mode: None,
            },
        }
    }

    /// The model this agent calls: its own, else the nearest ancestor `LlmAgent`'s.
    pub(crate) fn resolve_model(&self, ctx: &InvocationContext) -> Result<Arc<dyn Llm>> {
        if let Some(model) = &self.model {
            return Ok(model.clone());
        }
        let tree = ctx.agent_tree();
        let mut name = self.base.name.as_str();
        while let Some(parent) = tree.parent_of(name) {
            if let Some(model) = parent
                .downcast_ref::<LlmAgent>()
                .and_then(|p| p.model.clone())
            {
                return Ok(model);
            }
            name = parent.name();
        }
        Err(Error::new(
            ErrorKind::Config,
            format!(
                "agent '{}' has no model: set one with LlmAgentBuilder::model on it or an ancestor",
                self.base.name
            ),
        ))
    }

    /// The model the agent was given, if any (else it uses its nearest ancestor's).
    pub fn own_model(&self) -> Option<&Arc<dyn Llm>> {
        self.model.as_ref()
    }

    /// The JSON Schema the agent's answer follows, if set.
    pub fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }

    /// The JSON Schema of the agent's input when used as a tool, if set.
    pub fn input_schema(&self) -> Option<&Value> {
        self.input_schema.as_ref()
    }

    /// The instruction as written: the template, `<InstructionProvider>` for one computed by a
    /// function (it is not called), or empty when there is none. For describing the agent (the
    /// server's app info), not for building requests.
    pub fn instruction_text(&self) -> &str {
        match &self.instruction {
            Instruction::None => "",
            Instruction::Template(template) => template,
            Instruction::Provider(_) => "<InstructionProvider>",
        }
    }

    /// The tools the agent was given one by one (toolsets are listed only when a run asks them).
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        &self.tools
    }

    /// Sets `output_key` in the event's state delta when the event is this agent's final answer.
    /// With an output schema, only an answer that follows it is saved: the flow answers the
    /// others (see `processors::output_schema`).
    pub(crate) fn save_output_to_state(&self, event: &mut Event) -> Result<()> {
        let Some(key) = &self.output_key else {
            return Ok(());
        };
        // A task agent's result is what it hands to `finish_task`, not its text turns.
        if event.author != self.base.name
            || event.is_partial()
            || !event.is_final_response()
            || self.mode == Some(AgentMode::Task)
        {
            return Ok(());
        }
        let Some(text) = event.text() else {
            return Ok(());
        };
        let value = match &self.output_validator {
            Some(validator) => match serde_json::from_str::<Value>(&text) {
                Ok(value) if validator.problems(&value).is_empty() => value,
                _ => return Ok(()),
            },
            None => Value::String(text),
        };
        event.actions.state_delta.insert(key.clone(), value);
        Ok(())
    }
}

impl LlmAgent {
    /// The mode the agent was given, if any (see [`AgentMode`] for the defaults).
    pub fn mode(&self) -> Option<AgentMode> {
        self.mode
    }

    /// A copy of this agent in `mode`, as a workflow runs it: a single-turn copy sees only its
    /// input (unless its history setting was chosen explicitly).
    pub fn in_mode(&self, mode: AgentMode) -> LlmAgent {
        let mut copy = self.duplicate();
        copy.mode = Some(mode);
        if mode == AgentMode::SingleTurn && !self.include_contents_set {
            copy.include_contents = IncludeContents::None;
        }
        copy
    }

    /// A field-by-field copy (the agent's parts are shared).
    fn duplicate(&self) -> LlmAgent {
        LlmAgent {
            base: self.base.clone(),
            model: self.model.clone(),
            instruction: self.instruction.clone(),
            global_instruction: self.global_instruction.clone(),
            tools: self.tools.clone(),
            toolsets: self.toolsets.clone(),
            generate_content_config: self.generate_content_config.clone(),
            include_contents: self.include_contents,
            include_contents_set: self.include_contents_set,
            input_schema: self.input_schema.clone(),
            output_schema: self.output_schema.clone(),
            output_validator: self.output_validator.clone(),
            output_key: self.output_key.clone(),
            disallow_transfer_to_parent: self.disallow_transfer_to_parent,
            disallow_transfer_to_peers: self.disallow_transfer_to_peers,
            planner: self.planner.clone(),
            code_executor: self.code_executor.clone(),
            max_repeated_tool_calls: self.max_repeated_tool_calls,
            callbacks: self.callbacks.clone(),
            mode: self.mode,
        }
    }
}

impl LlmAgent {
    /// Whether the agent may hand the conversation back to its parent. The runner lets an agent
    /// that may (and whose ancestors may) keep the turn after a transfer: the user's next message
    /// goes to it rather than to the root.
    pub fn allows_transfer_to_parent(&self) -> bool {
        !self.disallow_transfer_to_parent
    }
}

impl fmt::Debug for LlmAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmAgent")
            .field("name", &self.base.name)
            .field(
                "model",
                &self.model.as_ref().map(|model| model.name().to_owned()),
            )
            .field(
                "tools",
                &self
                    .tools
                    .iter()
                    .map(|tool| tool.name())
                    .collect::<Vec<_>>(),
            )
            .field("sub_agents", &self.base.sub_agents)
            .finish_non_exhaustive()
    }
}

/// Builds an [`LlmAgent`]; made by [`LlmAgent::builder`].
#[must_use]
pub struct LlmAgentBuilder {
    agent: LlmAgent,
}

agent_base_builder_methods!(LlmAgentBuilder, agent.base);

impl LlmAgentBuilder {
    /// The model (any [`Llm`], an `Arc` of one, or an `Arc<dyn Llm>`); when unset, the nearest
    /// ancestor `LlmAgent`'s model is used.
    pub fn model(mut self, model: impl IntoLlm) -> Self {
        self.agent.model = Some(model.into_llm());
        self
    }

    /// The instruction, a template: `{var}` is replaced by state `var` (an error when it is
    /// missing), `{var?}` by state `var` or nothing, `{app:var}`, `{user:var}`, `{temp:var}` by
    /// scoped state, `{artifact.name}` by the text of artifact `name`.
    pub fn instruction(mut self, instruction: impl Into<String>) -> Self {
        self.agent.instruction = Instruction::Template(instruction.into());
        self
    }

    /// Makes the instruction with a function at each step; its result is not templated.
    pub fn instruction_provider(
        mut self,
        provider: impl Fn(&ReadonlyContext) -> Result<String> + Send + Sync + 'static,
    ) -> Self {
        self.agent.instruction = Instruction::Provider(Arc::new(provider));
        self
    }

    /// An instruction for every agent of the tree; only the root agent's is used.
    pub fn global_instruction(mut self, instruction: impl Into<String>) -> Self {
        self.agent.global_instruction = Instruction::Template(instruction.into());
        self
    }

    /// Makes the global instruction with a function; its result is not templated.
    pub fn global_instruction_provider(
        mut self,
        provider: impl Fn(&ReadonlyContext) -> Result<String> + Send + Sync + 'static,
    ) -> Self {
        self.agent.global_instruction = Instruction::Provider(Arc::new(provider));
        self
    }

    /// Adds a tool: a function made a tool with `#[adk::tool]`, a `FunctionTool`, any other
    /// [`Tool`], an `Arc` of one, or an `Arc<dyn Tool>`.
    pub fn tool(mut self, tool: impl IntoTool) -> Self {
        self.agent.tools.push(tool.into_tool());
        self
    }

    /// Adds tools, in order (tools of different types: chain [`tool`](Self::tool), or pass
    /// `Arc<dyn Tool>`s).
    pub fn tools<T: IntoTool>(mut self, tools: impl IntoIterator<Item = T>) -> Self {
        self.agent
            .tools
            .extend(tools.into_iter().map(IntoTool::into_tool));
        self
    }

    /// Adds a toolset, asked for its tools at each step.
    pub fn toolset(mut self, toolset: impl IntoToolset) -> Self {
        self.agent.toolsets.push(toolset.into_toolset());
        self
    }

    /// Sampling and output settings of every model call.
    pub fn generate_content_config(mut self, config: GenerateContentConfig) -> Self {
        self.agent.generate_content_config = config;
        self
    }

    /// Which history the model sees.
    pub fn include_contents(mut self, include: IncludeContents) -> Self {
        self.agent.include_contents = include;
        self.agent.include_contents_set = true;
        self
    }

    /// How the agent is reached and returns control: a chat agent by transfer, a task agent
    /// through a tool named after it until it calls `finish_task`, a single-turn agent through a
    /// tool that returns its answer. See [`AgentMode`](crate::AgentMode).
    pub fn mode(mut self, mode: AgentMode) -> Self {
        self.agent.mode = Some(mode);
        self
    }

    /// The JSON Schema of the agent's input when it is used as a tool.
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.agent.input_schema = Some(schema);
        self
    }

    /// The JSON Schema the agent's answer must follow. With tools, the agent answers through a
    /// `set_model_response` tool instead of the provider's structured output. Answers are checked
    /// against it: the model is told what is wrong with the first answer that breaks it, and a
    /// second such answer in the invocation fails the run with [`ErrorKind::InvalidInput`].
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.agent.output_schema = Some(schema);
        self
    }

    /// Saves the agent's final answer (parsed JSON with an output schema) in this state key.
    pub fn output_key(mut self, key: impl Into<String>) -> Self {
        self.agent.output_key = Some(key.into());
        self
    }

    /// Forbids the model to transfer back to the parent agent.
    pub fn disallow_transfer_to_parent(mut self, disallow: bool) -> Self {
        self.agent.disallow_transfer_to_parent = disallow;
        self
    }

    /// Forbids the model to transfer to sibling agents.
    pub fn disallow_transfer_to_peers(mut self, disallow: bool) -> Self {
        self.agent.disallow_transfer_to_peers = disallow;
        self
    }

    /// Plans before acting (a thinking config, or Plan-ReAct prompting).
    pub fn planner(mut self, planner: impl IntoPlanner) -> Self {
        self.agent.planner = Some(planner.into_planner());
        self
    }

    /// Runs code the model writes.
    pub fn code_executor(mut self, executor: impl IntoCodeExecutor) -> Self {
        self.agent.code_executor = Some(executor.into_code_executor());
        self
    }

    /// The loop guard, against a model that calls a tool again instead of answering: in one
    /// invocation the agent answers the calls of a tool with the same arguments from at most
    /// `limit` model responses. The first runs the tool; each later one gets the latest result
    /// back with a note telling the model to answer, without running the tool again (unless
    /// another tool ran since, which may have changed the answer); the call after the limit is refused
    /// and ends the agent's turn with a final event saying why (error code
    /// [`REPEATED_TOOL_CALLS`](crate::REPEATED_TOOL_CALLS)). `0` turns the guard off, for tools
    /// whose repeated calls mean something (polling a status, say). When unset,
    /// [`RunConfig::max_repeated_tool_calls`](adk_core::RunConfig::max_repeated_tool_calls)
    /// applies: [`DEFAULT_MAX_REPEATED_TOOL_CALLS`](adk_core::DEFAULT_MAX_REPEATED_TOOL_CALLS)
    /// unless the run sets another.
    ///
    /// ```
    /// use adk_core::testing::ScriptedModel;
    /// use adk_flow::LlmAgent;
    ///
    /// // A model that loops is stopped at its second identical call.
    /// let strict = LlmAgent::builder("strict")
    ///     .model(ScriptedModel::new("scripted"))
    ///     .max_repeated_tool_calls(1)
    ///     .build()?;
    /// // An agent that polls a tool on purpose turns the guard off.
    /// let polling = LlmAgent::builder("poller")
    ///     .model(ScriptedModel::new("scripted"))
    ///     .max_repeated_tool_calls(0)
    ///     .build()?;
    /// # let _ = (strict, polling);
    /// # Ok::<(), adk_core::Error>(())
    /// ```
    pub fn max_repeated_tool_calls(mut self, limit: u32) -> Self {
        self.agent.max_repeated_tool_calls = Some(limit);
        self
    }

    /// Runs before each model call; see [`BeforeModelCallback`](crate::BeforeModelCallback).
    pub fn before_model_callback(
        mut self,
        callback: impl Fn(&CallbackContext, &mut LlmRequest) -> Result<Option<LlmResponse>>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.agent.callbacks.before_model.push(Arc::new(callback));
        self
    }

    /// Runs after each model response; see [`AfterModelCallback`](crate::AfterModelCallback).
    pub fn after_model_callback(
        mut self,
        callback: impl Fn(&CallbackContext, &LlmResponse) -> Result<Option<LlmResponse>>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.agent.callbacks.after_model.push(Arc::new(callback));
        self
    }

    /// Runs when a model call fails; see [`OnModelErrorCallback`](crate::OnModelErrorCallback).
    pub fn on_model_error_callback(
        mut self,
        callback: impl Fn(&CallbackContext, &LlmRequest, &Error) -> Result<Option<LlmResponse>>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.agent.callbacks.on_model_error.push(Arc::new(callback));
        self
    }

    /// Runs before each tool call; see [`BeforeToolCallback`](crate::BeforeToolCallback).
    pub fn before_tool_callback(
        mut self,
        callback: impl Fn(&ToolContext, &dyn Tool, &mut Value) -> Result<Option<Value>>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.agent.callbacks.tools.before.push(Arc::new(callback));
        self
    }

    /// Runs after each successful tool call; see [`AfterToolCallback`](crate::AfterToolCallback).
    pub fn after_tool_callback(
        mut self,
        callback: impl Fn(&ToolContext, &dyn Tool, &Value, &Value) -> Result<Option<Value>>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.agent.callbacks.tools.after.push(Arc::new(callback));
        self
    }

    /// Runs when a tool call fails; see [`OnToolErrorCallback`](crate::OnToolErrorCallback).
    pub fn on_tool_error_callback(
        mut self,
        callback: impl Fn(&ToolContext, &dyn Tool, &Value, &Error) -> Result<Option<Value>>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.agent.callbacks.tools.on_error.push(Arc::new(callback));
        self
    }

    /// Builds the agent; fails when the name is not an identifier, two tools share a name, or the
    /// output schema is not a valid JSON Schema.
    pub fn build(self) -> Result<LlmAgent> {
        let mut agent = self.agent;
        agent.base.validate()?;
        if let Some(schema) = &agent.output_schema {
            let validator = ArgumentValidator::new(schema).map_err(|error| {
                Error::new(
                    ErrorKind::Config,
                    format!("agent '{}': the output schema: {error}", agent.base.name),
                )
            })?;
            agent.output_validator = Some(Arc::new(validator));
        }
        let mut names = std::collections::HashSet::new();
        if let Some(duplicate) = agent.tools.iter().find(|tool| !names.insert(tool.name())) {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "agent '{}' has two tools named '{}'; tool names must be unique",
                    agent.base.name,
                    duplicate.name()
                ),
            ));
        }
        Ok(agent)
    }
}
