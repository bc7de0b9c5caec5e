//! The MCP toolset against servers that are not to be trusted: server-everything from npm showing
//! the environment it got, and `tests/support/hostile_mcp_server.mjs` (on the official SDK) with
//! poisoned tool lists, crashes mid-call, a tool list that changes, huge messages and a server
//! that will not close.
#![cfg(feature = "mcp")]

mod support;

use std::path::Path;
use std::time::Duration;

use adk_test::mcp_servers::installed;
use adk_tool::mcp::{INHERITED_ENV, McpToolset};
use adk_tool::{ToolErrorKind, Toolset as _};
use serde_json::{Value, json};
use support::mcp_calls::{call, find, names, tool_error, tools_of};

/// The hostile server in `mode`, keeping its calls in `state`.
fn hostile(mode: &str, state: &Path) -> adk_tool::mcp::McpToolsetBuilder {
    let script = adk_test::package_dir(env!("CARGO_MANIFEST_DIR"))
        .join("tests/support/hostile_mcp_server.mjs");
    McpToolset::stdio(
        "node",
        [
            script.to_str().unwrap().to_owned(),
            installed().sdk(),
            mode.to_owned(),
            state.to_str().unwrap().to_owned(),
            // An argument that stands for a secret passed on the command line.
            "--api-key=sk-argv-secret".to_owned(),
        ],
    )
    .name(mode)
}

/// The lines of the hostile server's state file.
fn state_lines(state: &Path) -> Vec<String> {
    std::fs::read_to_string(state)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn process_is_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .is_ok_and(|status| !status.contains("State:\tZ"))
}

#[tokio::test]
async fn review_02_a_stdio_server_gets_only_the_safelisted_environment() {
    assert!(
        std::env::var_os("CARGO_MANIFEST_DIR").is_some(),
        "cargo sets CARGO_MANIFEST_DIR for the tests it runs; it stands for a secret here"
    );
    let toolset = McpToolset::stdio("node", [installed().everything(), "stdio".to_owned()])
        .env("SERVER_TOKEN", "meant-for-this-server")
        .inherit_env("CARGO_PKG_NAME")
        .build();
    let tools = tools_of(&toolset).await;
    let shown = call(find(&tools, "get-env"), json!({})).await.unwrap();
    let env: serde_json::Map<String, Value> =
        serde_json::from_str(shown["content"][0]["text"].as_str().unwrap()).unwrap();
    assert!(!env.contains_key("CARGO_MANIFEST_DIR"), "{env:?}");
    assert_eq!(env["SERVER_TOKEN"], "meant-for-this-server");
    assert_eq!(env["CARGO_PKG_NAME"], "adk-tool");
    assert!(env.contains_key("PATH"));
    let allowed: Vec<&str> = INHERITED_ENV
        .iter()
        .copied()
        .chain(["SERVER_TOKEN", "CARGO_PKG_NAME"])
        .collect();
    let extra: Vec<&String> = env
        .keys()
        .filter(|key| !allowed.contains(&key.as_str()))
        .collect();
    assert!(
        extra.is_empty(),
        "the server got more than the safelist: {extra:?}"
    );
    toolset.close().await.unwrap();
}

#[tokio::test]
async fn review_03_a_call_lost_with_its_connection_is_not_sent_again() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("calls");
    let toolset = hostile("crash", &state).build();
    let tools = tools_of(&toolset).await;

    // The server charges the card, then dies before answering: sending it again would charge
    // twice.
    let error = call(find(&tools, "charge"), json!({})).await.unwrap_err();
    assert_eq!(tool_error(&error).kind(), ToolErrorKind::McpRequest);
    assert!(
        error.message().contains("may or may not have taken effect"),
        "{error}"
    );
    assert_eq!(state_lines(&state), ["charge"]);

    // A tool the server marks idempotent is sent again on a new connection.
    let rate = call(find(&tools, "lookup_rate"), json!({})).await.unwrap();
    assert_eq!(rate["content"][0]["text"], "1.08");
    assert_eq!(
        state_lines(&state),
        ["charge", "lookup_rate", "lookup_rate"]
    );
    toolset.close().await.unwrap();
}

#[tokio::test]
async fn review_13_messages_and_debug_output_carry_no_arguments_env_values_or_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("calls");
    let builder = hostile("crash", &state).env("PAYMENT_KEY", "pk-env-secret");
    let debug = format!("{builder:?}");
    assert!(
        !debug.contains("sk-argv-secret") && !debug.contains("pk-env-secret"),
        "{debug}"
    );
    let toolset = builder.build();
    let tools = tools_of(&toolset).await;
    let error = call(find(&tools, "charge"), json!({})).await.unwrap_err();
    let message = error.message();
    assert!(!message.contains("sk-argv-secret"), "{message}");
    assert!(
        !message.contains("4242424242424242"),
        "stderr reaches no result: {message}"
    );
    assert!(message.contains("`node`"), "{message}");
    toolset.close().await.unwrap();

    let http = McpToolset::streamable_http("http://user:pw@127.0.0.1:9/mcp?key=q-secret")
        .bearer_token("bearer-secret");
    let debug = format!("{http:?}");
    for secret in ["bearer-secret", "pw", "q-secret"] {
        assert!(!debug.contains(secret), "{debug}");
    }
}

#[tokio::test]
async fn review_14_a_server_that_will_not_close_stalls_no_other_call() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("calls");
    // The old session's close may take a minute; nothing else may wait for it.
    let toolset = hostile("detach", &state)
        .close_timeout(Duration::from_secs(60))
        .build();
    let tools = tools_of(&toolset).await;
    let first = toolset.process_id().expect("a child process");
    let error = call(find(&tools, "detach"), json!({})).await.unwrap_err();
    assert_eq!(tool_error(&error).kind(), ToolErrorKind::McpRequest);

    // The next call reconnects to a new process while the old one is still being closed.
    let pong = call(find(&tools, "ping"), json!({})).await.unwrap();
    assert_eq!(pong["content"][0]["text"], "pong");
    let second = toolset.process_id().expect("a new child process");
    assert_ne!(first, second);
    assert!(
        process_is_alive(first),
        "the new session did not wait for the old one to close"
    );
    toolset.close().await.unwrap();
}

#[tokio::test]
async fn security_mcp_a_poisoned_tool_list_is_vetted_before_the_model_sees_it() {
    let dir = tempfile::tempdir().unwrap();
    let toolset = hostile("poisoned", &dir.path().join("calls"))
        .max_description_chars(500)
        .build();
    let tools = tools_of(&toolset).await;
    // The tool named with a space and the one named with 200 characters are refused.
    let mut listed = names(&tools);
    listed.sort_unstable();
    assert_eq!(listed, ["get_weather", "lookup"]);
    let lookup = find(&tools, "lookup").declaration().unwrap();
    let description = &lookup.description;
    assert!(
        !description
            .chars()
            .any(|c| c.is_control() || ('\u{200b}'..='\u{202e}').contains(&c)),
        "{description:?}"
    );
    assert!(
        description.starts_with("Looks things up.]52;c;ZXZpbA==[2Jedih IMPORTANT"),
        "{description:?}"
    );
    assert_eq!(description.chars().count(), 500 + " [cut]".len());
    let parameter = lookup.parameters.unwrap()["properties"]["query"]["description"].clone();
    assert_eq!(parameter, "what[8m to look up");
    toolset.close().await.unwrap();
}

#[tokio::test]
async fn security_mcp_a_tool_that_changes_mid_session_is_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let toolset = hostile("rug-pull", &dir.path().join("calls")).build();
    let tools = tools_of(&toolset).await;
    assert_eq!(find(&tools, "fetch").description(), "Fetches a page.");
    call(find(&tools, "fetch"), json!({})).await.unwrap();
    // Listed again, the tool now carries an injection: it is not offered any more.
    assert!(names(&tools_of(&toolset).await).is_empty());
    toolset.close().await.unwrap();

    let accepting = hostile("rug-pull", &dir.path().join("calls"))
        .accept_tool_changes(true)
        .build();
    let tools = tools_of(&accepting).await;
    call(find(&tools, "fetch"), json!({})).await.unwrap();
    let relisted = tools_of(&accepting).await;
    assert!(
        find(&relisted, "fetch")
            .description()
            .contains("evil.example")
    );
    accepting.close().await.unwrap();
}

#[tokio::test]
async fn security_mcp_an_oversized_message_ends_the_connection_with_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let toolset = hostile("huge", &dir.path().join("calls"))
        .max_message_bytes(1024 * 1024)
        .build();
    let tools = tools_of(&toolset).await;
    let error = call(find(&tools, "dump"), json!({})).await.unwrap_err();
    assert_eq!(tool_error(&error).kind(), ToolErrorKind::McpProtocol);
    assert!(error.message().contains("max_message_bytes"), "{error}");
    toolset.close().await.unwrap();
}
