//! The flow's side of the effect journal: the intent recorded before a journaled tool runs, and
//! the user's decision about a call that was interrupted after its tool started.
//!
//! The decision travels through the tool-confirmation machinery: the flow asks for a
//! confirmation whose payload marks it as being about an interrupted call, and the answer either
//! runs the call again (confirmed) or answers it without running (rejected), whatever the tool's
//! own confirmation settings.

use adk_core::{
    Error, ErrorKind, FunctionCall, InvocationContext, Result, ToolConfirmation, ToolIntent,
};
use adk_tool::Tool;
use serde_json::{Value, json};

/// The key of a confirmation payload that marks it as a decision about an interrupted call.
const INTERRUPTED_KEY: &str = "adkInterruptedCall";

/// Records in the session store that `call` of `tool` is about to run, when the tool acts
/// outside the session and the invocation has a session service. An error means the intent is
/// not recorded and the tool must not run.
pub(crate) async fn record_intent(
    ctx: &InvocationContext,
    tool: &dyn Tool,
    call: &FunctionCall,
) -> Result<()> {
    if !tool.effect().is_journaled() {
        return Ok(());
    }
    let (Some(sessions), Some(call_id)) = (ctx.session_service(), &call.id) else {
        return Ok(());
    };
    let intent = ToolIntent::new(
        ctx.invocation_id().clone(),
        call_id.clone(),
        call.name.clone(),
        adk_tool::arguments_hash(&call.args),
    );
    sessions
        .record_tool_intent(ctx.session_key(), &intent)
        .await
        .map_err(|error| {
            Error::new(
                ErrorKind::Tool,
                format!(
                    "tool '{}' did not run: its intent could not be recorded in the effect \
                     journal ({}); it may succeed later",
                    call.name,
                    error.message()
                ),
            )
            .with_source(error)
        })
}

/// The confirmation the flow asks for about interrupted call `call` of an effectful tool, which
/// was started `attempts` times (0 when the session service keeps no journal and nobody knows).
pub(crate) fn decision_request(call: &FunctionCall, attempts: u32) -> ToolConfirmation {
    ToolConfirmation {
        hint: format!(
            "The call to `{}` was interrupted after it started, so it may or may not have taken \
             effect, and the tool does not say it is safe to repeat. Confirm to run it again, or \
             reject to leave it as it is.",
            call.name
        ),
        confirmed: false,
        payload: Some(json!({ INTERRUPTED_KEY: { "attempts": attempts } })),
    }
}

/// The response of an interrupted call while the user decides.
pub(crate) fn awaiting_decision(call: &FunctionCall) -> Value {
    json!({
        "error": format!(
            "The call to `{}` was interrupted and may have taken effect; the user is asked \
             whether to run it again.",
            call.name
        )
    })
}

/// The response of an interrupted call the user chose not to run again, when `confirmation`
/// answers a decision request and rejects it; `None` otherwise (the call runs).
pub(crate) fn declined(call: &FunctionCall, confirmation: &ToolConfirmation) -> Option<Value> {
    let is_decision = confirmation
        .payload
        .as_ref()
        .is_some_and(|payload| payload.get(INTERRUPTED_KEY).is_some());
    (is_decision && !confirmation.confirmed).then(|| {
        json!({
            "error": format!(
                "The call to `{}` was interrupted and the user chose not to run it again; it may \
                 or may not have taken effect.",
                call.name
            )
        })
    })
}
