//! Dev-only helpers shared by the tests of adk-rs crates.
//!
//! It holds what more than one crate's tests need, so that no helper is written twice: locating the
//! shared fixtures (the recorded model traffic and the wire-format captures), and, as later work
//! adds them, the scripted model, the loopback replay server and the session conformance suite. It
//! depends only on the lowest layers and is never a normal dependency of a library crate.

mod shared;

pub use shared::{SHARED_DIR_ENV, shared_dir, shared_file};
