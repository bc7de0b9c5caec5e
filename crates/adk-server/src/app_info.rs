//! What the server says about an app's agent tree: the app info of `/list-apps?detailed=true` and
//! `/apps/{app}/app-info`, and the agent graph in DOT for the dev UI.

use std::fmt::Write as _;

use adk_core::Agent;
use adk_flow::LlmAgent;
use adk_runner::Runner;
use serde_json::{Map, Value, json};

/// The language the app info names, as ADK Python names `python` or `yaml`.
const LANGUAGE: &str = "rust";

/// The app info of `runner`'s app, in ADK's shape: name, root agent, description, language and
/// every agent of the tree by name (description, instruction, tools, sub-agents).
pub(crate) fn app_info(runner: &Runner) -> Value {
    let root = runner.root_agent();
    let mut agents = Map::new();
    describe(root.as_ref(), &mut agents);
    json!({
        "name": runner.app_name(),
        "rootAgentName": root.name(),
        "description": root.description(),
        "language": LANGUAGE,
        "isComputerUse": false,
        "agents": agents,
    })
}

fn describe(agent: &dyn Agent, agents: &mut Map<String, Value>) {
    for sub_agent in agent.sub_agents() {
        describe(sub_agent.as_ref(), agents);
    }
    let llm_agent = (agent as &dyn std::any::Any).downcast_ref::<LlmAgent>();
    let tools: Vec<Value> = llm_agent
        .map(|llm| {
            llm.tools()
                .iter()
                .filter_map(|tool| tool.declaration())
                .map(|declaration| json!({"functionDeclarations": [declaration]}))
                .collect()
        })
        .unwrap_or_default();
    let sub_agents: Vec<&str> = agent.sub_agents().iter().map(|sub| sub.name()).collect();
    agents.insert(
        agent.name().to_owned(),
        json!({
            "name": agent.name(),
            "description": agent.description(),
            "instruction": llm_agent.map_or("", LlmAgent::instruction_text),
            "tools": tools,
            "subAgents": sub_agents,
        }),
    );
}

/// The agent graph of `root` in Graphviz DOT: agents as ellipses, tools as boxes, an edge from
/// each agent to its sub-agents and tools. Edges in `highlights` (from, to) are drawn in colour,
/// and so are the nodes they touch.
pub(crate) fn agent_graph(root: &dyn Agent, highlights: &[(String, String)]) -> String {
    let mut dot = String::from(
        "digraph agents {\n  rankdir=LR;\n  bgcolor=\"transparent\";\n  node [fontname=\"Helvetica\", color=\"#cccccc\", fontcolor=\"#cccccc\"];\n  edge [color=\"#cccccc\"];\n",
    );
    write_agent(root, highlights, &mut dot);
    dot.push_str("}\n");
    dot
}

fn is_highlighted(name: &str, highlights: &[(String, String)]) -> bool {
    highlights
        .iter()
        .any(|(from, to)| from == name || to == name)
}

fn write_agent(agent: &dyn Agent, highlights: &[(String, String)], dot: &mut String) {
    let name = agent.name();
    let style = if is_highlighted(name, highlights) {
        ", style=filled, fillcolor=\"#0F5223\""
    } else {
        ""
    };
    let _ = writeln!(dot, "  {} [shape=ellipse{style}];", quoted(name));
    let tools = (agent as &dyn std::any::Any)
        .downcast_ref::<LlmAgent>()
        .map(LlmAgent::tools)
        .unwrap_or_default();
    for tool in tools {
        let tool_name = tool.name();
        let style = if is_highlighted(tool_name, highlights) {
            ", style=filled, fillcolor=\"#0F5223\""
        } else {
            ""
        };
        let _ = writeln!(dot, "  {} [shape=box{style}];", quoted(tool_name));
        write_edge(name, tool_name, highlights, dot);
    }
    for sub_agent in agent.sub_agents() {
        write_agent(sub_agent.as_ref(), highlights, dot);
        write_edge(name, sub_agent.name(), highlights, dot);
    }
}

fn write_edge(from: &str, to: &str, highlights: &[(String, String)], dot: &mut String) {
    let lit = highlights
        .iter()
        .any(|(a, b)| (a == from && b == to) || (a == to && b == from));
    let style = if lit { " [color=\"#69CB87\"]" } else { "" };
    let _ = writeln!(dot, "  {} -> {}{style};", quoted(from), quoted(to));
}

/// A DOT identifier in double quotes, with `"` and `\` escaped.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('\\', "\\\\").replace('"', "\\\""))
}
