//! The checks of objects: `required`, sizes, `properties`, `patternProperties`,
//! `additionalProperties`, `propertyNames`, the dependencies, and `unevaluatedProperties`.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::{Checker, Path, Problem, counted, quote, unexpected_message};
use crate::validate::compile::{Keywords, Node};
use crate::validate::json::render;

impl Checker<'_> {
    pub(super) fn object(
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
}
