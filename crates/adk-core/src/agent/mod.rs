//! The [`Agent`] trait and the [`AgentTree`] index that answers "who is this agent's parent?";
//! below it, [`context`]: the invocation context an agent runs in, which holds the agent it runs
//! (the two name each other, so the context lives inside the agent's module rather than beside
//! it).

pub(crate) mod context;

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use futures::stream::BoxStream;

use crate::{Error, ErrorKind, Event, InvocationContext, Result};

/// The events an agent run yields, in order. Dropping the stream cancels the run.
pub type EventStream = BoxStream<'static, Result<Event>>;

/// The author name that marks events written by the user; no agent may take it.
pub const USER_AUTHOR: &str = "user";

/// An agent: something with a name that, given an invocation, yields events.
///
/// Agents form a tree through [`sub_agents`](Agent::sub_agents) and are immutable once built; what
/// changes during a run lives in the [`InvocationContext`]. The framework sets an event's author to
/// the agent's name when it builds events through [`InvocationContext::new_event`].
///
/// ```
/// use std::sync::Arc;
/// use adk_core::{Agent, Content, EventStream, InvocationContext};
/// use futures::StreamExt;
///
/// struct Greeter;
///
/// impl Agent for Greeter {
///     fn name(&self) -> &str { "greeter" }
///     fn description(&self) -> &str { "Says hello." }
///     fn run(self: Arc<Self>, ctx: InvocationContext) -> EventStream {
///         let event = ctx.new_event().with_content(Content::model("Hello!"));
///         futures::stream::iter([Ok(event)]).boxed()
///     }
/// }
/// ```
pub trait Agent: Any + Send + Sync {
    /// The agent's name, unique in its tree; the model uses it to transfer to the agent.
    fn name(&self) -> &str;

    /// What the agent does, shown to models that may transfer to it.
    fn description(&self) -> &str;

    /// The agents this one may delegate to.
    fn sub_agents(&self) -> &[Arc<dyn Agent>] {
        &[]
    }

    /// Runs the agent for the invocation `ctx` describes.
    fn run(self: Arc<Self>, ctx: InvocationContext) -> EventStream;
}

impl dyn Agent {
    /// The descendant named `name` (depth first), not counting this agent itself.
    pub fn find_sub_agent(&self, name: &str) -> Option<&Arc<dyn Agent>> {
        self.sub_agents().iter().find_map(|child| {
            if child.name() == name {
                Some(child)
            } else {
                child.find_sub_agent(name)
            }
        })
    }

    /// The agent as its concrete type, when it is a `T`.
    pub fn downcast_ref<T: Agent>(&self) -> Option<&T> {
        (self as &dyn Any).downcast_ref::<T>()
    }
}

impl fmt::Debug for dyn Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("name", &self.name())
            .field("sub_agents", &self.sub_agents())
            .finish()
    }
}

/// An index of an agent tree by name, built once per runner: finds agents and their parents.
///
/// Building it checks the tree: names are non-empty, unique, and not `user`.
///
/// ```
/// # use std::sync::Arc;
/// # use adk_core::{Agent, AgentTree, EventStream, InvocationContext};
/// # struct Leaf(&'static str, Vec<Arc<dyn Agent>>);
/// # impl Agent for Leaf {
/// #     fn name(&self) -> &str { self.0 }
/// #     fn description(&self) -> &str { "" }
/// #     fn sub_agents(&self) -> &[Arc<dyn Agent>] { &self.1 }
/// #     fn run(self: Arc<Self>, _: InvocationContext) -> EventStream { unreachable!() }
/// # }
/// let child: Arc<dyn Agent> = Arc::new(Leaf("child", vec![]));
/// let root: Arc<dyn Agent> = Arc::new(Leaf("root", vec![child]));
/// let tree = AgentTree::new(root).unwrap();
/// assert_eq!(tree.parent_of("child").unwrap().name(), "root");
/// assert!(tree.parent_of("root").is_none());
/// ```
#[derive(Clone)]
pub struct AgentTree {
    root: Arc<dyn Agent>,
    nodes: HashMap<String, TreeNode>,
}

#[derive(Clone)]
struct TreeNode {
    agent: Arc<dyn Agent>,
    parent: Option<Arc<dyn Agent>>,
}

impl AgentTree {
    /// Indexes the tree under `root`.
    pub fn new(root: impl crate::IntoAgent) -> Result<Self> {
        let root = root.into_agent();
        let mut nodes = HashMap::new();
        let mut pending = vec![(root.clone(), None::<Arc<dyn Agent>>)];
        while let Some((agent, parent)) = pending.pop() {
            let name = agent.name().to_owned();
            check_agent_name(&name)?;
            for child in agent.sub_agents() {
                pending.push((child.clone(), Some(agent.clone())));
            }
            if nodes
                .insert(name.clone(), TreeNode { agent, parent })
                .is_some()
            {
                return Err(Error::new(
                    ErrorKind::Config,
                    format!("two agents are named '{name}'; agent names must be unique in a tree"),
                ));
            }
        }
        Ok(Self { root, nodes })
    }

    /// The root agent.
    pub fn root(&self) -> &Arc<dyn Agent> {
        &self.root
    }

    /// The agent named `name`.
    pub fn find(&self, name: &str) -> Option<&Arc<dyn Agent>> {
        self.nodes.get(name).map(|node| &node.agent)
    }

    /// The parent of the agent named `name`; `None` for the root or an unknown name.
    pub fn parent_of(&self, name: &str) -> Option<&Arc<dyn Agent>> {
        self.nodes.get(name)?.parent.as_ref()
    }

    /// The names of every agent in the tree, in no particular order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.nodes.keys().map(String::as_str)
    }
}

impl fmt::Debug for AgentTree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentTree")
            .field("root", &self.root.name())
            .field("agents", &self.nodes.len())
            .finish()
    }
}

fn check_agent_name(name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(Error::new(ErrorKind::Config, "an agent has an empty name"));
    }
    if name == USER_AUTHOR {
        return Err(Error::new(
            ErrorKind::Config,
            "no agent may be named 'user': that name marks the user's own events",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Named(&'static str, Vec<Arc<dyn Agent>>);

    impl Agent for Named {
        fn name(&self) -> &str {
            self.0
        }
        fn description(&self) -> &str {
            ""
        }
        fn sub_agents(&self) -> &[Arc<dyn Agent>] {
            &self.1
        }
        fn run(self: Arc<Self>, _: InvocationContext) -> EventStream {
            Box::pin(futures::stream::empty())
        }
    }

    fn agent(name: &'static str, children: Vec<Arc<dyn Agent>>) -> Arc<dyn Agent> {
        Arc::new(Named(name, children))
    }

    #[test]
    fn duplicate_names_are_rejected() {
        let root = agent(
            "root",
            vec![agent("a", vec![]), agent("b", vec![agent("a", vec![])])],
        );
        let error = AgentTree::new(root).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Config);
        assert!(error.message().contains("'a'"));
    }

    #[test]
    fn user_is_not_an_agent_name() {
        assert!(AgentTree::new(agent("user", vec![])).is_err());
    }

    #[test]
    fn finds_descendants_and_downcasts() {
        let root = agent("root", vec![agent("a", vec![agent("deep", vec![])])]);
        assert_eq!(root.find_sub_agent("deep").unwrap().name(), "deep");
        assert!(root.find_sub_agent("root").is_none());
        assert!(root.downcast_ref::<Named>().is_some());
        let tree = AgentTree::new(root).unwrap();
        assert_eq!(tree.parent_of("deep").unwrap().name(), "a");
        assert_eq!(tree.names().count(), 3);
    }
}

crate::__into_shared!(
    /// An [`Agent`] as a builder takes it: the agent itself, an `Arc` of it, or an
    /// `Arc<dyn Agent>`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use adk_core::{Agent, EventStream, IntoAgent, InvocationContext};
    ///
    /// struct Quiet;
    /// impl Agent for Quiet {
    ///     fn name(&self) -> &str { "quiet" }
    ///     fn description(&self) -> &str { "Says nothing." }
    ///     fn run(self: Arc<Self>, _: InvocationContext) -> EventStream {
    ///         Box::pin(futures::stream::empty())
    ///     }
    /// }
    ///
    /// let shared: Arc<dyn Agent> = Quiet.into_agent();
    /// assert!(Arc::ptr_eq(&shared, &shared.clone().into_agent()));
    /// ```
    IntoAgent,
    into_agent,
    Agent,
    "`{Self}` is not an agent: it does not implement `Agent`"
);
