//! [`ClosureTool`] and [`AsyncTool`]: tools whose body is a closure, for tests that need a tool
//! without writing a type for it.

use std::sync::Arc;

use adk_core::{FunctionDeclaration, Result};
use adk_tool::{Tool, ToolContext};
use async_trait::async_trait;
use serde_json::{Value, json};

type Body = dyn Fn(&ToolContext, Value) -> Result<Value> + Send + Sync;

/// A tool named as asked whose run is a closure of its context and arguments; it takes any object
/// as arguments.
///
/// ```
/// use adk_test::ClosureTool;
/// use serde_json::json;
///
/// let weather = ClosureTool::shared("get_weather", |_ctx, args| {
///     Ok(json!({"weather": "sunny", "city": args["city"]}))
/// });
/// let approval = ClosureTool::long_running("ask_approval", |_ctx, _args| Ok(json!(null)));
/// assert!(approval.is_long_running() && !weather.is_long_running());
/// ```
pub struct ClosureTool {
    name: String,
    long_running: bool,
    body: Arc<Body>,
}

impl ClosureTool {
    /// A tool named `name` that runs `body`.
    pub fn shared(
        name: &str,
        body: impl Fn(&ToolContext, Value) -> Result<Value> + Send + Sync + 'static,
    ) -> Arc<dyn Tool> {
        Arc::new(Self {
            name: name.to_owned(),
            long_running: false,
            body: Arc::new(body),
        })
    }

    /// A long-running tool named `name` that runs `body`; a `null` result means "no answer yet".
    pub fn long_running(
        name: &str,
        body: impl Fn(&ToolContext, Value) -> Result<Value> + Send + Sync + 'static,
    ) -> Arc<dyn Tool> {
        Arc::new(Self {
            name: name.to_owned(),
            long_running: true,
            body: Arc::new(body),
        })
    }
}

#[async_trait]
impl Tool for ClosureTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        "a test tool"
    }

    fn declaration(&self) -> Option<FunctionDeclaration> {
        Some(
            FunctionDeclaration::new(&self.name, "a test tool")
                .with_parameters(json!({"type": "object"})),
        )
    }

    fn is_long_running(&self) -> bool {
        self.long_running
    }

    async fn run(&self, ctx: ToolContext, args: Value) -> Result<Value> {
        (self.body)(&ctx, args)
    }
}

/// A tool named as asked whose run awaits an async closure without arguments (a tool that waits
/// for a signal, or never finishes).
///
/// ```
/// use adk_test::AsyncTool;
/// use adk_tool::Tool as _;
///
/// let forever = AsyncTool::shared("wait", std::future::pending);
/// assert_eq!(forever.name(), "wait");
/// ```
pub struct AsyncTool<F> {
    name: String,
    body: F,
}

impl<F, Fut> AsyncTool<F>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Value>> + Send + 'static,
{
    /// A tool named `name` that awaits `body()`.
    pub fn shared(name: &str, body: F) -> Arc<dyn Tool> {
        Arc::new(Self {
            name: name.to_owned(),
            body,
        })
    }
}

#[async_trait]
impl<F, Fut> Tool for AsyncTool<F>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Value>> + Send + 'static,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        "an async test tool"
    }

    fn declaration(&self) -> Option<FunctionDeclaration> {
        Some(FunctionDeclaration::new(&self.name, "an async test tool"))
    }

    async fn run(&self, _ctx: ToolContext, _args: Value) -> Result<Value> {
        (self.body)().await
    }
}
