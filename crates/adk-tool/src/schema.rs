//! JSON schemas of tool arguments: generated from Rust types with `schemars`, and simplified into
//! the self-contained shape that model providers accept.
//!
//! Providers differ in how much JSON Schema they take. Gemini reads an OpenAPI 3 subset: no `$ref`
//! or `$defs`, `nullable` instead of `"type": [.., "null"]`, `anyOf` but not `oneOf`, a few
//! `format`s, and no `additionalProperties`. [`simplify_schema`] turns any schema into that shape,
//! so one declaration works everywhere. Arguments are validated against the full schema, not the
//! simplified one (see `validate.rs`), so nothing is lost by simplifying.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// Where the generator puts the definitions of named types, so that `$ref`s resolve in the root.
const DEFINITIONS: &str = "$defs";

/// The `format`s Gemini accepts; others are dropped (the type and bounds still say what is meant).
const KEPT_FORMATS: [&str; 6] = ["int32", "int64", "float", "double", "date-time", "enum"];

/// Keywords whose value is one subschema.
const SUBSCHEMA_KEYWORDS: [&str; 4] = ["items", "additionalProperties", "not", "contains"];

/// Keywords whose value is a list of subschemas.
const SUBSCHEMA_LIST_KEYWORDS: [&str; 4] = ["anyOf", "oneOf", "allOf", "prefixItems"];

/// Keywords whose value maps names to subschemas.
const SUBSCHEMA_MAP_KEYWORDS: [&str; 2] = ["properties", "patternProperties"];

/// The schema of `T` as a tool declares it to the model: self-contained (no `$ref`), in the
/// OpenAPI 3 shape that Gemini accepts, with doc comments as descriptions.
///
/// ```
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// /// Where to look.
/// #[derive(Deserialize, JsonSchema)]
/// struct Place {
///     /// The city name.
///     city: String,
///     /// The country, when the city name is ambiguous.
///     country: Option<String>,
/// }
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Args {
///     place: Place,
/// }
///
/// let schema = adk_tool::parameters_schema::<Args>();
/// assert_eq!(schema["properties"]["place"]["properties"]["city"]["type"], "string");
/// assert_eq!(schema["properties"]["place"]["properties"]["country"]["nullable"], true);
/// assert!(!schema.to_string().contains("$ref"));
/// ```
pub fn parameters_schema<T: JsonSchema>() -> Value {
    let settings = SchemaSettings::openapi3().with(|settings| {
        settings.definitions_path = format!("/{DEFINITIONS}").into();
        settings.meta_schema = None;
    });
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut schema = simplify_schema(schema.to_value());
    // The root title is the Rust type's name, which tells the model nothing.
    if let Value::Object(root) = &mut schema {
        root.remove("title");
    }
    schema
}

/// The full JSON Schema (draft 2020-12) of `T`, as arguments are validated against it.
pub(crate) fn validation_schema<T: JsonSchema>() -> Value {
    let settings = SchemaSettings::draft2020_12().with(|settings| {
        settings.definitions_path = format!("/{DEFINITIONS}").into();
    });
    settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// Makes `schema` self-contained and provider-friendly: inlines local `$ref`s (a recursive
/// reference becomes an untyped object), drops `$schema`, `$id`, definitions and
/// `additionalProperties`, turns `"type": [T, "null"]` into `nullable`, `oneOf` into `anyOf`,
/// `const` into a one-value `enum`, merges a lone `allOf`, and keeps only the `format`s Gemini
/// knows.
///
/// It is applied to generated schemas and to the schemas MCP servers declare.
///
/// ```
/// use serde_json::json;
///
/// let schema = json!({
///     "$schema": "https://json-schema.org/draft/2020-12/schema",
///     "type": "object",
///     "properties": {"size": {"$ref": "#/$defs/Size"}},
///     "$defs": {"Size": {"type": ["integer", "null"], "format": "uint8", "minimum": 0}}
/// });
/// assert_eq!(
///     adk_tool::simplify_schema(schema),
///     json!({
///         "type": "object",
///         "properties": {"size": {"type": "integer", "nullable": true, "minimum": 0}}
///     }),
/// );
/// ```
pub fn simplify_schema(schema: Value) -> Value {
    let root = schema.clone();
    let mut resolving = Vec::new();
    simplify(schema, &root, &mut resolving)
}

/// Whether `schema` is an object schema without any property, which Gemini rejects as function
/// parameters; such a tool is declared without parameters.
pub(crate) fn is_empty_object(schema: &Value) -> bool {
    let no_properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty);
    schema.get("type").and_then(Value::as_str) == Some("object") && no_properties
}

fn simplify(schema: Value, root: &Value, resolving: &mut Vec<String>) -> Value {
    let Value::Object(mut object) = schema else {
        // `true` accepts anything; `false` accepts nothing, which no provider can express.
        return Value::Object(Map::new());
    };
    if let Some(Value::String(reference)) = object.remove("$ref") {
        return inline_reference(&reference, object, root, resolving);
    }
    for keyword in [
        "$schema",
        "$id",
        "$comment",
        "$defs",
        "definitions",
        "components",
    ] {
        object.remove(keyword);
    }
    object.remove("additionalProperties");
    object.remove("unevaluatedProperties");
    simplify_type(&mut object);
    if let Some(value) = object.remove("const") {
        object.insert("enum".to_owned(), Value::Array(vec![value]));
    }
    if let Some(one_of) = object.remove("oneOf") {
        object.insert("anyOf".to_owned(), one_of);
    }
    if object
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|format| !KEPT_FORMATS.contains(&format))
    {
        object.remove("format");
    }
    for keyword in SUBSCHEMA_KEYWORDS {
        if let Some(sub) = object.remove(keyword) {
            object.insert(keyword.to_owned(), simplify(sub, root, resolving));
        }
    }
    for keyword in SUBSCHEMA_LIST_KEYWORDS {
        if let Some(Value::Array(subs)) = object.remove(keyword) {
            let subs = subs
                .into_iter()
                .map(|sub| simplify(sub, root, resolving))
                .collect();
            object.insert(keyword.to_owned(), Value::Array(subs));
        }
    }
    for keyword in SUBSCHEMA_MAP_KEYWORDS {
        if let Some(Value::Object(subs)) = object.remove(keyword) {
            let subs = subs
                .into_iter()
                .map(|(name, sub)| (name, simplify(sub, root, resolving)))
                .collect();
            object.insert(keyword.to_owned(), Value::Object(subs));
        }
    }
    merge_nullable_variant(&mut object);
    merge_lone_all_of(&mut object);
    Value::Object(object)
}

/// Replaces a `$ref` with the schema it points to; `siblings` are the keywords next to the
/// `$ref` (a description, say), which win over the target's.
fn inline_reference(
    reference: &str,
    siblings: Map<String, Value>,
    root: &Value,
    resolving: &mut Vec<String>,
) -> Value {
    let target = reference
        .strip_prefix('#')
        .and_then(|pointer| root.pointer(pointer));
    let mut inlined = match target {
        Some(_) if resolving.iter().any(|seen| seen == reference) => {
            // A recursive type cannot be inlined; below the first level it is any object.
            let mut object = Map::new();
            object.insert("type".to_owned(), Value::String("object".to_owned()));
            object
        }
        Some(target) => {
            resolving.push(reference.to_owned());
            let inlined = simplify(target.clone(), root, resolving);
            resolving.pop();
            match inlined {
                Value::Object(object) => object,
                _ => Map::new(),
            }
        }
        // A reference that does not resolve locally says nothing a provider could use.
        None => Map::new(),
    };
    let Value::Object(siblings) = simplify(Value::Object(siblings), root, resolving) else {
        return Value::Object(inlined);
    };
    inlined.extend(siblings);
    Value::Object(inlined)
}

/// `"type": ["string", "null"]` becomes `"type": "string", "nullable": true`.
fn simplify_type(object: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = object.get("type") {
        let non_null: Vec<Value> = types
            .iter()
            .filter(|kind| kind.as_str() != Some("null"))
            .cloned()
            .collect();
        let nullable = non_null.len() < types.len();
        match non_null.len() {
            0 => {
                object.remove("type");
            }
            1 => {
                object.insert("type".to_owned(), non_null[0].clone());
            }
            _ => {
                // Several types: an `anyOf` of one schema per type.
                let variants = non_null
                    .into_iter()
                    .map(|kind| Value::Object(Map::from_iter([("type".to_owned(), kind)])))
                    .collect();
                object.remove("type");
                object.insert("anyOf".to_owned(), Value::Array(variants));
            }
        }
        if nullable {
            object.insert("nullable".to_owned(), Value::Bool(true));
        }
    }
}

/// An `anyOf` of a schema and a null schema becomes the schema, nullable. A null schema is
/// `{"type": "null"}`, or what schemars writes for the `None` of an `Option` in OpenAPI:
/// `{"nullable": true}` or `{"enum": [null], "nullable": true}`.
fn merge_nullable_variant(object: &mut Map<String, Value>) {
    let is_null = |variant: &Value| {
        let Some(variant) = variant.as_object() else {
            return false;
        };
        if variant.get("type").and_then(Value::as_str) == Some("null") {
            return true;
        }
        let null_enum = Value::Array(vec![Value::Null]);
        let says_null = variant.get("nullable") == Some(&Value::Bool(true))
            || variant.get("enum") == Some(&null_enum);
        let only_null_enum = variant
            .get("enum")
            .is_none_or(|values| values == &null_enum);
        !variant.contains_key("type")
            && says_null
            && only_null_enum
            && variant
                .keys()
                .all(|key| key == "nullable" || key == "enum" || key == "description")
    };
    let Some(Value::Array(variants)) = object.get("anyOf") else {
        return;
    };
    if variants.len() != 2 || !variants.iter().any(is_null) {
        return;
    }
    let Some(Value::Array(variants)) = object.remove("anyOf") else {
        return;
    };
    if let Some(Value::Object(other)) = variants.into_iter().find(|variant| !is_null(variant)) {
        for (key, value) in other {
            object.entry(key).or_insert(value);
        }
    }
    object.insert("nullable".to_owned(), Value::Bool(true));
}

/// `{"allOf": [S], ...}` becomes `S` with the other keywords added.
fn merge_lone_all_of(object: &mut Map<String, Value>) {
    let lone = matches!(object.get("allOf"), Some(Value::Array(subs)) if subs.len() == 1);
    if !lone {
        return;
    }
    if let Some(Value::Array(mut subs)) = object.remove("allOf")
        && let Some(Value::Object(sub)) = subs.pop()
    {
        for (key, value) in sub {
            object.entry(key).or_insert(value);
        }
    }
}
