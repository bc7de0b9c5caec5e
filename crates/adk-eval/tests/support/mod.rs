//! ADK Python, installed from PyPI on first use, as the reference the eval tests compare with.
//!
//! `google-adk`, `rouge-score` and `nltk` are installed at pinned versions into a virtual
//! environment under `$ADK_EVAL_PEERS_DIR` (by default `$HOME/.cache/adk-rs/eval-peers`). An
//! exclusive file lock keeps parallel test binaries from installing at the same time; a marker
//! file naming the versions makes later runs skip the install. `adk_peer.py` beside this file
//! answers one JSON request per run with ADK's own evaluation code.

use std::fs::{self, File};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

/// Overrides where the virtual environment is made.
pub(crate) const PEERS_DIR_ENV: &str = "ADK_EVAL_PEERS_DIR";

/// The packages, pinned: ADK Python as the reference, and the ROUGE and stemmer packages its
/// `response_match_score` uses.
const PACKAGES: [&str; 3] = ["google-adk==2.13.0", "rouge-score==0.1.2", "nltk==3.10.4"];

/// Sends `request` to ADK Python and returns its answer.
pub(crate) fn ask(request: Value) -> Value {
    let python = installed();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/adk_peer.py");
    let mut child = Command::new(python)
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

/// The virtual environment's python, installed if needed (once per test binary).
fn installed() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let dir = peers_dir();
        install(&dir);
        dir.join("venv/bin/python")
    })
}

fn peers_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(PEERS_DIR_ENV) {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| {
        panic!("HOME is not set; set {PEERS_DIR_ENV} to where ADK Python may be installed")
    });
    Path::new(&home).join(".cache/adk-rs/eval-peers")
}

fn install(dir: &Path) {
    fs::create_dir_all(dir)
        .unwrap_or_else(|error| panic!("cannot create {}: {error}", dir.display()));
    let lock = File::create(dir.join(".install.lock")).unwrap_or_else(|error| {
        panic!(
            "cannot create the install lock in {}: {error}",
            dir.display()
        )
    });
    lock.lock()
        .unwrap_or_else(|error| panic!("cannot lock {}: {error}", dir.display()));
    let marker = dir.join(".installed");
    let wanted = PACKAGES.join("\n");
    if fs::read_to_string(&marker).is_ok_and(|found| found == wanted) {
        return;
    }
    let venv = dir.join("venv");
    if !venv.join("bin/python").exists() {
        let made = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .output();
        match made {
            Ok(output) if output.status.success() => {}
            Ok(output) => panic!(
                "`python3 -m venv {}` failed:\n{}\nthe eval tests need Python 3.10 or later with venv \
                 (for example `apt-get install python3-venv`)",
                venv.display(),
                String::from_utf8_lossy(&output.stderr)
            ),
            Err(error) => panic!(
                "cannot run python3 ({error}); the eval tests compare with ADK Python and need \
                 Python 3.10 or later with pip and venv"
            ),
        }
    }
    let output = Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet", "--disable-pip-version-check"])
        .args(PACKAGES)
        .output()
        .expect("pip runs");
    assert!(
        output.status.success(),
        "`pip install {}` into {} failed:\n{}",
        PACKAGES.join(" "),
        venv.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    fs::write(&marker, wanted).expect("the marker file can be written");
}
