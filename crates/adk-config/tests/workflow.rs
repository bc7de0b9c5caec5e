//! Graph workflows in YAML (`agent_class: Workflow`): `edges` in each form ADK Python reads them,
//! nodes registered from Rust and named by their Python dotted paths, agents named by their files,
//! and a clear error for each kind of bad graph.

mod support;

use std::sync::Arc;

use adk_config::AgentLoader;
use adk_core::Agent;
use adk_test::ScriptedModel;
use adk_workflow::{Node, NodeError, NodeOutput, Workflow};
use expect_test::expect;
use serde_json::{Value, json};
use support::{ScriptedResolver, fixture, load_error};

fn loader(resolver: &ScriptedResolver) -> AgentLoader {
    let echo = |name: &'static str| {
        Node::function(name, move |input: Value| async move {
            Ok::<_, NodeError>(json!({ name: input }))
        })
    };
    let decide = Node::function("decide", |_: Value| async move {
        Ok::<_, NodeError>(NodeOutput::value("decided").route("done"))
    });
    AgentLoader::new()
        .model_resolver(resolver.clone())
        .workflow_node(echo("draft_a"))
        .workflow_node(echo("draft_b"))
        .workflow_node(Node::join("merge"))
        .workflow_node(decide)
        .workflow_node(echo("finish"))
        .workflow_node(echo("escalate"))
}

/// The edges of `workflow` as `from -> to (route)` lines.
fn render_edges(workflow: &Workflow) -> String {
    workflow
        .graph()
        .edges()
        .iter()
        .map(|edge| match edge.route_value() {
            Some(route) => format!(
                "{} -> {} ({})\n",
                edge.from_node().name(),
                edge.to_node().name(),
                serde_json::to_string(route).unwrap()
            ),
            None => format!("{} -> {}\n", edge.from_node().name(), edge.to_node().name()),
        })
        .collect()
}

#[tokio::test]
async fn every_form_of_edges_builds_the_graph_adk_python_builds() {
    let resolver = ScriptedResolver::new().serve("gemini-2.5-flash", ScriptedModel::new("chooser"));
    let root: Arc<dyn Agent> = loader(&resolver)
        .load(fixture("workflow"))
        .await
        .expect("the workflow loads");
    let workflow = root.downcast_ref::<Workflow>().expect("a graph workflow");
    assert_eq!(workflow.max_concurrency(), Some(2));
    assert_eq!(
        root.description(),
        "Drafts two answers, joins them and lets an agent choose."
    );
    assert_eq!(
        root.sub_agents()[0].name(),
        "chooser",
        "the agent node is in the tree"
    );
    expect![[r#"
        __START__ -> draft_a
        __START__ -> draft_b
        draft_a -> merge
        draft_b -> merge
        merge -> chooser
        chooser -> decide
        decide -> finish ("done")
        decide -> draft_a ("again")
        decide -> escalate (["stuck",3])
    "#]]
    .assert_eq(&render_edges(workflow));
    assert_eq!(resolver.asked(), vec!["gemini-2.5-flash".to_owned()]);
}

#[tokio::test]
async fn a_loaded_workflow_runs() {
    let resolver = ScriptedResolver::new().serve(
        "gemini-2.5-flash",
        ScriptedModel::new("chooser").then_text("draft_a is better"),
    );
    let root = loader(&resolver).load(fixture("workflow")).await.unwrap();
    let runner = support::runner(root);
    let outcome = support::run(&runner, "write").await;
    let outputs: Vec<Value> = outcome
        .events
        .iter()
        .filter_map(|event| event.output.clone())
        .collect();
    assert_eq!(
        outputs.last(),
        Some(&json!({"finish": "decided"})),
        "{outputs:?}"
    );
}

#[tokio::test]
async fn bad_graphs_are_refused_with_what_is_wrong() {
    let resolver = ScriptedResolver::new();
    let error = load_error(
        &loader(&resolver),
        fixture("workflow/errors/unknown_node.yaml"),
    )
    .await;
    expect!["invalid: tests/fixtures/workflow/errors/unknown_node.yaml: the edges name node `to_be_found`, which is neither registered with the loader (AgentLoader::workflow_node) nor an agent named earlier"]
        .assert_eq(&format!("{}: {error}", error.kind()));
    let error = load_error(
        &loader(&resolver),
        fixture("workflow/errors/two_routing_maps.yaml"),
    )
    .await;
    expect!["invalid: tests/fixtures/workflow/errors/two_routing_maps.yaml:4:5: edges[0]: two routing maps follow each other in a chain; split them into separate chains"]
        .assert_eq(&format!("{}: {error}", error.kind()));
    let error = load_error(
        &loader(&resolver),
        fixture("workflow/errors/unreachable.yaml"),
    )
    .await;
    expect![[r#"invalid: tests/fixtures/workflow/errors/unreachable.yaml: nodes ["escalate", "finish"] cannot be reached from START"#]]
        .assert_eq(&format!("{}: {error}", error.kind()));
    assert!(resolver.asked().is_empty());
}
