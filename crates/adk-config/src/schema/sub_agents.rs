//! [`SubAgentRef`]: one entry of `sub_agents:`, the file of a sub-agent found and checked while
//! it is read.
//!
//! As in ADK Python, `config_path` is relative to the file that names it and may not leave that
//! file's directory; adk-rs also refuses a file that names itself through its sub-agents.

use std::borrow::Cow;
use std::fmt;
use std::path::{Component, Path, PathBuf};

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::context::{self, ReadContext};
use super::scalar::parse_string;
use super::section::{Checked, Section};

/// A sub-agent's file, found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SubAgentRef {
    /// The file as messages show it: the naming file's directory joined with `config_path`.
    pub(crate) shown_path: PathBuf,
    /// The file with symbolic links and `..` resolved.
    pub(crate) real_path: PathBuf,
}

impl<'de> Deserialize<'de> for SubAgentRef {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(EntryVisitor)
    }
}

/// Reads the two forms of an entry: a mapping with `config_path`, or the path alone.
struct EntryVisitor;

impl<'de> Visitor<'de> for EntryVisitor {
    type Value = SubAgentRef;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sub-agent: `config_path: <file>.yaml`")
    }

    fn visit_str<E: de::Error>(self, path: &str) -> Result<SubAgentRef, E> {
        find(path).map_err(E::custom)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<SubAgentRef, A::Error> {
        Checked::<SubAgentEntry>::new()
            .visit_map(map)
            .map(|entry| entry.config_path.into())
    }
}

/// The mapping form of an entry.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SubAgentEntry {
    config_path: ConfigPath,
}

impl Section for SubAgentEntry {
    const WHAT: &'static str = "a sub-agent entry";
    const REQUIRED: &'static [&'static str] = &["config_path"];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[(
        "code",
        "it names an agent object in Python code, and adk-rs loads no code from YAML; describe \
         the sub-agent in a YAML file and name it with `config_path`, or build the tree in Rust",
    )];
}

/// A `config_path` value, found while serde_yaml reads it.
struct ConfigPath(SubAgentRef);

impl<'de> Deserialize<'de> for ConfigPath {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        parse_string(deserializer, "the path of a sub-agent's YAML file", find).map(Self)
    }
}

impl From<ConfigPath> for SubAgentRef {
    fn from(path: ConfigPath) -> Self {
        path.0
    }
}

/// Finds the file `written` names, relative to the file being read.
pub(crate) fn find(written: &str) -> Result<SubAgentRef, String> {
    context::with(|context| find_in(context, written))
}

fn find_in(context: &ReadContext, written: &str) -> Result<SubAgentRef, String> {
    if written.is_empty() {
        return Err("`config_path` is empty; name the sub-agent's YAML file".to_owned());
    }
    let relative = Path::new(written);
    if relative.is_absolute() {
        return Err(format!(
            "`config_path` `{written}` is absolute; name the file relative to the directory of \
             the file that names it"
        ));
    }
    let shown_path = join_lexically(context.shown_dir(), relative);
    let real_path = context
        .real_dir()
        .join(relative)
        .canonicalize()
        .map_err(|error| {
            if error.kind() == std::io::ErrorKind::NotFound {
                format!(
                    "the sub-agent file `{written}` does not exist (looked for {})",
                    shown_path.display()
                )
            } else {
                format!(
                    "cannot read the sub-agent file {}: {error}",
                    shown_path.display()
                )
            }
        })?;
    if !real_path.starts_with(context.real_dir()) {
        return Err(format!(
            "the sub-agent file `{written}` is outside the directory of the file that names it; \
             keep sub-agent files in that directory or below it"
        ));
    }
    if !real_path.is_file() {
        return Err(format!(
            "the sub-agent path `{written}` is not a file ({})",
            shown_path.display()
        ));
    }
    let files_above: Vec<(&Path, &Path)> = context
        .ancestors
        .iter()
        .map(|(shown, real)| (shown.as_path(), real.as_path()))
        .chain([(context.shown_path.as_path(), context.real_path.as_path())])
        .collect();
    if let Some(position) = files_above.iter().position(|(_, real)| *real == real_path) {
        let cycle: Vec<String> = files_above[position..]
            .iter()
            .map(|(shown, _)| shown.display().to_string())
            .chain([shown_path.display().to_string()])
            .collect();
        return Err(format!(
            "sub-agent cycle: {}; an agent cannot be its own sub-agent",
            cycle.join(" -> ")
        ));
    }
    Ok(SubAgentRef {
        shown_path,
        real_path,
    })
}

/// `dir` joined with `relative`, with `.` dropped and `name/..` pairs folded, so messages show
/// `agents/helper.yaml` rather than `agents/./sub/../helper.yaml`. The result names the same file
/// unless `name` is a symbolic link, which only matters for how the path is shown.
fn join_lexically(dir: &Path, relative: &Path) -> PathBuf {
    let mut joined = dir.to_path_buf();
    for component in relative.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(joined.components().next_back(), Some(Component::Normal(_))) =>
            {
                joined.pop();
            }
            other => joined.push(other),
        }
    }
    joined
}

impl JsonSchema for SubAgentRef {
    fn schema_name() -> Cow<'static, str> {
        "SubAgentRef".into()
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        let path = json_schema!({
            "type": "string",
            "minLength": 1,
            "description": "The sub-agent's YAML file, relative to this file's directory and \
                inside it.",
        });
        json_schema!({
            "description": "A sub-agent, described in its own YAML file.",
            "anyOf": [
                {
                    "type": "object",
                    "properties": { "config_path": path },
                    "required": ["config_path"],
                    "additionalProperties": false,
                },
                path,
            ],
        })
    }
}
