//! A real OpenAPI server for the OpenAPI toolset's tests: a small FastAPI pet store
//! (`src/pet_store.py`), run by the Python peers' virtualenv (FastAPI and uvicorn come with ADK
//! Python), whose generated document at `/openapi.json` is the toolset's input.

use std::process::{Child, Stdio};

/// The pet store's API key, for its `APIKeyHeader` scheme (header `X-API-Key`).
pub const API_KEY: &str = "pet-key";

/// The pet store's bearer token, for its `HTTPBearer` scheme.
pub const BEARER_TOKEN: &str = "pet-token";

/// A pet store listening on a free loopback port; killed on drop.
pub struct PetStore {
    child: Child,
    port: u16,
}

impl PetStore {
    /// Starts the server (installing the Python peers first if needed) and returns once it
    /// listens. It blocks, so async tests call it through `spawn_blocking`.
    ///
    /// # Panics
    ///
    /// When the peers cannot be installed or the server does not start within 60 s.
    pub fn start() -> Self {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/src/pet_store.py");
        let mut child = crate::python_peers::a2a_peers()
            .command()
            .arg(script)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the peers' Python starts the pet store");
        let port = crate::ready::ready_line(&mut child, "the pet store", |line| line.parse().ok());
        Self { child, port }
    }

    /// The server's root URL, `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The URL of its generated OpenAPI document.
    pub fn openapi_url(&self) -> String {
        format!("{}/openapi.json", self.url())
    }
}

impl Drop for PetStore {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
