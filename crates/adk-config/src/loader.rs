//! [`AgentLoader`]: loads an agent, or every app of an agents directory, from YAML configs.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use adk_core::Agent;
use adk_tool::Tool;

use crate::build::{Models, Registered, build_agent};
use crate::error::{ConfigError, ConfigErrorKind};
use crate::prepare::Prepared;
use crate::read::{ReadAgent, ReadOptions, read_tree};
use crate::resolver::{EnvModelResolver, ModelResolver};

/// The file that describes an app's root agent in its directory.
pub const ROOT_AGENT_FILE: &str = "root_agent.yaml";

/// Loads agents described in YAML files compatible with ADK Python's `root_agent.yaml`.
///
/// Loading reads and checks every file of the tree first (its keys, types, names, tools and
/// sub-agent files), then makes the models ready through the [`ModelResolver`], then builds the
/// agents. A bad config is therefore reported before any model starts, and MCP servers start only
/// when an agent first asks for their tools, so nothing runs half-configured.
///
/// ```no_run
/// # async fn example() -> Result<(), adk_config::ConfigError> {
/// use std::sync::Arc;
/// use adk_config::AgentLoader;
/// use adk_tool::FunctionTool;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct City {
///     /// The city to report on.
///     city: String,
/// }
///
/// async fn get_weather(args: City) -> Result<String, String> {
///     Ok(format!("It is sunny in {}.", args.city))
/// }
///
/// let root_agent = AgentLoader::new()
///     // `tools: [get_weather]` in a config names this tool.
///     .function_tool(FunctionTool::new("get_weather", "The weather.", get_weather))
///     .load("agents/weather")
///     .await?;
/// # let _ = root_agent; Ok(()) }
/// ```
#[must_use]
#[derive(Clone)]
pub struct AgentLoader {
    function_tools: BTreeMap<String, Arc<dyn Tool>>,
    nodes: BTreeMap<String, adk_workflow::Node>,
    resolver: Arc<dyn ModelResolver>,
    stdio_mcp_servers: bool,
}

impl Default for AgentLoader {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for AgentLoader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentLoader")
            .field("function_tools", &self.function_tools.keys())
            .field("nodes", &self.nodes.keys())
            .field("stdio_mcp_servers", &self.stdio_mcp_servers)
            .finish_non_exhaustive()
    }
}

/// An app of an agents directory: its name (the directory's) and its root agent.
#[derive(Clone)]
#[non_exhaustive]
pub struct App {
    /// The name of the app's directory, which sessions are stored under.
    pub name: String,
    /// The agent its `root_agent.yaml` describes.
    pub root_agent: Arc<dyn Agent>,
}

impl fmt::Debug for App {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("App")
            .field("name", &self.name)
            .field("root_agent", &self.root_agent.name())
            .finish()
    }
}

impl AgentLoader {
    /// A loader with no function tools, the [`EnvModelResolver`], and MCP servers allowed to be
    /// started as local processes.
    pub fn new() -> Self {
        Self {
            function_tools: BTreeMap::new(),
            nodes: BTreeMap::new(),
            resolver: Arc::new(EnvModelResolver::new()),
            stdio_mcp_servers: true,
        }
    }

    /// Registers a function tool, which configs name by its name (`tools: [get_weather]`).
    /// A dotted name written for ADK Python (`my_package.tools.get_weather`) names the tool
    /// registered under its last part. A later tool of the same name replaces an earlier one; a
    /// built-in tool's name names the built-in.
    pub fn function_tool(mut self, tool: impl adk_tool::IntoTool) -> Self {
        let tool = tool.into_tool();
        self.function_tools.insert(tool.name().to_owned(), tool);
        self
    }

    /// Registers a workflow node (a function node, say), which a `Workflow` config's `edges` name
    /// by its name. A dotted name written for ADK Python (`my_package.funcs.upper`) names the node
    /// registered under its last part. A later node of the same name replaces an earlier one.
    ///
    /// ```
    /// use adk_config::AgentLoader;
    /// use adk_workflow::{Node, NodeError};
    ///
    /// let loader = AgentLoader::new().workflow_node(Node::function("upper", |text: String| async move {
    ///     Ok::<_, NodeError>(text.to_uppercase())
    /// }));
    /// # let _ = loader;
    /// ```
    pub fn workflow_node(mut self, node: adk_workflow::Node) -> Self {
        self.nodes.insert(node.name().to_owned(), node);
        self
    }

    /// Makes the models ready with `resolver` instead of the [`EnvModelResolver`].
    pub fn model_resolver(mut self, resolver: impl ModelResolver + 'static) -> Self {
        self.resolver = Arc::new(resolver);
        self
    }

    /// Whether configs may declare MCP servers started as local processes (`stdio_server_params`,
    /// `stdio_connection_params`); on by default. Turn it off when configs come from people who
    /// may not run programs on this machine; ADK Python keeps it off unless
    /// `ADK_ALLOW_CONFIG_STDIO_MCP_SERVERS` is set, as its web builder edits configs over HTTP.
    pub fn stdio_mcp_servers(mut self, allowed: bool) -> Self {
        self.stdio_mcp_servers = allowed;
        self
    }

    /// Loads the agent described in `path`: a YAML file, or a directory holding
    /// `root_agent.yaml`.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the file, line and column of the first problem found, or the
    /// model that could not be made ready.
    pub async fn load(&self, path: impl AsRef<Path>) -> Result<Arc<dyn Agent>, ConfigError> {
        let path = path.as_ref().to_path_buf();
        let options = self.read_options();
        let tree = blocking(&path.clone(), move || {
            let file = if path.is_dir() {
                path.join(ROOT_AGENT_FILE)
            } else {
                path
            };
            read_tree(&file, &options)
        })
        .await?;
        let prepared = Prepared::new(&[&tree]).await?;
        let models = Models::resolve(&[&tree], self.resolver.as_ref()).await?;
        build_agent(&tree, false, &models, &self.registered(&prepared))
    }

    /// Checks the agent config in `path` (a YAML file, or a directory holding
    /// `root_agent.yaml`) and the files of its sub-agents as [`load`](Self::load) reads them —
    /// YAML syntax, the keys and types of the config schema, agent classes, tool names, sub-agent
    /// files — without making models ready, reading OpenAPI documents or starting anything. What
    /// an editor calls before it saves a config.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use adk_config::AgentLoader;
    ///
    /// let dir = std::env::temp_dir().join(format!("adk-config-check-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// std::fs::write(dir.join("root_agent.yaml"), "name: helper\ninstruction: Help.\nmodle: x\n").unwrap();
    /// let error = AgentLoader::new().check(&dir).await.unwrap_err();
    /// assert_eq!(error.location().map(|at| at.line), Some(3));
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the file, line and column of the first problem found.
    pub async fn check(&self, path: impl AsRef<Path>) -> Result<(), ConfigError> {
        let path = path.as_ref().to_path_buf();
        let options = self.read_options();
        blocking(&path.clone(), move || {
            let file = if path.is_dir() {
                path.join(ROOT_AGENT_FILE)
            } else {
                path
            };
            read_tree(&file, &options).map(drop)
        })
        .await
    }

    /// Loads every app of the agents directory `dir`: each subdirectory holding a
    /// `root_agent.yaml` is an app named after the subdirectory. Apps come sorted by name;
    /// subdirectories without the file, and hidden ones, are passed over. The apps share their
    /// models: two apps naming the same model get one instance of it.
    ///
    /// # Errors
    ///
    /// When `dir` cannot be read, or any app's config is bad; then no app is loaded.
    pub async fn load_apps(&self, dir: impl AsRef<Path>) -> Result<Vec<App>, ConfigError> {
        let dir = dir.as_ref().to_path_buf();
        let options = self.read_options();
        let apps = blocking(&dir.clone(), move || {
            app_names(&dir)?
                .into_iter()
                .map(|name| {
                    let tree = read_tree(&dir.join(&name).join(ROOT_AGENT_FILE), &options)?;
                    Ok((name, tree))
                })
                .collect::<Result<Vec<(String, ReadAgent)>, ConfigError>>()
        })
        .await?;
        let trees: Vec<&ReadAgent> = apps.iter().map(|(_, tree)| tree).collect();
        let prepared = Prepared::new(&trees).await?;
        let models = Models::resolve(&trees, self.resolver.as_ref()).await?;
        apps.iter()
            .map(|(name, tree)| {
                Ok(App {
                    name: name.clone(),
                    root_agent: build_agent(tree, false, &models, &self.registered(&prepared))?,
                })
            })
            .collect()
    }

    /// What the caller registered, for building.
    fn registered<'a>(&'a self, prepared: &'a Prepared) -> Registered<'a> {
        Registered {
            function_tools: &self.function_tools,
            nodes: &self.nodes,
            prepared,
        }
    }

    /// What reading needs to know of this loader.
    fn read_options(&self) -> ReadOptions {
        ReadOptions {
            function_tools: Arc::new(self.function_tools.keys().cloned().collect::<BTreeSet<_>>()),
            stdio_mcp_allowed: self.stdio_mcp_servers,
        }
    }
}

/// Runs `read` on tokio's blocking threads: reading touches the file system and parses YAML,
/// which must not hold up an async thread.
async fn blocking<T: Send + 'static>(
    path: &Path,
    read: impl FnOnce() -> Result<T, ConfigError> + Send + 'static,
) -> Result<T, ConfigError> {
    match tokio::task::spawn_blocking(read).await {
        Ok(read) => read,
        Err(join_error) if join_error.is_panic() => {
            std::panic::resume_unwind(join_error.into_panic())
        }
        Err(join_error) => Err(ConfigError::new(
            ConfigErrorKind::Read,
            path,
            "reading was cancelled: the runtime is shutting down",
        )
        .with_source(join_error)),
    }
}

/// The names of the subdirectories of `dir` that hold a `root_agent.yaml`, sorted.
fn app_names(dir: &Path) -> Result<Vec<String>, ConfigError> {
    let read_error = |error: std::io::Error| {
        ConfigError::new(
            ConfigErrorKind::Read,
            dir,
            format!("cannot read the agents directory: {error}"),
        )
        .with_source(error)
    };
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(read_error)? {
        let entry = entry.map_err(read_error)?;
        let path = entry.path();
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if name.starts_with('.') || !path.join(ROOT_AGENT_FILE).is_file() {
            continue;
        }
        names.push(name);
    }
    names.sort();
    Ok(names)
}
