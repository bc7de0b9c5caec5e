//! Building agents from read configs: which models the trees need, making them ready through the
//! resolver, then the agents themselves, bottom up, with their tools.
//!
//! Building starts nothing: MCP servers are started by their toolsets when an agent first asks
//! for tools, and the models were made ready before building began.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use adk_core::{
    Agent, FunctionCallingConfig, FunctionCallingMode, GenerateContentConfig, Llm, SafetySetting,
    ThinkingConfig, ThinkingLevel, ToolConfig,
};
use adk_flow::{IncludeContents, LlmAgent, LoopAgent, ParallelAgent, SequentialAgent};
use adk_tool::mcp::{McpToolset, McpToolsetBuilder};
use adk_tool::{Tool, ToolFilter, builtin};
use adk_workflow::Node;

use crate::ModelSpec;
use crate::error::{ConfigError, ConfigErrorKind};
use crate::prepare::Prepared;
use crate::read::{AgentConfig, ReadAgent};
use crate::resolver::ModelResolver;
use crate::schema::agents::{IncludeContentsSetting, LlmAgentConfig};
use crate::schema::generate::{
    FunctionCallingModeSetting, GenerateContentSettings, ThinkingLevelSetting,
};
use crate::schema::mcp::{McpConnection, McpServer};
use crate::schema::tools::{Builtin, ToolRef};

/// The models of a load, ready, by name.
pub(crate) struct Models {
    ready: HashMap<ModelSpec, Arc<dyn Llm>>,
    /// The model of an `LlmAgent` that names none and inherits none.
    default: ModelSpec,
}

impl Models {
    /// Makes ready every model `trees` need, in the order they are first named, through
    /// `resolver`. When one fails, those already made are dropped with the error.
    pub(crate) async fn resolve(
        trees: &[&ReadAgent],
        resolver: &dyn ModelResolver,
    ) -> Result<Self, ConfigError> {
        let default = resolver.default_model();
        let mut needed = Vec::new();
        for tree in trees {
            collect_models(tree, false, &default, &mut needed);
        }
        let mut ready = HashMap::new();
        for (spec, file) in needed {
            let model = resolver.resolve(&spec).await.map_err(|error| {
                ConfigError::new(
                    ConfigErrorKind::Model,
                    &file,
                    format!("the model `{spec}` is not ready: {}", error.message()),
                )
                .with_source(error)
            })?;
            ready.insert(spec, model);
        }
        Ok(Self { ready, default })
    }

    /// The model an `LlmAgent` gets: the one it names, else the default when it inherits none.
    fn for_agent(&self, config: &LlmAgentConfig, inherited: bool) -> Option<Arc<dyn Llm>> {
        let spec = model_of(config, inherited, &self.default)?;
        self.ready.get(spec).cloned()
    }
}

/// The model an `LlmAgent` needs to be given: the one it names, else the default when no
/// `LlmAgent` above it names one (else it inherits at run time, as `LlmAgent` does).
fn model_of<'a>(
    config: &'a LlmAgentConfig,
    inherited: bool,
    default: &'a ModelSpec,
) -> Option<&'a ModelSpec> {
    config
        .model
        .as_ref()
        .or_else(|| (!inherited).then_some(default))
}

/// Pushes the models `agent` and its sub-agents need onto `needed`, each once, with the file
/// that first needs it.
fn collect_models(
    agent: &ReadAgent,
    inherited: bool,
    default: &ModelSpec,
    needed: &mut Vec<(ModelSpec, PathBuf)>,
) {
    let mut inherited_below = inherited;
    if let AgentConfig::Llm(config) = &agent.config {
        if let Some(spec) = model_of(config, inherited, default)
            && !needed.iter().any(|(known, _)| known == spec)
        {
            needed.push((spec.clone(), agent.file.clone()));
        }
        // Every LlmAgent has a model from here down: its own, the default or an ancestor's.
        inherited_below = true;
    }
    for sub_agent in &agent.sub_agents {
        collect_models(sub_agent, inherited_below, default, needed);
    }
}

/// What the caller registered with the loader: function tools and workflow nodes, by name.
pub(crate) struct Registered<'a> {
    pub(crate) function_tools: &'a BTreeMap<String, Arc<dyn Tool>>,
    pub(crate) nodes: &'a BTreeMap<String, Node>,
    /// The toolsets and code executors made ready for this load.
    pub(crate) prepared: &'a Prepared,
}

/// Builds the agent `agent` describes, and its sub-agents.
pub(crate) fn build_agent(
    agent: &ReadAgent,
    inherited: bool,
    models: &Models,
    registered: &Registered<'_>,
) -> Result<Arc<dyn Agent>, ConfigError> {
    let function_tools = registered.function_tools;
    let inherited_below = inherited || matches!(agent.config, AgentConfig::Llm(_));
    let sub_agents = agent
        .sub_agents
        .iter()
        .map(|sub_agent| build_agent(sub_agent, inherited_below, models, registered))
        .collect::<Result<Vec<_>, _>>()?;
    let built: adk_core::Result<Arc<dyn Agent>> = match &agent.config {
        AgentConfig::Llm(config) => {
            let model = models.for_agent(config, inherited);
            llm_agent(
                config,
                model,
                sub_agents,
                function_tools,
                registered.prepared,
            )
            .map(|agent| Arc::new(agent) as Arc<dyn Agent>)
        }
        AgentConfig::Sequential(config) => SequentialAgent::builder(&config.name.0)
            .description(&config.description)
            .sub_agents(sub_agents)
            .build()
            .map(|agent| Arc::new(agent) as Arc<dyn Agent>),
        AgentConfig::Parallel(config) => ParallelAgent::builder(&config.name.0)
            .description(&config.description)
            .sub_agents(sub_agents)
            .build()
            .map(|agent| Arc::new(agent) as Arc<dyn Agent>),
        AgentConfig::Loop(config) => {
            let mut builder = LoopAgent::builder(&config.name.0)
                .description(&config.description)
                .sub_agents(sub_agents);
            if let Some(rounds) = config.max_iterations.and_then(|max| max.0) {
                builder = builder.max_iterations(rounds);
            }
            builder
                .build()
                .map(|agent| Arc::new(agent) as Arc<dyn Agent>)
        }
        AgentConfig::Workflow(config) => {
            return crate::workflow::build_workflow(
                &agent.file,
                config,
                &sub_agents,
                registered.nodes,
            );
        }
    };
    built.map_err(|error| built_error(&agent.file, &error))
}

/// An error of an agent builder, which the checks made while reading should have prevented.
fn built_error(file: &Path, error: &adk_core::Error) -> ConfigError {
    ConfigError::new(ConfigErrorKind::Invalid, file, error.message().to_owned())
}

fn llm_agent(
    config: &LlmAgentConfig,
    model: Option<Arc<dyn Llm>>,
    sub_agents: Vec<Arc<dyn Agent>>,
    function_tools: &BTreeMap<String, Arc<dyn Tool>>,
    prepared: &Prepared,
) -> adk_core::Result<LlmAgent> {
    let mut builder = LlmAgent::builder(&config.name.0)
        .description(&config.description)
        .include_contents(match config.include_contents {
            IncludeContentsSetting::Default => IncludeContents::Default,
            IncludeContentsSetting::None => IncludeContents::None,
        })
        .disallow_transfer_to_parent(config.disallow_transfer_to_parent.unwrap_or(false))
        .disallow_transfer_to_peers(config.disallow_transfer_to_peers.unwrap_or(false))
        .sub_agents(sub_agents);
    if let Some(model) = model {
        builder = builder.model(model);
    }
    if let Some(instruction) = &config.instruction {
        builder = builder.instruction(instruction);
    }
    if let Some(settings) = &config.generate_content_config {
        builder = builder.generate_content_config(generate_content_config(settings));
    }
    if let Some(key) = &config.output_key {
        builder = builder.output_key(key);
    }
    if let Some(limit) = config.max_repeated_tool_calls {
        builder = builder.max_repeated_tool_calls(limit);
    }
    for tool in config.tools.iter().flat_map(|tools| &tools.0) {
        builder = match tool {
            ToolRef::Builtin(builtin) => builder.tool(builtin_tool(*builtin)),
            ToolRef::Function(name) => match function_tools.get(name) {
                Some(tool) => builder.tool(tool.clone()),
                None => {
                    return Err(adk_core::Error::new(
                        adk_core::ErrorKind::Config,
                        format!("no function tool `{name}` is registered with the loader"),
                    ));
                }
            },
            ToolRef::Mcp(server) => builder.toolset(mcp_toolset(server)),
            ToolRef::OpenApi(reference) => builder.toolset(
                prepared
                    .openapi(reference)
                    .ok_or_else(|| not_prepared("OpenAPIToolset"))?,
            ),
            ToolRef::Skills(reference) => builder.toolset(
                prepared
                    .skills(reference)
                    .ok_or_else(|| not_prepared("SkillToolset"))?,
            ),
        };
    }
    if let Some(reference) = &config.code_executor {
        builder = builder.code_executor(
            prepared
                .executor(reference)
                .ok_or_else(|| not_prepared(reference.kind.name()))?,
        );
    }
    builder.build()
}

/// The error for something the prepare step should have made, which is a bug of this crate.
fn not_prepared(what: &str) -> adk_core::Error {
    adk_core::Error::new(
        adk_core::ErrorKind::Config,
        format!("the {what} was not made ready before the agent was built"),
    )
}

/// A new instance of a built-in tool.
fn builtin_tool(builtin: Builtin) -> Arc<dyn Tool> {
    match builtin {
        Builtin::ExitLoop => Arc::new(builtin::exit_loop()),
        Builtin::LoadArtifacts => Arc::new(builtin::LoadArtifactsTool::new()),
        Builtin::LoadMemory => Arc::new(builtin::LoadMemoryTool::new()),
        Builtin::PreloadMemory => Arc::new(builtin::PreloadMemoryTool::new()),
        Builtin::GetUserChoice => Arc::new(builtin::get_user_choice()),
        Builtin::GoogleSearch => Arc::new(builtin::google_search()),
        Builtin::UrlContext => Arc::new(builtin::url_context()),
    }
}

/// The toolset of `server`; the server starts when an agent first asks for its tools.
fn mcp_toolset(server: &McpServer) -> McpToolset {
    let mut builder: McpToolsetBuilder = match &server.connection {
        McpConnection::Stdio {
            params,
            connect_timeout,
        } => {
            let mut builder = McpToolset::stdio(&params.command, &params.args);
            for (key, value) in params.env.iter().flatten() {
                builder = builder.env(key, value);
            }
            if let Some(dir) = &params.cwd {
                builder = builder.current_dir(dir);
            }
            if let Some(timeout) = connect_timeout {
                builder = builder.connect_timeout(*timeout);
            }
            builder
        }
        McpConnection::StreamableHttp {
            url,
            bearer_token,
            connect_timeout,
            request_timeout,
        } => {
            let mut builder = McpToolset::streamable_http(url);
            if let Some(token) = bearer_token {
                builder = builder.bearer_token(token);
            }
            if let Some(timeout) = connect_timeout {
                builder = builder.connect_timeout(*timeout);
            }
            if let Some(timeout) = request_timeout {
                builder = builder.request_timeout(*timeout);
            }
            builder
        }
    };
    if let Some(names) = &server.tool_filter {
        builder = builder.tool_filter(ToolFilter::names(names));
    }
    builder.build()
}

/// The adapters' settings from the config's.
fn generate_content_config(settings: &GenerateContentSettings) -> GenerateContentConfig {
    let mut config = GenerateContentConfig::default();
    config.temperature = settings.temperature;
    config.top_p = settings.top_p;
    config.top_k = settings.top_k;
    config.max_output_tokens = settings.max_output_tokens;
    config.stop_sequences = settings.stop_sequences.clone().unwrap_or_default();
    config.candidate_count = settings.candidate_count;
    config.seed = settings.seed;
    config.presence_penalty = settings.presence_penalty;
    config.frequency_penalty = settings.frequency_penalty;
    config.response_mime_type = settings.response_mime_type.clone();
    config.thinking_config = settings.thinking_config.as_ref().map(|thinking| {
        let mut config = ThinkingConfig::default();
        config.include_thoughts = thinking.include_thoughts;
        config.thinking_budget = thinking.thinking_budget;
        config.thinking_level = thinking.thinking_level.map(|level| match level {
            ThinkingLevelSetting::Minimal => ThinkingLevel::Minimal,
            ThinkingLevelSetting::Low => ThinkingLevel::Low,
            ThinkingLevelSetting::Medium => ThinkingLevel::Medium,
            ThinkingLevelSetting::High => ThinkingLevel::High,
        });
        config
    });
    config.tool_config = settings.tool_config.as_ref().map(|tool_config| {
        let calling = &tool_config.function_calling_config;
        let mut function_calling = FunctionCallingConfig::default();
        function_calling.mode = calling.mode.map(|mode| match mode {
            FunctionCallingModeSetting::Auto => FunctionCallingMode::Auto,
            FunctionCallingModeSetting::Any => FunctionCallingMode::Any,
            FunctionCallingModeSetting::None => FunctionCallingMode::None,
            FunctionCallingModeSetting::Validated => FunctionCallingMode::Validated,
        });
        function_calling.allowed_function_names =
            calling.allowed_function_names.clone().unwrap_or_default();
        let mut config = ToolConfig::default();
        config.function_calling_config = Some(function_calling);
        config
    });
    config.safety_settings = settings
        .safety_settings
        .iter()
        .flatten()
        .map(|setting| SafetySetting {
            category: setting.category.clone(),
            threshold: setting.threshold.clone(),
        })
        .collect();
    config
}
