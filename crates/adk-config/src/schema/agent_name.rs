//! [`AgentName`]: an agent's `name:`, checked as adk-flow and ADK Python check it, and unique in
//! the tree read so far.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer};

use super::context;
use super::scalar::parse_string;

/// The author name of the user's events, which no agent may take.
const USER: &str = "user";

/// An agent's name: an identifier (models transfer to agents by name), not `user`, and unique in
/// its tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AgentName(pub(crate) String);

impl<'de> Deserialize<'de> for AgentName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        parse_string(deserializer, "an agent name", |name| {
            check_identifier(name)?;
            context::with(|context| {
                let mut names = context.agent_names.borrow_mut();
                if let Some(other) = names.get(name) {
                    return Err(if *other == context.shown_path {
                        format!(
                            "two agents are named `{name}`: this file is named by two \
                             `config_path`s, which makes two agents of it, and agent names \
                             must be unique in a tree"
                        )
                    } else {
                        format!(
                            "two agents are named `{name}`: this one and the one in {}; agent \
                             names must be unique in a tree",
                            other.display()
                        )
                    });
                }
                names.insert(name.to_owned(), context.shown_path.clone());
                Ok(())
            })?;
            Ok(Self(name.to_owned()))
        })
    }
}

/// Checks that `name` can be an agent's name: a letter or `_`, then letters, digits and `_`,
/// and not `user`; the same rule as `LlmAgentBuilder::build` and ADK Python's `isidentifier`.
fn check_identifier(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let starts_well = chars
        .next()
        .is_some_and(|first| first.is_alphabetic() || first == '_');
    if !starts_well || !chars.all(|c| c.is_alphanumeric() || c == '_') {
        return Err(format!(
            "agent name `{name}` is not an identifier: use letters, digits and `_`, not starting \
             with a digit (models transfer to agents by name)"
        ));
    }
    if name == USER {
        return Err(format!(
            "an agent cannot be named `{USER}`: the user's events carry that name"
        ));
    }
    Ok(())
}

impl JsonSchema for AgentName {
    fn schema_name() -> Cow<'static, str> {
        "AgentName".into()
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "minLength": 1,
            "not": { "const": USER },
            "description": "The agent's name, unique in its tree: letters, digits and _, not \
                starting with a digit, and not `user`. Models transfer to agents by name.",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_names() {
        for name in ["root_agent", "_private", "agent2", "größe"] {
            assert_eq!(check_identifier(name), Ok(()), "{name}");
        }
    }

    #[test]
    fn other_strings_are_not() {
        for name in ["", "2fast", "my-agent", "my agent"] {
            let error = check_identifier(name).unwrap_err();
            assert!(error.contains("is not an identifier"), "{error}");
        }
        assert!(
            check_identifier("user")
                .unwrap_err()
                .contains("cannot be named `user`")
        );
    }
}
