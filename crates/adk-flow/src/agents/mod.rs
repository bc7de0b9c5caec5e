//! The agents besides `LlmAgent`: custom agents from a closure, and the workflow
//! agents that run their sub-agents in sequence, in parallel, or in a loop.

mod custom;
mod loop_agent;
mod parallel;
mod sequential;

pub use custom::{CustomAgent, CustomAgentBuilder, RunFn};
pub use loop_agent::{LoopAgent, LoopAgentBuilder};
pub use parallel::{ParallelAgent, ParallelAgentBuilder};
pub use sequential::{SequentialAgent, SequentialAgentBuilder};
