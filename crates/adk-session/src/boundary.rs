//! The trait boundary: `adk_core`'s session and memory service traits implemented over a
//! backend's own methods, each once, so that this crate's [`Error`](crate::error::Error) becomes
//! an [`adk_core::Error`] of the service's kind in one place. (The artifact services share one
//! store, so their trait implementation lives beside it, in `artifact::service`.)

/// Implements [`adk_core::SessionService`] for `$service`, whose methods `create`, `get`, `list`,
/// `delete`, `persist`, `record_intent`, `journal`, `request_cancel` and `cancel_signals` (its own,
/// or those of its field `$store`) return this crate's errors.
macro_rules! session_service {
    ($service:ty $(, $store:ident)?) => {
        #[async_trait::async_trait]
        impl adk_core::SessionService for $service {
            async fn create_session(
                &self,
                request: adk_core::CreateSessionRequest,
            ) -> adk_core::Result<adk_core::Session> {
                self$(.$store)?
                    .create(request)
                    .await
                    .map_err($crate::error::Error::into_session)
            }

            async fn get_session(
                &self,
                request: adk_core::GetSessionRequest,
            ) -> adk_core::Result<Option<adk_core::Session>> {
                self$(.$store)?
                    .get(request)
                    .await
                    .map_err($crate::error::Error::into_session)
            }

            async fn list_sessions(
                &self,
                app_name: &str,
                user_id: &str,
            ) -> adk_core::Result<Vec<adk_core::Session>> {
                self$(.$store)?
                    .list(app_name, user_id)
                    .await
                    .map_err($crate::error::Error::into_session)
            }

            async fn delete_session(&self, key: &adk_core::SessionKey) -> adk_core::Result<()> {
                self$(.$store)?
                    .delete(key)
                    .await
                    .map_err($crate::error::Error::into_session)
            }

            async fn persist_event(
                &self,
                key: &adk_core::SessionKey,
                revision: u64,
                event: &adk_core::Event,
            ) -> adk_core::Result<u64> {
                self$(.$store)?
                    .persist(key, revision, event)
                    .await
                    .map_err($crate::error::Error::into_session)
            }

            async fn record_tool_intent(
                &self,
                key: &adk_core::SessionKey,
                intent: &adk_core::ToolIntent,
            ) -> adk_core::Result<()> {
                self$(.$store)?
                    .record_intent(key, intent)
                    .await
                    .map_err($crate::error::Error::into_session)
            }

            async fn tool_journal(
                &self,
                key: &adk_core::SessionKey,
                invocation_id: &adk_core::InvocationId,
            ) -> adk_core::Result<Option<Vec<adk_core::JournalEntry>>> {
                self$(.$store)?
                    .journal(key, invocation_id)
                    .await
                    .map(Some)
                    .map_err($crate::error::Error::into_session)
            }

            async fn request_cancel(
                &self,
                key: &adk_core::SessionKey,
                invocation_id: &adk_core::InvocationId,
            ) -> adk_core::Result<bool> {
                self$(.$store)?
                    .request_cancel(key, invocation_id)
                    .await
                    .map(|()| true)
                    .map_err($crate::error::Error::into_session)
            }

            async fn cancel_signals(
                &self,
                key: &adk_core::SessionKey,
            ) -> adk_core::Result<Option<adk_core::CancelSignals>> {
                self$(.$store)?
                    .cancel_signals(key)
                    .await
                    .map(Some)
                    .map_err($crate::error::Error::into_session)
            }
        }
    };
}
pub(crate) use session_service;

/// Implements [`adk_core::MemoryService`] for `$service`, whose methods `add` and `search` (or
/// those of what `|service| inner` gives) return this crate's errors.
macro_rules! memory_service {
    ($service:ty) => {
        $crate::boundary::memory_service!($service, |service| service);
    };
    ($service:ty, |$this:ident| $inner:expr) => {
        #[async_trait::async_trait]
        impl adk_core::MemoryService for $service {
            async fn add_session_to_memory(
                &self,
                session: &adk_core::Session,
            ) -> adk_core::Result<()> {
                let $this = self;
                $inner
                    .add(session)
                    .await
                    .map_err($crate::error::Error::into_memory)
            }

            async fn search_memory(
                &self,
                app_name: &str,
                user_id: &str,
                query: &str,
            ) -> adk_core::Result<adk_core::SearchMemoryResponse> {
                let $this = self;
                $inner
                    .search(app_name, user_id, query)
                    .await
                    .map(adk_core::SearchMemoryResponse::new)
                    .map_err($crate::error::Error::into_memory)
            }
        }
    };
}
pub(crate) use memory_service;
