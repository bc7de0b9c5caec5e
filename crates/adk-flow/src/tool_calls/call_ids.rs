//! Function-call ids that are unique within a session.
//!
//! The flow keys everything about a call by its id: where its response goes in the history, which
//! calls wait for the user, which answer resumes which call. Providers do not all make ids unique:
//! some OpenAI-compatible servers and proxies send `""` or `call_0` on every turn. So the flow
//! keeps a provider's id when it is new in the session (the provider may rely on seeing its own
//! ids again), and rewrites one that repeats an id already used, or that is empty or looks like an
//! id adk-rs generates (those are hidden from the model), into a fresh id that starts with the
//! provider's. The rewritten id is what the event stores and what later requests send.

use std::collections::HashSet;

use adk_core::internal::InvocationControl as _;
use adk_core::{CLIENT_FUNCTION_CALL_ID_PREFIX, Event, FunctionCallId, InvocationContext};
use parking_lot::Mutex;

/// The longest part of a provider's id kept in a rewritten id.
const KEPT_PROVIDER_CHARS: usize = 40;

/// The call ids used in the session so far, shared by every agent and branch of the invocation so
/// that two branches cannot hand out the same id at once.
#[derive(Default)]
pub(crate) struct SessionCallIds(Mutex<Seen>);

#[derive(Default)]
struct Seen {
    /// How many session events were read.
    events_read: usize,
    ids: HashSet<FunctionCallId>,
}

/// Gives every function call of `event` an id that no other call of the session has: a missing id
/// becomes a client id (`adk-...`), a repeated, empty or client-looking provider id a fresh one.
/// A partial event's calls only get missing ids: the final event repeats them and is the one
/// that counts.
///
/// Call it on a model event before it is yielded (the id it stores is the one every later step
/// keys the call by), then run its calls with a [`ToolInvoker`](super::ToolInvoker).
pub fn assign_call_ids(ctx: &InvocationContext, event: &mut Event) {
    let partial = event.is_partial();
    let Some(content) = event.response.content.as_mut() else {
        return;
    };
    let calls = content
        .parts
        .iter_mut()
        .filter_map(|part| match &mut part.data {
            adk_core::PartData::FunctionCall(call) => Some(call),
            _ => None,
        });
    if partial {
        for call in calls {
            call.id.get_or_insert_with(|| ctx.ids().function_call_id());
        }
        return;
    }
    let known = ctx.invocation_data::<SessionCallIds>();
    let mut seen = known.0.lock();
    ctx.with_session(|session| seen.catch_up(&session.events));
    for call in calls {
        let id = match call.id.take() {
            None => ctx.ids().function_call_id(),
            Some(id) if needs_rewrite(&id, &seen.ids) => fresh_id(ctx, &id, &seen.ids),
            Some(id) => id,
        };
        seen.ids.insert(id.clone());
        call.id = Some(id);
    }
}

impl Seen {
    /// Adds the ids of the events stored since the last look.
    fn catch_up(&mut self, events: &[Event]) {
        if events.len() < self.events_read {
            // The session was replaced by a shorter one; the ids handed out stay taken.
            self.events_read = 0;
        }
        for event in &events[self.events_read..] {
            self.ids
                .extend(event.function_calls().filter_map(|call| call.id.clone()));
        }
        self.events_read = events.len();
    }
}

fn needs_rewrite(id: &FunctionCallId, used: &HashSet<FunctionCallId>) -> bool {
    id.as_str().trim().is_empty() || id.is_client_generated() || used.contains(id)
}

/// A new id that keeps the readable start of the provider's (`call_0` becomes `call_0_<uuid>`),
/// made only of characters every provider accepts in an id.
fn fresh_id(
    ctx: &InvocationContext,
    provider_id: &FunctionCallId,
    used: &HashSet<FunctionCallId>,
) -> FunctionCallId {
    let mut base: String = provider_id
        .as_str()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .take(KEPT_PROVIDER_CHARS)
        .collect();
    if base.is_empty() || base.starts_with(CLIENT_FUNCTION_CALL_ID_PREFIX) {
        base = "call".to_owned();
    }
    loop {
        let id = FunctionCallId::from(format!("{base}_{}", ctx.ids().new_uuid().replace('-', "")));
        if !used.contains(&id) {
            return id;
        }
    }
}
