//! Test support shared by the integration tests: tool contexts on a real invocation
//! ([`TestToolContext`], [`Setup`]), and in-memory artifact and memory services.
//!
//! Each test binary uses part of it.
#![allow(dead_code, unreachable_pub)]

#[cfg(feature = "mcp")]
pub mod mcp_calls;

use std::collections::HashMap;
use std::sync::Arc;

use adk_core::{
    Agent, ArtifactService, ArtifactVersion, Content, EventStream, FunctionCallId,
    InvocationContext, MemoryEntry, MemoryService, Part, ReadonlyContext, Result,
    SearchMemoryResponse, Services, Session, SessionKey, ToolConfirmation,
};
use adk_tool::ToolContext;
use async_trait::async_trait;
use parking_lot::Mutex;
use serde_json::{Map, Value};

/// An agent that is never run; invocations need one.
struct Idle;

impl Agent for Idle {
    fn name(&self) -> &str {
        "assistant"
    }

    fn description(&self) -> &str {
        "A test agent."
    }

    fn run(self: Arc<Self>, _ctx: InvocationContext) -> EventStream {
        Box::pin(futures::stream::empty())
    }
}

/// Builds a [`TestToolContext`].
#[derive(Default)]
pub struct Setup {
    user_message: Option<String>,
    artifacts: Option<Arc<InMemoryArtifacts>>,
    memory: Option<Arc<InMemoryMemory>>,
    confirmation: Option<ToolConfirmation>,
    session: Option<SessionKey>,
}

impl Setup {
    /// Runs in `session` instead of `app`/`user-1`/`session-1`.
    pub fn session(mut self, app: &str, user: &str, session: &str) -> Self {
        self.session = Some(SessionKey::new(app, user, session));
        self
    }

    pub fn user_message(mut self, text: &str) -> Self {
        self.user_message = Some(text.to_owned());
        self
    }

    pub fn artifacts(mut self, artifacts: Arc<InMemoryArtifacts>) -> Self {
        self.artifacts = Some(artifacts);
        self
    }

    pub fn memory(mut self, memory: Arc<InMemoryMemory>) -> Self {
        self.memory = Some(memory);
        self
    }

    pub fn confirmation(mut self, confirmed: bool) -> Self {
        self.confirmation = Some(ToolConfirmation {
            hint: String::new(),
            confirmed,
            payload: None,
        });
        self
    }

    pub fn build(self) -> ToolContext {
        let key = self
            .session
            .unwrap_or_else(|| SessionKey::new("app", "user-1", "session-1"));
        let session = Session::new(key);
        let mut services = Services::default();
        services.artifact_service = self
            .artifacts
            .map(|artifacts| artifacts as Arc<dyn ArtifactService>);
        services.memory_service = self.memory.map(|memory| memory as Arc<dyn MemoryService>);
        let mut builder = InvocationContext::builder(Idle, session).services(services);
        if let Some(text) = self.user_message {
            builder = builder.user_content(Content::user(text));
        }
        let invocation = builder.build().unwrap();
        ToolContext::with_confirmation(
            invocation,
            Some(FunctionCallId::from("call-1")),
            self.confirmation,
        )
    }
}

/// Tool contexts as the flow makes them, answering function call `call-1`.
pub struct TestToolContext;

impl TestToolContext {
    /// A context with no services and no user message.
    pub fn plain() -> ToolContext {
        Setup::default().build()
    }
}

/// What a toolset sees of a tool context's invocation.
pub trait Readonly {
    fn readonly(&self) -> ReadonlyContext;
}

impl Readonly for ToolContext {
    fn readonly(&self) -> ReadonlyContext {
        ReadonlyContext::new(self.invocation().clone())
    }
}

/// Artifacts kept in memory, every version of every file.
#[derive(Default)]
pub struct InMemoryArtifacts {
    files: Mutex<HashMap<String, Vec<Part>>>,
}

impl InMemoryArtifacts {
    pub fn with(files: &[(&str, Part)]) -> Arc<Self> {
        let artifacts = Self::default();
        for (name, part) in files {
            artifacts
                .files
                .lock()
                .entry((*name).to_owned())
                .or_default()
                .push(part.clone());
        }
        Arc::new(artifacts)
    }
}

#[async_trait]
impl ArtifactService for InMemoryArtifacts {
    async fn save_artifact(
        &self,
        _session: &SessionKey,
        filename: &str,
        artifact: Part,
        _custom_metadata: Map<String, Value>,
    ) -> Result<u64> {
        let mut files = self.files.lock();
        let versions = files.entry(filename.to_owned()).or_default();
        versions.push(artifact);
        Ok(versions.len() as u64 - 1)
    }

    async fn load_artifact(
        &self,
        _session: &SessionKey,
        filename: &str,
        version: Option<u64>,
    ) -> Result<Option<Part>> {
        let files = self.files.lock();
        let Some(versions) = files.get(filename) else {
            return Ok(None);
        };
        Ok(match version {
            Some(version) => versions.get(version as usize).cloned(),
            None => versions.last().cloned(),
        })
    }

    async fn list_artifact_keys(&self, _session: &SessionKey) -> Result<Vec<String>> {
        let mut names: Vec<String> = self.files.lock().keys().cloned().collect();
        names.sort();
        Ok(names)
    }

    async fn delete_artifact(&self, _session: &SessionKey, filename: &str) -> Result<()> {
        self.files.lock().remove(filename);
        Ok(())
    }

    async fn list_versions(&self, _session: &SessionKey, filename: &str) -> Result<Vec<u64>> {
        let count = self.files.lock().get(filename).map_or(0, Vec::len);
        Ok((0..count as u64).collect())
    }

    async fn artifact_version(
        &self,
        _session: &SessionKey,
        filename: &str,
        version: Option<u64>,
    ) -> Result<Option<ArtifactVersion>> {
        let count = self.files.lock().get(filename).map_or(0, Vec::len) as u64;
        let version = version.unwrap_or(count.saturating_sub(1));
        Ok((version < count).then(|| ArtifactVersion::new(version, 0.0)))
    }
}

/// A memory that returns every entry whose text contains a word of the query, and records the
/// queries it was asked.
#[derive(Default)]
pub struct InMemoryMemory {
    entries: Vec<MemoryEntry>,
    pub queries: Mutex<Vec<String>>,
}

impl InMemoryMemory {
    pub fn with(entries: Vec<MemoryEntry>) -> Arc<Self> {
        Arc::new(Self {
            entries,
            queries: Mutex::default(),
        })
    }
}

#[async_trait]
impl MemoryService for InMemoryMemory {
    async fn add_session_to_memory(&self, _session: &Session) -> Result<()> {
        Ok(())
    }

    async fn search_memory(
        &self,
        _app_name: &str,
        _user_id: &str,
        query: &str,
    ) -> Result<SearchMemoryResponse> {
        self.queries.lock().push(query.to_owned());
        let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        let memories = self
            .entries
            .iter()
            .filter(|entry| {
                let text = entry.content.text().unwrap_or_default().to_lowercase();
                words.iter().any(|word| text.contains(word.as_str()))
            })
            .cloned()
            .collect();
        Ok(SearchMemoryResponse::new(memories))
    }
}
