//! Where an event comes from in the tree of nodes that ran: [`NodePath`] (`wf@1/classify@1`),
//! [`NodeInfo`] (the path, and whose output the event carries), and the [`Route`] a node takes.
//!
//! Every run of a node (a workflow, one of its function nodes, an agent) has a path made of one
//! `name@run_id` segment per level, the run id counting the runs of that name under the same
//! parent (`1`, `2`, ...) or naming the call that started it (a delegated task runs as
//! `researcher@<call id>`). A path is built once per node run and shared by every event of the run,
//! so stamping it on an event copies a pointer.

use std::borrow::Borrow;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The path of one node run: `/`-separated `name@run_id` segments, `""` outside every node (the
/// deprecated sequential, parallel and loop agents, and events of no node).
///
/// Cloning shares the text; the empty path holds no allocation.
///
/// ```
/// use adk_core::NodePath;
///
/// let workflow = NodePath::root("router_wf");
/// let node = workflow.child("classify", "1");
/// assert_eq!(node.as_str(), "router_wf@1/classify@1");
/// assert_eq!(node.name(), "classify");
/// assert_eq!(node.run_id(), Some("1"));
/// assert_eq!(node.parent(), workflow);
/// assert_eq!(node.static_path(), "router_wf/classify");
/// assert!(node.is_descendant_of(&workflow));
/// assert!(NodePath::default().is_empty());
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodePath(Option<Arc<str>>);

impl NodePath {
    /// The path of a root node's first run: `name@1`.
    pub fn root(name: &str) -> Self {
        Self::default().child(name, "1")
    }

    /// The path `text` as it is (`""` is the empty path).
    pub fn new(text: &str) -> Self {
        if text.is_empty() {
            Self(None)
        } else {
            Self(Some(Arc::from(text)))
        }
    }

    /// The path of run `run_id` of the node `name` below this one (`self/name@run_id`).
    pub fn child(&self, name: &str, run_id: &str) -> Self {
        let mut text = String::with_capacity(self.as_str().len() + name.len() + run_id.len() + 2);
        if !self.is_empty() {
            text.push_str(self.as_str());
            text.push('/');
        }
        text.push_str(name);
        if !run_id.is_empty() {
            text.push('@');
            text.push_str(run_id);
        }
        Self(Some(Arc::from(text)))
    }

    /// The path as text.
    pub fn as_str(&self) -> &str {
        self.0.as_deref().unwrap_or("")
    }

    /// Whether this is the empty path.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// The segments, outermost first.
    pub fn segments(&self) -> impl DoubleEndedIterator<Item = &str> {
        self.0
            .as_deref()
            .into_iter()
            .flat_map(|text| text.split('/'))
    }

    /// The last segment (`name@run_id`), `""` for the empty path.
    pub fn leaf(&self) -> &str {
        self.segments().next_back().unwrap_or("")
    }

    /// The node's name: the last segment without its run id.
    pub fn name(&self) -> &str {
        split_segment(self.leaf()).0
    }

    /// The run id of the last segment, if it has one.
    pub fn run_id(&self) -> Option<&str> {
        split_segment(self.leaf()).1
    }

    /// The path of the parent run (the empty path for a root or the empty path).
    pub fn parent(&self) -> Self {
        match self.as_str().rfind('/') {
            Some(end) => Self::new(&self.as_str()[..end]),
            None => Self::default(),
        }
    }

    /// How many segments the path has.
    pub fn depth(&self) -> usize {
        self.segments().count()
    }

    /// The path without run ids (`wf/node`), which names a node's place in the graph whatever run
    /// it is.
    pub fn static_path(&self) -> String {
        let mut text = String::with_capacity(self.as_str().len());
        for (index, segment) in self.segments().enumerate() {
            if index > 0 {
                text.push('/');
            }
            text.push_str(split_segment(segment).0);
        }
        text
    }

    /// Whether this path lies strictly below `ancestor`.
    pub fn is_descendant_of(&self, ancestor: &NodePath) -> bool {
        if ancestor.is_empty() {
            return !self.is_empty();
        }
        self.as_str()
            .strip_prefix(ancestor.as_str())
            .is_some_and(|rest| rest.starts_with('/'))
    }

    /// Whether this path is `other` or lies below it.
    pub fn is_within(&self, other: &NodePath) -> bool {
        self == other || self.is_descendant_of(other)
    }
}

/// Splits `name@run_id` at its last `@`.
fn split_segment(segment: &str) -> (&str, Option<&str>) {
    match segment.rsplit_once('@') {
        Some((name, run_id)) => (name, Some(run_id)),
        None => (segment, None),
    }
}

impl fmt::Debug for NodePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for NodePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&str> for NodePath {
    fn from(text: &str) -> Self {
        Self::new(text)
    }
}

impl From<String> for NodePath {
    fn from(text: String) -> Self {
        if text.is_empty() {
            Self(None)
        } else {
            Self(Some(Arc::from(text)))
        }
    }
}

impl PartialEq<str> for NodePath {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for NodePath {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Borrow<str> for NodePath {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl Serialize for NodePath {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for NodePath {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = Option::<std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Ok(text.map_or_else(Self::default, |text| Self::new(&text)))
    }
}

/// What an event says about the node run it comes from (ADK's `nodeInfo`).
///
/// `path` is always written (`""` when the event comes from no node); the other two only when
/// set.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct NodeInfo {
    /// The path of the node run that made the event.
    #[serde(default)]
    pub path: NodePath,
    /// The node runs whose output the event's `output` (or its content, with
    /// [`message_as_output`](Self::message_as_output)) is: the node's own path, then each ancestor
    /// that took the output as its own (a workflow takes its terminal nodes' outputs).
    #[serde(default, alias = "output_for", skip_serializing_if = "Option::is_none")]
    pub output_for: Option<Vec<NodePath>>,
    /// The event's content is the node's output (a single-turn agent's final text).
    #[serde(
        default,
        alias = "message_as_output",
        skip_serializing_if = "Option::is_none"
    )]
    pub message_as_output: Option<bool>,
}

impl NodeInfo {
    /// The info of an event of the node run at `path`.
    pub fn at(path: NodePath) -> Self {
        Self {
            path,
            ..Self::default()
        }
    }
}

/// One value a node may route by: a string, an integer or a boolean.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RouteValue {
    /// A boolean route (`true` / `false` edges).
    Bool(bool),
    /// An integer route.
    Int(i64),
    /// A named route.
    Str(String),
}

impl fmt::Display for RouteValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bool(value) => write!(f, "{value}"),
            Self::Int(value) => write!(f, "{value}"),
            Self::Str(value) => f.write_str(value),
        }
    }
}

impl From<&str> for RouteValue {
    fn from(value: &str) -> Self {
        Self::Str(value.to_owned())
    }
}

impl From<String> for RouteValue {
    fn from(value: String) -> Self {
        Self::Str(value)
    }
}

impl From<bool> for RouteValue {
    fn from(value: bool) -> Self {
        Self::Bool(value)
    }
}

impl From<i64> for RouteValue {
    fn from(value: i64) -> Self {
        Self::Int(value)
    }
}

impl From<i32> for RouteValue {
    fn from(value: i32) -> Self {
        Self::Int(value.into())
    }
}

/// The route a node takes (`actions.route`): one value, or several at once (every edge whose route
/// is among them is taken).
///
/// ```
/// use adk_core::{Route, RouteValue};
///
/// let route = Route::from("long");
/// assert!(route.matches(&RouteValue::from("long")));
/// assert_eq!(serde_json::to_string(&route).unwrap(), r#""long""#);
/// let many: Route = serde_json::from_str(r#"["a", 2, true]"#).unwrap();
/// assert!(many.matches(&RouteValue::Int(2)));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Route {
    /// One route.
    One(RouteValue),
    /// Several routes.
    Many(Vec<RouteValue>),
}

impl Route {
    /// Whether `value` is this route or one of these routes.
    pub fn matches(&self, value: &RouteValue) -> bool {
        match self {
            Self::One(one) => one == value,
            Self::Many(many) => many.contains(value),
        }
    }

    /// The route values.
    pub fn values(&self) -> &[RouteValue] {
        match self {
            Self::One(one) => std::slice::from_ref(one),
            Self::Many(many) => many,
        }
    }
}

impl<T: Into<RouteValue>> From<T> for Route {
    fn from(value: T) -> Self {
        Self::One(value.into())
    }
}

impl From<Vec<RouteValue>> for Route {
    fn from(values: Vec<RouteValue>) -> Self {
        Self::Many(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_split_into_names_and_run_ids() {
        let path = NodePath::new("coordinator@1/researcher@t1");
        assert_eq!(path.name(), "researcher");
        assert_eq!(path.run_id(), Some("t1"));
        assert_eq!(path.parent().as_str(), "coordinator@1");
        assert_eq!(path.parent().parent(), NodePath::default());
        assert_eq!(path.depth(), 2);
        assert!(!NodePath::new("coordinator@10").is_descendant_of(&NodePath::new("coordinator@1")));
        assert!(path.is_within(&path));
        assert_eq!(NodePath::default().child("a", "").as_str(), "a");
    }

    #[test]
    fn the_empty_path_is_written_as_an_empty_string_and_read_back() {
        let info = NodeInfo::default();
        assert_eq!(serde_json::to_value(&info).unwrap(), json!({"path": ""}));
        let read: NodeInfo = serde_json::from_value(json!({"path": null})).unwrap();
        assert!(read.path.is_empty());
        let full: NodeInfo = serde_json::from_value(
            json!({"path": "wf@1/a@1", "output_for": ["wf@1/a@1", "wf@1"], "messageAsOutput": true}),
        )
        .unwrap();
        assert_eq!(full.output_for.as_ref().unwrap()[1], "wf@1");
        assert_eq!(
            serde_json::to_value(&full).unwrap(),
            json!({"path": "wf@1/a@1", "outputFor": ["wf@1/a@1", "wf@1"], "messageAsOutput": true})
        );
    }

    #[test]
    fn routes_read_every_form_adk_writes() {
        for (text, expected) in [
            (json!(true), Route::One(RouteValue::Bool(true))),
            (json!(3), Route::One(RouteValue::Int(3))),
            (json!("x"), Route::One(RouteValue::from("x"))),
            (
                json!(["x", false]),
                Route::Many(vec![RouteValue::from("x"), RouteValue::Bool(false)]),
            ),
        ] {
            let route: Route = serde_json::from_value(text.clone()).unwrap();
            assert_eq!(route, expected);
            assert_eq!(serde_json::to_value(&route).unwrap(), text);
        }
    }
}
