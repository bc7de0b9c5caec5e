//! The adk-rs quickstart: `cargo run -p quickstart`.
//!
//! It builds a small agent tree (a coordinator with two specialists), checks it, runs the
//! coordinator on a fresh session and prints the tree and the events as ADK's JSON. It needs no
//! API key and no network.

// A command-line example reports to the terminal.
#![allow(clippy::print_stdout)]

use std::sync::Arc;

use adk::{Agent, AgentTree, Content, EventStream, InvocationContext, Session, SessionKey};
use anyhow::Context as _;
use futures::StreamExt as _;

/// An agent that answers with a fixed greeting and delegates nothing itself.
struct Greeter {
    name: String,
    description: String,
    sub_agents: Vec<Arc<dyn Agent>>,
}

impl Greeter {
    fn new(name: &str, description: &str, sub_agents: Vec<Arc<dyn Agent>>) -> Arc<dyn Agent> {
        Arc::new(Self {
            name: name.to_owned(),
            description: description.to_owned(),
            sub_agents,
        })
    }
}

impl Agent for Greeter {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn sub_agents(&self) -> &[Arc<dyn Agent>] {
        &self.sub_agents
    }

    fn run(self: Arc<Self>, ctx: InvocationContext) -> EventStream {
        let asked = ctx
            .user_content()
            .and_then(Content::text)
            .unwrap_or_default();
        let helpers: Vec<&str> = self.sub_agents.iter().map(|agent| agent.name()).collect();
        let answer = format!(
            "Hello from {}! You said {asked:?}; I can hand you to {}.",
            self.name,
            helpers.join(" or ")
        );
        let event = ctx.new_event().with_content(Content::model(answer));
        futures::stream::iter([Ok(event)]).boxed()
    }
}

fn print_tree(agent: &Arc<dyn Agent>, depth: usize) {
    println!("{}- {}: {}", "  ".repeat(depth), agent.name(), agent.description());
    for child in agent.sub_agents() {
        print_tree(child, depth + 1);
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let weather = Greeter::new("weather", "Answers questions about the weather.", vec![]);
    let travel = Greeter::new("travel", "Plans trips.", vec![]);
    let root = Greeter::new(
        "coordinator",
        "Routes each question to the right specialist.",
        vec![weather, travel],
    );
    let tree = AgentTree::new(root.clone()).context("the agent tree is invalid")?;
    println!("agent tree:");
    print_tree(tree.root(), 1);

    let session = Session::new(SessionKey::new("quickstart", "user-1", "session-1"));
    let ctx = InvocationContext::builder(root.clone(), session)
        .agent_tree(tree)
        .user_content(Content::user("What should I pack for Paris?"))
        .build()?;
    println!("events:");
    let mut events = root.run(ctx);
    while let Some(event) = events.next().await {
        println!("{}", serde_json::to_string(&event?)?);
    }
    Ok(())
}
