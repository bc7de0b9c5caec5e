//! [`ToolFunction`]: the trait that turns an `async fn([ctx,] Args) -> Result<Out, E>` into the
//! body of a [`FunctionTool`](crate::FunctionTool).

use std::future::Future;

use adk_core::BoxError;
use futures::FutureExt;
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{ToolContext, ToolError, ToolErrorKind};

/// A function that can be the body of a [`FunctionTool`](crate::FunctionTool).
///
/// It is implemented for every `async fn` (or closure returning a future) of one of the shapes
///
/// - `async fn(ToolContext, Args) -> Result<Out, E>`, for tools that use the context;
/// - `async fn(Args) -> Result<Out, E>`, for tools that do not,
///
/// where `Args` derives `Deserialize` and [`JsonSchema`](schemars::JsonSchema), `Out: Serialize`,
/// and `E: Into<Box<dyn Error + Send + Sync>>` (any `std::error::Error`, `String`,
/// `anyhow::Error`, [`adk_core::Error`], ...). The type parameter `M` only tells the two shapes
/// apart; you never name it, and you do not implement this trait yourself.
///
/// ```
/// use std::sync::Arc;
/// use adk_tool::{FunctionTool, ToolContext};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Args {
///     a: i64,
///     b: i64,
/// }
///
/// async fn add(args: Args) -> Result<i64, String> {
///     args.a.checked_add(args.b).ok_or_else(|| "the sum overflows".to_owned())
/// }
///
/// async fn remember_sum(ctx: ToolContext, args: Args) -> adk_core::Result<()> {
///     ctx.set_state("last_sum", args.a + args.b)
/// }
///
/// let add = FunctionTool::new("add", "Adds two integers.", add);
/// let remember = FunctionTool::new("remember_sum", "Remembers a sum.", remember_sum);
/// ```
///
/// Anything else is refused at compile time with a message saying what a tool function looks
/// like:
///
/// ```compile_fail
/// # use adk_tool::FunctionTool;
/// # #[derive(serde::Deserialize, schemars::JsonSchema)]
/// # struct Args { city: String }
/// fn not_async(args: Args) -> String {
///     args.city
/// }
/// let tool = FunctionTool::new("get_weather", "Returns the weather.", not_async);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the body of a tool",
    label = "expected an `async fn(ToolContext, Args) -> Result<Out, E>` or an `async fn(Args) -> Result<Out, E>`",
    note = "the arguments are one type that derives `serde::Deserialize` and `schemars::JsonSchema`",
    note = "the function returns a `Send + 'static` future of `Result<Out, E>` where `Out: serde::Serialize` and `E: Into<Box<dyn std::error::Error + Send + Sync>>`"
)]
pub trait ToolFunction<M>: Send + Sync + 'static {
    /// The arguments the model gives.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;

    /// Calls the function and turns its result into JSON, or its error into a [`ToolError`].
    fn call(
        &self,
        ctx: ToolContext,
        args: Self::Args,
    ) -> BoxFuture<'static, Result<Value, ToolError>>;
}

impl<F, Fut, Args, Out, E> ToolFunction<(ToolContext, Args)> for F
where
    F: Fn(ToolContext, Args) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Out, E>> + Send + 'static,
    Args: DeserializeOwned + JsonSchema + Send + 'static,
    Out: Serialize + 'static,
    E: Into<BoxError> + 'static,
{
    type Args = Args;

    fn call(&self, ctx: ToolContext, args: Args) -> BoxFuture<'static, Result<Value, ToolError>> {
        self(ctx, args).map(into_response).boxed()
    }
}

impl<F, Fut, Args, Out, E> ToolFunction<(Args,)> for F
where
    F: Fn(Args) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Out, E>> + Send + 'static,
    Args: DeserializeOwned + JsonSchema + Send + 'static,
    Out: Serialize + 'static,
    E: Into<BoxError> + 'static,
{
    type Args = Args;

    fn call(&self, _ctx: ToolContext, args: Args) -> BoxFuture<'static, Result<Value, ToolError>> {
        self(args).map(into_response).boxed()
    }
}

/// The function's output as JSON, or its error as a [`ToolError`] whose message the model reads.
fn into_response<Out: Serialize, E: Into<BoxError>>(
    result: Result<Out, E>,
) -> Result<Value, ToolError> {
    match result {
        Ok(output) => serde_json::to_value(output).map_err(|error| {
            ToolError::new(
                ToolErrorKind::Serialization,
                format!("the tool's result could not be turned into JSON: {error}"),
            )
            .with_source(error)
        }),
        Err(error) => {
            let error = error.into();
            Err(ToolError::new(ToolErrorKind::Failed, error.to_string()).with_source(error))
        }
    }
}
