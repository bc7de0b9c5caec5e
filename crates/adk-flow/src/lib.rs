#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod agent_lifecycle;
mod agent_tool;
mod agents;
mod callbacks;
mod code_executor;
mod flow;
mod instruction_template;
mod llm_agent;
mod mode;
mod next_boxed;
mod node_paths;
mod overflow;
mod planner;
mod plugin;
mod processors;
pub mod task;
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
pub use mode::AgentMode;
pub use node_paths::{agent_path, next_run_id};
pub use overflow::{ContextCompactor, OverflowCompaction};
pub use planner::{BuiltInPlanner, PlanReActPlanner, Planner};
pub use plugin::{Plugin, Plugins};
pub use processors::live_events::without_rewound;
pub use tool_state::ToolStateScopes;
