#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod error;
mod node;
mod request_input;
mod sink;

pub use error::{NodeError, WorkflowError, WorkflowErrorKind};
pub use node::context::{NodeContext, RunNodeOptions};
pub use node::function::IntoNodeOutput;
pub use node::workflow::graph::{
    ChainElement, DEFAULT_ROUTE, Edge, Graph, IntoChain, Routes, START, Start, routes,
};
pub use node::workflow::{Workflow, WorkflowBuilder, WrittenEdges};
pub use node::{
    AgentNode, FunctionNode, IntoFunctionNode, JoinNode, Node, NodeInput, NodeKind, NodeOptions,
    NodeOutput, ParallelWorker, RetryConfig, RunNode, START_NAME, ToolNode,
};
pub use request_input::{REQUEST_INPUT_FUNCTION, RequestInput};
