//! The `code_executor` of an `LlmAgent`: a name (`code_executor: BuiltInCodeExecutor`) or a
//! mapping with `name` and, for the local executors, `args` with their limits. ADK Python sets an
//! executor in code only; the key and its names follow its class names.

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::mcp::Seconds;
use super::scalar::{parse_string, quoted_list};
use super::section::{Checked, Keys, Section};

/// Which executor runs the model's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ExecutorKind {
    /// The provider's (Gemini's) own code execution.
    BuiltIn,
    /// Locally, in the bubblewrap sandbox.
    Sandboxed,
    /// Locally, without a sandbox; only when named.
    UnsafeLocal,
}

impl ExecutorKind {
    const ALL: [Self; 3] = [Self::BuiltIn, Self::Sandboxed, Self::UnsafeLocal];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::BuiltIn => "BuiltInCodeExecutor",
            Self::Sandboxed => "SandboxedCodeExecutor",
            Self::UnsafeLocal => "UnsafeLocalCodeExecutor",
        }
    }

    /// What `written` names; ADK Python's module paths are taken too.
    fn parse(written: &str) -> Result<Self, String> {
        let bare = written.rsplit('.').next().unwrap_or(written);
        let python_path = written == bare || written.starts_with("google.adk.code_executors.");
        Self::ALL
            .into_iter()
            .find(|kind| kind.name() == bare && python_path)
            .ok_or_else(|| {
                format!(
                    "unknown code executor `{written}`; adk-rs has {}",
                    quoted_list(Self::ALL.map(Self::name))
                )
            })
    }
}

impl<'de> Deserialize<'de> for ExecutorKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        parse_string(deserializer, "a code executor's name", ExecutorKind::parse)
    }
}

/// The limits of a local executor.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "Code executor args")]
pub(crate) struct LocalExecutorArgs {
    /// The wall-time limit of one run, in seconds; 30 when absent.
    #[serde(default)]
    pub(crate) timeout_seconds: Option<Seconds>,
    /// The memory limit of each process, in MiB; 512 when absent. An adk-rs key.
    #[serde(default)]
    pub(crate) memory_limit_mb: Option<u64>,
}

impl Section for LocalExecutorArgs {
    const WHAT: &'static str = "the code executor args";
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        (
            "stateful",
            "each run of adk-rs's local executors starts afresh; drop the key",
        ),
        (
            "optimize_data_file",
            "adk-rs's local executors do not preload data files; drop the key",
        ),
    ];

    fn check(&self) -> Result<(), String> {
        if self
            .timeout_seconds
            .is_some_and(|timeout| timeout.0.is_zero())
        {
            return Err("`timeout_seconds` must be above 0".to_owned());
        }
        if self.memory_limit_mb == Some(0) {
            return Err("`memory_limit_mb` must be above 0".to_owned());
        }
        Ok(())
    }
}

/// A code executor, as the config describes it once checked.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct CodeExecutorRef {
    pub(crate) kind: ExecutorKind,
    pub(crate) timeout: Option<Duration>,
    pub(crate) memory_limit_mb: Option<u64>,
}

const ENTRY_KEYS: Keys = Keys::new("a code executor", &["name", "args"]);

impl<'de> Deserialize<'de> for CodeExecutorRef {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ExecutorVisitor)
    }
}

struct ExecutorVisitor;

impl<'de> Visitor<'de> for ExecutorVisitor {
    type Value = CodeExecutorRef;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a code executor: its name, or a mapping with `name` (and `args`)")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<CodeExecutorRef, E> {
        Ok(CodeExecutorRef {
            kind: ExecutorKind::parse(name).map_err(E::custom)?,
            timeout: None,
            memory_limit_mb: None,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CodeExecutorRef, A::Error> {
        let mut seen = Vec::new();
        let mut kind = None;
        let mut args = None;
        while let Some(key) = ENTRY_KEYS.next_key(&mut map, &mut seen)? {
            if key == "name" {
                kind = Some(map.next_value::<ExecutorKind>()?);
            } else {
                args = Some(map.next_value_seed(Checked::<LocalExecutorArgs>::new())?);
            }
        }
        let kind = kind.ok_or_else(|| {
            de::Error::custom("the key `name` is missing; a code executor needs it")
        })?;
        if kind == ExecutorKind::BuiltIn && args.is_some() {
            return Err(de::Error::custom(
                "the BuiltInCodeExecutor takes no `args`: the provider runs the code",
            ));
        }
        let args = args.unwrap_or(LocalExecutorArgs {
            timeout_seconds: None,
            memory_limit_mb: None,
        });
        Ok(CodeExecutorRef {
            kind,
            timeout: args.timeout_seconds.map(|timeout| timeout.0),
            memory_limit_mb: args.memory_limit_mb,
        })
    }
}

impl JsonSchema for CodeExecutorRef {
    fn schema_name() -> Cow<'static, str> {
        "CodeExecutor".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let names: Vec<&str> = ExecutorKind::ALL
            .into_iter()
            .map(ExecutorKind::name)
            .collect();
        let args = generator.subschema_for::<LocalExecutorArgs>();
        json_schema!({
            "description": "Runs the code the model writes: BuiltInCodeExecutor (the provider \
                runs it), SandboxedCodeExecutor (locally, in a bubblewrap sandbox) or \
                UnsafeLocalCodeExecutor (locally, without a sandbox).",
            "anyOf": [
                { "type": "string", "enum": names },
                {
                    "type": "object",
                    "properties": {
                        "name": { "type": "string", "enum": names },
                        "args": args,
                    },
                    "required": ["name"],
                    "additionalProperties": false,
                },
            ],
        })
    }
}
