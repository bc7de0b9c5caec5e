//! Checking a value against a compiled schema: every problem with the place in the value where it
//! is, or only whether there is one (for `anyOf`, `oneOf`, `not`, `if` and `contains`, and for
//! callers that ask a yes or no).

use std::collections::HashSet;
use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::compile::{Compiled, Keywords, Node, NodeId};
use super::json::{compare_numbers, equal, is_multiple_of, list_alternatives, render};

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

/// Where in the value a check is: a chain on the stack, written out only for a problem.
#[derive(Debug, Clone, Copy)]
enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl Path<'_> {
    fn render(&self) -> String {
        let mut segments = Vec::new();
        let mut at = self;
        loop {
            match at {
                Path::Root => break,
                Path::Key(parent, _) | Path::Index(parent, _) => {
                    segments.push(at);
                    at = parent;
                }
            }
        }
        if segments.is_empty() {
            return "arguments".to_owned();
        }
        let mut rendered = String::from("`");
        for segment in segments.iter().rev() {
            match segment {
                Path::Key(_, key) => {
                    if rendered.len() > 1 {
                        rendered.push('.');
                    }
                    rendered.push_str(key);
                }
                Path::Index(_, index) => {
                    let _ = write!(rendered, "[{index}]");
                }
                Path::Root => {}
            }
        }
        rendered.push('`');
        rendered
    }
}

/// A check in progress: it collects problems, or (quiet) stops at the first.
struct Checker<'s> {
    compiled: &'s Compiled,
    problems: Option<Vec<Problem>>,
}

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

    fn number(&mut self, k: &Keywords, value: &Value, path: &Path<'_>) -> bool {
        let mut valid = true;
        let Value::Number(number) = value else {
            return valid;
        };
        if let Some(divisor) = &k.multiple_of
            && !is_multiple_of(number, divisor)
        {
            fail!(
                self,
                valid,
                path,
                format!("{number} is not a multiple of {divisor}")
            );
        }
        use std::cmp::Ordering::{Equal, Greater, Less};
        let bounds = [
            (&k.minimum, [Less, Less], "less than the minimum"),
            (&k.maximum, [Greater, Greater], "greater than the maximum"),
            (
                &k.exclusive_minimum,
                [Less, Equal],
                "less than or equal to the minimum",
            ),
            (
                &k.exclusive_maximum,
                [Greater, Equal],
                "greater than or equal to the maximum",
            ),
        ];
        for (bound, refused, words) in bounds {
            if let Some(bound) = bound
                && refused.contains(&compare_numbers(number, bound))
            {
                fail!(self, valid, path, format!("{number} is {words} of {bound}"));
            }
        }
        valid
    }

    fn string(&mut self, k: &Keywords, value: &Value, text: &str, path: &Path<'_>) -> bool {
        let mut valid = true;
        if k.min_length.is_some() || k.max_length.is_some() {
            let length = text.chars().count() as u64;
            if let Some(min) = k.min_length
                && length < min
            {
                fail!(
                    self,
                    valid,
                    path,
                    format!(
                        "{} is shorter than {}",
                        render(value),
                        counted(min, "character")
                    )
                );
            }
            if let Some(max) = k.max_length
                && length > max
            {
                fail!(
                    self,
                    valid,
                    path,
                    format!(
                        "{} is longer than {}",
                        render(value),
                        counted(max, "character")
                    )
                );
            }
        }
        if let Some(pattern) = &k.pattern
            && !pattern.regex.is_match(text)
        {
            fail!(
                self,
                valid,
                path,
                format!("{} does not match {:?}", render(value), pattern.source)
            );
        }
        valid
    }

    fn array(
        &mut self,
        k: &Keywords,
        value: &Value,
        items: &[Value],
        path: &Path<'_>,
        depth: usize,
    ) -> bool {
        let mut valid = true;
        let length = items.len() as u64;
        if let Some(min) = k.min_items
            && length < min
        {
            fail!(
                self,
                valid,
                path,
                format!("{} has fewer than {}", render(value), counted(min, "item"))
            );
        }
        if let Some(max) = k.max_items
            && length > max
        {
            fail!(
                self,
                valid,
                path,
                format!("{} has more than {}", render(value), counted(max, "item"))
            );
        }
        if k.unique_items
            && items
                .iter()
                .enumerate()
                .any(|(index, item)| items[..index].iter().any(|seen| equal(seen, item)))
        {
            fail!(
                self,
                valid,
                path,
                format!("{} has non-unique elements", render(value))
            );
        }
        for (index, item) in items.iter().enumerate() {
            let schema = k
                .prefix_items
                .get(index)
                .copied()
                .or(k.items.filter(|_| index >= k.prefix_items.len()));
            if let Some(schema) = schema {
                apply!(
                    self,
                    valid,
                    self.node(schema, item, &Path::Index(path, index), depth)
                );
            }
        }
        if let Some(contains) = k.contains {
            let matching = items
                .iter()
                .filter(|item| self.admits(contains, item, depth))
                .count() as u64;
            let min = k.min_contains.unwrap_or(1);
            if matching < min {
                let message = if k.min_contains.is_none() {
                    format!(
                        "{} has no item that matches the schema under 'contains'",
                        render(value)
                    )
                } else {
                    format!(
                        "{} has {matching} items that match the schema under 'contains', fewer than {min}",
                        render(value)
                    )
                };
                fail!(self, valid, path, message);
            }
            if let Some(max) = k.max_contains
                && matching > max
            {
                fail!(
                    self,
                    valid,
                    path,
                    format!(
                        "{} has {matching} items that match the schema under 'contains', more than {max}",
                        render(value)
                    )
                );
            }
        }
        if let Some(unevaluated) = k.unevaluated_items {
            let mut seen = SeenItems::new(items.len());
            self.evaluated_items(k, value, items, depth, false, &mut seen);
            for (index, item) in items.iter().enumerate() {
                if !seen.has(index) {
                    apply!(
                        self,
                        valid,
                        self.node(unevaluated, item, &Path::Index(path, index), depth)
                    );
                }
            }
        }
        valid
    }

    fn object(
        &mut self,
        k: &Keywords,
        value: &Value,
        object: &Map<String, Value>,
        path: &Path<'_>,
        depth: usize,
    ) -> bool {
        let mut valid = true;
        for name in &k.required {
            if !object.contains_key(name) {
                fail!(
                    self,
                    valid,
                    path,
                    format!("{} is a required property", quote(name))
                );
            }
        }
        let length = object.len() as u64;
        if let Some(min) = k.min_properties
            && length < min
        {
            fail!(
                self,
                valid,
                path,
                format!(
                    "{} has fewer than {}",
                    render(value),
                    counted(min, "property")
                )
            );
        }
        if let Some(max) = k.max_properties
            && length > max
        {
            fail!(
                self,
                valid,
                path,
                format!(
                    "{} has more than {}",
                    render(value),
                    counted(max, "property")
                )
            );
        }
        let mut unexpected = Vec::new();
        for (key, item) in object {
            let at = Path::Key(path, key);
            let mut matched = false;
            if let Some(&schema) = k.properties.get(key) {
                matched = true;
                apply!(self, valid, self.node(schema, item, &at, depth));
            }
            for (pattern, schema) in &k.pattern_properties {
                if pattern.regex.is_match(key) {
                    matched = true;
                    apply!(self, valid, self.node(*schema, item, &at, depth));
                }
            }
            if let Some(additional) = k.additional_properties
                && !matched
            {
                if matches!(self.compiled.nodes[additional], Node::Bool(false)) {
                    unexpected.push(key.as_str());
                } else {
                    apply!(self, valid, self.node(additional, item, &at, depth));
                }
            }
            if let Some(names) = k.property_names {
                apply!(
                    self,
                    valid,
                    self.node(names, &Value::String(key.clone()), path, depth)
                );
            }
        }
        if !unexpected.is_empty() {
            fail!(
                self,
                valid,
                path,
                unexpected_message("Additional", &unexpected)
            );
        }
        for (name, required) in &k.dependent_required {
            if !object.contains_key(name) {
                continue;
            }
            for dependency in required {
                if !object.contains_key(dependency) {
                    fail!(
                        self,
                        valid,
                        path,
                        format!(
                            "{} is required when {} is given",
                            quote(dependency),
                            quote(name)
                        )
                    );
                }
            }
        }
        for (name, schema) in &k.dependent_schemas {
            if object.contains_key(name) {
                apply!(self, valid, self.node(*schema, value, path, depth));
            }
        }
        if let Some(unevaluated) = k.unevaluated_properties {
            let mut seen = HashSet::new();
            self.evaluated_properties(k, value, object, depth, false, &mut seen);
            let mut unexpected = Vec::new();
            for (key, item) in object {
                if seen.contains(key.as_str()) {
                    continue;
                }
                if matches!(self.compiled.nodes[unevaluated], Node::Bool(false)) {
                    unexpected.push(key.as_str());
                } else {
                    apply!(
                        self,
                        valid,
                        self.node(unevaluated, item, &Path::Key(path, key), depth)
                    );
                }
            }
            if !unexpected.is_empty() {
                fail!(
                    self,
                    valid,
                    path,
                    unexpected_message("Unevaluated", &unexpected)
                );
            }
        }
        valid
    }

    /// Adds to `seen` the properties of `object` that `k` and the subschemas it applies in place
    /// (and that `object` follows) evaluate: what `unevaluatedProperties` leaves alone.
    fn evaluated_properties<'v>(
        &self,
        k: &Keywords,
        value: &Value,
        object: &'v Map<String, Value>,
        depth: usize,
        with_unevaluated: bool,
        seen: &mut HashSet<&'v str>,
    ) {
        if depth > MAX_DEPTH {
            return;
        }
        if k.additional_properties.is_some()
            || (with_unevaluated && k.unevaluated_properties.is_some())
        {
            seen.extend(object.keys().map(String::as_str));
            return;
        }
        for key in object.keys() {
            if k.properties.contains_key(key)
                || k.pattern_properties
                    .iter()
                    .any(|(pattern, _)| pattern.regex.is_match(key))
            {
                seen.insert(key);
            }
        }
        self.in_place(k, value, depth, |checker, keywords, depth| {
            checker.evaluated_properties(keywords, value, object, depth, true, seen);
        });
    }

    /// Marks in `seen` the items of `items` that `k` and the subschemas it applies in place (and
    /// that the array follows) evaluate: what `unevaluatedItems` leaves alone.
    fn evaluated_items(
        &self,
        k: &Keywords,
        value: &Value,
        items: &[Value],
        depth: usize,
        with_unevaluated: bool,
        seen: &mut SeenItems,
    ) {
        if depth > MAX_DEPTH {
            return;
        }
        if k.items.is_some() || (with_unevaluated && k.unevaluated_items.is_some()) {
            seen.all = true;
            return;
        }
        seen.prefix = seen.prefix.max(k.prefix_items.len().min(items.len()));
        if let Some(contains) = k.contains {
            for (index, item) in items.iter().enumerate() {
                if self.admits(contains, item, depth) {
                    seen.indices[index] = true;
                }
            }
        }
        self.in_place(k, value, depth, |checker, keywords, depth| {
            checker.evaluated_items(keywords, value, items, depth, true, seen);
        });
    }

    /// Calls `visit` with each object schema that `k` applies to `value` in place and that
    /// `value` follows: `$ref`, `allOf`, the matching `anyOf` and `oneOf` branches, the branch of
    /// `if` taken (and `if` itself when it matched), and `dependentSchemas` of present keys.
    fn in_place(
        &self,
        k: &Keywords,
        value: &Value,
        depth: usize,
        mut visit: impl FnMut(&Self, &Keywords, usize),
    ) {
        let mut subschemas: Vec<NodeId> = Vec::new();
        subschemas.extend(k.reference);
        subschemas.extend(&k.all_of);
        subschemas.extend(
            k.any_of
                .iter()
                .chain(&k.one_of)
                .filter(|&&id| self.admits(id, value, depth)),
        );
        if let Some(condition) = k.condition {
            if self.admits(condition, value, depth) {
                subschemas.push(condition);
                subschemas.extend(k.then);
            } else {
                subschemas.extend(k.otherwise);
            }
        }
        if let Value::Object(object) = value {
            subschemas.extend(
                k.dependent_schemas
                    .iter()
                    .filter(|(name, _)| object.contains_key(name))
                    .map(|(_, id)| *id),
            );
        }
        for id in subschemas {
            if let Node::Keywords(keywords) = &self.compiled.nodes[id] {
                visit(self, keywords, depth + 1);
            }
        }
    }
}

/// The items of an array that some keyword evaluated.
struct SeenItems {
    all: bool,
    prefix: usize,
    indices: Vec<bool>,
}

impl SeenItems {
    fn new(length: usize) -> Self {
        Self {
            all: false,
            prefix: 0,
            indices: vec![false; length],
        }
    }

    fn has(&self, index: usize) -> bool {
        self.all || index < self.prefix || self.indices[index]
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
