//! Reading a config file and the files of its sub-agents into a tree of checked configs, before
//! anything is built or started.
//!
//! Each file is read three times, which costs little for files of this size: as YAML alone (so a
//! syntax error is told apart), for its `agent_class` alone (which decides the keys allowed), and
//! in full, with the [`ReadContext`] installed so that paths, names and tools are checked in place.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use serde::de::{DeserializeSeed, IgnoredAny};

use crate::error::{ConfigError, ConfigErrorKind, Location};
use crate::schema::ClassProbe;
use crate::schema::agent_class::AgentClass;
use crate::schema::agents::{LlmAgentConfig, LoopAgentConfig, WorkflowAgentConfig};
use crate::schema::context::{self, ReadContext};
use crate::schema::section::{Checked, Section};
use crate::schema::sub_agents::SubAgentRef;
use crate::schema::workflow::{EdgeEntry, WorkflowConfig};

/// The config of one agent, by class.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AgentConfig {
    Llm(Box<LlmAgentConfig>),
    Sequential(WorkflowAgentConfig),
    Parallel(WorkflowAgentConfig),
    Loop(LoopAgentConfig),
    Workflow(WorkflowConfig),
}

impl AgentConfig {
    /// The files of its sub-agents, in order (a workflow's agent nodes, each once).
    fn sub_agents(&self) -> Vec<&SubAgentRef> {
        let sub_agents = match self {
            Self::Llm(config) => &config.sub_agents,
            Self::Sequential(config) | Self::Parallel(config) => &config.sub_agents,
            Self::Loop(config) => &config.sub_agents,
            Self::Workflow(config) => {
                let mut files: Vec<&SubAgentRef> = Vec::new();
                for file in config.edges.iter().flat_map(EdgeEntry::agent_files) {
                    if !files.iter().any(|known| known.real_path == file.real_path) {
                        files.push(file);
                    }
                }
                return files;
            }
        };
        sub_agents.iter().flatten().collect()
    }
}

/// An agent read from its file, with its sub-agents read from theirs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ReadAgent {
    /// The file, as messages show it.
    pub(crate) file: PathBuf,
    pub(crate) config: AgentConfig,
    pub(crate) sub_agents: Vec<ReadAgent>,
}

/// What reading needs from the loader.
#[derive(Debug, Clone)]
pub(crate) struct ReadOptions {
    /// The names of the function tools the caller registered.
    pub(crate) function_tools: Arc<BTreeSet<String>>,
    /// Whether MCP servers started as local processes may be declared.
    pub(crate) stdio_mcp_allowed: bool,
}

/// Reads the agent tree whose root is described in `file`.
pub(crate) fn read_tree(file: &Path, options: &ReadOptions) -> Result<ReadAgent, ConfigError> {
    let real_path = file.canonicalize().map_err(|error| {
        let message = if error.kind() == std::io::ErrorKind::NotFound {
            "the file does not exist".to_owned()
        } else {
            format!("cannot read the file: {error}")
        };
        ConfigError::new(ConfigErrorKind::Read, file, message).with_source(error)
    })?;
    let names = Rc::new(RefCell::new(BTreeMap::new()));
    read_agent(
        FileToRead {
            shown_path: file.to_path_buf(),
            real_path,
        },
        &[],
        options,
        &names,
    )
}

/// A file, as shown and as resolved.
struct FileToRead {
    shown_path: PathBuf,
    real_path: PathBuf,
}

fn read_agent(
    file: FileToRead,
    ancestors: &[(PathBuf, PathBuf)],
    options: &ReadOptions,
    names: &Rc<RefCell<BTreeMap<String, PathBuf>>>,
) -> Result<ReadAgent, ConfigError> {
    let shown = file.shown_path.as_path();
    let text = std::fs::read_to_string(&file.real_path).map_err(|error| {
        ConfigError::new(
            ConfigErrorKind::Read,
            shown,
            format!("cannot read the file: {error}"),
        )
        .with_source(error)
    })?;
    if text.trim().is_empty() {
        return Err(ConfigError::new(
            ConfigErrorKind::Invalid,
            shown,
            "the file is empty; an agent config needs at least `name`",
        ));
    }
    serde_yaml::from_str::<IgnoredAny>(&text)
        .map_err(|error| yaml_error(ConfigErrorKind::Syntax, shown, &error))?;
    let class = serde_yaml::from_str::<ClassProbe>(&text)
        .map_err(|error| yaml_error(ConfigErrorKind::Invalid, shown, &error))?
        .agent_class
        .unwrap_or(AgentClass::Llm);
    let context = ReadContext {
        shown_path: file.shown_path.clone(),
        real_path: file.real_path.clone(),
        ancestors: ancestors.to_vec(),
        function_tools: options.function_tools.clone(),
        stdio_mcp_allowed: options.stdio_mcp_allowed,
        agent_names: names.clone(),
    };
    let config = context::reading(context, || match class {
        AgentClass::Llm => read_as(&text, class).map(|config| AgentConfig::Llm(Box::new(config))),
        AgentClass::Sequential => read_as(&text, class).map(AgentConfig::Sequential),
        AgentClass::Parallel => read_as(&text, class).map(AgentConfig::Parallel),
        AgentClass::Loop => read_as(&text, class).map(AgentConfig::Loop),
        AgentClass::Workflow => read_as(&text, class).map(AgentConfig::Workflow),
    })
    .map_err(|error| yaml_error(ConfigErrorKind::Invalid, shown, &error))?;

    let mut below = ancestors.to_vec();
    below.push((file.shown_path.clone(), file.real_path.clone()));
    let sub_agents = config
        .sub_agents()
        .into_iter()
        .map(|sub_agent| {
            let file = FileToRead {
                shown_path: sub_agent.shown_path.clone(),
                real_path: sub_agent.real_path.clone(),
            };
            read_agent(file, &below, options, names)
        })
        .collect::<Result<_, _>>()?;
    Ok(ReadAgent {
        file: file.shown_path,
        config,
        sub_agents,
    })
}

/// Reads `text` as the config of an agent of `class`.
fn read_as<T: Section>(text: &str, class: AgentClass) -> Result<T, serde_yaml::Error> {
    Checked::<T>::named(class.what()).deserialize(serde_yaml::Deserializer::from_str(text))
}

/// A serde_yaml error as a [`ConfigError`] of `kind` in `file`, with its line and column taken out
/// of the message and kept as the location.
fn yaml_error(kind: ConfigErrorKind, file: &Path, error: &serde_yaml::Error) -> ConfigError {
    let location = error.location().map(|location| Location {
        line: location.line(),
        column: location.column(),
    });
    let mut message = error.to_string();
    if let Some(Location { line, column }) = location {
        let suffix = format!(" at line {line} column {column}");
        if let Some(at) = message.find(&suffix) {
            message.replace_range(at..at + suffix.len(), "");
        }
    }
    ConfigError::new(kind, file, message).at(location)
}
