//! [`FunctionTool`]: a tool made from a typed `async fn`, with a generated schema, argument
//! validation, panic capture, an optional timeout and optional user confirmation.

mod builder;
mod confirmation;
mod handler;

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use adk_core::{FunctionDeclaration, Result};
use async_trait::async_trait;
use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Map, Value};

use crate::validate::ArgumentValidator;
use crate::{Tool, ToolContext, ToolEffect, ToolError, ToolErrorKind};

pub use builder::FunctionToolBuilder;
pub use confirmation::{CONFIRMATION_REJECTED_MESSAGE, CONFIRMATION_REQUIRED_MESSAGE};
pub(crate) use confirmation::{ConfirmationGate, confirmation_gate};
pub use handler::ToolFunction;

/// What [`FunctionTool`] appends to the description of a long-running tool, so that the model does
/// not call it again while it works.
const LONG_RUNNING_NOTE: &str = "NOTE: this tool starts work that finishes later. Once it has \
                                 answered with a status, do not call it again for the same request.";

/// The body of a call, ready to run once it has a context.
type RunCall = Box<dyn FnOnce(ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> + Send>;

/// A call with its arguments parsed, ready to run.
pub(crate) struct PreparedCall {
    needs_confirmation: bool,
    run: RunCall,
}

/// A tool function with its shape erased.
type Body<Args> =
    Arc<dyn Fn(ToolContext, Args) -> BoxFuture<'static, Result<Value, ToolError>> + Send + Sync>;

/// Parses validated arguments into a [`PreparedCall`].
type Prepare = Box<dyn Fn(Value) -> Result<PreparedCall, ToolError> + Send + Sync>;

/// A tool made from an `async fn(ToolContext, Args) -> Result<Out, E>` (or without the context).
///
/// The [`#[adk::tool]`](https://docs.rs/adk/latest/adk/attr.tool.html) attribute makes one from a
/// plain `async fn`; `FunctionTool::new` takes closures and functions of an arguments struct.
///
/// The argument type's [`JsonSchema`](schemars::JsonSchema) becomes the declaration the model sees
/// (simplified for providers, see [`parameters_schema`](crate::parameters_schema)); doc comments
/// become descriptions. Before the function runs, the model's arguments are validated against the
/// schema; an invalid call returns an error naming each bad field, which the flow hands back to the
/// model so that it can correct itself. A panic in the function becomes an error too, and a
/// [timeout](FunctionToolBuilder::timeout) bounds how long it may take.
///
/// ```
/// use std::sync::Arc;
/// use adk_tool::{FunctionTool, Tool, ToolContext};
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// /// The arguments of `get_weather`.
/// #[derive(Deserialize, JsonSchema)]
/// struct WeatherArgs {
///     /// The city to report on.
///     city: String,
/// }
///
/// #[derive(Serialize)]
/// struct Weather {
///     city: String,
///     celsius: f64,
/// }
///
/// async fn get_weather(_ctx: ToolContext, args: WeatherArgs) -> Result<Weather, String> {
///     Ok(Weather { city: args.city, celsius: 21.5 })
/// }
///
/// let tool = FunctionTool::new("get_weather", "Returns the weather in a city.", get_weather);
/// let declaration = tool.declaration().unwrap();
/// assert_eq!(declaration.name, "get_weather");
/// let parameters = declaration.parameters.unwrap();
/// assert_eq!(parameters["properties"]["city"]["description"], "The city to report on.");
/// assert_eq!(parameters["required"], serde_json::json!(["city"]));
/// ```
pub struct FunctionTool {
    name: String,
    description: String,
    parameters: Option<Arc<Value>>,
    response: Option<Arc<Value>>,
    validator: Result<ArgumentValidator, ToolError>,
    prepare: Prepare,
    long_running: bool,
    effect: ToolEffect,
    timeout: Option<Duration>,
    strict: Option<bool>,
}

impl FunctionTool {
    /// A tool named `name`, described to the model by `description`, that runs `function`.
    pub fn new<F, M>(name: impl Into<String>, description: impl Into<String>, function: F) -> Self
    where
        F: ToolFunction<M>,
    {
        Self::builder(name, description, function).build()
    }

    /// Starts building a tool that runs `function`, to set a timeout, confirmation, an output
    /// schema or the long-running flag.
    pub fn builder<F, M>(
        name: impl Into<String>,
        description: impl Into<String>,
        function: F,
    ) -> FunctionToolBuilder<F::Args>
    where
        F: ToolFunction<M>,
    {
        let body: Body<F::Args> = Arc::new(move |ctx, args| function.call(ctx, args));
        FunctionToolBuilder::new(name.into(), description.into(), body)
    }

    /// The timeout of one call, if any.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Runs one call: validate, parse, confirm, then run the function under panic capture and the
    /// timeout.
    async fn call(&self, ctx: ToolContext, args: Value) -> Result<Value, ToolError> {
        let args = match args {
            Value::Null => Value::Object(Map::new()),
            args => args,
        };
        match &self.validator {
            Ok(validator) => validator.validate(&self.name, &args)?,
            Err(error) => {
                return Err(ToolError::new(error.kind(), error.message().to_owned()));
            }
        }
        let prepared = (self.prepare)(args).map_err(|error| {
            ToolError::new(
                ToolErrorKind::InvalidArguments,
                format!(
                    "Invalid arguments for tool `{}`; fix them and call it again: {}",
                    self.name,
                    error.message()
                ),
            )
            .with_source(error)
        })?;
        if let ConfirmationGate::Respond(response) =
            confirmation_gate(&ctx, &self.name, prepared.needs_confirmation)?
        {
            return Ok(response);
        }
        let running = AssertUnwindSafe((prepared.run)(ctx)).catch_unwind();
        let finished = match self.timeout {
            Some(limit) => tokio::time::timeout(limit, running)
                .await
                .map_err(|_| timed_out(&self.name, limit))?,
            None => running.await,
        };
        finished.unwrap_or_else(|payload| Err(panicked(&self.name, payload.as_ref())))
    }
}

#[async_trait]
impl Tool for FunctionTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn declaration(&self) -> Option<FunctionDeclaration> {
        let description = if self.long_running {
            format!("{}\n\n{LONG_RUNNING_NOTE}", self.description)
        } else {
            self.description.clone()
        };
        let mut declaration = FunctionDeclaration::new(&self.name, description);
        declaration.parameters = self.parameters.clone();
        declaration.response = self.response.clone();
        declaration.strict = self.strict;
        Some(declaration)
    }

    fn is_long_running(&self) -> bool {
        self.long_running
    }

    fn effect(&self) -> ToolEffect {
        self.effect
    }

    async fn run(&self, ctx: ToolContext, args: Value) -> Result<Value> {
        Ok(self.call(ctx, args).await?)
    }
}

impl fmt::Debug for FunctionTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FunctionTool")
            .field("name", &self.name)
            .field("long_running", &self.long_running)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

fn timed_out(tool_name: &str, limit: Duration) -> ToolError {
    ToolError::new(
        ToolErrorKind::Timeout,
        format!(
            "The tool `{tool_name}` did not finish within {limit:?} and was stopped. It may \
             succeed with a smaller request or later."
        ),
    )
}

fn panicked(tool_name: &str, payload: &(dyn std::any::Any + Send)) -> ToolError {
    let reason = payload
        .downcast_ref::<&str>()
        .map(|reason| (*reason).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned());
    ToolError::new(
        ToolErrorKind::Panicked,
        format!("The tool `{tool_name}` failed unexpectedly (it panicked: {reason})."),
    )
}
