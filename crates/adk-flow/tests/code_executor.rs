//! The local code executors with real processes: an agent on a scripted model writes Python, the
//! flow runs it in the bubblewrap sandbox (or, named explicitly, unsandboxed), and the result
//! comes back as ADK's code-execution parts in the session. Programs that loop, reach for the
//! network, write outside their directory or allocate too much are stopped or refused.

mod support;

use std::sync::Arc;
use std::time::Duration;

use adk_core::{Blob, CodeExecutionResult, Outcome, PartData, Role};
use adk_flow::{
    CodeExecutor, CodeExecutorErrorKind, SandboxedCodeExecutor, UnsafeLocalCodeExecutor,
};
use adk_test::{AgentRun, ScriptedModel};
use support::agent;

/// The sandboxed executor with short limits, so the tests of limits end quickly.
async fn sandbox() -> SandboxedCodeExecutor {
    SandboxedCodeExecutor::builder()
        .timeout(Duration::from_secs(2))
        .memory_limit(256 * 1024 * 1024)
        .build()
        .await
        .unwrap_or_else(|error| panic!("the sandbox must work here (.ci/run installs it): {error}"))
}

/// What one run of `code` by `executor` gave, as stored in the session: the result part and
/// the files after it.
struct Ran {
    run: AgentRun,
    model: ScriptedModel,
    result: CodeExecutionResult,
    files: Vec<Blob>,
}

async fn run_code(executor: impl CodeExecutor + 'static, code: &str) -> Ran {
    let model = ScriptedModel::new("m")
        .then_text(&format!(
            "I will compute it.\n```python\n{code}\n```\nDone."
        ))
        .then_text("That is the answer.");
    let coder = agent("coder", &model)
        .code_executor(Arc::new(executor) as Arc<dyn CodeExecutor>)
        .build()
        .unwrap();
    let run = AgentRun::new(coder, "Compute it.").await;
    assert!(run.error.is_none(), "{:?}", run.error);
    let event = run
        .session
        .events
        .iter()
        .find(|event| {
            event.content().is_some_and(|content| {
                content
                    .parts
                    .iter()
                    .any(|part| matches!(part.data, PartData::CodeExecutionResult(_)))
            })
        })
        .expect("a stored result event");
    let mut result = None;
    let mut files = Vec::new();
    for part in &event.content().unwrap().parts {
        match &part.data {
            PartData::CodeExecutionResult(found) => result = Some(found.clone()),
            PartData::InlineData(blob) => files.push(blob.clone()),
            other => panic!("unexpected part in the result event: {other:?}"),
        }
    }
    Ran {
        run,
        model,
        result: result.unwrap(),
        files,
    }
}

fn output(ran: &Ran) -> &str {
    ran.result.output.as_deref().unwrap_or_default()
}

#[tokio::test]
async fn a_program_that_prints_runs_in_the_sandbox_and_its_result_and_files_are_stored() {
    let ran = run_code(
        sandbox().await,
        "print(6 * 7)\nwith open('table.csv', 'w') as f:\n    f.write('a,b\\n1,2\\n')",
    )
    .await;
    assert_eq!(ran.result.outcome, Outcome::OutcomeOk, "{}", output(&ran));
    assert_eq!(output(&ran), "42\nFiles written: table.csv.\n");
    assert_eq!(ran.files.len(), 1);
    assert_eq!(ran.files[0].mime_type, "text/csv");
    assert_eq!(ran.files[0].display_name.as_deref(), Some("table.csv"));
    assert_eq!(&ran.files[0].data[..], b"a,b\n1,2\n");

    // The model's answer is stored as the text before the code and the code itself; the text
    // after the code (written before the result existed) is dropped, as ADK does.
    let texts: Vec<String> = ran
        .run
        .session
        .events
        .iter()
        .filter_map(|event| serde_json::to_string(&event.content()).ok())
        .collect();
    assert!(
        texts[1].contains(r#""executableCode":{"language":"PYTHON","code":"print(6 * 7)"#),
        "{}",
        texts[1]
    );
    assert!(!texts[1].contains("Done."));
    assert!(
        texts[2].contains(r#""outcome":"OUTCOME_OK""#),
        "{}",
        texts[2]
    );
    let answers: Vec<String> = ran
        .run
        .session
        .events
        .iter()
        .filter_map(|event| event.text())
        .collect();
    assert_eq!(
        answers.last().map(String::as_str),
        Some("That is the answer."),
        "{texts:#?}"
    );

    // The model is called again with the code and its result as fenced text, the result (and
    // the file) as the user's.
    let requests = ran.model.requests();
    assert_eq!(requests.len(), 2);
    let history = &requests[1].contents;
    let code = &history[history.len() - 2];
    assert_eq!(code.role, Some(Role::Model));
    assert!(
        code.text()
            .unwrap()
            .contains("```tool_code\nprint(6 * 7)\n"),
        "{code:?}"
    );
    let result = history.last().unwrap();
    assert_eq!(result.role, Some(Role::User));
    assert!(matches!(result.parts[0].data, PartData::InlineData(_)));
    assert!(result.text().unwrap().starts_with("```tool_output\n42\n"));
}

#[tokio::test]
async fn a_program_that_loops_forever_is_killed_at_the_time_limit() {
    let started = std::time::Instant::now();
    let ran = run_code(sandbox().await, "print('started')\nwhile True:\n    pass").await;
    assert_eq!(ran.result.outcome, Outcome::OutcomeDeadlineExceeded);
    assert_eq!(
        output(&ran),
        "started\nThe code ran longer than the time limit of 2 s and was stopped.\n"
    );
    // A generous bound: the kill, not some later timeout, ended the run.
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[tokio::test]
async fn a_program_that_opens_a_network_socket_is_refused() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let ran = run_code(
        sandbox().await,
        &format!(
            "import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=5)\nprint('connected')"
        ),
    )
    .await;
    assert_eq!(ran.result.outcome, Outcome::OutcomeFailed);
    assert!(!output(&ran).contains("connected\n"), "{}", output(&ran));
    assert!(
        output(&ran).contains("ConnectionRefusedError")
            || output(&ran).contains("Network is unreachable"),
        "{}",
        output(&ran)
    );
    // Nothing reached the host's loopback.
    assert_eq!(
        listener.accept().map_err(|error| error.kind()).err(),
        Some(std::io::ErrorKind::WouldBlock)
    );
}

#[tokio::test]
async fn a_program_that_writes_outside_its_directory_is_refused() {
    let host_dir = tempfile::tempdir().unwrap();
    let host_file = host_dir.path().join("escaped.txt");
    let code = format!(
        "import os\n\
         for path in ['/escaped.txt', '/tmp/escaped.txt', '/usr/escaped.txt', '/dev/shm/escaped.txt',\n\
                      '/proc/escaped.txt', '../escaped.txt', {host:?}]:\n\
         \x20   try:\n\
         \x20       with open(path, 'w') as f:\n\
         \x20           f.write('x')\n\
         \x20       print('wrote', path)\n\
         \x20   except OSError as error:\n\
         \x20       print('refused', path, type(error).__name__)\n\
         with open('inside.txt', 'w') as f:\n\
         \x20   f.write('fine')\n\
         print(os.getcwd())",
        host = host_file.display().to_string()
    );
    let ran = run_code(sandbox().await, &code).await;
    assert_eq!(ran.result.outcome, Outcome::OutcomeOk, "{}", output(&ran));
    assert!(!output(&ran).contains("wrote"), "{}", output(&ran));
    assert_eq!(
        output(&ran).matches("refused").count(),
        7,
        "{}",
        output(&ran)
    );
    assert!(output(&ran).contains("/scratch\n"), "{}", output(&ran));
    assert!(!host_file.exists());
    assert_eq!(ran.files.len(), 1);
    assert_eq!(ran.files[0].display_name.as_deref(), Some("inside.txt"));
}

#[tokio::test]
async fn a_program_that_allocates_past_the_memory_limit_fails() {
    let ran = run_code(
        sandbox().await,
        "data = bytearray(1024 * 1024 * 1024)\nprint('allocated')",
    )
    .await;
    assert_eq!(ran.result.outcome, Outcome::OutcomeFailed);
    assert!(output(&ran).contains("MemoryError"), "{}", output(&ran));
    assert!(!output(&ran).contains("allocated"));
}

#[tokio::test]
async fn without_a_working_sandbox_the_executor_refuses_and_never_runs_code_unsandboxed() {
    let missing = SandboxedCodeExecutor::builder()
        .bwrap("/nonexistent/bwrap")
        .build()
        .await
        .unwrap_err();
    assert_eq!(missing.kind(), CodeExecutorErrorKind::SandboxUnavailable);
    let message = missing.to_string();
    assert!(message.contains("bubblewrap"), "{message}");
    assert!(message.contains("UnsafeLocalCodeExecutor"), "{message}");

    // A bubblewrap that cannot make its namespaces (as in a container that forbids them) is
    // found at construction, not on the model's first code.
    let refused = SandboxedCodeExecutor::builder()
        .bwrap("/bin/false")
        .build()
        .await
        .unwrap_err();
    assert_eq!(refused.kind(), CodeExecutorErrorKind::SandboxUnavailable);
    assert!(
        refused.to_string().contains("could not start the sandbox"),
        "{refused}"
    );

    // Through the flow's error type, it is a configuration error.
    let error = adk_core::Error::from(refused);
    assert_eq!(error.kind(), adk_core::ErrorKind::Config);
}

#[tokio::test]
async fn the_unsafe_executor_runs_code_when_named_and_kills_its_process_group() {
    let executor = UnsafeLocalCodeExecutor::builder()
        .timeout(Duration::from_secs(2))
        .build()
        .await
        .unwrap();
    let ran = run_code(
        executor,
        "import subprocess, sys\n\
         child = subprocess.Popen(['sleep', '300'])\n\
         print(child.pid, flush=True)\n\
         while True:\n\
         \x20   pass",
    )
    .await;
    assert_eq!(ran.result.outcome, Outcome::OutcomeDeadlineExceeded);
    let pid: u32 = output(&ran).lines().next().unwrap().parse().unwrap();
    // The background child went with the group: gone, or a zombie nobody reaped yet.
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let running = state
        .rsplit(") ")
        .next()
        .is_some_and(|rest| !rest.starts_with('Z') && !rest.is_empty());
    assert!(!running, "the child {pid} still runs: {state}");
}
