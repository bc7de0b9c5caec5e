//! What the `unevaluated*` keywords leave alone: the properties and items that a schema and the
//! subschemas it applies in place evaluate.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::{Checker, MAX_DEPTH};
use crate::validate::compile::{Keywords, Node, NodeId};

impl Checker<'_> {
    /// Adds to `seen` the properties of `object` that `k` and the subschemas it applies in place
    /// (and that `object` follows) evaluate: what `unevaluatedProperties` leaves alone.
    pub(super) fn evaluated_properties<'v>(
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
    pub(super) fn evaluated_items(
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
pub(super) struct SeenItems {
    all: bool,
    prefix: usize,
    indices: Vec<bool>,
}

impl SeenItems {
    pub(super) fn new(length: usize) -> Self {
        Self {
            all: false,
            prefix: 0,
            indices: vec![false; length],
        }
    }

    pub(super) fn has(&self, index: usize) -> bool {
        self.all || index < self.prefix || self.indices[index]
    }
}
