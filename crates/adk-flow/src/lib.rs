//! The LLM flow of adk-rs and the agents built on it.
//!
//! - [`LlmAgent`] thinks with a model. Each step of its run is the flow of seed 000: build a
//!   request through the request processors (in the order of seed 003: basic, tools, auth, request
//!   confirmation, instructions, identity, contents, planning, code execution, output schema,
//!   agent transfer, file uploads), call the model, post-process the response (planning, code
//!   execution), turn it into an event, run the tools it calls in parallel, ask the user for the
//!   confirmations and credentials tools requested, emit structured output, and transfer to
//!   another agent when asked.
//! - [`CustomAgent`] runs a closure; [`SequentialAgent`], [`ParallelAgent`] and [`LoopAgent`]
//!   compose other agents; [`AgentTool`] lets one agent's model call another agent.
//! - Callbacks ([`BeforeModelCallback`] and the rest) observe and change what passes through.
//!
//! The pipeline itself is crate-private, as ADK Go keeps it in `internal/llminternal`: agents and
//! callbacks are the API.
//!
//! ```
//! use std::sync::Arc;
//! use adk_flow::{LlmAgent, SequentialAgent};
//! use adk_test::ScriptedModel;
//!
//! let model = Arc::new(ScriptedModel::new("scripted"));
//! let writer = LlmAgent::builder("writer").model(model.clone()).output_key("draft").build().unwrap();
//! let reviewer = LlmAgent::builder("reviewer")
//!     .model(model)
//!     .instruction("Review this draft: {draft}")
//!     .build()
//!     .unwrap();
//! let pipeline = SequentialAgent::builder("pipeline")
//!     .sub_agents([Arc::new(writer) as _, Arc::new(reviewer) as _])
//!     .build()
//!     .unwrap();
//! # let _ = pipeline;
//! ```

mod agent_lifecycle;
mod agent_tool;
mod agents;
mod callbacks;
mod code_executor;
mod flow;
mod instruction_template;
mod llm_agent;
mod planner;
mod plugin;
mod processors;
mod tool_state;

pub use agent_tool::AgentTool;
pub use agents::{
    CustomAgent, CustomAgentBuilder, LoopAgent, LoopAgentBuilder, ParallelAgent,
    ParallelAgentBuilder, RunFn, SequentialAgent, SequentialAgentBuilder,
};
pub use callbacks::{
    AfterAgentCallback, AfterModelCallback, AfterToolCallback, BeforeAgentCallback,
    BeforeModelCallback, BeforeToolCallback, OnModelErrorCallback, OnToolErrorCallback,
};
pub use code_executor::{BuiltInCodeExecutor, CodeExecutor};
pub use llm_agent::{IncludeContents, InstructionProvider, LlmAgent, LlmAgentBuilder};
pub use planner::{BuiltInPlanner, PlanReActPlanner, Planner};
pub use plugin::{Plugin, Plugins};
pub use processors::live_events::without_rewound;
pub use tool_state::ToolStateScopes;
