#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
// A command line reports to the terminal.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod a2a;
mod apps;
mod args;
mod builder;
mod create;
mod embedder;
mod error;
mod eval;
mod eval_set;
mod gate;
mod launcher;
mod model;
mod serve;
mod sessions;
mod store;
mod terminal;

pub use error::{LaunchError, LaunchErrorKind};
pub use launcher::Launcher;
