//! The config file's types: what each key may hold, checked as serde_yaml reads it so that every
//! error has a line and a column, and the JSON Schema editors validate with, generated from the
//! same types.

pub(crate) mod agent_class;
pub(crate) mod agent_name;
pub(crate) mod agents;
pub(crate) mod code_executor;
pub(crate) mod context;
pub(crate) mod generate;
pub(crate) mod mcp;
pub(crate) mod model_name;
pub(crate) mod scalar;
pub(crate) mod section;
pub(crate) mod sub_agents;
pub(crate) mod tools;
pub(crate) mod toolsets;
pub(crate) mod workflow;

use schemars::generate::SchemaSettings;
use serde::Deserialize;

use agent_class::AgentClass;

/// The JSON Schema (draft 7, which every YAML editor reads) of an agent config file.
///
/// `cargo xtask codegen` writes it to `schemas/agent-config.schema.json`; a YAML file that
/// starts with `# yaml-language-server: $schema=<that file or its URL>` is then checked and
/// completed by editors with the YAML language server.
///
/// ```
/// let schema = adk_config::json_schema();
/// assert_eq!(schema["title"], "adk-rs agent config");
/// ```
pub fn json_schema() -> serde_json::Value {
    let generator = SchemaSettings::draft07().into_generator();
    generator
        .into_root_schema_for::<agents::AgentConfigFile>()
        .to_value()
}

/// The first reading of a file: only its `agent_class`, which decides how the rest is read.
#[derive(Deserialize)]
#[serde(expecting = "an agent config: a mapping of keys to values, such as `name: my_agent`")]
pub(crate) struct ClassProbe {
    #[serde(default)]
    pub(crate) agent_class: Option<AgentClass>,
}
