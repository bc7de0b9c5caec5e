//! The MCP toolset against real MCP servers from npm (`server-everything` over stdio and
//! streamable HTTP, `server-filesystem` over stdio), and against broken ones.
#![cfg(feature = "mcp")]

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use adk_test::mcp_servers::{HttpEverything, installed};
use adk_tool::mcp::McpToolset;
use adk_tool::{CONFIRMATION_REQUIRED_MESSAGE, ToolErrorKind, ToolFilter, Toolset};
use serde_json::json;
use support::mcp_calls::{call, find, names, tool_error, tools_of};
use support::{Readonly as _, TestToolContext};

fn everything_over_stdio() -> McpToolset {
    McpToolset::stdio("node", [installed().everything(), "stdio".to_owned()])
        .name("everything")
        .build()
}

/// Whether process `pid` has exited. Only a missing `/proc/<pid>` on a machine whose `/proc` works
/// means gone; any other failure to read it ends the test instead of passing it unseen.
fn process_is_gone(pid: u32) -> bool {
    let path = format!("/proc/{pid}/status");
    match std::fs::read_to_string(&path) {
        // A zombie has exited too; only its parent's bookkeeping is left.
        Ok(status) => status.contains("State:\tZ"),
        Err(error)
            if error.kind() == std::io::ErrorKind::NotFound
                && std::fs::read_to_string("/proc/self/status").is_ok() =>
        {
            true
        }
        Err(error) => panic!("cannot tell whether process {pid} still runs: {path}: {error}"),
    }
}

async fn wait_until_gone(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while !process_is_gone(pid) {
        assert!(Instant::now() < deadline, "process {pid} still runs");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The checks both transports of server-everything pass: listing with schemas, and text, image
/// and resource results.
async fn lists_and_calls_everything(toolset: &McpToolset) {
    let tools = tools_of(toolset).await;
    let echo = find(&tools, "echo");
    let declaration = echo.declaration().unwrap();
    assert_eq!(declaration.description, "Echoes back the input string");
    let parameters = declaration.parameters.unwrap();
    assert_eq!(parameters["properties"]["message"]["type"], "string");
    assert_eq!(parameters["required"], json!(["message"]));
    assert!(!parameters.to_string().contains("$schema"));

    let echoed = call(echo, json!({"message": "hello"})).await.unwrap();
    assert_eq!(
        echoed,
        json!({"content": [{"type": "text", "text": "Echo: hello"}]})
    );

    let sum = call(find(&tools, "get-sum"), json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    let text = sum["content"][0]["text"].as_str().unwrap();
    assert!(text.contains('5'), "{text}");

    let image = call(find(&tools, "get-tiny-image"), json!({}))
        .await
        .unwrap();
    let blocks = image["content"].as_array().unwrap();
    let picture = blocks
        .iter()
        .find(|block| block["type"] == "image")
        .expect("an image block");
    assert_eq!(picture["mimeType"], "image/png");
    assert!(!picture["data"].as_str().unwrap().is_empty());

    let reference = call(
        find(&tools, "get-resource-reference"),
        json!({"resourceId": 1}),
    )
    .await
    .unwrap();
    let resource = reference["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|block| block["type"] == "resource")
        .expect("a resource block");
    assert!(resource["resource"]["uri"].as_str().unwrap().contains('1'));
}

#[tokio::test]
async fn everything_over_stdio_lists_and_calls_tools() {
    let toolset = everything_over_stdio();
    lists_and_calls_everything(&toolset).await;
    toolset.close().await.unwrap();
}

#[tokio::test]
async fn everything_over_streamable_http_lists_and_calls_tools() {
    let server = HttpEverything::start();
    let toolset = McpToolset::streamable_http(server.url()).build();
    assert_eq!(toolset.name(), "mcp");
    lists_and_calls_everything(&toolset).await;
    assert_eq!(toolset.process_id(), None);
    toolset.close().await.unwrap();
}

#[tokio::test]
async fn a_server_error_result_becomes_a_tool_error() {
    let toolset = everything_over_stdio();
    let tools = tools_of(&toolset).await;
    let error = call(find(&tools, "get-sum"), json!({"a": "two", "b": 3}))
        .await
        .unwrap_err();
    assert_eq!(tool_error(&error).kind(), ToolErrorKind::McpToolError);
    let message = error.message();
    assert!(
        message.starts_with("The tool `get-sum` reported an error: "),
        "{message}"
    );
    assert!(message.contains("expected number"), "{message}");
    toolset.close().await.unwrap();
}

fn filesystem_over_stdio(dir: &Path) -> adk_tool::mcp::McpToolsetBuilder {
    let dir = dir.to_str().unwrap().to_owned();
    McpToolset::stdio("node", [installed().filesystem(), dir]).name("files")
}

#[tokio::test]
async fn filesystem_over_stdio_reads_lists_and_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("hello.txt"), "Hello, files!").unwrap();
    let toolset = filesystem_over_stdio(&root).build();
    let tools = tools_of(&toolset).await;
    for expected in ["read_text_file", "list_directory", "write_file"] {
        find(&tools, expected);
    }

    let listing = call(find(&tools, "list_directory"), json!({"path": root}))
        .await
        .unwrap();
    assert!(
        listing["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("[FILE] hello.txt")
    );

    let read = call(
        find(&tools, "read_text_file"),
        json!({"path": root.join("hello.txt")}),
    )
    .await
    .unwrap();
    assert_eq!(read["content"][0]["text"], "Hello, files!");

    let error = call(
        find(&tools, "read_text_file"),
        json!({"path": "/etc/hostname"}),
    )
    .await
    .unwrap_err();
    assert_eq!(tool_error(&error).kind(), ToolErrorKind::McpToolError);
    assert!(
        error.message().contains("read_text_file"),
        "{}",
        error.message()
    );
    toolset.close().await.unwrap();
}

#[tokio::test]
async fn a_filter_keeps_only_the_chosen_tools() {
    let dir = tempfile::tempdir().unwrap();
    let toolset = filesystem_over_stdio(dir.path())
        .tool_filter(ToolFilter::names(["read_text_file", "list_directory"]))
        .build();
    let tools = tools_of(&toolset).await;
    let mut found = names(&tools);
    found.sort_unstable();
    assert_eq!(found, ["list_directory", "read_text_file"]);
    toolset.close().await.unwrap();
}

#[tokio::test]
async fn a_dropped_connection_is_restarted_once() {
    let toolset = everything_over_stdio();
    let tools = tools_of(&toolset).await;
    let first = toolset.process_id().expect("a child process");
    let killed = std::process::Command::new("kill")
        .args(["-9", &first.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    wait_until_gone(first).await;

    let echoed = call(find(&tools, "echo"), json!({"message": "again"}))
        .await
        .unwrap();
    assert_eq!(echoed["content"][0]["text"], "Echo: again");
    let second = toolset.process_id().expect("a new child process");
    assert_ne!(first, second);
    toolset.close().await.unwrap();
}

#[tokio::test]
async fn dropping_the_toolset_ends_the_child_process() {
    let toolset = everything_over_stdio();
    let tools = tools_of(&toolset).await;
    let pid = toolset.process_id().expect("a child process");
    drop(toolset);
    wait_until_gone(pid).await;

    let error = call(find(&tools, "echo"), json!({"message": "late"}))
        .await
        .unwrap_err();
    assert_eq!(tool_error(&error).kind(), ToolErrorKind::McpRequest);
    assert_eq!(
        error.message(),
        "The MCP toolset that provided `echo` was closed; the tool is no longer available."
    );
}

#[tokio::test]
async fn closing_the_toolset_ends_the_child_process() {
    let toolset = everything_over_stdio();
    tools_of(&toolset).await;
    let pid = toolset.process_id().expect("a child process");
    toolset.close().await.unwrap();
    assert_eq!(toolset.process_id(), None);
    wait_until_gone(pid).await;
}

#[tokio::test]
async fn calls_can_require_confirmation() {
    let toolset = McpToolset::stdio("node", [installed().everything(), "stdio".to_owned()])
        .require_confirmation(true)
        .build();
    let tools = tools_of(&toolset).await;
    let ctx = TestToolContext::plain();
    let response = find(&tools, "echo")
        .run(ctx.clone(), json!({"message": "hi"}))
        .await
        .unwrap();
    assert_eq!(response, json!({"error": CONFIRMATION_REQUIRED_MESSAGE}));
    assert!(
        ctx.take_actions()
            .requested_tool_confirmations
            .contains_key("call-1")
    );
    toolset.close().await.unwrap();
}

async fn connect_error(toolset: McpToolset) -> adk_core::Error {
    let error = toolset
        .tools(&TestToolContext::plain().readonly())
        .await
        .err()
        .expect("the toolset fails to connect");
    toolset.close().await.unwrap();
    error
}

#[tokio::test]
async fn a_server_that_cannot_start_is_a_clear_error() {
    let error =
        connect_error(McpToolset::stdio("/nonexistent/mcp-server", ["--stdio"]).build()).await;
    assert_eq!(tool_error(&error).kind(), ToolErrorKind::McpConnect);
    // The server is named by its program: its arguments may hold secrets.
    assert!(
        error.message().starts_with(
            "Could not start the MCP server `/nonexistent/mcp-server`: No such file or directory"
        ),
        "{}",
        error.message()
    );
    assert!(!error.message().contains("--stdio"), "{}", error.message());
    assert!(
        error
            .message()
            .ends_with("Check that the program is installed and on PATH.")
    );
}

#[tokio::test]
async fn a_server_answering_garbage_is_a_clear_error() {
    let toolset = McpToolset::stdio("sh", ["-c", "echo not-json; echo oops >&2"]).build();
    let error = connect_error(toolset).await;
    let message = error.message();
    assert!(message.contains("The MCP server `sh`"), "{message}");
    assert!(!message.contains("not-json"), "{message}");
    assert!(message.contains("failed the MCP handshake"), "{message}");
    assert!(
        message.ends_with("Its stderr ended with:\noops"),
        "{message}"
    );
}

#[tokio::test]
async fn a_server_that_never_answers_the_handshake_times_out() {
    let script = "process.stdout.write('garbage\\n'); setInterval(() => {}, 1000)";
    let toolset = McpToolset::stdio("node", ["-e", script])
        .connect_timeout(Duration::from_secs(2))
        .build();
    let error = connect_error(toolset).await;
    assert_eq!(tool_error(&error).kind(), ToolErrorKind::McpConnect);
    assert!(
        error
            .message()
            .contains("did not complete the MCP handshake within 2s"),
        "{}",
        error.message()
    );
}
