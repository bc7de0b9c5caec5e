//! Building a graph `Workflow` from its config: each node reference resolved to a node (`START`,
//! a node registered with the loader, a node named earlier, an agent built from its file), and
//! the edges as the config writes them.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use adk_core::{Agent, Route, RouteValue};
use adk_workflow::{ChainElement, Edge, Node, Routes, START, Workflow};

use crate::error::{ConfigError, ConfigErrorKind};
use crate::schema::workflow::{ChainItem, EdgeEntry, NodeRef, RouteSetting, WorkflowConfig};

/// The workflow `config` (read from `file`) describes; `agents` are its agent files' agents, in
/// the order its edges first name them.
pub(crate) fn build_workflow(
    file: &Path,
    config: &WorkflowConfig,
    agents: &[Arc<dyn Agent>],
    registered: &BTreeMap<String, Node>,
) -> Result<Arc<dyn Agent>, ConfigError> {
    let mut files: Vec<&PathBuf> = Vec::new();
    for entry in &config.edges {
        for agent_file in entry.agent_files() {
            if !files.contains(&&agent_file.real_path) {
                files.push(&agent_file.real_path);
            }
        }
    }
    let mut nodes = Nodes {
        file,
        registered,
        agents: files
            .into_iter()
            .cloned()
            .zip(agents.iter().cloned())
            .collect(),
        named: HashMap::new(),
    };
    let mut builder = Workflow::builder(&config.name.0).description(&config.description);
    if let Some(limit) = config.max_concurrency {
        builder = builder.max_concurrency(usize::try_from(limit).unwrap_or(usize::MAX));
    }
    for entry in &config.edges {
        builder = match entry {
            EdgeEntry::Chain(items) => {
                let chain = items
                    .iter()
                    .map(|item| nodes.element(item))
                    .collect::<Result<Vec<_>, _>>()?;
                builder.chain(chain)
            }
            EdgeEntry::Edge { from, to, route } => {
                let mut edge = Edge::new(nodes.node(from)?, nodes.node(to)?);
                if let Some(route) = route {
                    let values: Vec<RouteValue> = route.iter().map(route_value).collect();
                    edge = edge.route(match <[RouteValue; 1]>::try_from(values) {
                        Ok([one]) => Route::One(one),
                        Err(many) => Route::Many(many),
                    });
                }
                builder.edge(edge)
            }
        };
    }
    let workflow = builder.build().map_err(|error| {
        ConfigError::new(ConfigErrorKind::Invalid, file, error.to_string()).with_source(error)
    })?;
    Ok(Arc::new(workflow))
}

/// The nodes of one workflow, resolved once each so that a node named twice is one node.
struct Nodes<'a> {
    file: &'a Path,
    registered: &'a BTreeMap<String, Node>,
    agents: HashMap<PathBuf, Arc<dyn Agent>>,
    named: HashMap<String, Node>,
}

impl Nodes<'_> {
    fn node(&mut self, reference: &NodeRef) -> Result<Node, ConfigError> {
        let node = match reference {
            NodeRef::Start => return Ok(Node::from(START)),
            NodeRef::Name(name) => match (self.named.get(name), self.registered.get(name)) {
                (Some(node), _) | (None, Some(node)) => node.clone(),
                (None, None) => {
                    return Err(ConfigError::new(
                        ConfigErrorKind::Invalid,
                        self.file,
                        format!(
                            "the edges name node `{name}`, which is neither registered with the loader \
                             (AgentLoader::workflow_node) nor an agent named earlier"
                        ),
                    ));
                }
            },
            NodeRef::Agent(file) => {
                let agent = self.agents.get(&file.real_path).cloned().ok_or_else(|| {
                    ConfigError::new(
                        ConfigErrorKind::Invalid,
                        self.file,
                        format!("the agent of {} was not read", file.shown_path.display()),
                    )
                })?;
                match self.named.get(agent.name()) {
                    Some(node) => node.clone(),
                    None => Node::agent(agent),
                }
            }
        };
        self.named.insert(node.name().to_owned(), node.clone());
        Ok(node)
    }

    fn nodes(&mut self, references: &[NodeRef]) -> Result<Vec<Node>, ConfigError> {
        references
            .iter()
            .map(|reference| self.node(reference))
            .collect()
    }

    fn element(&mut self, item: &ChainItem) -> Result<ChainElement, ConfigError> {
        Ok(match item {
            ChainItem::Node(reference) => ChainElement::from(self.node(reference)?),
            ChainItem::FanOut(references) => ChainElement::from(self.nodes(references)?),
            ChainItem::Routes(routes) => {
                let mut map = Routes::new();
                for (route, targets) in routes {
                    map = map.on(route_value(route), self.nodes(targets)?);
                }
                ChainElement::from(map)
            }
        })
    }
}

fn route_value(route: &RouteSetting) -> RouteValue {
    match route {
        RouteSetting::Str(value) => RouteValue::Str(value.clone()),
        RouteSetting::Int(value) => RouteValue::Int(*value),
        RouteSetting::Bool(value) => RouteValue::Bool(*value),
    }
}
