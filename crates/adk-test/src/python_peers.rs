//! The Python peers the A2A, session interop and evaluation tests talk to — the official `a2a-sdk`
//! and ADK Python (`google-adk[a2a,db]`, with `asyncpg` for its PostgreSQL sessions, and
//! `rouge-score` and `nltk`, which its `response_match_score` uses) — installed from PyPI at pinned
//! versions into one cached virtualenv.
//!
//! The virtualenv lives in `$ADK_A2A_PEERS_DIR` (by default `$HOME/.cache/adk-rs/a2a-peers`). An
//! exclusive file lock keeps parallel test binaries from installing at the same time; a marker
//! file naming the pinned requirements makes later runs skip the install.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Overrides where the virtualenv is made.
pub const PEERS_DIR_ENV: &str = "ADK_A2A_PEERS_DIR";

/// The requirements, pinned: the last A2A 0.3 release of the SDK, the ADK Python release whose
/// wire format and session tables adk-rs follows (it supports a2a-sdk 0.3), and the PostgreSQL
/// driver its `DatabaseSessionService` uses (`postgresql+asyncpg://` URLs), and the ROUGE and
/// stemmer packages of its eval metrics.
pub const REQUIREMENTS: [&str; 5] = [
    "a2a-sdk[http-server]==0.3.26",
    "google-adk[a2a,db]==2.13.0",
    "asyncpg==0.32.0",
    "rouge-score==0.1.2",
    "nltk==3.10.4",
];

/// The installed virtualenv.
#[derive(Debug)]
pub struct PythonPeers {
    dir: PathBuf,
}

impl PythonPeers {
    /// The virtualenv's Python interpreter, which imports `a2a`, `google.adk`, `sqlalchemy`,
    /// `rouge_score` and `nltk`.
    pub fn python(&self) -> PathBuf {
        self.dir.join("venv/bin/python")
    }

    /// A command running the virtualenv's Python, without the environment variables that would
    /// send ADK Python or google-genai to a real service, and with a placeholder API key.
    pub fn command(&self) -> Command {
        let mut command = Command::new(self.python());
        for variable in [
            "GOOGLE_API_KEY",
            "GEMINI_API_KEY",
            "GOOGLE_GENAI_USE_VERTEXAI",
            "GOOGLE_CLOUD_PROJECT",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "OTEL_EXPORTER_OTLP_ENDPOINT",
        ] {
            command.env_remove(variable);
        }
        // The peers' Gemini models talk to loopback mocks, which take any key; google-genai
        // refuses to start without one.
        command.env("GOOGLE_API_KEY", "loopback-mock-key");
        command.env("PYTHONUNBUFFERED", "1");
        command
    }
}

/// The peers, installed if needed (once per test binary).
///
/// # Panics
///
/// When Python 3.11 or later with `venv`, or PyPI, is not available, with a message that says
/// what to install.
pub fn a2a_peers() -> &'static PythonPeers {
    static PEERS: OnceLock<PythonPeers> = OnceLock::new();
    PEERS.get_or_init(|| {
        let dir = crate::cache::cache_dir(PEERS_DIR_ENV, "a2a-peers");
        install(&dir);
        PythonPeers { dir }
    })
}

fn install(dir: &Path) {
    crate::cache::install_once(dir, &REQUIREMENTS.join("\n"), make_venv);
}

fn make_venv(dir: &Path) {
    let venv = dir.join("venv");
    if !venv.join("bin/python").exists() {
        let output = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .output()
            .unwrap_or_else(|error| {
                panic!(
                    "the A2A, session interop and eval tests need Python 3.11 or later with venv to install their peers ({}): \
                     running python3 failed: {error}; install it (for example `apt-get install python3 python3-venv`)",
                    REQUIREMENTS.join(", ")
                )
            });
        assert!(
            output.status.success(),
            "`python3 -m venv {}` failed:\n{}",
            venv.display(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let output = Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet", "--disable-pip-version-check"])
        .args(REQUIREMENTS)
        .output()
        .expect("the virtualenv's pip runs");
    assert!(
        output.status.success(),
        "`pip install {}` into {} failed:\n{}",
        REQUIREMENTS.join(" "),
        venv.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}
