#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod app_info;
mod build_graph;
pub mod builder;
mod config;
pub mod dev_ui;
mod error;
mod eval;
mod extract;
mod names;
mod routes;
mod running;
mod server;
mod state;

pub use config::{
    DEFAULT_ADMIN_SCOPE, DEFAULT_BODY_BUDGET, DEFAULT_BODY_LIMIT, DEFAULT_BODY_READ_TIMEOUT,
    DEFAULT_EVAL_STORAGE, DEFAULT_MAX_CONCURRENT_RUNS, DEFAULT_SHUTDOWN_GRACE, DEFAULT_SPAN_BYTES,
    DEFAULT_SPAN_CAPACITY, ServerConfig,
};
pub use error::{ApiError, DEFAULT_RETRY_AFTER, ServerError};
pub use routes::{Access, RouteInfo};
pub use server::{Server, ServerBuilder, shutdown_signal};

/// The gate in front of the routes: authentication, the Host allow-list, origins, timeouts.
pub use adk_gate as gate;
