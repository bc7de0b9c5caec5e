//! The graph the dev UI draws (ADK 2.x's `build_graph` and `build_graph_image`): an app's tree as
//! JSON (a workflow's nodes and edges, an agent's sub-agents and tools), and each workflow of it,
//! or the agent tree when there is none, in Graphviz DOT, keyed by the node's static path.

use std::fmt::Write as _;

use adk_core::Agent;
use adk_flow::LlmAgent;
use adk_workflow::{ChainElement, Edge, Node, NodeKind, Workflow, WrittenEdges};
use serde_json::{Map, Value, json};

/// The app info of `build_graph`: the app's name and its root, serialized.
pub(crate) fn app_graph(app: &str, root: &dyn Agent) -> Value {
    json!({"name": app, "root_agent": agent_json(root)})
}

/// An agent as the dev UI reads it: a workflow with its graph, an `LlmAgent` with its model,
/// instruction, tools and sub-agents, any other agent with its sub-agents.
fn agent_json(agent: &dyn Agent) -> Value {
    if let Some(workflow) = agent.downcast_ref::<Workflow>() {
        return workflow_json(workflow);
    }
    let mut fields = Map::new();
    fields.insert("name".into(), json!(agent.name()));
    fields.insert("description".into(), json!(agent.description()));
    fields.insert(
        "sub_agents".into(),
        Value::Array(
            agent
                .sub_agents()
                .iter()
                .map(|sub_agent| agent_json(sub_agent.as_ref()))
                .collect(),
        ),
    );
    if let Some(llm) = agent.downcast_ref::<LlmAgent>() {
        if let Some(model) = llm.own_model() {
            fields.insert("model".into(), json!(model.name()));
        }
        fields.insert("instruction".into(), json!(llm.instruction_text()));
        let sub_agent_names: Vec<&str> = agent.sub_agents().iter().map(|sub| sub.name()).collect();
        let tools: Vec<Value> = llm
            .tools()
            .iter()
            .filter(|tool| !sub_agent_names.contains(&tool.name()))
            .map(|tool| json!({"name": tool.name(), "type": "tool"}))
            .collect();
        fields.insert("tools".into(), Value::Array(tools));
        if let Some(mode) = llm.mode() {
            fields.insert("mode".into(), json!(mode.as_str()));
        }
    }
    Value::Object(fields)
}

fn workflow_json(workflow: &Workflow) -> Value {
    let graph = workflow.graph();
    let edges: Vec<Value> = graph.edges().iter().map(edge_json).collect();
    let written: Vec<Value> = workflow
        .edge_items()
        .into_iter()
        .map(|item| match item {
            WrittenEdges::Chain(chain) => Value::Array(chain.iter().map(element_json).collect()),
            WrittenEdges::Edge(edge) => edge_json(&edge),
            _ => Value::Null,
        })
        .collect();
    json!({
        "name": workflow.name(),
        "description": Agent::description(workflow),
        "rerun_on_resume": true,
        "wait_for_output": false,
        "edges": written,
        "graph": {
            "nodes": graph.nodes().iter().map(node_json).collect::<Vec<_>>(),
            "edges": edges,
        },
        "type": "workflow",
    })
}

fn element_json(element: &ChainElement) -> Value {
    match element {
        ChainElement::Nodes(nodes) if nodes.len() == 1 => node_json(&nodes[0]),
        ChainElement::Nodes(nodes) => Value::Array(nodes.iter().map(node_json).collect()),
        ChainElement::Routes(routes) => Value::Object(
            routes
                .entries()
                .iter()
                .map(|(route, targets)| {
                    let targets = match targets.as_slice() {
                        [one] => node_json(one),
                        many => Value::Array(many.iter().map(node_json).collect()),
                    };
                    (route.to_string(), targets)
                })
                .collect(),
        ),
    }
}

fn edge_json(edge: &Edge) -> Value {
    let mut fields = Map::new();
    fields.insert("from_node".into(), node_json(edge.from_node()));
    fields.insert("to_node".into(), node_json(edge.to_node()));
    if let Some(route) = edge.route_value() {
        fields.insert(
            "route".into(),
            serde_json::to_value(route).unwrap_or(Value::Null),
        );
    }
    Value::Object(fields)
}

/// A graph node: its name, kind and options; an agent or a nested workflow in full.
fn node_json(node: &Node) -> Value {
    if node.is_start() {
        return json!({"name": node.name(), "type": "start", "rerun_on_resume": false});
    }
    let body = node.body();
    let mut value = match (body.as_workflow(), body.as_agent()) {
        (Some(workflow), _) => workflow_json(workflow),
        (None, Some(agent)) => agent_json(agent.as_ref()),
        (None, None) => json!({"name": node.name(), "description": node.description()}),
    };
    if let Value::Object(fields) = &mut value {
        fields.insert("name".into(), json!(node.name()));
        fields.insert(
            "rerun_on_resume".into(),
            json!(node.options().rerun_on_resume),
        );
        fields.insert(
            "wait_for_output".into(),
            json!(node.options().wait_for_output),
        );
        fields.insert("type".into(), json!(node.kind().as_str()));
        if node.kind() == NodeKind::Agent
            && let Some(mode) = body.agent_mode()
        {
            fields.insert("mode".into(), json!(mode.as_str()));
        }
    }
    value
}

/// The answer of `build_graph_image`: each workflow of the tree under `node` (a static path,
/// the root when absent) in DOT, keyed by its static path (`""` for the root), or the agent
/// tree when there is no workflow. `None` when `node` names nothing.
pub(crate) fn graph_images(
    app: &Value,
    dark: bool,
    node: Option<&str>,
) -> Option<Map<String, Value>> {
    let root = &app["root_agent"];
    let (target, base) = match node.filter(|node| !node.is_empty()) {
        Some(path) => (navigate(root, path)?, path.to_owned()),
        None => (root, String::new()),
    };
    let mut found = Vec::new();
    workflows(target, &base, &mut found);
    if !found.iter().any(|(path, _)| *path == base) {
        found.push((base, target));
    }
    Some(
        found
            .into_iter()
            .map(|(path, info)| (path, json!({"dotSrc": dot(info, dark)})))
            .collect(),
    )
}

/// The node at static path `path` (`wf/inner`, the root's name first or not).
fn navigate<'a>(root: &'a Value, path: &str) -> Option<&'a Value> {
    let mut parts: Vec<&str> = path.split('/').filter(|part| !part.is_empty()).collect();
    if parts.first() == Some(&root["name"].as_str().unwrap_or_default()) {
        parts.remove(0);
    }
    let mut current = root;
    for part in parts {
        current = children(current)
            .into_iter()
            .find(|child| child["name"] == part)?;
    }
    Some(current)
}

/// The graph nodes and sub-agents of a serialized agent.
fn children(agent: &Value) -> Vec<&Value> {
    let mut children: Vec<&Value> = Vec::new();
    for key in ["sub_agents", "nodes"] {
        children.extend(agent[key].as_array().into_iter().flatten());
    }
    children.extend(agent["graph"]["nodes"].as_array().into_iter().flatten());
    children
}

/// Every workflow at or below `agent`, with its static path.
fn workflows<'a>(agent: &'a Value, path: &str, found: &mut Vec<(String, &'a Value)>) {
    if agent.get("graph").is_some() {
        found.push((path.to_owned(), agent));
    }
    for child in children(agent) {
        let Some(name) = child["name"].as_str() else {
            continue;
        };
        if name == adk_workflow::START_NAME {
            continue;
        }
        let child_path = if path.is_empty() {
            name.to_owned()
        } else {
            format!("{path}/{name}")
        };
        workflows(child, &child_path, found);
    }
}

/// The colours of one theme.
struct Theme {
    background: &'static str,
    fill: &'static str,
    line: &'static str,
    text: &'static str,
    edge: &'static str,
    edge_text: &'static str,
    start: (&'static str, &'static str),
    end: (&'static str, &'static str),
}

const DARK: Theme = Theme {
    background: "#0F172A",
    fill: "#1E293B",
    line: "#475569",
    text: "#F8FAFC",
    edge: "#94A3B8",
    edge_text: "#CBD5E1",
    start: ("#059669", "#047857"),
    end: ("#DC2626", "#B91C1C"),
};

const LIGHT: Theme = Theme {
    background: "#F8FAFC",
    fill: "#FFFFFF",
    line: "#94A3B8",
    text: "#0F172A",
    edge: "#64748B",
    edge_text: "#475569",
    start: ("#10B981", "#059669"),
    end: ("#EF4444", "#DC2626"),
};

/// One drawn node: its name and its kind (`agent`, `function`, `join`, ...).
struct Drawn<'a> {
    name: &'a str,
    kind: &'a str,
}

/// One drawn edge.
struct Line<'a> {
    from: &'a str,
    to: &'a str,
    route: Option<String>,
}

/// A workflow's graph (or an agent tree) in DOT: `START` and `END` ovals, a diamond for a node
/// that routes, an oval for a join, dashed boxes for tools, and each node labelled with its
/// kind's symbol.
fn dot(info: &Value, dark: bool) -> String {
    let theme = if dark { &DARK } else { &LIGHT };
    let is_workflow = info.get("graph").is_some();
    let mut nodes: Vec<Drawn<'_>> = Vec::new();
    let mut lines: Vec<Line<'_>> = Vec::new();
    if is_workflow {
        for node in info["graph"]["nodes"].as_array().into_iter().flatten() {
            nodes.push(Drawn {
                name: node["name"].as_str().unwrap_or_default(),
                kind: node["type"].as_str().unwrap_or("node"),
            });
        }
        for edge in info["graph"]["edges"].as_array().into_iter().flatten() {
            lines.push(Line {
                from: edge["from_node"]["name"].as_str().unwrap_or_default(),
                to: edge["to_node"]["name"].as_str().unwrap_or_default(),
                route: edge.get("route").map(|route| match route {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                }),
            });
        }
    } else {
        agent_tree(info, &mut nodes, &mut lines);
    }
    // Each agent's tools, as dashed boxes joined by dashed lines.
    let tool_lines: Vec<(String, String)> = tools_of(info, is_workflow);
    let mut out = String::from("digraph {\n");
    let _ = writeln!(
        out,
        "\tgraph [bgcolor=\"{}\" fontname=Helvetica nodesep=0.5 pad=0.5 ranksep=0.8 splines=spline]",
        theme.background
    );
    let _ = writeln!(
        out,
        "\tnode [color=\"{}\" fillcolor=\"{}\" fontcolor=\"{}\" fontname=Helvetica fontsize=12 margin=\"0.25,0.15\" penwidth=1.5 shape=rect style=\"rounded,filled\"]",
        theme.line, theme.fill, theme.text
    );
    let _ = writeln!(
        out,
        "\tedge [arrowhead=vee arrowsize=0.7 color=\"{}\" fontcolor=\"{}\" fontname=Helvetica fontsize=10 penwidth=1.2]",
        theme.edge, theme.edge_text
    );
    for node in nodes
        .iter()
        .filter(|node| node.name != adk_workflow::START_NAME)
    {
        let outgoing: Vec<&Line<'_>> = lines.iter().filter(|line| line.from == node.name).collect();
        let routes = outgoing.iter().any(|line| line.route.is_some());
        let label = label(node);
        let tooltip = capitalized(node.kind);
        if routes {
            let _ = writeln!(
                out,
                "\t{} [label={label} fillcolor=\"{}\" height=1.2 margin=\"0.0,0.0\" shape=diamond style=filled tooltip={tooltip} width=0.8]",
                quoted(node.name),
                theme.fill
            );
        } else if node.kind == "join" {
            let _ = writeln!(
                out,
                "\t{} [label={label} fillcolor=\"{}\" margin=\"0.05,0.05\" shape=oval style=filled tooltip={tooltip}]",
                quoted(node.name),
                theme.fill
            );
        } else {
            let _ = writeln!(
                out,
                "\t{} [label={label} fillcolor=\"{}\" style=\"rounded,filled\" tooltip={tooltip}]",
                quoted(node.name),
                theme.fill
            );
        }
    }
    let mut drawn_tools: Vec<&str> = Vec::new();
    for (_, tool) in &tool_lines {
        if !drawn_tools.contains(&tool.as_str()) && !nodes.iter().any(|node| node.name == tool) {
            drawn_tools.push(tool);
            let _ = writeln!(
                out,
                "\t{} [label={} fillcolor=\"{}\" style=\"rounded,filled,dashed\" tooltip=Tool]",
                quoted(tool),
                label(&Drawn {
                    name: tool,
                    kind: "tool"
                }),
                theme.fill
            );
        }
    }
    let mut start_drawn = false;
    for line in &lines {
        if line.from == adk_workflow::START_NAME && !start_drawn {
            start_drawn = true;
            let _ = writeln!(
                out,
                "\t__START__ [label=START color=\"{}\" fillcolor=\"{}\" fixedsize=true fontcolor=\"{}\" fontname=\"Helvetica-Bold\" shape=oval style=filled width=0.9]",
                theme.start.1, theme.start.0, theme.text
            );
        }
        let label = line
            .route
            .as_ref()
            .map_or_else(String::new, |route| format!("  {route}"));
        let _ = writeln!(
            out,
            "\t{} -> {} [label={}]",
            quoted(line.from),
            quoted(line.to),
            quoted_always(&label)
        );
    }
    for (agent, tool) in &tool_lines {
        let _ = writeln!(
            out,
            "\t{} -> {} [color=\"{}\" style=dashed]",
            quoted(agent),
            quoted(tool),
            theme.edge
        );
    }
    if is_workflow {
        let terminal: Vec<&str> = nodes
            .iter()
            .filter(|node| node.name != adk_workflow::START_NAME && node.kind != "tool")
            .filter(|node| !lines.iter().any(|line| line.from == node.name))
            .map(|node| node.name)
            .collect();
        if !terminal.is_empty() {
            let _ = writeln!(
                out,
                "\t__END__ [label=END color=\"{}\" fillcolor=\"{}\" fixedsize=true fontcolor=\"{}\" fontname=\"Helvetica-Bold\" shape=oval style=filled width=0.9]",
                theme.end.1, theme.end.0, theme.text
            );
            for name in terminal {
                let _ = writeln!(out, "\t{} -> __END__", quoted(name));
            }
        }
    }
    out.push_str("}\n");
    out
}

/// The agents of a tree without a workflow, with an edge to each sub-agent.
fn agent_tree<'a>(agent: &'a Value, nodes: &mut Vec<Drawn<'a>>, lines: &mut Vec<Line<'a>>) {
    let name = agent["name"].as_str().unwrap_or("root_agent");
    nodes.push(Drawn {
        name,
        kind: "agent",
    });
    for sub_agent in agent["sub_agents"].as_array().into_iter().flatten() {
        let Some(sub_name) = sub_agent["name"].as_str() else {
            continue;
        };
        lines.push(Line {
            from: name,
            to: sub_name,
            route: None,
        });
        agent_tree(sub_agent, nodes, lines);
    }
}

/// (agent, tool) for each tool of each agent drawn.
fn tools_of(info: &Value, is_workflow: bool) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    let mut visit = |agent: &Value| {
        let name = agent["name"].as_str().unwrap_or_default().to_owned();
        for tool in agent["tools"].as_array().into_iter().flatten() {
            if let Some(tool) = tool["name"].as_str() {
                pairs.push((name.clone(), tool.to_owned()));
            }
        }
    };
    if is_workflow {
        info["graph"]["nodes"]
            .as_array()
            .into_iter()
            .flatten()
            .for_each(&mut visit);
    } else {
        let mut stack = vec![info];
        while let Some(agent) = stack.pop() {
            visit(agent);
            stack.extend(agent["sub_agents"].as_array().into_iter().flatten());
        }
    }
    pairs
}

/// A node's label: its kind's symbol in the kind's colour, then its name.
fn label(node: &Drawn<'_>) -> String {
    let symbol = match node.kind {
        "agent" => Some(("✦", "#42A5F5")),
        "workflow" => Some(("⊷", "#9333EA")),
        "function" => Some(("ƒ", "#10B981")),
        "join" => Some(("⌵", "#F59E0B")),
        "tool" => Some(("🔧", "#6B7280")),
        _ => None,
    };
    match symbol {
        Some((symbol, colour)) => format!(
            "<<FONT COLOR=\"{colour}\" POINT-SIZE=\"14\">{symbol}</FONT> {}>",
            html_escape(node.name)
        ),
        None => quoted(node.name),
    }
}

fn capitalized(kind: &str) -> String {
    let mut chars = kind.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A DOT identifier: as it is when it is a plain name, else quoted.
fn quoted(name: &str) -> String {
    let plain = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if plain {
        name.to_owned()
    } else {
        quoted_always(name)
    }
}

fn quoted_always(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}
