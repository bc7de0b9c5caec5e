//! Checking a value against a compiled schema: every problem with the place in the value where it
//! is, or only whether there is one (for `anyOf`, `oneOf`, `not`, `if` and `contains`, and for
//! callers that ask a yes or no).
//!
//! This module walks the schema's nodes and applies the keywords that hold for any value (types,
//! `enum`, `const`, the applicators); `scalars` checks numbers and strings, `array` and `object`
//! their kinds of value, `evaluated` what the `unevaluated*` keywords leave alone, and `path`
//! names the place of a problem.

use serde_json::Value;

use super::compile::{Compiled, Keywords, Node, NodeId};
use super::json::{equal, list_alternatives, render};

/// Marks the check failed with a problem; a quiet check returns at once.
macro_rules! fail {
    ($checker:ident, $valid:ident, $path:expr, $message:expr) => {{
        $valid = false;
        match &mut $checker.problems {
            Some(problems) => problems.push(Problem {
                path: $path.render(),
                message: $message,
            }),
            None => return false,
        }
    }};
}

/// Marks the check failed when a subschema's check (which recorded its own problems) failed; a
/// quiet check returns at once.
macro_rules! apply {
    ($checker:ident, $valid:ident, $check:expr) => {{
        if !$check {
            $valid = false;
            if $checker.problems.is_none() {
                return false;
            }
        }
    }};
}

mod array;
mod evaluated;
mod object;
mod path;
mod scalars;

use path::Path;

/// How deep references and nested values may take the check; a schema that refers to itself
/// without consuming the value (`{"$ref": "#"}`) stops here instead of overflowing the stack.
const MAX_DEPTH: usize = 256;

/// One way a value breaks the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Problem {
    /// Where: `arguments` for the whole value, else a field path in backticks (`place.tags[0]`).
    pub(super) path: String,
    /// What, for the model to read.
    pub(super) message: String,
}

/// Every problem of `value` under `compiled`, in schema order.
pub(super) fn problems(compiled: &Compiled, value: &Value) -> Vec<Problem> {
    let mut checker = Checker {
        compiled,
        problems: Some(Vec::new()),
    };
    checker.node(compiled.root, value, &Path::Root, 0);
    checker.problems.unwrap_or_default()
}

/// Whether `value` follows `compiled`, stopping at the first problem.
pub(super) fn is_valid(compiled: &Compiled, value: &Value) -> bool {
    Checker::quiet(compiled).node(compiled.root, value, &Path::Root, 0)
}

/// A check in progress: it collects problems, or (quiet) stops at the first.
struct Checker<'s> {
    compiled: &'s Compiled,
    problems: Option<Vec<Problem>>,
}

impl<'s> Checker<'s> {
    fn quiet(compiled: &'s Compiled) -> Self {
        Self {
            compiled,
            problems: None,
        }
    }

    /// Whether `value` follows node `id`, without recording anything.
    fn admits(&self, id: NodeId, value: &Value, depth: usize) -> bool {
        Self::quiet(self.compiled).node(id, value, &Path::Root, depth)
    }

    fn node(&mut self, id: NodeId, value: &Value, path: &Path<'_>, depth: usize) -> bool {
        let mut valid = true;
        if depth > MAX_DEPTH {
            fail!(
                self,
                valid,
                path,
                "the schema's references nest too deeply to check this value".to_owned()
            );
            return valid;
        }
        let compiled = self.compiled;
        match &compiled.nodes[id] {
            Node::Bool(true) => {}
            Node::Bool(false) => fail!(
                self,
                valid,
                path,
                format!("no value is allowed here; {} was given", render(value))
            ),
            Node::Keywords(keywords) => {
                apply!(self, valid, self.keywords(keywords, value, path, depth + 1));
            }
        }
        valid
    }

    fn keywords(&mut self, k: &Keywords, value: &Value, path: &Path<'_>, depth: usize) -> bool {
        let mut valid = true;
        if let Some(reference) = k.reference {
            apply!(self, valid, self.node(reference, value, path, depth));
        }
        if let Some(types) = k.types
            && !types.admit(value)
        {
            let plural = if types.is_several() { "types" } else { "type" };
            fail!(
                self,
                valid,
                path,
                format!("{} is not of {plural} {}", render(value), types.describe())
            );
        }
        if let Some(options) = &k.enumeration
            && !options.iter().any(|option| equal(option, value))
        {
            fail!(
                self,
                valid,
                path,
                format!(
                    "{} is not one of {}",
                    render(value),
                    list_alternatives(options)
                )
            );
        }
        if let Some(constant) = &k.constant
            && !equal(constant, value)
        {
            fail!(
                self,
                valid,
                path,
                format!("{} was expected", render(constant))
            );
        }
        match value {
            Value::Number(_) => apply!(self, valid, self.number(k, value, path)),
            Value::String(text) => apply!(self, valid, self.string(k, value, text, path)),
            Value::Array(items) => apply!(self, valid, self.array(k, value, items, path, depth)),
            Value::Object(object) => {
                apply!(self, valid, self.object(k, value, object, path, depth));
            }
            Value::Null | Value::Bool(_) => {}
        }
        for &all in &k.all_of {
            apply!(self, valid, self.node(all, value, path, depth));
        }
        if !k.any_of.is_empty() && !k.any_of.iter().any(|&any| self.admits(any, value, depth)) {
            fail!(
                self,
                valid,
                path,
                format!(
                    "{} is not valid under any of the schemas listed in the 'anyOf' keyword",
                    render(value)
                )
            );
        }
        if !k.one_of.is_empty() {
            let matching = k
                .one_of
                .iter()
                .filter(|&&one| self.admits(one, value, depth))
                .take(2)
                .count();
            if matching != 1 {
                let how = if matching == 0 {
                    "is not valid under any"
                } else {
                    "is valid under more than one"
                };
                fail!(
                    self,
                    valid,
                    path,
                    format!(
                        "{} {how} of the schemas listed in the 'oneOf' keyword",
                        render(value)
                    )
                );
            }
        }
        if let Some(not) = k.not
            && self.admits(not, value, depth)
        {
            fail!(
                self,
                valid,
                path,
                format!("{} must not match the schema under 'not'", render(value))
            );
        }
        if let Some(condition) = k.condition {
            let branch = if self.admits(condition, value, depth) {
                k.then
            } else {
                k.otherwise
            };
            if let Some(branch) = branch {
                apply!(self, valid, self.node(branch, value, path, depth));
            }
        }
        valid
    }
}

/// `name` as a JSON string.
fn quote(name: &str) -> String {
    render(&Value::String(name.to_owned()))
}

/// `3 items`, `1 item`, `2 properties`.
fn counted(count: u64, noun: &str) -> String {
    match (count, noun) {
        (1, _) => format!("1 {noun}"),
        (_, "property") => format!("{count} properties"),
        _ => format!("{count} {noun}s"),
    }
}

/// `Additional properties are not allowed ("x" was unexpected)`, and the plural.
fn unexpected_message(kind: &str, keys: &[&str]) -> String {
    let quoted: Vec<String> = keys.iter().map(|key| quote(key)).collect();
    let verb = if keys.len() == 1 { "was" } else { "were" };
    format!(
        "{kind} properties are not allowed ({} {verb} unexpected)",
        quoted.join(", ")
    )
}
