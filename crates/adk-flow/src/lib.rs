//! The LLM flow of adk-rs and the agents built on it.
//!
//! This crate will own the flow pipeline (request processors, model call, response processors, tool
//! calls, agent transfer) as crate-private machinery, and the public agents: `LlmAgent`, custom agents
//! from a closure, and the workflow agents `SequentialAgent`, `ParallelAgent` and `LoopAgent`.
