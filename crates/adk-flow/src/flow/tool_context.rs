//! The flow's [`ToolContext`]: a callback context tied to one function call.

use adk_core::{CallbackContext, FunctionCallId, InvocationContext, ToolConfirmation};
use adk_tool::ToolContext;

/// What a tool sees while answering one function call (or, without a call id, while changing a
/// request).
pub(crate) struct FlowToolContext {
    callback: CallbackContext,
    call_id: Option<FunctionCallId>,
    confirmation: Option<ToolConfirmation>,
}

impl FlowToolContext {
    pub(crate) fn new(
        ctx: InvocationContext,
        call_id: Option<FunctionCallId>,
        confirmation: Option<ToolConfirmation>,
    ) -> Self {
        Self {
            callback: CallbackContext::new(ctx),
            call_id,
            confirmation,
        }
    }
}

impl ToolContext for FlowToolContext {
    fn callback_context(&self) -> &CallbackContext {
        &self.callback
    }

    fn function_call_id(&self) -> Option<&FunctionCallId> {
        self.call_id.as_ref()
    }

    fn tool_confirmation(&self) -> Option<&ToolConfirmation> {
        self.confirmation.as_ref()
    }
}
