#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod context;
mod error;
mod graph;
mod node;
mod replay;
mod request_input;
mod runtime;
mod scheduler;
mod sink;
mod workflow;

pub use context::{NodeContext, RunNodeOptions};
pub use error::{NodeError, WorkflowError, WorkflowErrorKind};
pub use graph::{
    ChainElement, DEFAULT_ROUTE, Edge, Graph, IntoChain, Routes, START, Start, routes,
};
pub use node::function::IntoNodeOutput;
pub use node::{
    AgentNode, FunctionNode, IntoFunctionNode, JoinNode, Node, NodeInput, NodeKind, NodeOptions,
    NodeOutput, ParallelWorker, RetryConfig, RunNode, START_NAME, ToolNode,
};
pub use request_input::{REQUEST_INPUT_FUNCTION, RequestInput};
pub use workflow::{Workflow, WorkflowBuilder, WrittenEdges};
