//! Parity with ADK Python (google-adk 2.13, from the peers' virtualenv): each scenario runs the
//! same app on both — a script of `tests/parity/python` on ADK Python, the Rust form here on
//! adk-rs — with scripted models, and their transcripts (events field by field, model requests,
//! failures) must be the same but for ids and times.

mod harness;
mod scenarios;

use harness::python;

#[tokio::test]
async fn router_with_a_default_route() {
    let ours = scenarios::router().await;
    ours.assert_matches(&python("router", &[]), "router");
}

#[tokio::test]
async fn fan_out_with_a_join_and_a_single_turn_agent() {
    let ours = scenarios::fan_out().await;
    ours.assert_matches(&python("fan_out", &[]), "fan_out");
}

#[tokio::test]
async fn human_input_loop() {
    let ours = scenarios::human_input(false).await;
    ours.assert_matches(&python("human_input", &[]), "human_input");
}

#[tokio::test]
async fn human_input_loop_resumable() {
    let ours = scenarios::human_input(true).await;
    ours.assert_matches(
        &python("human_input", &["resumable"]),
        "human_input resumable",
    );
}

#[tokio::test]
async fn nested_workflows_with_a_parallel_worker_and_a_dynamic_node() {
    let ours = scenarios::nested().await;
    ours.assert_matches(&python("nested", &[]), "nested");
}

#[tokio::test]
async fn a_failing_node_with_retries() {
    let ours = scenarios::retries().await;
    ours.assert_matches(&python("retries", &[]), "retries");
}

#[tokio::test]
async fn the_task_api_with_a_task_and_a_single_turn_agent_over_two_turns() {
    let ours = scenarios::task_api().await;
    ours.assert_matches(&python("task_api", &[]), "task_api");
}

#[tokio::test]
async fn a_chat_transfer() {
    let ours = scenarios::chat_transfer().await;
    ours.assert_matches(&python("chat_transfer", &[]), "chat_transfer");
}

#[tokio::test]
async fn a_plain_root_agent_with_a_tool() {
    let ours = scenarios::root_tool().await;
    ours.assert_matches(&python("root_tool", &[]), "root_tool");
}

#[tokio::test]
async fn a_yaml_workflow() {
    let ours = scenarios::yaml_workflow().await;
    ours.assert_matches(&python("yaml_workflow", &[]), "yaml_workflow");
}
