//! The `args` of the `OpenAPIToolset` and `SkillToolset` tool entries, named as ADK Python's
//! constructors name them (`spec_str`, `spec_str_type`, `tool_filter`, `skills_folder`), with
//! `spec_path` and `base_url` as adk-rs keys. Paths are relative to the config file and are
//! resolved while it is read; the document and the folder are read when the agent is built.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;

use super::context;
use super::section::Section;

/// An OpenAPI document and the operations the agent may call.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "OpenAPIToolset args",
    description = "An OpenAPI 3.0/3.1 document, one tool per operation: exactly one of \
        spec_path and spec_str."
)]
pub(crate) struct OpenApiToolsetArgs {
    /// The document's file (JSON or YAML), relative to this config file. An adk-rs key.
    #[serde(default)]
    pub(crate) spec_path: Option<String>,
    /// The document itself, as text.
    #[serde(default)]
    pub(crate) spec_str: Option<String>,
    /// How `spec_str` is written, `json` or `yaml`; both are read either way.
    #[serde(default)]
    pub(crate) spec_str_type: Option<SpecStrType>,
    /// The operations offered, by operationId or tool name; all of them when absent.
    #[serde(default)]
    pub(crate) tool_filter: Option<Vec<String>>,
    /// The server calls go to, instead of the document's first. An adk-rs key.
    #[serde(default)]
    pub(crate) base_url: Option<String>,
}

/// How `spec_str` is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SpecStrType {
    /// JSON.
    Json,
    /// YAML.
    Yaml,
}

const CREDENTIALS: &str = "credentials are not written in YAML; build the toolset in Rust with \
    OpenApiToolset::builder(spec).credential(...) and register it, or send them from the API's \
    side";

impl Section for OpenApiToolsetArgs {
    const WHAT: &'static str = "the OpenAPIToolset args";
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        (
            "spec_dict",
            "write the document in `spec_str` or in a file named by `spec_path`",
        ),
        ("auth_scheme", CREDENTIALS),
        ("auth_credential", CREDENTIALS),
        ("credential_key", CREDENTIALS),
        (
            "tool_name_prefix",
            "adk-rs names each tool after its operationId; drop the key",
        ),
    ];

    fn check(&self) -> Result<(), String> {
        self.clone().into_ref().map(|_| ())
    }
}

impl OpenApiToolsetArgs {
    /// The toolset the args describe, its file resolved against the config file's directory.
    pub(crate) fn into_ref(self) -> Result<OpenApiRef, String> {
        let source = match (self.spec_path, self.spec_str) {
            (Some(path), None) => context::with(|context| {
                Ok(OpenApiSource::File {
                    real: context.real_dir().join(&path),
                    shown: context.shown_dir().join(&path),
                })
            })?,
            (None, Some(text)) => OpenApiSource::Text(text),
            _ => {
                return Err(
                    "the OpenAPIToolset args need exactly one of `spec_path` and `spec_str`"
                        .to_owned(),
                );
            }
        };
        Ok(OpenApiRef {
            source,
            tool_filter: self.tool_filter,
            base_url: self.base_url,
        })
    }
}

/// An OpenAPI toolset, as the args describe it once checked.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct OpenApiRef {
    pub(crate) source: OpenApiSource,
    pub(crate) tool_filter: Option<Vec<String>>,
    pub(crate) base_url: Option<String>,
}

/// Where an OpenAPI document is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum OpenApiSource {
    /// A file: where it is, and how the config names it (for messages).
    File { real: PathBuf, shown: PathBuf },
    /// The document's text.
    Text(String),
}

/// A folder of skills.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "SkillToolset args",
    description = "A folder whose sub-folders hold a SKILL.md each."
)]
pub(crate) struct SkillToolsetArgs {
    /// The folder, relative to this config file.
    pub(crate) skills_folder: String,
}

impl Section for SkillToolsetArgs {
    const WHAT: &'static str = "the SkillToolset args";
    const REQUIRED: &'static [&'static str] = &["skills_folder"];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        (
            "code_executor",
            "adk-rs reads a skill's scripts but does not run them; drop the key",
        ),
        (
            "tool_name_prefix",
            "adk-rs offers the skill tools under their own names; drop the key",
        ),
    ];
}

impl SkillToolsetArgs {
    /// The folder, resolved against the config file's directory.
    pub(crate) fn into_ref(self) -> Result<SkillsRef, String> {
        context::with(|context| {
            Ok(SkillsRef {
                real: context.real_dir().join(&self.skills_folder),
                shown: context.shown_dir().join(&self.skills_folder),
            })
        })
    }
}

/// A skill folder: where it is, and how the config names it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct SkillsRef {
    pub(crate) real: PathBuf,
    pub(crate) shown: PathBuf,
}
