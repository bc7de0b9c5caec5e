//! ADK Python, installed from PyPI on first use (adk-test's Python peers, one virtualenv shared
//! with the A2A and session interop tests), as the reference the eval tests compare with.
//! `adk_peer.py` beside this file answers one JSON request per run with ADK's own evaluation code.

use std::io::Write as _;
use std::process::Stdio;

use serde_json::Value;

/// Sends `request` to ADK Python and returns its answer.
pub(crate) fn ask(request: Value) -> Value {
    let script =
        adk_test::package_dir(env!("CARGO_MANIFEST_DIR")).join("tests/support/adk_peer.py");
    let mut child = adk_test::python_peers::a2a_peers()
        .command()
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python runs");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(request.to_string().as_bytes())
        .expect("the request is written");
    let output = child.wait_with_output().expect("python ends");
    assert!(
        output.status.success(),
        "adk_peer.py failed on {}:\n{}",
        request["command"],
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("adk_peer.py answers JSON")
}
