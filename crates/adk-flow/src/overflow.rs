//! Compaction on a context overflow: when the model refuses a request as longer than its context
//! window ([`ErrorKind::ContextOverflow`](adk_core::ErrorKind::ContextOverflow)), the flow asks the
//! invocation's [`ContextCompactor`] to summarize the history once, builds the request again and
//! calls the model once more. A second overflow is the step's error.
//!
//! The runner installs a compactor when it is built with events compaction; an invocation without
//! one passes the overflow on at once.

use std::sync::Arc;

use adk_core::internal::InvocationControl as _;
use adk_core::{InvocationContext, Result};
use async_trait::async_trait;

/// Summarizes a session's history now, on behalf of a request that overflowed.
///
/// The runner implements it when it is built with events compaction; public for the runner only,
/// not part of the API.
///
/// ```
/// use adk_core::{InvocationContext, Result};
/// use adk_flow::internal::ContextCompactor;
///
/// /// Never finds anything to compact.
/// struct Nothing;
///
/// #[async_trait::async_trait]
/// impl ContextCompactor for Nothing {
///     async fn compact_now(&self, _ctx: &InvocationContext) -> Result<bool> {
///         Ok(false)
///     }
/// }
/// ```
#[async_trait]
pub trait ContextCompactor: Send + Sync {
    /// Stores a compaction event that summarizes what `ctx`'s session holds before the current
    /// invocation, and applies it to the invocation's copy of the session; `Ok(false)` when there
    /// is nothing to summarize.
    async fn compact_now(&self, ctx: &InvocationContext) -> Result<bool>;
}

/// The compactor of an invocation, handed to the flow as invocation data by the runner; the
/// default has none.
#[derive(Clone, Default)]
pub struct OverflowCompaction(Option<Arc<dyn ContextCompactor>>);

impl OverflowCompaction {
    /// Compaction on overflow by `compactor`.
    pub fn new(compactor: Arc<dyn ContextCompactor>) -> Self {
        Self(Some(compactor))
    }

    /// The invocation's compactor, if any.
    pub(crate) fn of(ctx: &InvocationContext) -> Option<Arc<dyn ContextCompactor>> {
        ctx.invocation_data::<Self>().0.clone()
    }
}

impl std::fmt::Debug for OverflowCompaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("OverflowCompaction")
            .field(&self.0.as_ref().map(|_| "compactor"))
            .finish()
    }
}
