//! [`FunctionToolBuilder`]: the settings of a [`FunctionTool`] besides its function.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{Body, FunctionTool, PreparedCall};
use crate::schema::{is_empty_object, parameters_schema, validation_schema};
use crate::validate::ArgumentValidator;
use crate::{ToolEffect, ToolError, ToolErrorKind};

/// When a call needs the user's confirmation.
enum Confirmation<Args> {
    Never,
    Always,
    When(Arc<dyn Fn(&Args) -> bool + Send + Sync>),
}

/// Builds a [`FunctionTool`]; made by [`FunctionTool::builder`].
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use adk_tool::{FunctionTool, Tool, ToolContext};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Transfer {
///     /// The amount, in euros.
///     amount: u32,
///     recipient: String,
/// }
///
/// async fn transfer(_ctx: ToolContext, args: Transfer) -> Result<String, String> {
///     Ok(format!("sent {} to {}", args.amount, args.recipient))
/// }
///
/// let tool = FunctionTool::builder("transfer", "Sends money.", transfer)
///     .timeout(Duration::from_secs(10))
///     .require_confirmation_if(|args: &Transfer| args.amount >= 100)
///     .build();
/// assert_eq!(tool.name(), "transfer");
/// ```
#[must_use]
pub struct FunctionToolBuilder<Args> {
    name: String,
    description: String,
    function: Body<Args>,
    response: Option<Value>,
    long_running: bool,
    effect: ToolEffect,
    timeout: Option<Duration>,
    confirmation: Confirmation<Args>,
    strict: Option<bool>,
    args: PhantomData<fn(Args)>,
}

impl<Args> FunctionToolBuilder<Args>
where
    Args: DeserializeOwned + JsonSchema + Send + 'static,
{
    pub(super) fn new(name: String, description: String, function: Body<Args>) -> Self {
        Self {
            name,
            description,
            function,
            response: None,
            long_running: false,
            effect: ToolEffect::Effectful,
            timeout: None,
            confirmation: Confirmation::Never,
            strict: None,
            args: PhantomData,
        }
    }

    /// Declares the schema of the result, generated from `Out`.
    pub fn output_schema<Out: JsonSchema>(mut self) -> Self {
        self.response = Some(parameters_schema::<Out>());
        self
    }

    /// Marks the tool as long-running: it starts work that finishes later, its call gets no
    /// response in this turn, and its description tells the model not to call it again.
    pub fn long_running(mut self, long_running: bool) -> Self {
        self.long_running = long_running;
        self
    }

    /// Declares what running the tool does outside the session (see [`ToolEffect`]). A function
    /// tool is [`ToolEffect::Effectful`] unless told otherwise: an interrupted call of it is
    /// never run again without the user's decision. Declare a lookup
    /// [`ToolEffect::ReadOnly`], and a tool that passes
    /// [`ToolContext::idempotency_key`](crate::ToolContext::idempotency_key) to the API it calls
    /// [`ToolEffect::Idempotent`].
    ///
    /// ```
    /// use adk_tool::{FunctionTool, Tool, ToolEffect};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Args { city: String }
    ///
    /// async fn get_weather(args: Args) -> Result<String, String> {
    ///     Ok(format!("sunny in {}", args.city))
    /// }
    ///
    /// let tool = FunctionTool::builder("get_weather", "Reports the weather.", get_weather)
    ///     .effect(ToolEffect::ReadOnly)
    ///     .build();
    /// assert_eq!(tool.effect(), ToolEffect::ReadOnly);
    /// ```
    pub fn effect(mut self, effect: ToolEffect) -> Self {
        self.effect = effect;
        self
    }

    /// Asks the provider to make the arguments follow the schema exactly (OpenAI's `strict`
    /// function calling) for this tool, or not, whatever the model adapter's default.
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = Some(strict);
        self
    }

    /// Stops a call that takes longer than `limit`; the model is told it timed out.
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// Whether every call needs the user's confirmation before it runs.
    pub fn require_confirmation(mut self, required: bool) -> Self {
        self.confirmation = if required {
            Confirmation::Always
        } else {
            Confirmation::Never
        };
        self
    }

    /// Calls whose arguments satisfy `predicate` need the user's confirmation before they run.
    pub fn require_confirmation_if(
        mut self,
        predicate: impl Fn(&Args) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.confirmation = Confirmation::When(Arc::new(predicate));
        self
    }

    /// Builds the tool.
    pub fn build(self) -> FunctionTool {
        let parameters = parameters_schema::<Args>();
        let validator = ArgumentValidator::new(&validation_schema::<Args>());
        let function = self.function;
        let confirmation = self.confirmation;
        let prepare = move |args: Value| {
            let args: Args = serde_json::from_value(args).map_err(|error| {
                ToolError::new(ToolErrorKind::InvalidArguments, error.to_string())
                    .with_source(error)
            })?;
            let needs_confirmation = match &confirmation {
                Confirmation::Never => false,
                Confirmation::Always => true,
                Confirmation::When(predicate) => predicate(&args),
            };
            let function = function.clone();
            Ok(PreparedCall {
                needs_confirmation,
                run: Box::new(move |ctx| function(ctx, args)),
            })
        };
        FunctionTool {
            name: self.name,
            description: self.description,
            parameters: (!is_empty_object(&parameters)).then(|| Arc::new(parameters)),
            response: self.response.map(Arc::new),
            validator,
            prepare: Box::new(prepare),
            long_running: self.long_running,
            effect: self.effect,
            timeout: self.timeout,
            strict: self.strict,
        }
    }
}

impl<Args> fmt::Debug for FunctionToolBuilder<Args> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FunctionToolBuilder")
            .field("name", &self.name)
            .field("long_running", &self.long_running)
            .field("effect", &self.effect)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}
