//! [`WorkflowConfig`]: a graph workflow (`agent_class: Workflow`) and its `edges` in the forms ADK
//! Python reads: a list is a chain, a list inside a chain fans out, a mapping inside a chain is a
//! routing map, and `{from_node, to_node, route}` is an edge of its own. A node is named by
//! `START`, by the name of a node registered with the loader (a dotted Python path names the one
//! registered under its last part), by a node named earlier, or by an agent's `.yaml` file.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::agent_class::{self, AgentClass};
use super::agent_name::AgentName;
use super::section::Section;
use super::sub_agents::{SubAgentRef, find};

/// A graph workflow: nodes joined by edges, run from `START`, each node's output passed along the
/// edges its route takes.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "Workflow")]
pub(crate) struct WorkflowConfig {
    /// The class of agent.
    #[schemars(schema_with = "agent_class::graph_workflow_schema")]
    pub(crate) agent_class: AgentClass,
    /// The workflow's name.
    pub(crate) name: AgentName,
    /// What the workflow does.
    #[serde(default)]
    pub(crate) description: String,
    /// The edges: chains (`[START, a, b]`), fan-out (`[START, [a, b], join]`), routing maps
    /// (`[classify, {long: a, short: b}]`) and explicit edges (`{from_node, to_node, route}`).
    pub(crate) edges: Vec<EdgeEntry>,
    /// How many nodes run at once at most; no limit when absent or 0.
    #[serde(default)]
    pub(crate) max_concurrency: Option<u32>,
}

impl Section for WorkflowConfig {
    const WHAT: &'static str = "a Workflow";
    const REQUIRED: &'static [&'static str] = &["agent_class", "name", "edges"];
}

/// A reference to a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NodeRef {
    /// `START`.
    Start,
    /// A node registered with the loader, or one named earlier, by name (a dotted path names the
    /// one registered under its last part).
    Name(String),
    /// An agent described in a YAML file.
    Agent(SubAgentRef),
}

impl NodeRef {
    fn parse(written: &str) -> Result<Self, String> {
        if written == "START" {
            return Ok(Self::Start);
        }
        if written.ends_with(".yaml") || written.ends_with(".yml") {
            return find(written).map(Self::Agent);
        }
        let name = written.rsplit('.').next().unwrap_or(written);
        let mut chars = name.chars();
        let identifier = chars
            .next()
            .is_some_and(|first| first.is_alphabetic() || first == '_')
            && chars.all(|c| c.is_alphanumeric() || c == '_');
        if !identifier {
            return Err(format!(
                "`{written}` names no node: name `START`, a node registered with the loader (by \
                 its name, or a dotted path ending in it), or an agent's `.yaml` file"
            ));
        }
        Ok(Self::Name(name.to_owned()))
    }
}

impl<'de> Deserialize<'de> for NodeRef {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RefVisitor;
        impl Visitor<'_> for RefVisitor {
            type Value = NodeRef;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a node: `START`, a registered node's name, or an agent's `.yaml` file")
            }
            fn visit_str<E: de::Error>(self, written: &str) -> Result<NodeRef, E> {
                NodeRef::parse(written).map_err(E::custom)
            }
        }
        deserializer.deserialize_str(RefVisitor)
    }
}

/// A route value: a string, an integer or a boolean.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RouteSetting {
    Str(String),
    Int(i64),
    Bool(bool),
}

/// One element of a chain.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ChainItem {
    /// One node.
    Node(NodeRef),
    /// Several nodes at once.
    FanOut(Vec<NodeRef>),
    /// A routing map: the nodes taken on each route.
    Routes(Vec<(RouteSetting, Vec<NodeRef>)>),
}

/// One entry of `edges`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum EdgeEntry {
    /// A chain.
    Chain(Vec<ChainItem>),
    /// An explicit edge.
    Edge {
        from: NodeRef,
        to: NodeRef,
        route: Option<Vec<RouteSetting>>,
    },
}

impl EdgeEntry {
    /// Every agent file the entry names.
    pub(crate) fn agent_files(&self) -> Vec<&SubAgentRef> {
        let refs: Vec<&NodeRef> = match self {
            Self::Chain(items) => items
                .iter()
                .flat_map(|item| match item {
                    ChainItem::Node(node) => vec![node],
                    ChainItem::FanOut(nodes) => nodes.iter().collect(),
                    ChainItem::Routes(routes) => {
                        routes.iter().flat_map(|(_, nodes)| nodes.iter()).collect()
                    }
                })
                .collect(),
            Self::Edge { from, to, .. } => vec![from, to],
        };
        refs.into_iter()
            .filter_map(|node| match node {
                NodeRef::Agent(file) => Some(file),
                _ => None,
            })
            .collect()
    }
}

impl<'de> Deserialize<'de> for EdgeEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(EntryVisitor)
    }
}

struct EntryVisitor;

impl<'de> Visitor<'de> for EntryVisitor {
    type Value = EdgeEntry;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an edge: a chain (a list of nodes) or `{from_node, to_node, route}`")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<EdgeEntry, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<ChainItem>()? {
            if matches!(item, ChainItem::Routes(_))
                && matches!(items.last(), Some(ChainItem::Routes(_)))
            {
                return Err(de::Error::custom(
                    "two routing maps follow each other in a chain; split them into separate chains",
                ));
            }
            items.push(item);
        }
        if items.len() < 2 {
            return Err(de::Error::custom(
                "a chain links at least two nodes: `[START, first_node]`",
            ));
        }
        Ok(EdgeEntry::Chain(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<EdgeEntry, A::Error> {
        let (mut from, mut to, mut route) = (None, None, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "from_node" => from = Some(map.next_value::<NodeRef>()?),
                "to_node" => to = Some(map.next_value::<NodeRef>()?),
                "route" => route = Some(map.next_value::<Routes>()?.0),
                other => {
                    return Err(de::Error::custom(format!(
                        "unknown key `{other}` in an edge; an edge has `from_node`, `to_node` and `route`"
                    )));
                }
            }
        }
        match (from, to) {
            (Some(from), Some(to)) => Ok(EdgeEntry::Edge { from, to, route }),
            _ => Err(de::Error::custom(
                "an edge needs both `from_node` and `to_node`",
            )),
        }
    }
}

impl<'de> Deserialize<'de> for ChainItem {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ItemVisitor)
    }
}

struct ItemVisitor;

impl<'de> Visitor<'de> for ItemVisitor {
    type Value = ChainItem;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a node, a list of nodes (fan-out), or a routing map `{route: node}`")
    }

    fn visit_str<E: de::Error>(self, written: &str) -> Result<ChainItem, E> {
        NodeRef::parse(written)
            .map(ChainItem::Node)
            .map_err(E::custom)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ChainItem, A::Error> {
        let mut nodes = Vec::new();
        while let Some(node) = seq.next_element::<NodeRef>()? {
            nodes.push(node);
        }
        Ok(ChainItem::FanOut(nodes))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ChainItem, A::Error> {
        let mut routes = Vec::new();
        while let Some(route) = map.next_key::<RouteKey>()? {
            let targets = map.next_value::<Targets>()?.0;
            routes.push((route.0, targets));
        }
        if routes.is_empty() {
            return Err(de::Error::custom(
                "a routing map is empty; give it at least one `route: node`",
            ));
        }
        Ok(ChainItem::Routes(routes))
    }
}

/// A routing map's key.
struct RouteKey(RouteSetting);

impl<'de> Deserialize<'de> for RouteKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(RouteVisitor).map(RouteKey)
    }
}

struct RouteVisitor;

impl Visitor<'_> for RouteVisitor {
    type Value = RouteSetting;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a route: a string, an integer or a boolean")
    }

    fn visit_str<E: de::Error>(self, route: &str) -> Result<RouteSetting, E> {
        Ok(RouteSetting::Str(route.to_owned()))
    }

    fn visit_i64<E: de::Error>(self, route: i64) -> Result<RouteSetting, E> {
        Ok(RouteSetting::Int(route))
    }

    fn visit_u64<E: de::Error>(self, route: u64) -> Result<RouteSetting, E> {
        i64::try_from(route)
            .map(RouteSetting::Int)
            .map_err(|_| E::custom(format!("route {route} is too large")))
    }

    fn visit_bool<E: de::Error>(self, route: bool) -> Result<RouteSetting, E> {
        Ok(RouteSetting::Bool(route))
    }
}

/// An edge's `route`: one route or a list of them.
struct Routes(Vec<RouteSetting>);

impl<'de> Deserialize<'de> for Routes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RoutesVisitor;
        impl<'de> Visitor<'de> for RoutesVisitor {
            type Value = Routes;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a route or a list of routes")
            }
            fn visit_str<E: de::Error>(self, route: &str) -> Result<Routes, E> {
                RouteVisitor
                    .visit_str(route)
                    .map(|route| Routes(vec![route]))
            }
            fn visit_i64<E: de::Error>(self, route: i64) -> Result<Routes, E> {
                RouteVisitor
                    .visit_i64(route)
                    .map(|route| Routes(vec![route]))
            }
            fn visit_u64<E: de::Error>(self, route: u64) -> Result<Routes, E> {
                RouteVisitor
                    .visit_u64(route)
                    .map(|route| Routes(vec![route]))
            }
            fn visit_bool<E: de::Error>(self, route: bool) -> Result<Routes, E> {
                RouteVisitor
                    .visit_bool(route)
                    .map(|route| Routes(vec![route]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Routes, A::Error> {
                let mut routes = Vec::new();
                while let Some(route) = seq.next_element::<RouteKey>()? {
                    routes.push(route.0);
                }
                Ok(Routes(routes))
            }
        }
        deserializer.deserialize_any(RoutesVisitor)
    }
}

/// A routing map's value: one node or a list of them.
struct Targets(Vec<NodeRef>);

impl<'de> Deserialize<'de> for Targets {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TargetsVisitor;
        impl<'de> Visitor<'de> for TargetsVisitor {
            type Value = Targets;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a node or a list of nodes")
            }
            fn visit_str<E: de::Error>(self, written: &str) -> Result<Targets, E> {
                NodeRef::parse(written)
                    .map(|node| Targets(vec![node]))
                    .map_err(E::custom)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Targets, A::Error> {
                let mut nodes = Vec::new();
                while let Some(node) = seq.next_element::<NodeRef>()? {
                    nodes.push(node);
                }
                Ok(Targets(nodes))
            }
        }
        deserializer.deserialize_any(TargetsVisitor)
    }
}

impl JsonSchema for EdgeEntry {
    fn schema_name() -> Cow<'static, str> {
        "WorkflowEdge".into()
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        let node = json_schema!({
            "type": "string",
            "description": "START, a registered node's name (or a dotted path ending in it), or an agent's .yaml file",
        });
        let route = json_schema!({"type": ["string", "integer", "boolean"]});
        json_schema!({
            "oneOf": [
                {
                    "type": "array",
                    "description": "A chain: each element linked to the next. A list inside fans out; a mapping is a routing map.",
                    "minItems": 2,
                    "items": {
                        "anyOf": [
                            node,
                            {"type": "array", "items": node},
                            {"type": "object", "additionalProperties": {"anyOf": [node, {"type": "array", "items": node}]}},
                        ]
                    }
                },
                {
                    "type": "object",
                    "description": "An explicit edge.",
                    "properties": {
                        "from_node": node,
                        "to_node": node,
                        "route": {"anyOf": [route, {"type": "array", "items": route}]},
                    },
                    "required": ["from_node", "to_node"],
                    "additionalProperties": false,
                }
            ]
        })
    }
}
