//! The three kinds of task processor: an agent, a tool, or a closure.

mod agent;
mod closure;
mod tool;

pub use agent::AgentProcessor;
pub use closure::FnProcessor;
pub use tool::ToolProcessor;
