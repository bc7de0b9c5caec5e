//! The adk-rs runner.
//!
//! This crate will own `Runner`, which loads a session, runs the agent tree on a new message and
//! appends every non-partial event to the session, plus plugins, pause and resume, and rewind.
