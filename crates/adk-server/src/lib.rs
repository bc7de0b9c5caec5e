#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod app_info;
mod build_graph;
mod config;
pub mod dev_ui;
mod error;
mod extract;
mod routes;
mod security;
mod server;

pub use config::{
    DEFAULT_BODY_LIMIT, DEFAULT_MAX_CONCURRENT_RUNS, DEFAULT_RETRY_AFTER, DEFAULT_SHUTDOWN_GRACE,
    DEFAULT_SPAN_CAPACITY, ServerConfig,
};
pub use error::{ApiError, ServerError};
pub use security::{Authorizer, BearerToken};
pub use server::{Server, ServerBuilder, shutdown_signal};
