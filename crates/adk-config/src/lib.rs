#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
// Without the loader, the reading half of the config types has no caller.
#![cfg_attr(not(feature = "loader"), allow(dead_code))]

#[cfg(feature = "loader")]
mod build;
#[cfg(feature = "loader")]
mod error;
#[cfg(feature = "loader")]
mod loader;
#[cfg(feature = "loader")]
mod prepare;
#[cfg(feature = "loader")]
mod read;
#[cfg(feature = "loader")]
mod resolver;
mod schema;
#[cfg(feature = "loader")]
mod workflow;

#[cfg(feature = "loader")]
pub use error::{BoxError, ConfigError, ConfigErrorKind, Location};
#[cfg(feature = "loader")]
pub use loader::{AgentLoader, App, ROOT_AGENT_FILE};
#[cfg(feature = "loader")]
pub use resolver::{EnvModelResolver, ModelResolver};
pub use schema::json_schema;
pub use schema::model_name::ModelSpec;

// Loaders and their errors cross tasks: a compile-time check that they stay `Send + Sync`.
#[cfg(feature = "loader")]
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<AgentLoader>();
    assert_send_sync::<ConfigError>();
    assert_send_sync::<EnvModelResolver>();
};
