//! Function nodes: an async function or closure of the node's typed input (and, when it asks for
//! it, the [`NodeContext`]) whose result is the node's output.

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use adk_core::{Content, Route};
use futures::future::BoxFuture;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{NodeKind, NodeOptions, RunNode};
use crate::{Node, NodeContext, NodeError, NodeInput, RequestInput};

/// What a function node produces: an output value with an optional route, a message, a question
/// for the user, or nothing. Any serializable value converts into an output (`null` and `()` into
/// nothing).
///
/// ```
/// use adk_workflow::NodeOutput;
/// use serde_json::json;
///
/// let routed = NodeOutput::value(json!({"text": "hello"})).route("long");
/// # let _ = routed;
/// ```
#[derive(Debug, Clone, Default)]
pub struct NodeOutput {
    value: Option<Value>,
    route: Option<Route>,
    content: Option<Content>,
    request: Option<RequestInput>,
}

impl NodeOutput {
    /// The output `value`.
    pub fn value(value: impl Serialize) -> Self {
        let value = serde_json::to_value(value).unwrap_or(Value::Null);
        Self {
            value: (!value.is_null()).then_some(value),
            ..Self::default()
        }
    }

    /// No output (state changes made through the context are still sent).
    pub fn none() -> Self {
        Self::default()
    }

    /// A message event instead of an output (ADK's function returning a `Content`).
    pub fn content(content: Content) -> Self {
        Self {
            content: Some(content),
            ..Self::default()
        }
    }

    /// A question for the user: the workflow waits at this node for the answer.
    pub fn request_input(request: RequestInput) -> Self {
        Self {
            request: Some(request),
            ..Self::default()
        }
    }

    /// Takes the edges of `route` from this node.
    #[must_use]
    pub fn route(mut self, route: impl Into<Route>) -> Self {
        self.route = Some(route.into());
        self
    }

    /// Emits what this output says, as the node's.
    pub(crate) async fn emit(self, ctx: &NodeContext) -> Result<(), NodeError> {
        if let Some(request) = self.request {
            return ctx.request_input(request).await;
        }
        if self.value.is_none() && self.content.is_none() && self.route.is_none() {
            return ctx.flush_state().await;
        }
        let mut event = ctx.new_event();
        event.output = self.value;
        event.response.content = self.content;
        event.actions.route = self.route;
        ctx.emit(event).await
    }
}

/// What a function node's function may return: a [`NodeOutput`], a [`RequestInput`], or any
/// serializable value (its output).
pub trait IntoNodeOutput {
    /// The node output this is.
    fn into_node_output(self) -> NodeOutput;
}

impl<T: Serialize> IntoNodeOutput for T {
    fn into_node_output(self) -> NodeOutput {
        NodeOutput::value(self)
    }
}

impl IntoNodeOutput for NodeOutput {
    fn into_node_output(self) -> NodeOutput {
        self
    }
}

impl IntoNodeOutput for RequestInput {
    fn into_node_output(self) -> NodeOutput {
        NodeOutput::request_input(self)
    }
}

/// The boxed function a function node calls.
type Call = Arc<
    dyn Fn(NodeContext, NodeInput) -> BoxFuture<'static, Result<NodeOutput, NodeError>>
        + Send
        + Sync,
>;

/// A function that can be a function node: `async fn(input: I) -> Result<O, E>` or
/// `async fn(ctx: NodeContext, input: I) -> Result<O, E>`, where `I` is read from the node's input
/// (see [`NodeInput::parse`]), `O` is what the node outputs (see [`IntoNodeOutput`]) and `E` any
/// error (see [`NodeError`]).
///
/// `Args` only tells the two forms apart; it is inferred.
pub trait IntoFunctionNode<Args>: Send + Sync + 'static {
    /// The function as a boxed call.
    #[doc(hidden)]
    fn into_call(self) -> Call;
}

impl<F, Fut, I, O, E> IntoFunctionNode<(PhantomData<I>,)> for F
where
    F: Fn(I) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, E>> + Send + 'static,
    I: DeserializeOwned + Send + 'static,
    O: IntoNodeOutput + 'static,
    E: Into<NodeError> + 'static,
{
    fn into_call(self) -> Call {
        Arc::new(move |_ctx, input| {
            let parsed = input.parse::<I>();
            let future = parsed.map(&self);
            Box::pin(async move {
                let output = future?.await.map_err(Into::into)?;
                Ok(output.into_node_output())
            })
        })
    }
}

impl<F, Fut, I, O, E> IntoFunctionNode<(NodeContext, PhantomData<I>)> for F
where
    F: Fn(NodeContext, I) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, E>> + Send + 'static,
    I: DeserializeOwned + Send + 'static,
    O: IntoNodeOutput + 'static,
    E: Into<NodeError> + 'static,
{
    fn into_call(self) -> Call {
        Arc::new(move |ctx, input| {
            let future = input.parse::<I>().map(|input| self(ctx, input));
            Box::pin(async move {
                let output = future?.await.map_err(Into::into)?;
                Ok(output.into_node_output())
            })
        })
    }
}

/// The node behind [`Node::function`]: it runs a function.
pub struct FunctionNode {
    call: Call,
}

impl RunNode for FunctionNode {
    fn run<'a>(
        &'a self,
        ctx: &'a NodeContext,
        input: NodeInput,
    ) -> BoxFuture<'a, Result<(), NodeError>> {
        Box::pin(async move {
            let output = (self.call)(ctx.clone(), input).await?;
            output.emit(ctx).await
        })
    }

    fn kind(&self) -> NodeKind {
        NodeKind::Function
    }
}

impl Node {
    /// A function node: `function` runs on the node's input and its result is the node's output.
    ///
    /// ```
    /// use adk_workflow::{Node, NodeContext, NodeError, NodeOutput};
    ///
    /// // Typed input and output.
    /// let upper = Node::function("upper", |text: String| async move {
    ///     Ok::<_, NodeError>(text.to_uppercase())
    /// });
    /// // With the context: state, routes, dynamic nodes.
    /// let route = Node::function("route", |ctx: NodeContext, text: String| async move {
    ///     ctx.set_state("last", &text)?;
    ///     let route = if text.starts_with('A') { "a" } else { "b" };
    ///     Ok::<_, NodeError>(NodeOutput::value(text).route(route))
    /// });
    /// # let _ = (upper, route);
    /// ```
    pub fn function<Args>(name: impl Into<String>, function: impl IntoFunctionNode<Args>) -> Self {
        Self::from_parts(
            name.into(),
            NodeOptions::default(),
            Arc::new(FunctionNode {
                call: function.into_call(),
            }),
        )
    }
}
