//! The errors of adk-workflow: [`WorkflowError`] for a graph that cannot be built or a run that
//! cannot go on, and [`NodeError`], what a node's body fails with.

use std::fmt;

/// A boxed lower-layer error kept as the source.
type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What kind of failure a [`WorkflowError`] is.
///
/// New kinds may be added in minor releases, so match with a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WorkflowErrorKind {
    /// The graph breaks one of the rules a workflow graph must follow (no `START`, a node that
    /// cannot be reached, a cycle without a route, two nodes of one name, ...).
    Graph,
    /// A node or option is set up wrong (an explicit numeric run id, a workflow with two terminal
    /// outputs, a dynamic node run from a node that is not rerun on resume, ...).
    Config,
    /// Data a node received or produced does not fit what it expects.
    Data,
    /// A node failed after its last attempt.
    Node,
    /// A node took longer than its timeout.
    Timeout,
}

/// A workflow that cannot be built, or a run that cannot go on.
///
/// ```
/// use adk_workflow::{START, Workflow, WorkflowErrorKind};
///
/// let error = Workflow::builder("empty").build().unwrap_err();
/// assert_eq!(error.kind(), WorkflowErrorKind::Graph);
/// assert!(error.to_string().contains("START"));
/// ```
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct WorkflowError {
    kind: WorkflowErrorKind,
    message: String,
    #[source]
    source: Option<BoxError>,
}

impl WorkflowError {
    pub(crate) fn new(kind: WorkflowErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            source: None,
        }
    }

    pub(crate) fn graph(message: impl Into<String>) -> Self {
        Self::new(WorkflowErrorKind::Graph, message)
    }

    pub(crate) fn config(message: impl Into<String>) -> Self {
        Self::new(WorkflowErrorKind::Config, message)
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> WorkflowErrorKind {
        self.kind
    }
}

impl From<WorkflowError> for adk_core::Error {
    fn from(error: WorkflowError) -> Self {
        let kind = match error.kind {
            WorkflowErrorKind::Graph | WorkflowErrorKind::Config => adk_core::ErrorKind::Config,
            WorkflowErrorKind::Data => adk_core::ErrorKind::InvalidInput,
            WorkflowErrorKind::Node | WorkflowErrorKind::Timeout => adk_core::ErrorKind::Agent,
        };
        let message = error.message.clone();
        adk_core::Error::new(kind, message).with_source(error)
    }
}

/// What a node's body fails with: a code (shown as the error event's `errorCode`, as ADK shows an
/// exception's class name) and a message.
///
/// Any error converts into one, its code being its type's name (`ParseIntError`); build one with
/// [`NodeError::new`] to choose the code.
///
/// ```
/// use adk_workflow::NodeError;
///
/// let error = NodeError::new("ValueError", "attempt 1 failed");
/// assert_eq!(error.code(), "ValueError");
/// let parsed: NodeError = "x".parse::<u32>().unwrap_err().into();
/// assert_eq!(parsed.code(), "ParseIntError");
/// ```
pub struct NodeError {
    code: String,
    message: String,
    source: Option<BoxError>,
    /// The path of the node that failed, set once its error event was sent.
    node_path: Option<adk_core::NodePath>,
    /// Not a failure: a dynamic child waits for the user, so its caller stops here.
    interrupted: bool,
}

impl NodeError {
    /// An error with `code` and `message`.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
            source: None,
            node_path: None,
            interrupted: false,
        }
    }

    /// The stop of a node whose dynamic child waits for the user.
    pub(crate) fn interrupted() -> Self {
        Self {
            interrupted: true,
            ..Self::new(
                "NodeInterrupted",
                "a dynamic node waits for the user's input",
            )
        }
    }

    pub(crate) fn is_interrupted(&self) -> bool {
        self.interrupted
    }

    /// The error's code (its `errorCode` on the wire).
    pub fn code(&self) -> &str {
        &self.code
    }

    /// The error's message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The path of the node that raised it, once known.
    pub fn node_path(&self) -> Option<&adk_core::NodePath> {
        self.node_path.as_ref()
    }

    pub(crate) fn at(mut self, path: &adk_core::NodePath) -> Self {
        self.node_path.get_or_insert_with(|| path.clone());
        self
    }

    pub(crate) fn from_workflow(error: WorkflowError) -> Self {
        let code = match error.kind {
            WorkflowErrorKind::Graph | WorkflowErrorKind::Config => "WorkflowConfigurationError",
            WorkflowErrorKind::Data => "WorkflowDataError",
            WorkflowErrorKind::Node => "NodeError",
            WorkflowErrorKind::Timeout => "NodeTimeoutError",
        };
        Self {
            code: code.to_owned(),
            message: error.message.clone(),
            source: Some(Box::new(error)),
            node_path: None,
            interrupted: false,
        }
    }

    pub(crate) fn from_core(error: adk_core::Error) -> Self {
        Self {
            code: error.kind().as_str().to_owned(),
            message: error.message().to_owned(),
            source: Some(Box::new(error)),
            node_path: None,
            interrupted: false,
        }
    }

    /// The error as the run's error, for the runner: its message, and a kind that says whether
    /// the input or the node was at fault.
    pub(crate) fn into_core(self) -> adk_core::Error {
        let kind = match self.code.as_str() {
            "WorkflowConfigurationError" => adk_core::ErrorKind::Config,
            "WorkflowDataError" => adk_core::ErrorKind::InvalidInput,
            _ => adk_core::ErrorKind::Agent,
        };
        let message = self.message.clone();
        adk_core::Error::new(kind, message).with_source(NodeFailure(self))
    }
}

impl fmt::Debug for NodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NodeError")
            .field("code", &self.code)
            .field("message", &self.message)
            .field("node_path", &self.node_path)
            .finish()
    }
}

impl fmt::Display for NodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

/// A [`NodeError`] as a standard error, to keep as the source of the run's error. (`NodeError`
/// itself is not one, so that every error converts into it with `?`.)
#[derive(Debug)]
struct NodeFailure(NodeError);

impl fmt::Display for NodeFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for NodeFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0
            .source
            .as_deref()
            .map(|source| source as &(dyn std::error::Error + 'static))
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for NodeError {
    fn from(error: E) -> Self {
        let type_name = std::any::type_name::<E>();
        let short = type_name
            .split('<')
            .next()
            .and_then(|path| path.rsplit("::").next())
            .unwrap_or(type_name);
        Self {
            code: short.to_owned(),
            message: error.to_string(),
            source: Some(Box::new(error)),
            node_path: None,
            interrupted: false,
        }
    }
}
