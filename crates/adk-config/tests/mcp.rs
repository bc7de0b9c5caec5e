//! MCP toolsets declared in YAML, against the real MCP servers from npm that adk-tool's tests use:
//! server-everything over stdio and streamable HTTP, server-filesystem started in a working
//! directory; and a server that is not started until an agent asks for its tools.

mod support;

use std::path::Path;

use adk_config::AgentLoader;
use adk_test::ScriptedModel;
use adk_test::mcp_servers::{HttpEverything, installed};
use serde_json::json;
use support::{
    ScriptedResolver, load_error, load_on_local, render_requests, render_template, run, runner,
};

/// The text of the first function response among the events.
fn response_text(outcome: &support::Outcome) -> String {
    outcome
        .events
        .iter()
        .flat_map(adk_core::Event::function_responses)
        .map(|response| serde_json::to_string(&response.response).unwrap())
        .next()
        .unwrap_or_else(|| panic!("no function response:\n{}", outcome.render()))
}

/// Loads the config in `dir`, whose agent has the everything server's tools, on a model that
/// calls `echo` with `message`; runs it and returns the tool's response and what the model was
/// asked.
async fn echo_through(dir: &Path, message: &str) -> (String, String) {
    let model = ScriptedModel::new("local")
        .then_call("echo", json!({"message": message}))
        .then_text("It echoed.");
    let outcome = run(&runner(load_on_local(&model, dir).await), "Echo something.").await;
    assert!(outcome.error.is_none(), "{}", outcome.render());
    (response_text(&outcome), render_requests(&model.requests()))
}

#[tokio::test]
async fn a_stdio_server_from_yaml_serves_its_filtered_tools() {
    let dir = render_template("mcp/stdio", &[("EVERYTHING", &installed().everything())]);
    let (response, requests) = echo_through(dir.path(), "hello from YAML").await;
    assert!(response.contains("Echo: hello from YAML"), "{response}");
    // Only the two tools of `tool_filter` reach the model.
    assert!(requests.contains("tools: echo, get-sum\n"), "{requests}");
}

#[tokio::test]
async fn a_streamable_http_server_from_yaml_serves_its_tools() {
    let server = HttpEverything::start();
    let dir = render_template("mcp/http", &[("URL", &server.url())]);
    let (response, requests) = echo_through(dir.path(), "over HTTP").await;
    assert!(response.contains("Echo: over HTTP"), "{response}");
    assert!(requests.contains("tools: echo\n"), "{requests}");
}

#[tokio::test]
async fn a_stdio_server_runs_in_the_working_directory_the_yaml_names() {
    let files = tempfile::tempdir().unwrap();
    let files_dir = files.path().canonicalize().unwrap();
    std::fs::write(files_dir.join("note.txt"), "Written by the test.").unwrap();
    let dir = render_template(
        "mcp/filesystem",
        &[
            ("FILESYSTEM", &installed().filesystem()),
            ("DIR", files_dir.to_str().unwrap()),
        ],
    );
    let model = ScriptedModel::new("local")
        .then_call(
            "read_text_file",
            json!({"path": files_dir.join("note.txt")}),
        )
        .then_text("The note says hello.");
    let outcome = run(
        &runner(load_on_local(&model, dir.path()).await),
        "Read the note.",
    )
    .await;
    assert!(outcome.error.is_none(), "{}", outcome.render());
    assert!(
        response_text(&outcome).contains("Written by the test."),
        "{}",
        outcome.render()
    );
}

/// Renders the `mcp/lazy` tree, whose MCP "server" writes `marker` when started, with the
/// helper naming `helper_tool`.
fn lazy_tree(marker: &Path, helper_tool: &str) -> tempfile::TempDir {
    render_template(
        "mcp/lazy",
        &[
            ("MARKER", marker.to_str().unwrap()),
            ("HELPER_TOOL", helper_tool),
        ],
    )
}

#[tokio::test]
async fn no_server_starts_while_loading_good_or_bad_configs() {
    let scratch = tempfile::tempdir().unwrap();
    let marker = scratch.path().join("started");

    // A bad sub-agent fails the load after the root's toolset was read: nothing was started.
    let resolver = ScriptedResolver::new();
    let loader = AgentLoader::new().model_resolver(resolver.clone());
    let bad = lazy_tree(&marker, "no_such_tool");
    let error = load_error(&loader, bad.path()).await;
    assert!(
        error.to_string().contains("unknown tool `no_such_tool`"),
        "{error}"
    );
    assert!(resolver.asked().is_empty());

    // A good tree loads without starting its server either: MCP servers start when an agent
    // first asks for their tools.
    let good = lazy_tree(&marker, "exit_loop");
    load_on_local(&ScriptedModel::new("local"), good.path()).await;
    assert!(!marker.exists(), "an MCP server started while loading");
}

#[tokio::test]
async fn the_server_starts_when_the_agent_first_asks_for_tools() {
    let scratch = tempfile::tempdir().unwrap();
    let marker = scratch.path().join("started");
    let tree = lazy_tree(&marker, "exit_loop");
    let model = ScriptedModel::new("local").then_text("Hello.");
    let root = load_on_local(&model, tree.path()).await;
    assert!(!marker.exists());
    // The "server" is no MCP server, so asking for its tools fails; it was started all the same.
    let outcome = run(&runner(root), "Hi.").await;
    assert!(marker.exists(), "{}", outcome.render());
}
