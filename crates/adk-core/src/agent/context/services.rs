//! [`Services`]: what an invocation runs with besides its session: the storage services (the
//! credential service among them), and where ids and time come from.

use std::fmt;
use std::sync::Arc;

use crate::ids::{Clock, IdGen, SystemClock, UuidIdGen};
use crate::{ArtifactService, CredentialService, MemoryService, SessionService};

/// The services and seams of an invocation: the session, artifact and memory services it may
/// use, its id generator and its clock.
///
/// The runner holds one and hands it to each invocation it starts; tests that build an
/// [`InvocationContext`](crate::InvocationContext) themselves set the fields they need.
///
/// ```
/// use std::sync::Arc;
/// use adk_core::{Services, SystemClock};
///
/// let mut services = Services::default();
/// services.clock = Arc::new(SystemClock);
/// assert!(services.session_service.is_none());
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct Services {
    /// Where the invocation's session is stored, when it is stored at all.
    pub session_service: Option<Arc<dyn SessionService>>,
    /// Where artifacts are kept; tools and callbacks can use artifacts only with one.
    pub artifact_service: Option<Arc<dyn ArtifactService>>,
    /// The long-term memory that memory tools search.
    pub memory_service: Option<Arc<dyn MemoryService>>,
    /// Where the credentials tools act with on a user's behalf are kept (OAuth2 tokens); tools
    /// that sign users in need one.
    pub credential_service: Option<Arc<dyn CredentialService>>,
    /// Where invocation, event and call ids come from (tests use a deterministic generator).
    pub ids: Arc<dyn IdGen>,
    /// Where event timestamps come from (tests use a deterministic clock).
    pub clock: Arc<dyn Clock>,
}

impl Default for Services {
    /// No storage services, random ids and the system clock.
    fn default() -> Self {
        Self {
            session_service: None,
            artifact_service: None,
            memory_service: None,
            credential_service: None,
            ids: Arc::new(UuidIdGen),
            clock: Arc::new(SystemClock),
        }
    }
}

impl fmt::Debug for Services {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Services")
            .field("session_service", &self.session_service.is_some())
            .field("artifact_service", &self.artifact_service.is_some())
            .field("memory_service", &self.memory_service.is_some())
            .field("credential_service", &self.credential_service.is_some())
            .finish_non_exhaustive()
    }
}
