//! [`NodeContext`]: what a running node sees and does: its input's invocation, its path and run
//! id, state, the answers it asked the user for, and the events it emits (each stamped with the
//! node's author, path, branch, scope, and whose output it is).

pub(crate) mod replay;
pub(crate) mod runtime;

use std::collections::BTreeMap;
use std::sync::Arc;

use adk_core::{Content, Event, FunctionCall, InvocationContext, NodePath, Part, Role, Route};
use parking_lot::Mutex;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::{Node, NodeError, NodeInput, RequestInput};
use runtime::{ChildRun, Runtime, run_child};

/// What a running node sees and does. Cheap to clone; clones are the same run.
///
/// ```no_run
/// use adk_workflow::{Node, NodeContext, NodeError, NodeOutput};
///
/// let classify = Node::function("classify", |ctx: NodeContext, text: String| async move {
///     ctx.set_state("seen", &text)?;
///     let route = if text.len() > 3 { "long" } else { "short" };
///     Ok::<_, NodeError>(NodeOutput::value(text).route(route))
/// });
/// # let _ = classify;
/// ```
#[derive(Clone)]
pub struct NodeContext {
    inner: Arc<Inner>,
}

struct Inner {
    invocation: InvocationContext,
    node: Node,
    run_id: String,
    /// The author of the node's events: the enclosing workflow's name.
    author: Arc<str>,
    /// Whether the node's events keep the author they were made with (agent nodes).
    keeps_event_author: bool,
    output_for_ancestors: Vec<NodePath>,
    resume_inputs: BTreeMap<String, Value>,
    attempt: u32,
    runtime: Arc<Runtime>,
    run: Mutex<RunState>,
}

/// What the node run produced so far.
#[derive(Default)]
pub(crate) struct RunState {
    pub(crate) output: Option<Value>,
    output_emitted: bool,
    output_delegated: bool,
    pub(crate) route: Option<Route>,
    route_emitted: bool,
    pub(crate) interrupts: Vec<String>,
    state_delta: Map<String, Value>,
    pub(crate) transfer_to_agent: Option<String>,
}

/// How a node run is placed: everything [`NodeContext::new`] needs besides the invocation.
pub(crate) struct Placement {
    pub(crate) node: Node,
    pub(crate) run_id: String,
    pub(crate) author: Arc<str>,
    pub(crate) keeps_event_author: bool,
    pub(crate) output_for_ancestors: Vec<NodePath>,
    pub(crate) resume_inputs: BTreeMap<String, Value>,
    pub(crate) attempt: u32,
}

impl NodeContext {
    pub(crate) fn new(
        invocation: InvocationContext,
        placement: Placement,
        runtime: Arc<Runtime>,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                invocation,
                node: placement.node,
                run_id: placement.run_id,
                author: placement.author,
                keeps_event_author: placement.keeps_event_author,
                output_for_ancestors: placement.output_for_ancestors,
                resume_inputs: placement.resume_inputs,
                attempt: placement.attempt,
                runtime,
                run: Mutex::new(RunState::default()),
            }),
        }
    }

    /// The invocation, with this node's path, branch and isolation scope.
    pub fn invocation(&self) -> &InvocationContext {
        &self.inner.invocation
    }

    /// The node being run.
    pub fn node(&self) -> &Node {
        &self.inner.node
    }

    /// This run's path (`wf@1/classify@1`).
    pub fn node_path(&self) -> &NodePath {
        self.inner.invocation.node_path()
    }

    /// This run's id: `1`, `2`, ... for the runs of this node under its parent, or the id the
    /// caller gave it.
    pub fn run_id(&self) -> &str {
        &self.inner.run_id
    }

    /// Which attempt this is (1 for the first; more when the node is retried).
    pub fn attempt(&self) -> u32 {
        self.inner.attempt
    }

    /// The branch this run's events go to.
    pub fn branch(&self) -> Option<&str> {
        self.inner.invocation.branch()
    }

    /// The state's value of `key`, with this run's own changes.
    pub fn state(&self, key: &str) -> Option<Value> {
        if let Some(value) = self.inner.run.lock().state_delta.get(key) {
            return Some(value.clone());
        }
        self.inner
            .invocation
            .with_session(|session| session.state.get(key).cloned())
    }

    /// Sets state `key` to `value`; the change travels with the node's next event.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Serialization`](adk_core::ErrorKind::Serialization) when `value` cannot be
    /// written as JSON (a map whose keys are not strings, say); the state is then unchanged.
    pub fn set_state(&self, key: impl Into<String>, value: impl Serialize) -> adk_core::Result<()> {
        let value = serde_json::to_value(value)?;
        self.inner.run.lock().state_delta.insert(key.into(), value);
        Ok(())
    }

    /// The user's answer to the question `interrupt_id` this node asked, when it is being
    /// resumed with it.
    pub fn resume_input(&self, interrupt_id: &str) -> Option<&Value> {
        self.inner.resume_inputs.get(interrupt_id)
    }

    /// Every answer this node is resumed with, by question id.
    pub fn resume_inputs(&self) -> &BTreeMap<String, Value> {
        &self.inner.resume_inputs
    }

    /// Sets the route the node takes; it is sent with the node's output event, or in an event of
    /// its own when the node emits none.
    pub fn set_route(&self, route: impl Into<Route>) {
        let mut run = self.inner.run.lock();
        run.route = Some(route.into());
        run.route_emitted = false;
    }

    /// Sets the node's output without emitting it now: it is emitted when the node returns.
    pub fn set_output(&self, output: impl Serialize) {
        let value = serde_json::to_value(output).unwrap_or(Value::Null);
        if !value.is_null() {
            self.inner.run.lock().output = Some(value);
        }
    }

    /// A new event of this node (author, path, branch and scope filled in when it is emitted).
    pub fn new_event(&self) -> Event {
        self.inner.invocation.new_event()
    }

    /// Emits the node's output now.
    ///
    /// # Errors
    ///
    /// When the run was dropped while the event waited to be taken.
    pub async fn output(&self, output: impl Serialize) -> Result<(), NodeError> {
        let value = serde_json::to_value(output).unwrap_or(Value::Null);
        if value.is_null() {
            return self.flush_state().await;
        }
        let event = self.new_event().with_output(value);
        self.emit(event).await
    }

    /// Emits the state changes made so far in an event of their own, if there are any.
    pub(crate) async fn flush_state(&self) -> Result<(), NodeError> {
        if self.inner.run.lock().state_delta.is_empty() {
            return Ok(());
        }
        self.emit(self.new_event()).await
    }

    /// Asks the user for input: emits an `adk_request_input` call whose id is the question's id
    /// and waits for nothing; the workflow pauses at this node, and resumes it when the user's
    /// function response arrives.
    ///
    /// # Errors
    ///
    /// When the run was dropped.
    pub async fn request_input(&self, request: RequestInput) -> Result<(), NodeError> {
        let id = request.interrupt_id.clone();
        let call = FunctionCall::new(
            crate::REQUEST_INPUT_FUNCTION,
            Value::Object(request.to_args()),
        )
        .with_id(id.clone());
        let mut event = self
            .new_event()
            .with_content(Content::new(Role::Model, [Part::function_call(call)]));
        event.long_running_tool_ids = Some(vec![id.into()]);
        self.emit(event).await
    }

    /// Emits `event` as this node's: stamps it with the node's author, invocation, path, branch
    /// and scope, the node's pending state changes, and whose output it carries; then waits until
    /// the runner took it.
    ///
    /// # Errors
    ///
    /// When the run was dropped while the event waited to be taken.
    pub async fn emit(&self, mut event: Event) -> Result<(), NodeError> {
        {
            let mut run = self.inner.run.lock();
            if event.output.is_some() && run.output_delegated {
                let has_changes = !event.actions.state_delta.is_empty()
                    || !event.actions.artifact_delta.is_empty()
                    || !run.state_delta.is_empty();
                if !has_changes {
                    return Ok(());
                }
                event.output = None;
            }
            self.track(&mut run, &event);
            self.enrich(&mut event);
            if event.node_info.message_as_output == Some(true) && event.content().is_some() {
                // The message is the output: the event does not carry it twice.
                event.output = None;
            }
            if !event.is_partial() && !run.state_delta.is_empty() {
                event
                    .actions
                    .state_delta
                    .extend(std::mem::take(&mut run.state_delta));
            }
            if event.output.is_some() {
                run.output_emitted = true;
            }
            if event.node_info.message_as_output == Some(true) {
                run.output_delegated = true;
            }
            if event.actions.route.is_some() {
                run.route_emitted = true;
            }
        }
        if self.inner.runtime.sink.send(event).await {
            Ok(())
        } else {
            Err(NodeError::new("Cancelled", "the run was dropped"))
        }
    }

    /// Records what the event says about the run's result.
    fn track(&self, run: &mut RunState, event: &Event) {
        if let Some(output) = &event.output {
            run.output = Some(output.clone());
        } else if event.node_info.message_as_output == Some(true)
            && let Some(content) = event.content()
        {
            run.output = Some(Value::String(crate::node::content_text(content)));
        }
        if let Some(ids) = &event.long_running_tool_ids {
            for id in ids {
                if !run.interrupts.iter().any(|known| known == id.as_str()) {
                    run.interrupts.push(id.as_str().to_owned());
                }
            }
        }
        let native = event.author.is_empty()
            || event.author == self.inner.node.name()
            || !self.inner.keeps_event_author;
        if native {
            if let Some(route) = &event.actions.route {
                run.route = Some(route.clone());
            }
            if let Some(target) = &event.actions.transfer_to_agent {
                run.transfer_to_agent = Some(target.clone());
            }
        }
    }

    /// Stamps the node's identity on `event`.
    fn enrich(&self, event: &mut Event) {
        let invocation = &self.inner.invocation;
        if !self.inner.keeps_event_author || event.author.is_empty() {
            event.author = self.inner.author.to_string();
        }
        event.invocation_id = invocation.invocation_id().clone();
        event.node_info.path = invocation.node_path().clone();
        if event.branch.is_none() {
            event.branch = invocation.branch().map(str::to_owned);
        }
        if event.output.is_some() {
            let mut output_for = Vec::with_capacity(1 + self.inner.output_for_ancestors.len());
            output_for.push(invocation.node_path().clone());
            output_for.extend(self.inner.output_for_ancestors.iter().cloned());
            event.node_info.output_for = Some(output_for);
        }
        if event.isolation_scope.is_none() {
            event.isolation_scope = invocation.isolation_scope().cloned();
        }
    }

    /// After the body returned: emits the output set with [`set_output`](Self::set_output), a
    /// route never sent, and state changes never sent, in one event.
    pub(crate) async fn finish(&self) -> Result<(), NodeError> {
        let event = {
            let run = self.inner.run.lock();
            let deferred_output =
                run.output.is_some() && !run.output_emitted && !run.output_delegated;
            let unsent_route = run.route.is_some() && !run.route_emitted;
            let has_changes = !run.state_delta.is_empty();
            if !deferred_output && !unsent_route && !has_changes {
                return Ok(());
            }
            let mut event = self.new_event();
            if deferred_output {
                event.output = run.output.clone();
            }
            if unsent_route {
                event.actions.route = run.route.clone();
            }
            event
        };
        self.emit(event).await
    }

    /// Marks the node's output as another node's (a dynamic node run with `use_as_output`):
    /// its own output event is not sent.
    pub(crate) fn delegate_output(&self) {
        self.inner.run.lock().output_delegated = true;
    }

    /// Records questions of the node's children that still wait for the user.
    pub(crate) fn add_interrupts(&self, ids: &[String]) {
        let mut run = self.inner.run.lock();
        for id in ids {
            if !run.interrupts.contains(id) {
                run.interrupts.push(id.clone());
            }
        }
    }

    pub(crate) fn take_result(&self) -> RunState {
        std::mem::take(&mut *self.inner.run.lock())
    }

    pub(crate) fn runtime(&self) -> &Arc<Runtime> {
        &self.inner.runtime
    }

    pub(crate) fn author(&self) -> &Arc<str> {
        &self.inner.author
    }

    pub(crate) fn output_for_ancestors(&self) -> &[NodePath] {
        &self.inner.output_for_ancestors
    }

    /// Runs `node` from inside this node as a dynamic node: a child run of this one
    /// (`<this path>/<node>@<n>`), and returns its output (`Value::Null` when it produced none).
    ///
    /// The calling node must be rerun on resume (see [`crate::NodeOptions::rerun_on_resume`]):
    /// when the child asks the user something, this node stops and runs again once the user
    /// answered, and the child's earlier results are replayed instead of run again.
    ///
    /// # Errors
    ///
    /// The child's failure; `NodeInterrupted` when the child waits for the user.
    pub async fn run_node(
        &self,
        node: impl Into<Node>,
        input: impl Into<NodeInput>,
    ) -> Result<Value, NodeError> {
        self.run_node_with(node, input, RunNodeOptions::default())
            .await
    }

    /// [`run_node`](Self::run_node) with options.
    ///
    /// # Errors
    ///
    /// As [`run_node`](Self::run_node); a configuration error for a numeric run id.
    pub async fn run_node_with(
        &self,
        node: impl Into<Node>,
        input: impl Into<NodeInput>,
        options: RunNodeOptions,
    ) -> Result<Value, NodeError> {
        let node = node.into();
        if !self.inner.node.options().rerun_on_resume {
            return Err(NodeError::new(
                "ValueError",
                format!(
                    "node '{}' runs a dynamic node, so it must be rerun on resume: a dynamic node may ask the user something, and its caller then runs again to get the answer; set rerun_on_resume(true) on it",
                    self.inner.node.name()
                ),
            ));
        }
        if let Some(run_id) = &options.run_id
            && run_id.chars().all(|c| c.is_ascii_digit())
        {
            return Err(NodeError::new(
                "ValueError",
                format!(
                    "the explicit run id \"{run_id}\" of node \"{}\" must hold a character that is not a digit, so that it cannot be mistaken for a counted run",
                    node.name()
                ),
            ));
        }
        if options.use_as_output {
            self.delegate_output();
        }
        let outcome = run_child(
            self,
            &node,
            input.into(),
            ChildRun {
                run_id: options.run_id,
                use_sub_branch: options.use_sub_branch,
                use_as_output: options.use_as_output,
                ..ChildRun::default()
            },
        )
        .await;
        if let Some(error) = outcome.error {
            return Err(error);
        }
        if !outcome.interrupts.is_empty() {
            self.inner
                .run
                .lock()
                .interrupts
                .extend(outcome.interrupts.iter().cloned());
            return Err(NodeError::interrupted());
        }
        Ok(outcome.output.unwrap_or(Value::Null))
    }
}

/// How [`NodeContext::run_node_with`] runs a dynamic node.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RunNodeOptions {
    /// The child's output is also the caller's (the caller's own output event is not sent).
    pub use_as_output: bool,
    /// An explicit run id (it must hold a character that is not a digit); by default the next
    /// number for this node under the caller.
    pub run_id: Option<String>,
    /// Runs the child on a branch of its own (`<branch>.<name>@<run>`).
    pub use_sub_branch: bool,
}

impl RunNodeOptions {
    /// The child's output is also the caller's.
    #[must_use]
    pub fn use_as_output(mut self, yes: bool) -> Self {
        self.use_as_output = yes;
        self
    }

    /// Runs the child with this run id.
    #[must_use]
    pub fn run_id(mut self, run_id: impl Into<String>) -> Self {
        self.run_id = Some(run_id.into());
        self
    }

    /// Runs the child on a branch of its own.
    #[must_use]
    pub fn use_sub_branch(mut self, yes: bool) -> Self {
        self.use_sub_branch = yes;
        self
    }
}
