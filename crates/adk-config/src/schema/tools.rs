//! The `tools:` of an `LlmAgent`: ADK's built-in tools by name, MCP, OpenAPI and skill toolsets
//! by their args, and function tools the caller registered with the loader by name.
//!
//! An entry is a name (`- exit_loop`) or a mapping (`- name: McpToolset` with `args:`), as in ADK
//! Python. Names are checked while they are read, so an unknown one is reported at its line and
//! column with the names allowed.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::context;
use super::mcp::{McpServer, McpToolsetArgs};
use super::scalar::{parse_string, quoted_list};
use super::section::{Checked, Keys};
use super::toolsets::{OpenApiRef, OpenApiToolsetArgs, SkillToolsetArgs, SkillsRef};

/// ADK's built-in tools that adk-tool has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Builtin {
    /// Ends the loop of the `LoopAgent` above.
    ExitLoop,
    /// Shows the model the artifacts of the session.
    LoadArtifacts,
    /// Searches the user's memory.
    LoadMemory,
    /// Adds what memory holds about the user's message to every request.
    PreloadMemory,
    /// Asks the user to choose among options (a long-running tool).
    GetUserChoice,
    /// Gemini's Google Search, run by the model's provider.
    GoogleSearch,
    /// Gemini's URL context, run by the model's provider.
    UrlContext,
}

impl Builtin {
    const ALL: [Self; 7] = [
        Self::ExitLoop,
        Self::GetUserChoice,
        Self::GoogleSearch,
        Self::LoadArtifacts,
        Self::LoadMemory,
        Self::PreloadMemory,
        Self::UrlContext,
    ];

    /// The tool's name, as ADK Python and the model know it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::ExitLoop => "exit_loop",
            Self::LoadArtifacts => "load_artifacts",
            Self::LoadMemory => "load_memory",
            Self::PreloadMemory => "preload_memory",
            Self::GetUserChoice => "get_user_choice",
            Self::GoogleSearch => "google_search",
            Self::UrlContext => "url_context",
        }
    }
}

/// ADK Python's package of built-in tools; `google.adk.tools.exit_loop` names `exit_loop`.
const BUILTIN_PACKAGE: &str = "google.adk.tools.";

/// Every name ADK Python gives its MCP toolset in a config.
const MCP_TOOLSET: &[&str] = &[
    "McpToolset",
    "MCPToolset",
    "google.adk.tools.McpToolset",
    "google.adk.tools.MCPToolset",
    "google.adk.tools.mcp_tool.McpToolset",
    "google.adk.tools.mcp_tool.MCPToolset",
    "google.adk.tools.mcp_tool.mcp_toolset.McpToolset",
    "google.adk.tools.mcp_tool.mcp_toolset.MCPToolset",
];

/// Every name of the OpenAPI toolset in a config.
const OPENAPI_TOOLSET: &[&str] = &[
    "OpenAPIToolset",
    "google.adk.tools.openapi_tool.OpenAPIToolset",
    "google.adk.tools.openapi_tool.openapi_spec_parser.OpenAPIToolset",
    "google.adk.tools.openapi_tool.openapi_spec_parser.openapi_toolset.OpenAPIToolset",
];

/// Every name of the skill toolset in a config.
const SKILL_TOOLSET: &[&str] = &[
    "SkillToolset",
    "google.adk.tools.SkillToolset",
    "google.adk.tools.skill_toolset.SkillToolset",
];

/// One tool of an agent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ToolRef {
    /// A built-in tool.
    Builtin(Builtin),
    /// A function tool the caller registered, by its registered name.
    Function(String),
    /// The tools of an MCP server.
    Mcp(McpServer),
    /// The operations of an OpenAPI document.
    OpenApi(OpenApiRef),
    /// The skills of a folder.
    Skills(SkillsRef),
}

/// What a tool's `name` names.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ToolName {
    Builtin(Builtin),
    Function(String),
    Mcp,
    OpenApi,
    Skills,
}

impl ToolName {
    /// What `written` names: a built-in (also by its `google.adk.tools` path), the MCP toolset,
    /// or a registered function tool. A dotted name of ADK Python (`my_package.tools.check_prime`)
    /// names the function tool registered under its last part, as adk-rs has no Python modules
    /// to import.
    fn parse(written: &str) -> Result<Self, String> {
        if MCP_TOOLSET.contains(&written) {
            return Ok(Self::Mcp);
        }
        if OPENAPI_TOOLSET.contains(&written) {
            return Ok(Self::OpenApi);
        }
        if SKILL_TOOLSET.contains(&written) {
            return Ok(Self::Skills);
        }
        let bare = written.strip_prefix(BUILTIN_PACKAGE).unwrap_or(written);
        if let Some(builtin) = Builtin::ALL.into_iter().find(|b| b.name() == bare) {
            return Ok(Self::Builtin(builtin));
        }
        let last = written.rsplit('.').next().unwrap_or(written);
        context::with(|context| {
            if context.function_tools.contains(written) {
                return Ok(Self::Function(written.to_owned()));
            }
            if context.function_tools.contains(last) {
                return Ok(Self::Function(last.to_owned()));
            }
            Err(unknown_tool(written, &context.function_tools))
        })
    }
}

/// The message for a tool name nothing answers to, with every name that would.
fn unknown_tool(written: &str, function_tools: &BTreeSet<String>) -> String {
    let builtins = quoted_list(Builtin::ALL.into_iter().map(Builtin::name));
    let registered = if function_tools.is_empty() {
        "none are registered".to_owned()
    } else {
        quoted_list(function_tools.iter().map(String::as_str))
    };
    format!(
        "unknown tool `{written}`; adk-rs knows the built-in tools {builtins}; `McpToolset`, \
         `OpenAPIToolset` and `SkillToolset`, which take `args`; and the function tools \
         registered with the loader: {registered}"
    )
}

impl<'de> Deserialize<'de> for ToolName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        parse_string(deserializer, "a tool name", ToolName::parse)
    }
}

/// The keys of the mapping form of a tool entry.
const ENTRY_KEYS: Keys = Keys::new("a tool entry", &["name", "args"]);

/// The `args` of a toolset entry, read as the entry's `name` says.
enum ToolsetArgs {
    /// Boxed: the MCP args are several times the size of the others.
    Mcp(Box<McpToolsetArgs>),
    OpenApi(OpenApiToolsetArgs),
    Skills(SkillToolsetArgs),
}

/// A tool's `name` and `args`, once read.
struct ToolEntry {
    name: ToolName,
    args: Option<ToolsetArgs>,
}

impl ToolEntry {
    /// The tool the entry names, when its `name` and `args` go together.
    fn resolve(self) -> Result<ToolRef, String> {
        match (self.name, self.args) {
            (ToolName::Mcp, Some(ToolsetArgs::Mcp(args))) => args.into_server().map(ToolRef::Mcp),
            (ToolName::OpenApi, Some(ToolsetArgs::OpenApi(args))) => {
                args.into_ref().map(ToolRef::OpenApi)
            }
            (ToolName::Skills, Some(ToolsetArgs::Skills(args))) => {
                args.into_ref().map(ToolRef::Skills)
            }
            (ToolName::OpenApi, None) => Err("the OpenAPIToolset needs `args` with `spec_path` \
                 or `spec_str`"
                .to_owned()),
            (ToolName::Skills, None) => {
                Err("the SkillToolset needs `args` with `skills_folder`".to_owned())
            }
            (ToolName::Mcp, None) => Err("the McpToolset needs `args` naming its server: \
                 `stdio_server_params`, `stdio_connection_params` or \
                 `streamable_http_connection_params`"
                .to_owned()),
            (ToolName::Builtin(builtin), None) => Ok(ToolRef::Builtin(builtin)),
            (ToolName::Function(name), None) => Ok(ToolRef::Function(name)),
            (name, Some(_)) => Err(takes_no_args(&name)),
        }
    }
}

/// The message for `args` given to a tool that takes none.
fn takes_no_args(name: &ToolName) -> String {
    match name {
        ToolName::Builtin(builtin) => format!(
            "the built-in tool `{}` takes no `args`; only the toolsets do",
            builtin.name()
        ),
        ToolName::Function(name) => format!(
            "the function tool `{name}` takes no `args`: it is registered with the loader as it \
             is; only the toolsets take `args`"
        ),
        ToolName::Mcp => "the McpToolset takes its `args` once".to_owned(),
        ToolName::OpenApi => "the OpenAPIToolset takes its `args` once".to_owned(),
        ToolName::Skills => "the SkillToolset takes its `args` once".to_owned(),
    }
}

/// Refuses a value with a message, placing the error at the value.
struct Refuse(String);

impl<'de> DeserializeSeed<'de> for Refuse {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Refuse {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Err(E::custom(self.0))
    }

    fn visit_map<A: MapAccess<'de>>(self, _map: A) -> Result<(), A::Error> {
        Err(de::Error::custom(self.0))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _seq: A) -> Result<(), A::Error> {
        Err(de::Error::custom(self.0))
    }

    fn visit_str<E: de::Error>(self, _value: &str) -> Result<(), E> {
        Err(E::custom(self.0))
    }

    fn visit_bool<E: de::Error>(self, _value: bool) -> Result<(), E> {
        Err(E::custom(self.0))
    }

    fn visit_i64<E: de::Error>(self, _value: i64) -> Result<(), E> {
        Err(E::custom(self.0))
    }

    fn visit_u64<E: de::Error>(self, _value: u64) -> Result<(), E> {
        Err(E::custom(self.0))
    }

    fn visit_f64<E: de::Error>(self, _value: f64) -> Result<(), E> {
        Err(E::custom(self.0))
    }
}

impl<'de> Deserialize<'de> for ToolRef {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ToolVisitor)
    }
}

/// Reads the two forms of a tool entry.
struct ToolVisitor;

impl<'de> Visitor<'de> for ToolVisitor {
    type Value = ToolRef;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a tool: its name, or a mapping with `name` (and `args` for McpToolset)")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<ToolRef, E> {
        ToolEntry {
            name: ToolName::parse(name).map_err(E::custom)?,
            args: None,
        }
        .resolve()
        .map_err(E::custom)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ToolRef, A::Error> {
        let mut seen = Vec::new();
        let mut name = None;
        let mut args = None;
        while let Some(key) = ENTRY_KEYS.next_key(&mut map, &mut seen)? {
            if key == "name" {
                name = Some(map.next_value::<ToolName>()?);
                continue;
            }
            // `args` are read as the toolset named before them says; given to another tool,
            // they are refused at their place. Given before the name, they are read as the
            // McpToolset's and a mismatch is reported at the start of the entry.
            match &name {
                None | Some(ToolName::Mcp) => {
                    args = Some(ToolsetArgs::Mcp(Box::new(
                        map.next_value_seed(Checked::<McpToolsetArgs>::new())?,
                    )));
                }
                Some(ToolName::OpenApi) => {
                    args = Some(ToolsetArgs::OpenApi(
                        map.next_value_seed(Checked::<OpenApiToolsetArgs>::new())?,
                    ));
                }
                Some(ToolName::Skills) => {
                    args = Some(ToolsetArgs::Skills(
                        map.next_value_seed(Checked::<SkillToolsetArgs>::new())?,
                    ));
                }
                Some(other) => map.next_value_seed(Refuse(takes_no_args(other)))?,
            }
        }
        let name = name
            .ok_or_else(|| de::Error::custom("the key `name` is missing; a tool entry needs it"))?;
        ToolEntry { name, args }
            .resolve()
            .map_err(de::Error::custom)
    }
}

/// The tools of an agent, each listed once.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ToolList(pub(crate) Vec<ToolRef>);

impl<'de> Deserialize<'de> for ToolList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_seq(ToolListVisitor)
    }
}

struct ToolListVisitor;

impl<'de> Visitor<'de> for ToolListVisitor {
    type Value = ToolList;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of tools")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ToolList, A::Error> {
        let mut tools = Vec::new();
        let mut names = BTreeSet::new();
        while let Some(tool) = seq.next_element::<ToolRef>()? {
            let name = match &tool {
                ToolRef::Builtin(builtin) => Some(builtin.name()),
                ToolRef::Function(name) => Some(name.as_str()),
                // A toolset's tools are known only once it is built or runs.
                ToolRef::Mcp(_) | ToolRef::OpenApi(_) | ToolRef::Skills(_) => None,
            };
            if let Some(name) = name
                && !names.insert(name.to_owned())
            {
                return Err(de::Error::custom(format!(
                    "the tool `{name}` is listed twice; list each tool once"
                )));
            }
            tools.push(tool);
        }
        Ok(ToolList(tools))
    }
}

impl JsonSchema for ToolList {
    fn schema_name() -> Cow<'static, str> {
        "ToolList".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let builtins: Vec<&str> = Builtin::ALL.into_iter().map(Builtin::name).collect();
        let name_description = format!(
            "A built-in tool ({}) or a function tool registered with the loader. A dotted \
             name names the function tool registered under its last part.",
            builtins.join(", ")
        );
        let args = generator.subschema_for::<McpToolsetArgs>();
        let openapi_args = generator.subschema_for::<OpenApiToolsetArgs>();
        let skill_args = generator.subschema_for::<SkillToolsetArgs>();
        let toolsets: Vec<&str> = MCP_TOOLSET
            .iter()
            .chain(OPENAPI_TOOLSET)
            .chain(SKILL_TOOLSET)
            .copied()
            .collect();
        json_schema!({
            "type": "array",
            "description": "The tools the model may call.",
            "items": {
                "anyOf": [
                    {
                        "type": "string",
                        "minLength": 1,
                        "not": { "enum": toolsets },
                        "description": name_description,
                    },
                    {
                        "type": "object",
                        "properties": {
                            "name": {
                                "type": "string",
                                "minLength": 1,
                                "not": { "enum": toolsets },
                                "description": name_description,
                            },
                        },
                        "required": ["name"],
                        "additionalProperties": false,
                    },
                    {
                        "type": "object",
                        "description": "The tools of an MCP server.",
                        "properties": {
                            "name": { "enum": MCP_TOOLSET },
                            "args": args,
                        },
                        "required": ["name", "args"],
                        "additionalProperties": false,
                    },
                    {
                        "type": "object",
                        "description": "The operations of an OpenAPI document.",
                        "properties": {
                            "name": { "enum": OPENAPI_TOOLSET },
                            "args": openapi_args,
                        },
                        "required": ["name", "args"],
                        "additionalProperties": false,
                    },
                    {
                        "type": "object",
                        "description": "The skills of a folder, loaded on demand.",
                        "properties": {
                            "name": { "enum": SKILL_TOOLSET },
                            "args": skill_args,
                        },
                        "required": ["name", "args"],
                        "additionalProperties": false,
                    },
                ],
            },
        })
    }
}
