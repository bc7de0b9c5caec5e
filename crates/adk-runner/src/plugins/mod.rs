//! The plugins adk-rs ships: [`LoggingPlugin`] traces what a run does,
//! [`ReflectAndRetryPlugin`] turns tool failures into guidance the model can act on, and
//! [`ModelFallbackPlugin`] answers with the next model when a provider is rate limiting or down.
//!
//! Install them with [`RunnerBuilder::plugin`](crate::RunnerBuilder::plugin); write your own by
//! implementing [`Plugin`](crate::Plugin).

mod logging;
mod model_fallback;
mod reflect_retry;

pub use logging::LoggingPlugin;
pub use model_fallback::ModelFallbackPlugin;
pub use reflect_retry::ReflectAndRetryPlugin;
