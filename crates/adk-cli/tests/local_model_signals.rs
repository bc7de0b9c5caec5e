//! The `adk` command line on the local model: the `llama-server` it starts must not outlive it
//! when it is told to stop (review finding 15). Uses the local model's cache directory, building
//! llama.cpp there first if it is missing (see `docs/local-model.md`).

use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt as _;
use tokio::process::Command;

/// The ids of the processes whose parent is `parent` and whose name is `name`.
fn children_named(parent: u32, name: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
                return false;
            };
            let field = |key: &str| {
                status
                    .lines()
                    .find_map(|line| line.strip_prefix(key))
                    .map(str::trim)
                    .unwrap_or_default()
                    .to_owned()
            };
            field("PPid:") == parent.to_string() && field("Name:") == name
        })
        .collect()
}

fn is_running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .is_ok_and(|status| !status.contains("State:\tZ"))
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn review_15_the_local_model_server_dies_with_the_command_line() {
    let mut adk = Command::new(env!("CARGO_BIN_EXE_adk"))
        .args(["run", "quickstart", "--in-memory"])
        .env_remove("GOOGLE_API_KEY")
        .env_remove("GEMINI_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ADK_PROVIDER")
        .env_remove("ADK_NO_LOCAL_MODEL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("the adk binary starts");
    let pid = adk.id().expect("a running process");
    // Kept open until adk has exited: the end of its input would end the session by itself.
    let stdin = adk.stdin.take().expect("stdin is piped");

    // The prompt appears once the local server is up.
    let mut stdout = adk.stdout.take().expect("stdout is piped");
    let mut seen = Vec::new();
    let mut buffer = [0_u8; 1024];
    while !String::from_utf8_lossy(&seen).contains("you> ") {
        let read = stdout.read(&mut buffer).await.expect("adk's output");
        assert!(
            read > 0,
            "adk ended early: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buffer[..read]);
    }
    let servers = children_named(pid, "llama-server");
    assert_eq!(servers.len(), 1, "adk runs one llama-server: {servers:?}");
    let server = servers[0];

    let terminated = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(terminated.success());
    let status = adk.wait().await.expect("adk exits");
    drop(stdin);
    assert!(
        !status.success(),
        "adk was stopped by the signal, not by its input"
    );

    // The server was killed before adk exited; give the kernel the moment it takes to end it.
    let deadline = Instant::now() + Duration::from_secs(30);
    while is_running(server) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let orphaned = is_running(server);
    if orphaned {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &server.to_string()])
            .status();
    }
    assert!(!orphaned, "llama-server {server} outlived adk");
}
