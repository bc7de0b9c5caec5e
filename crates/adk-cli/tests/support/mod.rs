//! What the tests of the `adk` binary share: running it on input against a loopback model,
//! Chat Completions answers for that model, starting `adk web` / `adk api_server` on a free port,
//! finding its address in its banner, and stopping it with SIGTERM.

// Each test binary compiles this module and uses only part of it.
#![allow(dead_code)]

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, ChildStderr, Command};

/// Runs `adk` with `args`, feeding `input`, against the loopback OpenAI-compatible `server` when
/// given; returns its exit success, stdout and stderr.
pub(crate) async fn adk(
    server: Option<&adk_test::MockServer>,
    args: &[&str],
    input: &str,
) -> (bool, String, String) {
    let base_url = server.map(adk_test::MockServer::base_url);
    let mut env = Vec::new();
    if let Some(base_url) = &base_url {
        env.extend([
            ("OPENAI_BASE_URL", base_url.as_str()),
            ("OPENAI_API_KEY", "test-key"),
            ("OPENAI_MODEL", "mock-model"),
        ]);
    }
    adk_with_env(args, input, &env).await
}

/// The variables that choose a model, removed from every run of `adk` so that only what a test
/// sets chooses one.
const MODEL_VARIABLES: [&str; 17] = [
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_VERTEX_BASE_URL",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_MODEL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODEL",
    "ADK_PROVIDER",
    "ADK_MODEL",
    "ADK_DATABASE_URL",
];

/// Runs `adk` with `args`, feeding `input`, with the model variables of `env` alone; returns its
/// exit success, stdout and stderr.
pub(crate) async fn adk_with_env(
    args: &[&str],
    input: &str,
    env: &[(&str, &str)],
) -> (bool, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_adk"));
    command.args(args);
    for variable in MODEL_VARIABLES {
        command.env_remove(variable);
    }
    command
        // Where credentials are kept follows these: only what a test sets counts.
        .env_remove("ADK_CREDENTIAL_KEY")
        .env_remove("ADK_CREDENTIAL_SERVICE_URI")
        // The local model has its own end-to-end tests; here an unconfigured model is an error.
        .env("ADK_NO_LOCAL_MODEL", "true")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("the adk binary starts");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    stdin
        .write_all(input.as_bytes())
        .await
        .expect("stdin takes the input");
    drop(stdin);
    let output = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("adk finishes")
        .expect("adk runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A whole (not streamed) Chat Completions answer with `message`.
pub(crate) fn completion(
    message: serde_json::Value,
    finish_reason: &str,
) -> adk_test::MockResponse {
    adk_test::MockResponse::json(
        200,
        &serde_json::json!({
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "mock-model",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }),
    )
}

/// Sends a request to a server under test and reads its JSON answer, failing the test on a
/// transport error or a body that is not the JSON expected.
pub(crate) async fn json_answer<T: serde::de::DeserializeOwned>(
    request: reqwest::RequestBuilder,
) -> T {
    request
        .send()
        .await
        .expect("the server answers")
        .json()
        .await
        .expect("the answer is the JSON expected")
}

/// `adk api_server` serving the bundled apps with sessions in the PostgreSQL at `url`, against the
/// loopback OpenAI-compatible `model`, in `dir`; `extra` adds flags.
pub(crate) fn api_server_on_postgres(
    model: &adk_test::MockServer,
    url: &str,
    dir: &std::path::Path,
    extra: &[&str],
) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_adk"));
    command
        .args(["api_server", "--session-service-uri", url])
        .args(extra)
        .current_dir(dir)
        .env("OPENAI_BASE_URL", model.base_url())
        .env("OPENAI_API_KEY", "test-key")
        .env("OPENAI_MODEL", "mock-model")
        .env("ADK_NO_LOCAL_MODEL", "true");
    command
}

/// A whole Chat Completions answer saying `text`, as the loopback model sends it.
pub(crate) fn chat_answer(text: &str) -> adk_test::MockResponse {
    completion(
        serde_json::json!({"role": "assistant", "content": text}),
        "stop",
    )
}

/// The server process, its address, and its standard error still being read.
pub(crate) struct Served {
    child: Child,
    pub(crate) base: String,
    /// The rest of its standard error, read as it comes (a full pipe would stall the server).
    log: tokio::task::JoinHandle<String>,
    pub(crate) banner: String,
}

/// Starts `command` (the `adk` binary with its arguments and environment) on a free port with
/// sessions in memory, and waits up to `patience` for its banner.
pub(crate) async fn serve(mut command: Command, patience: Duration) -> Served {
    command.arg("--in-memory");
    serve_stored(command, patience).await
}

/// Starts `command` on a free port with the storage its arguments name, and waits up to
/// `patience` for its banner.
pub(crate) async fn serve_stored(command: Command, patience: Duration) -> Served {
    serve_on(command, 0, patience).await
}

/// Starts `command` on `port` (0 for a free one), and waits up to `patience` for its banner.
pub(crate) async fn serve_on(mut command: Command, port: u16, patience: Duration) -> Served {
    // The machine's Gemini settings never reach a served test; the ones a test sets do.
    let set_by_test: Vec<std::ffi::OsString> = command
        .as_std()
        .get_envs()
        .filter(|(_, value)| value.is_some())
        .map(|(name, _)| name.to_owned())
        .collect();
    for variable in ["GOOGLE_API_KEY", "GEMINI_API_KEY", "ADK_PROVIDER"] {
        if !set_by_test.iter().any(|name| name == variable) {
            command.env_remove(variable);
        }
    }
    let mut child = command
        .args(["--port", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("adk starts");
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let banner = tokio::time::timeout(patience, async {
        loop {
            let line = stderr
                .next_line()
                .await
                .unwrap()
                .expect("adk prints its banner before it exits");
            if line.starts_with("adk: serving") {
                return line;
            }
        }
    })
    .await
    .expect("the server starts");
    let at = banner
        .find(" at http://")
        .expect("the banner names the address")
        + 4;
    let address = banner[at..].split_whitespace().next().unwrap();
    let base = address
        .trim_end_matches('/')
        .trim_end_matches("/dev-ui")
        .to_owned();
    let log = tokio::spawn(read_rest(stderr));
    Served {
        child,
        base,
        log,
        banner,
    }
}

/// Every line left in `lines`, until the end.
async fn read_rest(mut lines: tokio::io::Lines<BufReader<ChildStderr>>) -> String {
    let mut rest = String::new();
    while let Ok(Some(line)) = lines.next_line().await {
        rest.push_str(&line);
        rest.push('\n');
    }
    rest
}

impl Served {
    /// Kills the process with SIGKILL, as a crash or an out-of-memory kill would, waits for it,
    /// and returns the rest of its standard error.
    pub(crate) async fn kill(mut self) -> String {
        self.child.kill().await.expect("the server can be killed");
        self.log.await.expect("the log is read")
    }

    /// Sends SIGTERM and waits for the process; returns whether it exited successfully and the
    /// rest of its standard error.
    pub(crate) async fn terminate(mut self) -> (bool, String) {
        let pid = self.child.id().unwrap().to_string();
        let killed = Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .await
            .unwrap();
        assert!(killed.success());
        let rest = self.log.await.expect("the log is read");
        let status = tokio::time::timeout(Duration::from_secs(60), self.child.wait())
            .await
            .expect("the server stops after SIGTERM")
            .unwrap();
        (status.success(), rest)
    }
}

/// A small random number generator (xorshift), seeded from the clock: the replica of each request
/// and the moments of faults, with no dependency.
pub(crate) struct Random(u64);

impl Random {
    pub(crate) fn seeded(salt: u64) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        Self((u64::from(nanos) ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1)
    }

    /// A number in `0..bound`.
    pub(crate) fn below(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        usize::try_from(self.0 % bound as u64).unwrap()
    }
}

/// The addresses of replicas of one server; a restarted replica gets a new one.
pub(crate) type Replicas = std::sync::Arc<std::sync::Mutex<Vec<String>>>;

/// The address of a replica picked at random.
pub(crate) fn pick(replicas: &Replicas, random: &mut Random) -> String {
    let replicas = replicas.lock().unwrap();
    replicas[random.below(replicas.len())].clone()
}

/// Creates `session` of `user` in `app` at any replica that answers, trying up to `attempts`
/// times.
pub(crate) async fn create_session(
    client: &reqwest::Client,
    replicas: &Replicas,
    random: &mut Random,
    (app, user, session): (&str, &str, &str),
    attempts: usize,
) {
    for _ in 0..attempts {
        let base = pick(replicas, random);
        let created = client
            .post(format!("{base}/apps/{app}/users/{user}/sessions"))
            .json(&serde_json::json!({"sessionId": session}))
            .timeout(Duration::from_secs(10))
            .send()
            .await;
        // A conflict is an earlier attempt that created it before its answer was lost.
        if created.is_ok_and(|response| response.status().is_success() || response.status() == 409)
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("session {session} was never created");
}

/// Asserts that every event of `acknowledged` (ids, in the order they were acknowledged) is
/// stored exactly once among `stored` (ids, in the session's order), in that order.
pub(crate) fn assert_stored_once_in_order<'a>(
    session: &str,
    stored: &[&str],
    acknowledged: impl IntoIterator<Item = &'a str>,
) {
    let mut positions = Vec::new();
    for id in acknowledged {
        let found: Vec<usize> = (0..stored.len()).filter(|&at| stored[at] == id).collect();
        assert_eq!(
            found.len(),
            1,
            "event {id} of {session} is stored {} times",
            found.len()
        );
        positions.push(found[0]);
    }
    assert!(
        positions.is_sorted(),
        "{session}: acknowledged events out of order: {positions:?}"
    );
}
