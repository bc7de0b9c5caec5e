//! Compiling a JSON Schema into the tree of nodes that `check` walks: JSON Schema draft 2020-12,
//! with draft 7's spellings (`definitions`, `dependencies`, `items` as a list, `additionalItems`)
//! and draft 4's boolean `exclusiveMinimum`/`exclusiveMaximum` read as their authors meant them.
//!
//! Every subschema is compiled once, keyed by its JSON pointer, so that `$ref`s to the same
//! definition share a node and a recursive definition becomes a cycle in the tree. References
//! reach inside the document only (`#`, `#/$defs/place`); a remote one is refused when the
//! validator is built, as are `$dynamicRef` and `$recursiveRef`. Keywords that assert nothing
//! (`title`, `description`, `format`, `default`, OpenAPI's `nullable`, ...) are read past.

use std::collections::{BTreeMap, HashMap};

use regex_lite::Regex;
use serde_json::{Map, Number, Value};

use super::json::{Types, render};

/// The index of a node in [`Compiled::nodes`].
pub(super) type NodeId = usize;

/// A compiled schema: its nodes and the root's index.
#[derive(Debug)]
pub(super) struct Compiled {
    pub(super) nodes: Vec<Node>,
    pub(super) root: NodeId,
}

/// One subschema.
#[derive(Debug)]
pub(super) enum Node {
    /// `true` admits every value, `false` none.
    Bool(bool),
    /// An object schema's assertions and applicators.
    Keywords(Box<Keywords>),
}

/// A pattern with the text it was compiled from, for messages.
#[derive(Debug)]
pub(super) struct Pattern {
    pub(super) source: String,
    pub(super) regex: Regex,
}

/// The keywords of one object schema that assert or apply something.
#[derive(Debug, Default)]
pub(super) struct Keywords {
    pub(super) reference: Option<NodeId>,
    pub(super) types: Option<Types>,
    pub(super) enumeration: Option<Vec<Value>>,
    pub(super) constant: Option<Value>,
    pub(super) multiple_of: Option<Number>,
    pub(super) minimum: Option<Number>,
    pub(super) maximum: Option<Number>,
    pub(super) exclusive_minimum: Option<Number>,
    pub(super) exclusive_maximum: Option<Number>,
    pub(super) min_length: Option<u64>,
    pub(super) max_length: Option<u64>,
    pub(super) pattern: Option<Pattern>,
    pub(super) prefix_items: Vec<NodeId>,
    pub(super) items: Option<NodeId>,
    pub(super) min_items: Option<u64>,
    pub(super) max_items: Option<u64>,
    pub(super) unique_items: bool,
    pub(super) contains: Option<NodeId>,
    pub(super) min_contains: Option<u64>,
    pub(super) max_contains: Option<u64>,
    pub(super) unevaluated_items: Option<NodeId>,
    pub(super) required: Vec<String>,
    pub(super) properties: BTreeMap<String, NodeId>,
    pub(super) pattern_properties: Vec<(Pattern, NodeId)>,
    pub(super) additional_properties: Option<NodeId>,
    pub(super) property_names: Option<NodeId>,
    pub(super) min_properties: Option<u64>,
    pub(super) max_properties: Option<u64>,
    pub(super) dependent_required: Vec<(String, Vec<String>)>,
    pub(super) dependent_schemas: Vec<(String, NodeId)>,
    pub(super) unevaluated_properties: Option<NodeId>,
    pub(super) all_of: Vec<NodeId>,
    pub(super) any_of: Vec<NodeId>,
    pub(super) one_of: Vec<NodeId>,
    pub(super) not: Option<NodeId>,
    pub(super) condition: Option<NodeId>,
    pub(super) then: Option<NodeId>,
    pub(super) otherwise: Option<NodeId>,
}

/// Compiles `schema`; the error says which keyword at which place is wrong.
pub(super) fn compile(schema: &Value) -> Result<Compiled, String> {
    let mut compiler = Compiler {
        document: schema,
        base: schema.get("$id").and_then(Value::as_str),
        nodes: Vec::new(),
        by_pointer: HashMap::new(),
    };
    let root = compiler.subschema(String::new())?;
    Ok(Compiled {
        nodes: compiler.nodes,
        root,
    })
}

/// The state of one compilation.
struct Compiler<'a> {
    document: &'a Value,
    /// The root's `$id`, which a reference may spell out before its `#`.
    base: Option<&'a str>,
    nodes: Vec<Node>,
    by_pointer: HashMap<String, NodeId>,
}

impl<'a> Compiler<'a> {
    /// The node of the subschema at `pointer`, compiled the first time it is asked for. The
    /// node's index is reserved before its children are compiled, so a cycle of references
    /// ends at it.
    fn subschema(&mut self, pointer: String) -> Result<NodeId, String> {
        if let Some(&id) = self.by_pointer.get(&pointer) {
            return Ok(id);
        }
        let document = self.document;
        let value = document
            .pointer(&pointer)
            .ok_or_else(|| format!("nothing is at `#{pointer}`"))?;
        let id = self.nodes.len();
        self.nodes.push(Node::Bool(true));
        self.by_pointer.insert(pointer.clone(), id);
        let node = match value {
            Value::Bool(admits) => Node::Bool(*admits),
            Value::Object(object) => Node::Keywords(Box::new(self.keywords(object, &pointer)?)),
            other => {
                return Err(format!(
                    "a schema must be an object or a boolean; `#{pointer}` is {}",
                    render(other)
                ));
            }
        };
        self.nodes[id] = node;
        Ok(id)
    }

    fn keywords(&mut self, object: &'a Map<String, Value>, at: &str) -> Result<Keywords, String> {
        let mut keywords = Keywords::default();
        let child = |keyword: &str| format!("{at}/{}", escape(keyword));
        for unsupported in ["$dynamicRef", "$recursiveRef"] {
            if object.contains_key(unsupported) {
                return Err(format!("`{unsupported}` at `#{at}` is not supported"));
            }
        }
        if let Some(reference) = object.get("$ref") {
            let reference = reference
                .as_str()
                .ok_or_else(|| format!("`$ref` at `#{at}` must be a string"))?;
            keywords.reference = Some(self.subschema(self.target(reference, at)?)?);
        }
        if let Some(types) = object.get("type") {
            keywords.types = Some(parse_types(types, at)?);
        }
        if let Some(values) = object.get("enum") {
            let values = values
                .as_array()
                .ok_or_else(|| format!("`enum` at `#{at}` must be an array"))?;
            keywords.enumeration = Some(values.clone());
        }
        keywords.constant = object.get("const").cloned();
        keywords.multiple_of = positive_number(object, "multipleOf", at)?;
        for (inclusive, exclusive, inclusive_slot, exclusive_slot) in [
            (
                "minimum",
                "exclusiveMinimum",
                &mut keywords.minimum,
                &mut keywords.exclusive_minimum,
            ),
            (
                "maximum",
                "exclusiveMaximum",
                &mut keywords.maximum,
                &mut keywords.exclusive_maximum,
            ),
        ] {
            *inclusive_slot = number(object, inclusive, at)?;
            match object.get(exclusive) {
                // Draft 4 spelled it as a flag that makes `minimum`/`maximum` exclusive.
                Some(Value::Bool(true)) => *exclusive_slot = inclusive_slot.take(),
                Some(Value::Bool(false)) | None => {}
                Some(_) => *exclusive_slot = number(object, exclusive, at)?,
            }
        }
        keywords.min_length = count(object, "minLength", at)?;
        keywords.max_length = count(object, "maxLength", at)?;
        if let Some(pattern) = object.get("pattern") {
            keywords.pattern = Some(compile_pattern(pattern, "pattern", at)?);
        }

        match object.get("items") {
            Some(Value::Array(prefix)) => {
                keywords.prefix_items = self.list(prefix.len(), &child("items"))?;
                if object.contains_key("additionalItems") {
                    keywords.items = Some(self.subschema(child("additionalItems"))?);
                }
            }
            Some(_) => keywords.items = Some(self.subschema(child("items"))?),
            None => {}
        }
        if let Some(prefix) = object.get("prefixItems") {
            let prefix = prefix
                .as_array()
                .ok_or_else(|| format!("`prefixItems` at `#{at}` must be an array"))?;
            keywords.prefix_items = self.list(prefix.len(), &child("prefixItems"))?;
        }
        keywords.min_items = count(object, "minItems", at)?;
        keywords.max_items = count(object, "maxItems", at)?;
        keywords.unique_items = object
            .get("uniqueItems")
            .is_some_and(|unique| unique == &Value::Bool(true));
        keywords.contains = self.optional(object, "contains", at)?;
        keywords.min_contains = count(object, "minContains", at)?;
        keywords.max_contains = count(object, "maxContains", at)?;
        keywords.unevaluated_items = self.optional(object, "unevaluatedItems", at)?;

        if let Some(required) = object.get("required") {
            keywords.required = names(required, "required", at)?;
        }
        if let Some(properties) = object.get("properties") {
            let properties = properties
                .as_object()
                .ok_or_else(|| format!("`properties` at `#{at}` must be an object"))?;
            for name in properties.keys() {
                let id = self.subschema(format!("{}/{}", child("properties"), escape(name)))?;
                keywords.properties.insert(name.clone(), id);
            }
        }
        if let Some(patterns) = object.get("patternProperties") {
            let patterns = patterns
                .as_object()
                .ok_or_else(|| format!("`patternProperties` at `#{at}` must be an object"))?;
            for source in patterns.keys() {
                let pattern =
                    compile_pattern(&Value::String(source.clone()), "patternProperties", at)?;
                let id =
                    self.subschema(format!("{}/{}", child("patternProperties"), escape(source)))?;
                keywords.pattern_properties.push((pattern, id));
            }
        }
        keywords.additional_properties = self.optional(object, "additionalProperties", at)?;
        keywords.property_names = self.optional(object, "propertyNames", at)?;
        keywords.min_properties = count(object, "minProperties", at)?;
        keywords.max_properties = count(object, "maxProperties", at)?;
        for keyword in ["dependentRequired", "dependentSchemas", "dependencies"] {
            let Some(dependencies) = object.get(keyword) else {
                continue;
            };
            let dependencies = dependencies
                .as_object()
                .ok_or_else(|| format!("`{keyword}` at `#{at}` must be an object"))?;
            for (name, dependency) in dependencies {
                if dependency.is_array() {
                    let required = names(dependency, keyword, at)?;
                    keywords.dependent_required.push((name.clone(), required));
                } else {
                    let id = self.subschema(format!("{}/{}", child(keyword), escape(name)))?;
                    keywords.dependent_schemas.push((name.clone(), id));
                }
            }
        }
        keywords.unevaluated_properties = self.optional(object, "unevaluatedProperties", at)?;

        for (keyword, slot) in [
            ("allOf", &mut keywords.all_of),
            ("anyOf", &mut keywords.any_of),
            ("oneOf", &mut keywords.one_of),
        ] {
            if let Some(list) = object.get(keyword) {
                let list = list
                    .as_array()
                    .filter(|list| !list.is_empty())
                    .ok_or_else(|| format!("`{keyword}` at `#{at}` must be a non-empty array"))?;
                *slot = self.list(list.len(), &child(keyword))?;
            }
        }
        keywords.not = self.optional(object, "not", at)?;
        keywords.condition = self.optional(object, "if", at)?;
        if keywords.condition.is_some() {
            keywords.then = self.optional(object, "then", at)?;
            keywords.otherwise = self.optional(object, "else", at)?;
        }
        Ok(keywords)
    }

    /// The subschema under `keyword`, if the object has one.
    fn optional(
        &mut self,
        object: &Map<String, Value>,
        keyword: &str,
        at: &str,
    ) -> Result<Option<NodeId>, String> {
        if !object.contains_key(keyword) {
            return Ok(None);
        }
        self.subschema(format!("{at}/{}", escape(keyword)))
            .map(Some)
    }

    /// The `len` subschemas of the list at `pointer`.
    fn list(&mut self, len: usize, pointer: &str) -> Result<Vec<NodeId>, String> {
        (0..len)
            .map(|index| self.subschema(format!("{pointer}/{index}")))
            .collect()
    }

    /// The JSON pointer a `$ref` names, inside this document.
    fn target(&self, reference: &str, at: &str) -> Result<String, String> {
        let local = match (reference.find('#'), self.base) {
            (Some(0), _) => reference,
            (Some(hash), Some(base)) if reference[..hash] == *base.trim_end_matches('#') => {
                &reference[hash..]
            }
            _ => {
                return Err(format!(
                    "`$ref` {reference:?} at `#{at}` points outside the schema; only references \
                     within it (`#/$defs/...`) are supported"
                ));
            }
        };
        let pointer = percent_decode(&local[1..]);
        if !pointer.is_empty() && !pointer.starts_with('/') {
            return Err(format!(
                "`$ref` {reference:?} at `#{at}` names an anchor; only JSON pointers are supported"
            ));
        }
        Ok(pointer)
    }
}

/// A JSON pointer's segment for `key`.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Decodes `%XX` escapes, as a `$ref`'s fragment may hold.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let escaped = (bytes[index] == b'%')
            .then(|| bytes.get(index + 1..index + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok());
        match escaped {
            Some(byte) => {
                decoded.push(byte);
                index += 3;
            }
            None => {
                decoded.push(bytes[index]);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

fn parse_types(types: &Value, at: &str) -> Result<Types, String> {
    let one = |name: &Value| {
        name.as_str().and_then(Types::named).ok_or_else(|| {
            format!(
                "`type` at `#{at}` names no JSON Schema type: {}",
                render(name)
            )
        })
    };
    match types {
        Value::Array(names) if !names.is_empty() => names
            .iter()
            .try_fold(None, |set: Option<Types>, name| {
                let named = one(name)?;
                Ok(Some(set.map_or(named, |set| set.with(named))))
            })
            .map(|set| set.expect("the list is not empty")),
        Value::Array(_) => Err(format!("`type` at `#{at}` is an empty list")),
        name => one(name),
    }
}

fn number(object: &Map<String, Value>, keyword: &str, at: &str) -> Result<Option<Number>, String> {
    match object.get(keyword) {
        None => Ok(None),
        Some(Value::Number(number)) => Ok(Some(number.clone())),
        Some(other) => Err(format!(
            "`{keyword}` at `#{at}` must be a number, not {}",
            render(other)
        )),
    }
}

fn positive_number(
    object: &Map<String, Value>,
    keyword: &str,
    at: &str,
) -> Result<Option<Number>, String> {
    let number = number(object, keyword, at)?;
    if number
        .as_ref()
        .is_some_and(|number| number.as_f64().is_none_or(|value| value <= 0.0))
    {
        return Err(format!("`{keyword}` at `#{at}` must be greater than 0"));
    }
    Ok(number)
}

fn count(object: &Map<String, Value>, keyword: &str, at: &str) -> Result<Option<u64>, String> {
    match object.get(keyword) {
        None => Ok(None),
        Some(Value::Number(number)) => number
            .as_u64()
            .or_else(|| {
                // `2.0` is a whole number too.
                number
                    .as_f64()
                    .filter(|value| *value >= 0.0 && value.fract() == 0.0)
                    .map(|value| value as u64)
            })
            .map(Some)
            .ok_or_else(|| format!("`{keyword}` at `#{at}` must be a non-negative integer")),
        Some(other) => Err(format!(
            "`{keyword}` at `#{at}` must be a non-negative integer, not {}",
            render(other)
        )),
    }
}

fn names(list: &Value, keyword: &str, at: &str) -> Result<Vec<String>, String> {
    list.as_array()
        .and_then(|list| {
            list.iter()
                .map(|name| name.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| format!("`{keyword}` at `#{at}` must be an array of strings"))
}

fn compile_pattern(source: &Value, keyword: &str, at: &str) -> Result<Pattern, String> {
    let source = source
        .as_str()
        .ok_or_else(|| format!("`{keyword}` at `#{at}` must be a string"))?;
    let regex = Regex::new(source).map_err(|error| {
        format!(
            "`{keyword}` {source:?} at `#{at}` is not a regular expression adk-rs supports \
             (lookaround and backreferences are not): {error}"
        )
    })?;
    Ok(Pattern {
        source: source.to_owned(),
        regex,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn keywords(compiled: &Compiled, id: NodeId) -> &Keywords {
        match &compiled.nodes[id] {
            Node::Keywords(keywords) => keywords,
            Node::Bool(_) => panic!("node {id} is a boolean schema"),
        }
    }

    #[test]
    fn references_to_one_definition_share_its_node_and_recursion_closes() {
        let compiled = compile(&json!({
            "$defs": {"tree": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/tree"}}}}},
            "properties": {"a": {"$ref": "#/$defs/tree"}, "b": {"$ref": "#/%24defs/tree"}}
        }))
        .unwrap();
        let root = keywords(&compiled, compiled.root);
        let a = keywords(&compiled, root.properties["a"]).reference;
        let b = keywords(&compiled, root.properties["b"]).reference;
        assert_eq!(a, b);
        let tree = keywords(&compiled, a.unwrap());
        let kids = keywords(&compiled, tree.properties["kids"]);
        assert_eq!(keywords(&compiled, kids.items.unwrap()).reference, a);
    }

    #[test]
    fn draft_4_exclusive_flags_make_the_bound_exclusive() {
        let compiled =
            compile(&json!({"minimum": 1, "exclusiveMinimum": true, "maximum": 5})).unwrap();
        let root = keywords(&compiled, compiled.root);
        assert_eq!(root.minimum, None);
        assert_eq!(root.exclusive_minimum, Some(Number::from(1)));
        assert_eq!(root.maximum, Some(Number::from(5)));
    }

    #[test]
    fn what_cannot_be_checked_is_refused_with_where_it_is() {
        for (schema, expected) in [
            (
                json!({"$ref": "https://example.com/other.json"}),
                "points outside the schema",
            ),
            (
                json!({"properties": {"a": {"$ref": "#/$defs/missing"}}}),
                "nothing is at `#/$defs/missing`",
            ),
            (json!({"type": "text"}), "names no JSON Schema type"),
            (
                json!({"minLength": -1}),
                "`minLength` at `#` must be a non-negative integer",
            ),
            (json!({"pattern": "(?=x)"}), "lookaround"),
            (json!({"anyOf": []}), "non-empty array"),
            (json!({"properties": {"a": 3}}), "`#/properties/a` is 3"),
            (json!({"$dynamicRef": "#meta"}), "not supported"),
        ] {
            let error = compile(&schema).unwrap_err();
            assert!(error.contains(expected), "{schema}: {error}");
        }
    }

    #[test]
    fn a_reference_may_spell_out_the_root_id() {
        let compiled = compile(&json!({
            "$id": "https://example.com/args.json",
            "$defs": {"n": {"type": "integer"}},
            "$ref": "https://example.com/args.json#/$defs/n"
        }))
        .unwrap();
        assert!(keywords(&compiled, compiled.root).reference.is_some());
    }
}
