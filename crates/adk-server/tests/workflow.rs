//! A graph workflow served over HTTP: the dev UI's `build_graph` and `build_graph_image` of ADK
//! 2.x, and a run over `/run_sse` whose events carry their node paths.

mod support;

use adk_server::ServerConfig;
use adk_test::ScriptedModel;
use serde_json::{Value, json};
use support::{APP, TestServer, run_body, sse_events};

fn names(nodes: &Value) -> Vec<(&str, &str)> {
    nodes
        .as_array()
        .unwrap()
        .iter()
        .map(|node| {
            (
                node["name"].as_str().unwrap(),
                node["type"].as_str().unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn build_graph_serializes_the_workflow_as_adk_does() {
    let server =
        TestServer::start_workflow(ScriptedModel::new("scripted"), ServerConfig::default()).await;
    let (status, graph) = server.get(&format!("/dev/apps/{APP}/build_graph")).await;
    assert_eq!(status, 200);
    assert_eq!(graph["name"], APP);
    let root = &graph["root_agent"];
    assert_eq!(root["name"], "router_wf");
    assert_eq!(root["type"], "workflow");
    assert_eq!(root["description"], "Routes by length.");
    let mut nodes = names(&root["graph"]["nodes"]);
    nodes.sort_unstable();
    assert_eq!(
        nodes,
        [
            ("__START__", "start"),
            ("classify", "function"),
            ("fetch_a", "function"),
            ("fetch_b", "function"),
            ("gather", "join"),
            ("inner_wf", "workflow"),
            ("writer", "agent"),
        ]
    );
    let mut edges: Vec<(String, String, Value)> = root["graph"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|edge| {
            (
                edge["from_node"]["name"].as_str().unwrap().to_owned(),
                edge["to_node"]["name"].as_str().unwrap().to_owned(),
                edge.get("route").cloned().unwrap_or(Value::Null),
            )
        })
        .collect();
    edges.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    let edge = |from: &str, to: &str, route: Value| (from.to_owned(), to.to_owned(), route);
    assert_eq!(
        edges,
        [
            edge("__START__", "classify", Value::Null),
            edge("classify", "fetch_a", json!("long")),
            edge("classify", "fetch_b", json!("long")),
            edge("classify", "inner_wf", json!("__DEFAULT__")),
            edge("fetch_a", "gather", Value::Null),
            edge("fetch_b", "gather", Value::Null),
            edge("gather", "writer", Value::Null),
        ]
    );
    // An agent node has its tools and its single-turn mode; a nested workflow its own graph.
    let node = |name: &str| {
        root["graph"]["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|node| node["name"] == name)
            .unwrap()
            .clone()
    };
    let writer = node("writer");
    assert_eq!(writer["tools"], json!([{"name": "lookup", "type": "tool"}]));
    assert_eq!(writer["mode"], "single_turn");
    assert_eq!(writer["instruction"], "Write it up.");
    assert_eq!(
        names(&node("inner_wf")["graph"]["nodes"]),
        [("__START__", "start"), ("echo", "function")]
    );
    // The edges as written: two chains.
    assert_eq!(root["edges"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn build_graph_image_draws_each_workflow_by_its_static_path() {
    let server =
        TestServer::start_workflow(ScriptedModel::new("scripted"), ServerConfig::default()).await;
    let (status, images) = server
        .get(&format!("/dev/apps/{APP}/build_graph_image?dark_mode=true"))
        .await;
    assert_eq!(status, 200);
    let mut keys: Vec<&str> = images
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["", "inner_wf"]);
    let dot = images[""]["dotSrc"].as_str().unwrap();
    for line in [
        "digraph {",
        "bgcolor=\"#0F172A\"",
        "__START__ -> classify",
        "classify -> fetch_a [label=\"  long\"]",
        "classify -> inner_wf [label=\"  __DEFAULT__\"]",
        "gather -> writer",
        "writer -> lookup [color=",
        "writer -> __END__",
        "inner_wf -> __END__",
        "classify [label=",
    ] {
        assert!(dot.contains(line), "{line:?} not in\n{dot}");
    }
    // `classify` routes, so it is a diamond; the join is an oval.
    let line_of = |name: &str| {
        dot.lines()
            .find(|line| line.trim_start().starts_with(&format!("{name} [")))
            .unwrap()
            .to_owned()
    };
    assert!(line_of("classify").contains("shape=diamond"), "{dot}");
    assert!(line_of("gather").contains("shape=oval"), "{dot}");

    let (status, inner) = server
        .get(&format!("/dev/apps/{APP}/build_graph_image?node=inner_wf"))
        .await;
    assert_eq!(status, 200);
    let keys: Vec<&String> = inner.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["inner_wf"]);
    let dot = inner["inner_wf"]["dotSrc"].as_str().unwrap();
    assert!(dot.contains("bgcolor=\"#F8FAFC\""), "{dot}");
    assert!(dot.contains("__START__ -> echo"), "{dot}");

    let (status, missing) = server
        .get(&format!("/dev/apps/{APP}/build_graph_image?node=nowhere"))
        .await;
    assert_eq!(status, 404);
    assert_eq!(missing["error"], "not_found");
    let (status, _) = server.get("/dev/apps/nope/build_graph").await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_run_over_sse_carries_node_paths() {
    let model = ScriptedModel::new("scripted").then_text("written");
    let server = TestServer::start_workflow(model, ServerConfig::default()).await;
    server.create_session("s1").await;
    let (status, body) = server.run_sse_text(run_body("s1", "a long message")).await;
    assert_eq!(status, 200);
    let events = sse_events(&body);
    let mut paths: Vec<&str> = events
        .iter()
        .map(|event| event["nodeInfo"]["path"].as_str().unwrap())
        .collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        [
            "router_wf@1/classify@1",
            "router_wf@1/fetch_a@1",
            "router_wf@1/fetch_b@1",
            "router_wf@1/gather@1",
            "router_wf@1/writer@1",
        ]
    );
    let classify = &events[0];
    assert_eq!(classify["actions"]["route"], "long");
    assert_eq!(classify["output"], "a long message");
    assert_eq!(
        classify["nodeInfo"]["outputFor"],
        json!(["router_wf@1/classify@1"])
    );
    let last = events.last().unwrap();
    assert_eq!(last["content"]["parts"][0]["text"], "written");
    assert_eq!(
        last["nodeInfo"],
        json!({
            "path": "router_wf@1/writer@1",
            "outputFor": ["router_wf@1/writer@1", "router_wf@1"],
            "messageAsOutput": true,
        })
    );

    server.create_session("s2").await;
    let (_, body) = server.run_sse_text(run_body("s2", "hi")).await;
    let paths: Vec<Value> = sse_events(&body)
        .iter()
        .map(|event| event["nodeInfo"]["path"].clone())
        .collect();
    assert_eq!(
        paths,
        [
            json!("router_wf@1/classify@1"),
            json!("router_wf@1/inner_wf@1/echo@1")
        ]
    );
}
