//! [`ReflectAndRetryPlugin`]: turns a tool's failure into guidance that asks the model to reflect
//! and call again, up to a number of retries per tool and invocation.

use std::collections::HashMap;

use adk_core::internal::InvocationControl as _;
use adk_core::{Error, ErrorKind, Result};
use adk_flow::Plugin;
use adk_tool::{Tool, ToolContext};
use async_trait::async_trait;
use parking_lot::Mutex;
use serde_json::{Value, json};

/// The `response_type` of the guidance the plugin answers a failed call with, as ADK names it.
const GUIDANCE_RESPONSE_TYPE: &str = "ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN";

/// When a tool fails, answers the model with guidance instead of a bare error: what failed, how
/// many retries are left, and to reflect on the arguments before calling again (ADK's
/// `ReflectAndRetryToolPlugin`).
///
/// Failures are counted per tool and per invocation (in the invocation's data, so concurrent runs
/// never share counts); a success of the tool starts its count again. Past
/// [`max_retries`](Self::max_retries) failures the tool's error ends the run, so that a model
/// cannot loop on a broken tool.
///
/// ```
/// use std::sync::Arc;
/// use adk_runner::plugins::ReflectAndRetryPlugin;
///
/// let plugin = Arc::new(ReflectAndRetryPlugin::new().max_retries(2));
/// # let _ = plugin;
/// ```
#[derive(Debug, Clone)]
pub struct ReflectAndRetryPlugin {
    max_retries: u32,
}

impl Default for ReflectAndRetryPlugin {
    fn default() -> Self {
        Self { max_retries: 3 }
    }
}

impl ReflectAndRetryPlugin {
    /// A plugin that allows 3 retries per tool and invocation.
    pub fn new() -> Self {
        Self::default()
    }

    /// Allows `retries` failed calls of a tool per invocation before its error ends the run.
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.max_retries = retries;
        self
    }
}

/// The failures of each tool in one invocation.
#[derive(Default)]
struct FailureCounts(Mutex<HashMap<String, u32>>);

fn failure_counts(ctx: &ToolContext) -> std::sync::Arc<FailureCounts> {
    ctx.invocation().invocation_data::<FailureCounts>()
}

#[async_trait]
impl Plugin for ReflectAndRetryPlugin {
    fn name(&self) -> &str {
        "reflect_and_retry"
    }

    async fn after_tool(
        &self,
        tool: &dyn Tool,
        _args: &Value,
        ctx: &ToolContext,
        result: &Value,
    ) -> Result<Option<Value>> {
        // After-tool hooks also see the guidance this plugin answered a failure with; only a real
        // result of the tool starts its count again.
        if result.get("response_type") != Some(&Value::from(GUIDANCE_RESPONSE_TYPE)) {
            failure_counts(ctx).0.lock().remove(tool.name());
        }
        Ok(None)
    }

    async fn on_tool_error(
        &self,
        tool: &dyn Tool,
        args: &Value,
        ctx: &ToolContext,
        error: &Error,
    ) -> Result<Option<Value>> {
        let failures = {
            let counts = failure_counts(ctx);
            let mut counts = counts.0.lock();
            let failures = counts.entry(tool.name().to_owned()).or_default();
            *failures += 1;
            *failures
        };
        if failures > self.max_retries {
            return Err(Error::new(
                ErrorKind::Tool,
                format!(
                    "tool '{}' failed {failures} times in this invocation, more than the {} retries allowed; last error: {}",
                    tool.name(),
                    self.max_retries,
                    error.message()
                ),
            ));
        }
        let retries_left = self.max_retries - failures + 1;
        Ok(Some(json!({
            "response_type": GUIDANCE_RESPONSE_TYPE,
            "error_type": error.kind().as_str(),
            "error_details": error.message(),
            "retry_count": failures,
            "reflection_guidance": format!(
                "The call to `{}` with arguments {args} failed: {}. Reflect on why: check the \
                 arguments against the tool's description and schema, and whether another tool \
                 fits better. Then call again with corrected arguments, or answer without the \
                 tool. {retries_left} attempt(s) left.",
                tool.name(),
                error.message()
            ),
        })))
    }
}
