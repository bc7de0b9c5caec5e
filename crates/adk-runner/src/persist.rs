//! Storing one event of a run: in the session service first, then in the invocation's copy of the
//! session, without holding the session lock across the storage call.

use std::sync::Arc;

use adk_core::internal::InvocationControl as _;
use adk_core::{Event, InvocationContext, Result, SessionService, StateScope};

/// Stores `event` (not partial) in `sessions` at the revision the invocation's session copy last
/// saw, then applies it to that copy. `temp:` keys reach the copy's state for the rest of the
/// invocation but never storage. A session changed elsewhere in the meantime fails with
/// [`ErrorKind::StaleSession`](adk_core::ErrorKind::StaleSession) and stores nothing.
pub(crate) async fn persist_event(
    sessions: &Arc<dyn SessionService>,
    ctx: &InvocationContext,
    event: &Event,
) -> Result<()> {
    let has_temp_state = event
        .actions
        .state_delta
        .keys()
        .any(|key| StateScope::of(key) == StateScope::Temp);
    if has_temp_state {
        return persist_with_stored_copy(sessions, ctx, event, event.clone()).await;
    }
    // The common case: storage and the invocation's copy get the same event, so the one copy
    // made for storage moves into the session afterwards.
    let stored = event.clone();
    let new_revision = store(sessions, ctx, &stored).await?;
    ctx.with_session_mut(|session| {
        session.apply_event(stored, new_revision);
    });
    Ok(())
}

/// As [`persist_event`], but storage receives `stored`, a copy of `event` with what must not be
/// kept (a credential, say) taken out, while the invocation's copy of the session gets `event`.
pub(crate) async fn persist_with_stored_copy(
    sessions: &Arc<dyn SessionService>,
    ctx: &InvocationContext,
    event: &Event,
    mut stored: Event,
) -> Result<()> {
    stored.trim_temp_state();
    let new_revision = store(sessions, ctx, &stored).await?;
    ctx.with_session_mut(|session| {
        session.apply_event(event.clone(), new_revision);
    });
    Ok(())
}

/// Stores `event` at the revision the invocation's session copy last saw; returns the new one.
async fn store(
    sessions: &Arc<dyn SessionService>,
    ctx: &InvocationContext,
    event: &Event,
) -> Result<u64> {
    let revision = ctx.with_session(|session| session.revision);
    sessions
        .persist_event(ctx.session_key(), revision, event)
        .await
}
