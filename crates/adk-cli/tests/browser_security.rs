//! What a hostile web page can do to a developer's servers, in real Chromium (Debian's, driven
//! over WebDriver): a page whose own name is rebound to this machine is refused by `adk web`, and a
//! page of another origin cannot make `adk a2a` run its agent with a `no-cors` request.

mod support;

use std::time::Duration;

use adk_test::MockServer;
use adk_test::browser::Browser;
use serde_json::{Value, json};
use support::{completion, serve_on};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;
use tokio::process::Command;

/// How long anything may take before the test calls it a hang.
const PATIENCE: Duration = Duration::from_secs(180);

/// The attacker's page: `probe()` sends what a page would send to the server it now reaches as
/// its own origin (or to `target`), and leaves the outcomes in `window.results`.
const PAGE: &str = r#"<!doctype html><html><body><p>attacker</p><script>
async function status(request) {
  try { const response = await request; return response.type === 'opaque' ? 'opaque' : response.status; }
  catch (error) { return 'refused: ' + error; }
}
window.probe = async function (target) {
  const send = JSON.stringify({jsonrpc: '2.0', id: 1, method: 'message/send', params: {message: {
    kind: 'message', messageId: 'm', role: 'user', parts: [{kind: 'text', text: 'run for the page'}]}}});
  const results = {};
  if (target) {
    results.a2a = await status(fetch(target, {method: 'POST', mode: 'no-cors',
      headers: {'content-type': 'text/plain'}, body: send}));
  } else {
    results.list = await status(fetch('/list-apps'));
    results.create = await status(fetch('/apps/quickstart/users/user/sessions', {method: 'POST',
      headers: {'content-type': 'application/json'}, body: '{"sessionId": "rebound"}'}));
  }
  window.results = results;
};
</script></body></html>"#;

/// Serves the page once on `listener` (every request it gets, until `served` is dropped).
fn serve_page(listener: TcpListener) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let mut request = [0_u8; 4096];
            let _ = stream.read(&mut request).await;
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{PAGE}",
                PAGE.len()
            );
            let _ = stream.write_all(answer.as_bytes()).await;
        }
    })
}

/// `adk` with `args` against the loopback `model`.
fn adk_on(model: &MockServer, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_adk"));
    command
        .args(args)
        .env("OPENAI_BASE_URL", model.base_url())
        .env("OPENAI_API_KEY", "test-key")
        .env("OPENAI_MODEL", "mock-model")
        .env("ADK_NO_LOCAL_MODEL", "true")
        .arg("--in-memory");
    command
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn security_rebinding_a_page_rebound_to_adk_web_is_refused() {
    // The attacker's server first answers for evil.test on the port adk web will take.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let page_server = serve_page(listener);
    let browser = Browser::start_with_args(
        1024,
        768,
        &["--host-resolver-rules=MAP evil.test 127.0.0.1"],
    )
    .await;
    browser.goto(&format!("http://evil.test:{port}/")).await;
    browser.wait_for_text("attacker", PATIENCE).await;

    // The name now points at the developer's adk web, which the page reaches as its own origin.
    page_server.abort();
    let _ = page_server.await;
    let model = MockServer::start([]).await;
    let served = serve_on(adk_on(&model, &["web"]), port, PATIENCE).await;
    browser.execute("window.probe();", Vec::new()).await;
    let results = browser
        .wait_for("return window.results;", "the page's requests", PATIENCE)
        .await;
    assert_eq!(results["list"], json!(403), "{results}");
    assert_eq!(results["create"], json!(403), "{results}");

    // Nothing the page sent reached the apps.
    let session = reqwest::Client::new()
        .get(format!(
            "{}/apps/quickstart/users/user/sessions/rebound",
            served.base
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(session.status(), 404);
    assert!(model.requests().is_empty());
    let (success, rest) = served.terminate().await;
    assert!(success, "{rest}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn security_inbound_a2a_a_cross_origin_no_cors_fetch_runs_no_agent() {
    let model = MockServer::start([completion(
        json!({"role": "assistant", "content": "Hello, page."}),
        "stop",
    )])
    .await;
    let served = serve_on(adk_on(&model, &["a2a", "quickstart"]), 0, PATIENCE).await;
    // The page lives on another origin of the same machine.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let page = format!(
        "http://127.0.0.1:{}/",
        listener.local_addr().unwrap().port()
    );
    let page_server = serve_page(listener);
    let browser = Browser::start(1024, 768).await;
    browser.goto(&page).await;
    browser.wait_for_text("attacker", PATIENCE).await;

    let target = format!("{}/", served.base);
    browser
        .execute("window.probe(arguments[0]);", vec![Value::from(target)])
        .await;
    let results = browser
        .wait_for("return window.results;", "the page's request", PATIENCE)
        .await;
    // The browser sent it (a no-cors answer is opaque to the page), and the agent did not run.
    assert_eq!(results["a2a"], json!("opaque"), "{results}");
    assert!(model.requests().is_empty(), "the model was called");
    page_server.abort();
    let (success, rest) = served.terminate().await;
    assert!(success, "{rest}");
}
