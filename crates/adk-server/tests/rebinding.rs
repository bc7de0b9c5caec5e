//! DNS rebinding: a web page whose own name was rebound to this machine reaches the server's port,
//! but its requests still name its host. Every request, GET included, must name a host the server
//! answers to; the page's `Origin` agreeing with its `Host` proves nothing.

mod support;

use adk_server::ServerConfig;
use adk_test::ScriptedModel;
use reqwest::Method;
use serde_json::{Value, json};
use support::{APP, TestServer, USER};

/// The name and port of the attacker's page after the rebind.
const REBOUND: &str = "evil.test:8124";

async fn send_as(
    server: &TestServer,
    method: Method,
    path: &str,
    host: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = server
        .client
        .request(method, server.url(path))
        .header("host", host)
        .header("origin", format!("http://{host}"));
    if let Some(body) = body {
        request = request.json(&body);
    }
    support::status_and_json(request.send().await.unwrap()).await
}

#[tokio::test]
async fn security_rebinding_a_request_naming_a_foreign_host_is_refused_whatever_its_method() {
    let server = TestServer::start(ScriptedModel::new("scripted")).await;
    server.create_session("mine").await;
    let sessions = format!("/apps/{APP}/users/{USER}/sessions");

    let (status, body) = send_as(
        &server,
        Method::POST,
        &sessions,
        REBOUND,
        Some(json!({"sessionId": "rebound"})),
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (403, Some("host_not_allowed"))
    );
    for path in ["/list-apps", sessions.as_str(), &format!("{sessions}/mine")] {
        let (status, body) = send_as(&server, Method::GET, path, REBOUND, None).await;
        assert_eq!(status, 403, "GET {path}: {body}");
    }
    let (status, _) = send_as(
        &server,
        Method::DELETE,
        &format!("{sessions}/mine"),
        REBOUND,
        None,
    )
    .await;
    assert_eq!(status, 403);

    // Nothing the page sent changed anything.
    assert_eq!(server.get(&format!("{sessions}/rebound")).await.0, 404);
    assert_eq!(server.get(&format!("{sessions}/mine")).await.0, 200);
}

#[tokio::test]
async fn the_loopback_names_and_configured_hosts_are_answered() {
    let server = TestServer::start_with(
        ScriptedModel::new("scripted"),
        ServerConfig::default().allowed_host("agents.example.com"),
    )
    .await;
    let port = server.base.rsplit(':').next().unwrap().to_owned();
    for host in [
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
        format!("[::1]:{port}"),
        "agents.example.com".to_owned(),
        format!("AGENTS.example.com:{port}"),
    ] {
        let (status, body) = send_as(&server, Method::GET, "/list-apps", &host, None).await;
        assert_eq!(status, 200, "{host}: {body}");
    }
    for host in ["agents.example.com.evil.test", "example.com", "127.0.0.2"] {
        let (status, _) = send_as(&server, Method::GET, "/list-apps", host, None).await;
        assert_eq!(status, 403, "{host}");
    }
}
