//! Callers reach only their own users: the principal's user must be the `{user}` of the path and
//! the `userId` of a run, traces show only the caller's runs, and A2A tasks belong to the user
//! that started them. The test walks every route the server reports, so a route added later
//! without its check fails here.

mod support;

use std::collections::BTreeSet;

use adk_server::gate::{Authentication, JwtAuthenticator};
use adk_server::{Access, ServerConfig};
use adk_test::{ScriptedModel, TestIssuer};
use jsonwebtoken::Algorithm;
use reqwest::Method;
use serde_json::{Value, json};
use support::{APP, TestServer};

/// The user whose data the test tries to reach.
const BOB: &str = "bob";

async fn server(issuer: &TestIssuer, model: ScriptedModel) -> TestServer {
    let jwt = JwtAuthenticator::builder()
        .jwks_url(issuer.jwks_url())
        .issuer(TestIssuer::ISSUER)
        .audience(TestIssuer::AUDIENCE)
        .build()
        .unwrap();
    TestServer::start_with_a2a(
        model,
        ServerConfig::default().authentication(Authentication::new().jwt(jwt)),
    )
    .await
}

/// `method path` with `token` and `body`, answered status and JSON.
async fn call(
    server: &TestServer,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> (u16, Value) {
    let mut request = server.client.request(method, server.url(path));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// A body the route accepts, when it takes one.
fn body_for(method: &Method, path: &str) -> Option<Value> {
    match (method.as_str(), path) {
        ("POST", path) if path.ends_with("/add_session") || path.ends_with("/add-session") => {
            Some(json!({"evalId": "planted", "sessionId": "s1", "userId": BOB}))
        }
        ("POST", path) if path.ends_with("/artifacts") => Some(json!({
            "filename": "notes.txt",
            "artifact": {"text": "written by someone else"},
        })),
        ("POST", path) if path.ends_with("/sessions") => Some(json!({"sessionId": "planted"})),
        ("POST", _) => Some(json!({})),
        ("PATCH", path) if path.ends_with("/memory") => Some(json!({"sessionId": "s1"})),
        ("PATCH", _) => Some(json!({"stateDelta": {"user:planted": true}})),
        _ => None,
    }
}

#[tokio::test]
async fn security_identity_a_caller_reaches_only_its_own_user_on_every_route() {
    let issuer = TestIssuer::start().await;
    let model = ScriptedModel::new("scripted")
        .then_call("save_report", json!({}))
        .then_text("Bob's report is saved.")
        .then_text("An answer over A2A.");
    let server = server(&issuer, model).await;
    let ada = issuer.token(Algorithm::ES256, &issuer.claims("ada"));
    let bob = issuer.token(Algorithm::RS256, &issuer.claims(BOB));

    // Bob's data: a session with a run (which saved an artifact and left a trace) and, over A2A,
    // a task.
    let sessions = format!("/apps/{APP}/users/{BOB}/sessions");
    let (status, _) = call(
        &server,
        Method::POST,
        &sessions,
        Some(&bob),
        Some(&json!({"sessionId": "s1"})),
    )
    .await;
    assert_eq!(status, 200);
    let run = json!({"appName": APP, "userId": BOB, "sessionId": "s1",
        "newMessage": {"role": "user", "parts": [{"text": "save my report"}]}});
    let (status, events) = call(&server, Method::POST, "/run", Some(&bob), Some(&run)).await;
    assert_eq!(status, 200, "{events}");
    let event = events.as_array().unwrap()[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let bob_task = if cfg!(feature = "a2a") {
        let send = json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {
            "kind": "message", "messageId": "m", "role": "user",
            "parts": [{"kind": "text", "text": "hello"}]}}});
        let (status, answer) = call(
            &server,
            Method::POST,
            &format!("/a2a/{APP}"),
            Some(&bob),
            Some(&send),
        )
        .await;
        assert_eq!(status, 200, "{answer}");
        answer["result"]["id"].as_str().unwrap().to_owned()
    } else {
        String::new()
    };
    let stored = server.runner.session_service();
    let bob_session = || async {
        stored
            .get_session(adk_core::GetSessionRequest::new(adk_core::SessionKey::new(
                APP, BOB, "s1",
            )))
            .await
            .unwrap()
            .unwrap()
    };
    let before = bob_session().await;

    let routes = server.server.routes();
    let mut seen = BTreeSet::new();
    for route in &routes {
        let path = route
            .path
            .replace("{app}", APP)
            .replace("{user}", BOB)
            .replace("{session}", "s1")
            .replace("{name}", "report.txt")
            .replace("{version}", "0")
            .replace("{event}", &event)
            .replace("{set}", "planted_set")
            .replace("{case}", "planted")
            .replace("{result}", "planted");
        let method = route.method.clone();
        let label = format!("{method} {}", route.path);
        if route.path.contains("{user}") {
            assert_eq!(route.access, Access::PathUser, "{label} names a user");
        }
        seen.insert(format!("{:?}", route.access));
        match route.access {
            Access::PathUser => {
                let body = body_for(&method, &path);
                let (status, answer) =
                    call(&server, method.clone(), &path, Some(&ada), body.as_ref()).await;
                assert_eq!(status, 403, "{label}: {answer}");
                assert_eq!(answer["error"], "forbidden_user", "{label}");
                let (status, _) = call(&server, method.clone(), &path, None, body.as_ref()).await;
                assert_eq!(status, 401, "{label} without a token");
                if method == Method::GET {
                    let (status, answer) = call(&server, method, &path, Some(&bob), None).await;
                    assert!(status != 401 && status != 403, "{label} for bob: {answer}");
                }
            }
            Access::BodyUser => {
                let (status, answer) = call(&server, method, &path, Some(&ada), Some(&run)).await;
                assert_eq!(status, 403, "{label}: {answer}");
            }
            Access::OwnData if route.path.starts_with("/a2a/") => {
                for rpc in ["tasks/get", "tasks/cancel"] {
                    let query = json!({"jsonrpc": "2.0", "id": 2, "method": rpc, "params": {"id": bob_task}});
                    let (status, answer) =
                        call(&server, method.clone(), &path, Some(&ada), Some(&query)).await;
                    assert_eq!(status, 200, "{label}");
                    assert_eq!(answer["error"]["code"], -32001, "{label} {rpc}: {answer}");
                }
                let query = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": bob_task}});
                let (_, answer) = call(&server, method, &path, Some(&bob), Some(&query)).await;
                assert_eq!(answer["result"]["id"], bob_task.as_str(), "{answer}");
            }
            Access::OwnData => {
                let (status, answer) = call(&server, method.clone(), &path, Some(&ada), None).await;
                let nothing = status == 404 || answer.as_array().is_some_and(Vec::is_empty);
                assert!(
                    nothing,
                    "{label} shows ada none of bob's spans: {status} {answer}"
                );
                let (status, answer) = call(&server, method, &path, Some(&bob), None).await;
                let something = status == 200 && answer != json!([]);
                assert!(something, "{label} shows bob his own: {status} {answer}");
            }
            Access::AnyCaller => {
                assert_eq!(
                    call(&server, method.clone(), &path, None, None).await.0,
                    401
                );
                let body = body_for(&method, &path);
                let (status, answer) =
                    call(&server, method.clone(), &path, Some(&ada), body.as_ref()).await;
                if path.contains("add_session") || path.contains("add-session") {
                    // Eval sets belong to the app, but the session added to one is a user's.
                    assert_eq!(status, 403, "{label} with bob's session: {answer}");
                } else if method == Method::GET && !path.contains("planted") {
                    assert_eq!(status, 200, "{label}: {answer}");
                } else {
                    assert!(status != 401 && status != 403, "{label}: {status} {answer}");
                }
            }
            Access::AppAuthor => {
                // An app's files are every user's app: a caller without the admin scope is
                // refused before anything is read or written.
                let (status, answer) = call(&server, method.clone(), &path, Some(&ada), None).await;
                assert_eq!(status, 403, "{label}: {answer}");
                assert_eq!(call(&server, method, &path, None, None).await.0, 401);
            }
            Access::Public => {
                let (status, _) = call(&server, method, &path, None, None).await;
                assert!(status != 401 && status != 403, "{label} is public");
            }
            _ => panic!("{label}: an access this test does not know"),
        }
    }
    for access in [
        "PathUser",
        "BodyUser",
        "OwnData",
        "AnyCaller",
        "AppAuthor",
        "Public",
    ] {
        assert!(seen.contains(access), "no route of {access}");
    }

    // Nothing ada sent changed bob's data.
    let after = bob_session().await;
    assert_eq!(after.events.len(), before.events.len());
    assert_eq!(after.state, before.state);
    assert!(
        stored
            .get_session(adk_core::GetSessionRequest::new(adk_core::SessionKey::new(
                APP, BOB, "planted"
            )))
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn a_principal_with_the_admin_scope_acts_for_every_user() {
    let issuer = TestIssuer::start().await;
    let server = server(&issuer, ScriptedModel::new("scripted")).await;
    let mut claims = issuer.claims("ops");
    claims["scope"] = json!("openid adk:admin");
    let admin = issuer.token(Algorithm::EdDSA, &claims);
    let path = format!("/apps/{APP}/users/{BOB}/sessions");
    let (status, _) = call(
        &server,
        Method::POST,
        &path,
        Some(&admin),
        Some(&json!({"sessionId": "by-admin"})),
    )
    .await;
    assert_eq!(status, 200);
    let (status, sessions) = call(&server, Method::GET, &path, Some(&admin), None).await;
    assert_eq!(status, 200);
    assert_eq!(sessions[0]["id"], "by-admin");
    // The Builder's routes let the admin through; this server (not `adk web`) serves no builder.
    let (status, answer) = call(
        &server,
        Method::GET,
        &format!("/dev/apps/{APP}/builder"),
        Some(&admin),
        None,
    )
    .await;
    assert_eq!(status, 404, "{answer}");
    assert!(
        answer["detail"].as_str().unwrap().contains("adk web only"),
        "{answer}"
    );
}
