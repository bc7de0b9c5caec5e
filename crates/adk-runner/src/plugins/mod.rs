//! The plugins adk-rs ships: [`LoggingPlugin`] traces what a run does, and
//! [`ReflectAndRetryPlugin`] turns tool failures into guidance the model can act on.
//!
//! Install them with [`RunnerBuilder::plugin`](crate::RunnerBuilder::plugin); write your own by
//! implementing [`Plugin`](crate::Plugin).

mod logging;
mod reflect_retry;

pub use logging::LoggingPlugin;
pub use reflect_retry::ReflectAndRetryPlugin;
