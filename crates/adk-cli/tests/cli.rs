//! Drives the `adk` binary through its standard input against a loopback server that speaks the
//! OpenAI Chat Completions streaming format.

mod support;

use adk_test::{MockResponse, MockServer};
use serde_json::{Value, json};
use support::{adk, adk_with_env, completion};

/// One SSE body of OpenAI chunks: the deltas given, then `[DONE]`.
fn sse(chunks: &[Value]) -> MockResponse {
    let mut body = String::new();
    for chunk in chunks {
        body.push_str(&format!("data: {chunk}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    MockResponse::sse(&body)
}

fn chunk(delta: Value, finish_reason: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "mock-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    })
}

fn tool_call(name: &str, arguments: Value) -> MockResponse {
    sse(&[
        chunk(
            json!({"role": "assistant", "tool_calls": [{
                "index": 0, "id": "call_1", "type": "function",
                "function": {"name": name, "arguments": arguments.to_string()}
            }]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
    ])
}

fn text(words: &[&str]) -> MockResponse {
    let mut chunks: Vec<Value> = words
        .iter()
        .map(|word| chunk(json!({"role": "assistant", "content": word}), None))
        .collect();
    chunks.push(chunk(json!({}), Some("stop")));
    sse(&chunks)
}

#[tokio::test]
async fn the_quickstart_calls_its_tool_and_streams_the_answer() {
    let server = MockServer::start([
        tool_call("get_weather", json!({"city": "Paris"})),
        text(&["It is ", "sunny in Paris."]),
    ])
    .await;
    let (ok, stdout, stderr) = adk(
        Some(&server),
        &["run", "quickstart", "--in-memory"],
        "What is the weather in Paris?\n\n",
    )
    .await;
    assert!(ok, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("-> weather_agent calls get_weather({\"city\":\"Paris\"})"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "<- get_weather: {\"city\":\"Paris\",\"sky\":\"sunny\",\"temperature\":\"21 °C\"}"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("weather_agent> It is sunny in Paris."),
        "{stdout}"
    );
    // The second request carried the tool's result back to the model.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let messages = requests[1].json()["messages"].clone();
    assert_eq!(messages.as_array().unwrap().last().unwrap()["role"], "tool");
}

#[tokio::test]
async fn a_confirmation_is_asked_in_the_terminal_and_the_call_resumed() {
    let call = json!({"role": "assistant", "content": null, "tool_calls": [{
        "id": "call_1", "type": "function",
        "function": {"name": "transfer_money", "arguments": "{\"recipient\":\"Ada\",\"amount_eur\":500}"}
    }]});
    let server = MockServer::start([
        completion(call, "tool_calls"),
        completion(
            json!({"role": "assistant", "content": "Sent 500 euros to Ada."}),
            "stop",
        ),
    ])
    .await;
    let (ok, stdout, stderr) = adk(
        Some(&server),
        &["run", "confirmation", "--in-memory", "--no-stream"],
        "Send 500 euros to Ada\ny\n\n",
    )
    .await;
    assert!(ok, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("confirm? [y/N]"), "{stdout}");
    assert!(
        stdout.contains("transfer_money({\"amount_eur\":500,\"recipient\":\"Ada\"})"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "<- transfer_money: {\"amount_eur\":500.0,\"recipient\":\"Ada\",\"status\":\"sent\"}"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("banker> Sent 500 euros to Ada."),
        "{stdout}"
    );
}

#[tokio::test]
async fn sessions_are_stored_in_sqlite_and_resumed() {
    let dir = std::env::temp_dir().join(format!("adk-cli-test-{}", std::process::id()));
    let db = dir.join("sessions.db");
    let db = db.to_str().unwrap();
    let server = MockServer::start([text(&["Hello!"]), text(&["Hello again!"])]).await;
    let (ok, stdout, stderr) =
        adk(Some(&server), &["run", "quickstart", "--db", db], "Hi\n\n").await;
    assert!(ok, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains(&format!("sessions in {db}")), "{stdout}");
    let (ok, stdout, stderr) = adk(
        Some(&server),
        &["run", "quickstart", "--db", db, "--resume"],
        "Hi again\n\n",
    )
    .await;
    assert!(ok, "stdout:\n{stdout}\nstderr:\n{stderr}");
    // The resumed session's history reached the model: the first turn is in the second request.
    let history = server.requests()[1].json()["messages"].to_string();
    assert!(history.contains("Hello!"), "{history}");
    std::fs::remove_dir_all(dir).ok();
}

/// `adk run quickstart --db <db>` with `args` and no input, on `server`, with
/// `ADK_CREDENTIAL_KEY` set to `key` when given.
async fn run_quickstart(
    server: &MockServer,
    db: &str,
    args: &[&str],
    key: Option<&str>,
) -> (bool, String, String) {
    let base_url = server.base_url();
    let mut env = vec![
        ("OPENAI_BASE_URL", base_url.as_str()),
        ("OPENAI_API_KEY", "test-key"),
        ("OPENAI_MODEL", "mock-model"),
    ];
    env.extend(key.map(|key| ("ADK_CREDENTIAL_KEY", key)));
    let mut full = vec!["run", "quickstart", "--db", db];
    full.extend_from_slice(args);
    adk_with_env(&full, "", &env).await
}

#[tokio::test]
async fn credentials_are_kept_encrypted_in_the_session_database_once_a_key_is_set() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sessions.db");
    let db = db.to_str().unwrap();
    let other = dir.path().join("credentials.db");
    let other = other.to_str().unwrap();
    let server = MockServer::start([]).await;
    let key = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

    // Without a key, credentials stay in memory.
    let (ok, stdout, stderr) = run_quickstart(&server, db, &[], None).await;
    assert!(ok, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("credentials in memory"), "{stdout}");

    // With a key, they go to the sessions' own SQLite file, sealed.
    let (ok, stdout, stderr) = run_quickstart(&server, db, &[], Some(key)).await;
    assert!(ok, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains(&format!("sessions in {db}, credentials encrypted in {db}")),
        "{stdout}"
    );
    let has_table = ["", "-wal"].into_iter().any(|suffix| {
        std::fs::read(format!("{db}{suffix}"))
            .unwrap_or_default()
            .windows(15)
            .any(|window| window == b"adk_credentials")
    });
    assert!(has_table, "the session database has the credential table");

    // Another database is named with the flag; it needs the key.
    let flag = format!("sqlite://{other}");
    let other_db = ["--credential-service-uri", flag.as_str()];
    let (ok, _, stderr) = run_quickstart(&server, db, &other_db, None).await;
    assert!(!ok);
    assert!(stderr.contains("ADK_CREDENTIAL_KEY is not set"), "{stderr}");
    let (ok, stdout, stderr) = run_quickstart(&server, db, &other_db, Some(key)).await;
    assert!(ok, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains(&format!("credentials encrypted in {other}")),
        "{stdout}"
    );
    let (ok, _, stderr) = run_quickstart(
        &server,
        db,
        &["--credential-service-uri", "vault://x"],
        Some(key),
    )
    .await;
    assert!(!ok);
    assert!(
        stderr.contains("unsupported credential service URI 'vault://x'"),
        "{stderr}"
    );
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn credentials_follow_the_sessions_into_postgres_once_a_key_is_set() {
    let Some(url) = adk_test::postgres_url() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("unused.db");
    let server = MockServer::start([]).await;
    let key = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    let args = ["--session-service-uri", url.as_str()];
    let (ok, stdout, stderr) =
        run_quickstart(&server, db.to_str().unwrap(), &args, Some(key)).await;
    assert!(ok, "stdout:\n{stdout}\nstderr:\n{stderr}");
    let line = stdout.lines().next().unwrap_or_default();
    assert!(
        line.contains(", credentials encrypted in postgres"),
        "{line}"
    );
    assert!(!db.exists(), "nothing went to the SQLite file");
}

#[tokio::test]
async fn without_a_model_it_says_what_to_set() {
    let (ok, _, stderr) = adk(None, &["run", "quickstart", "--in-memory"], "").await;
    assert!(!ok);
    assert!(stderr.contains("no model is configured"), "{stderr}");
    assert!(stderr.contains("OPENAI_BASE_URL"), "{stderr}");
}

#[tokio::test]
async fn an_unknown_agent_lists_the_bundled_ones() {
    let server = MockServer::start([]).await;
    let (ok, _, stderr) = adk(Some(&server), &["run", "nobody", "--in-memory"], "").await;
    assert!(!ok);
    assert!(
        stderr.contains("quickstart, multi_agent, pipeline, confirmation"),
        "{stderr}"
    );
}

#[tokio::test]
async fn the_help_desk_transfers_to_billing_which_looks_up_the_invoice() {
    let server = MockServer::start([
        tool_call("transfer_to_agent", json!({"agent_name": "billing"})),
        tool_call("lookup_invoice", json!({"invoice": "INV-1002"})),
        text(&["Invoice INV-1002 is due: 99 euros."]),
    ])
    .await;
    let (ok, stdout, stderr) = adk(
        Some(&server),
        &["run", "multi_agent", "--in-memory"],
        "Is INV-1002 paid?\n\n",
    )
    .await;
    assert!(ok, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("=> help_desk hands over to billing"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "<- lookup_invoice: {\"amount_eur\":99.0,\"invoice\":\"INV-1002\",\"status\":\"due\"}"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("billing> Invoice INV-1002 is due: 99 euros."),
        "{stdout}"
    );
}

#[tokio::test]
async fn the_pipeline_researches_in_parallel_then_writes_until_the_critic_exits() {
    // The two researchers ask concurrently, so either may get either of the first two answers.
    let server = MockServer::start([
        text(&["Rust has no garbage collector."]),
        text(&["Ownership is a kind of bookkeeping."]),
        text(&["A draft about Rust."]),
        tool_call("exit_loop", json!({})),
    ])
    .await;
    let (ok, stdout, stderr) = adk(
        Some(&server),
        &["run", "pipeline", "--in-memory"],
        "Write about Rust\n\n",
    )
    .await;
    assert!(ok, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("writer> A draft about Rust."), "{stdout}");
    assert!(stdout.contains("-> critic calls exit_loop({})"), "{stdout}");
    assert_eq!(
        server.remaining(),
        0,
        "the loop stopped after the critic exited"
    );
    let writer_request = server.requests()[2].json().to_string();
    assert!(
        writer_request.contains("Rust has no garbage collector."),
        "{writer_request}"
    );
}

/// The text of a Chat Completions message, whether its content is a string or a list of parts.
fn message_text(message: &Value) -> String {
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part["text"].as_str())
            .collect(),
        _ => String::new(),
    }
}

/// A model that never stops calling `get_weather({"city":"Tokyo"})` about the weather, fails a
/// malformed request, overflows its context window until the history is summarized, and
/// answers anything else.
fn misbehaving_model(request: &adk_test::ReceivedRequest) -> Option<adk_test::MockResponse> {
    let body = request.json();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let last_user = messages
        .iter()
        .rev()
        .find(|message| message["role"] == "user")
        .map(message_text)
        .unwrap_or_default();
    let answer = |words: &[&str]| {
        if body["stream"] == true {
            text(words)
        } else {
            completion(
                json!({"role": "assistant", "content": words.concat()}),
                "stop",
            )
        }
    };
    let summarized = messages
        .iter()
        .any(|message| message_text(message).contains("They asked about Tokyo."));
    Some(if last_user.starts_with("Below is the history") {
        answer(&["They asked about Tokyo."])
    } else if last_user == "Tell me everything." && !summarized {
        // llama.cpp's answer to a request longer than its context window.
        adk_test::MockResponse::json(
            400,
            &json!({"error": {
                "code": 400,
                "message": "request (5000 tokens) exceeds the available context size (4096 tokens)",
                "type": "exceed_context_size_error",
            }}),
        )
    } else if last_user == "Tell me everything." {
        answer(&["Everything fits now."])
    } else if last_user.contains("weather") {
        tool_call("get_weather", json!({"city": "Tokyo"}))
    } else if last_user == "Break." {
        adk_test::MockResponse::json(
            400,
            &json!({"error": {"code": 400, "message": "the request is malformed", "type": "invalid_request_error"}}),
        )
    } else {
        answer(&["You are welcome."])
    })
}

#[tokio::test]
async fn a_looping_model_is_stopped_and_failed_turns_leave_the_repl_going() {
    let server = MockServer::start_checked([], misbehaving_model).await;
    let (ok, stdout, stderr) = adk(
        Some(&server),
        &["run", "quickstart", "--in-memory"],
        "What is the weather in Tokyo?\nBreak.\nTell me everything.\nThanks!\n\n",
    )
    .await;
    assert!(ok, "stdout:\n{stdout}\nstderr:\n{stderr}");

    // The guard: the tool ran once, its result was given back twice, and the fourth identical
    // call ended the turn with a message saying why.
    assert_eq!(
        stdout
            .matches("-> weather_agent calls get_weather({\"city\":\"Tokyo\"})")
            .count(),
        4,
        "{stdout}"
    );
    assert_eq!(
        stdout.matches("You already called get_weather").count(),
        2,
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "weather_agent> Stopped: the model called get_weather with the same arguments 4 \
             times in this turn instead of answering."
        ),
        "{stdout}"
    );

    // The malformed request failed its turn, said so once with its status, and the REPL went
    // on.
    assert!(
        stderr.contains("adk: the agent failed")
            && stderr.contains("answered HTTP 400 invalid_request_error: the request is malformed")
            && stderr.contains("the session is kept"),
        "{stderr}"
    );
    assert!(!stderr.contains("400 400"), "{stderr}");

    // The overflow was answered by summarizing the earlier turns, and the question asked again.
    assert!(
        stdout.contains("weather_agent> Everything fits now."),
        "{stdout}"
    );
    assert!(
        stdout.contains("weather_agent> You are welcome."),
        "{stdout}"
    );
    let requests = server.requests();
    let summary_request = requests
        .iter()
        .find(|request| String::from_utf8_lossy(&request.body).contains("Below is the history"))
        .expect("the history was summarized");
    assert!(
        String::from_utf8_lossy(&summary_request.body).contains("get_weather"),
        "the summary covers the looping turn"
    );
}

#[tokio::test]
async fn sessions_resume_continues_an_invocation_a_crash_cut_off() {
    use adk_core::{Content, CreateSessionRequest, Event, SessionService as _, USER_AUTHOR};

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sessions.db");
    // The session as a process that died after storing the user's message leaves it.
    {
        let sessions = adk_session::SqliteSessionService::open(&db).await.unwrap();
        let mut session = sessions
            .create_session(CreateSessionRequest::new("quickstart", "user").with_session_id("s-1"))
            .await
            .unwrap();
        let message = Event::new("e-cut".into(), USER_AUTHOR).with_content(Content::user("Hi"));
        sessions.append_event(&mut session, message).await.unwrap();
    }
    let db = db.to_str().unwrap();
    let server = MockServer::start([text(&["Hello after the crash!"])]).await;
    let args = [
        "sessions",
        "resume",
        "quickstart",
        "user",
        "s-1",
        "--db",
        db,
    ];
    let (ok, stdout, stderr) = adk(Some(&server), &args, "").await;
    assert!(ok, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("resuming invocation e-cut"), "{stdout}");
    assert!(stdout.contains("Hello after the crash!"), "{stdout}");
    assert_eq!(server.requests().len(), 1);

    // The invocation ended: nothing more to resume, and the model is not called.
    let (ok, stdout, stderr) = adk(Some(&server), &args, "").await;
    assert!(ok, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("nothing to resume"), "{stdout}");
    assert_eq!(server.requests().len(), 1);
}
