//! Conversions between ADK's content and events and A2A's parts and messages, as ADK Python's
//! A2A converters make them, so that ADK agents in either language understand each other.
//!
//! Metadata keys carry ADK's meaning across: `adk_type` marks a data part as a function call,
//! function response, executable code or code execution result; `adk_is_long_running` marks a
//! call that pauses the task; `adk_thought` marks reasoning text.

mod events;
mod parts;

pub use events::{content_to_message, event_to_message, message_to_content};
pub use parts::{
    ADK_METADATA_PREFIX, IS_LONG_RUNNING_KEY, TYPE_KEY, a2a_part_to_adk, adk_part_to_a2a,
    data_part_type,
};
pub(crate) use parts::{call_id, is_long_running_call};
