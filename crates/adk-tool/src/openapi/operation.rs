//! The operations of an OpenAPI document, each read into what a tool needs: its name, its
//! description, where each argument goes in the request, and the JSON schema of its arguments.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::spec::{OpenApiSpec, Place};
use super::{OpenApiError, OperationInfo};

/// The HTTP methods a path item may hold, in the order OpenAPI lists them.
const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// The longest tool name: Gemini takes 64 characters; a few are left for prefixes users add.
const MAX_NAME_CHARS: usize = 60;

/// The argument that carries the JSON request body.
pub(crate) const BODY_ARGUMENT: &str = "body";

/// The header an API takes to tell a repeated request from a new one (the IETF's
/// `Idempotency-Key`, as payment APIs use it). An operation that declares it gets the call's
/// idempotency key there, never from the model.
pub(crate) const IDEMPOTENCY_KEY_HEADER: &str = "Idempotency-Key";

/// Where a parameter goes in the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Location {
    Path,
    Query,
    Header,
    Cookie,
}

impl Location {
    fn parse(text: &str) -> Option<Self> {
        match text {
            "path" => Some(Self::Path),
            "query" => Some(Self::Query),
            "header" => Some(Self::Header),
            "cookie" => Some(Self::Cookie),
            _ => None,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Self::Path => "path",
            Self::Query => "query",
            Self::Header => "header",
            Self::Cookie => "cookie",
        }
    }
}

/// One parameter of an operation.
#[derive(Debug, Clone)]
pub(crate) struct Parameter {
    /// The name in the request (the path template's, the query key, the header name).
    pub(crate) name: String,
    /// The name of the argument the model gives it under.
    pub(crate) argument: String,
    pub(crate) location: Location,
}

/// An operation, read from the document.
#[derive(Debug, Clone)]
pub(crate) struct Operation {
    pub(crate) info: OperationInfo,
    pub(crate) description: String,
    pub(crate) parameters: Vec<Parameter>,
    /// The media type of the JSON request body, when the operation takes one.
    pub(crate) body_media_type: Option<String>,
    /// The name of the `Idempotency-Key` header as the operation declares it, when it does: the
    /// call's idempotency key goes there, and repeating the call with it acts once.
    pub(crate) idempotency_header: Option<String>,
    /// The security requirements, alternatives each naming the schemes that must all be met; an
    /// empty alternative means the operation may be called without credentials.
    pub(crate) security: Vec<Vec<String>>,
    /// The JSON schema of the arguments, fully resolved.
    pub(crate) schema: Value,
}

/// Every operation of `spec` that `keep` accepts, in the document's order.
pub(crate) fn operations(
    spec: &OpenApiSpec,
    keep: &dyn Fn(&OperationInfo) -> bool,
) -> Result<Vec<Operation>, OpenApiError> {
    let paths_place = Place::root().key("paths");
    let Some(paths) = spec.root.get("paths") else {
        return Ok(Vec::new());
    };
    let Value::Object(paths) = paths else {
        return Err(spec.error(&paths_place, "is not a mapping".to_owned()));
    };
    let default_security = match spec.root.get("security") {
        Some(security) => Some(security_requirements(
            spec,
            security,
            &Place::root().key("security"),
        )?),
        None => None,
    };
    let mut operations = Vec::new();
    let mut names = HashSet::new();
    for (path, item) in paths {
        let (item, item_place) = spec.dereference(item, &paths_place.key(path))?;
        let Value::Object(item) = item else {
            return Err(spec.error(&item_place, "is not a mapping".to_owned()));
        };
        for method in METHODS {
            let Some(operation) = item.get(method) else {
                continue;
            };
            let place = item_place.key(method);
            let Value::Object(operation) = operation else {
                return Err(spec.error(&place, "is not a mapping".to_owned()));
            };
            let operation_id = match operation.get("operationId") {
                Some(Value::String(id)) => Some(id.clone()),
                Some(_) => {
                    return Err(spec.error(&place.key("operationId"), "is not a string".to_owned()));
                }
                None => None,
            };
            let name = tool_name(operation_id.as_deref(), method, path);
            let security = match operation.get("security") {
                Some(security) => security_requirements(spec, security, &place.key("security"))?,
                None => default_security.clone().unwrap_or_default(),
            };
            let info = OperationInfo {
                name,
                operation_id,
                method: method.to_ascii_uppercase(),
                path: path.clone(),
                security_schemes: security.iter().flatten().cloned().collect(),
            };
            if !keep(&info) {
                continue;
            }
            if !names.insert(info.name.clone()) {
                return Err(spec.error(
                    &place,
                    format!(
                        "makes a second tool named `{}`; give the operations distinct operationIds",
                        info.name
                    ),
                ));
            }
            let shared_parameters = (item.get("parameters"), item_place.key("parameters"));
            if let Some(operation) =
                read_operation(spec, info, operation, shared_parameters, security, &place)?
            {
                operations.push(operation);
            }
        }
    }
    Ok(operations)
}

fn read_operation(
    spec: &OpenApiSpec,
    info: OperationInfo,
    operation: &Map<String, Value>,
    shared_parameters: (Option<&Value>, Place),
    security: Vec<Vec<String>>,
    place: &Place,
) -> Result<Option<Operation>, OpenApiError> {
    let own_parameters = (operation.get("parameters"), place.key("parameters"));
    let declared = declared_parameters(spec, [shared_parameters, own_parameters])?;
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut parameters = Vec::with_capacity(declared.len());
    let taken: Vec<&str> = declared.iter().map(|p| p.name.as_str()).collect();
    let mut idempotency_header = None;
    for parameter in &declared {
        if parameter.location == Location::Header
            && parameter.name.eq_ignore_ascii_case(IDEMPOTENCY_KEY_HEADER)
        {
            // The flow knows the key of each call; a model would invent one per attempt.
            idempotency_header = Some(parameter.name.clone());
            continue;
        }
        let twice = taken.iter().filter(|name| **name == parameter.name).count() > 1;
        // A name used in two places (a path `id` and a header `id`) gets its place as a prefix,
        // as does a parameter named like the body's argument.
        let argument = if twice || parameter.name == BODY_ARGUMENT {
            format!("{}_{}", parameter.location.as_str(), parameter.name)
        } else {
            parameter.name.clone()
        };
        let mut schema = parameter.schema.clone();
        if let (Some(description), Value::Object(object)) = (&parameter.description, &mut schema) {
            object
                .entry("description")
                .or_insert_with(|| Value::String(description.clone()));
        }
        if parameter.required {
            required.push(Value::String(argument.clone()));
        }
        properties.insert(argument.clone(), schema);
        parameters.push(Parameter {
            name: parameter.name.clone(),
            argument,
            location: parameter.location,
        });
    }
    let mut body_media_type = None;
    if let Some(body) = operation.get("requestBody") {
        let body_place = place.key("requestBody");
        let body = spec.resolve(body, &body_place)?;
        let Some(content) = body.get("content").and_then(Value::as_object) else {
            return Err(spec.error(&body_place, "has no `content` mapping".to_owned()));
        };
        let json = content.iter().find(|(media_type, _)| is_json(media_type));
        let Some((media_type, media)) = json else {
            // Only JSON bodies are built; an operation that needs another kind is left out
            // rather than called with a body it cannot have.
            tracing::warn!(
                operation = %info.name,
                media_types = ?content.keys().collect::<Vec<_>>(),
                "OpenAPI operation left out: its request body is not JSON"
            );
            return Ok(None);
        };
        let mut schema = media.get("schema").cloned().unwrap_or_else(|| json!({}));
        if let (Some(description), Value::Object(object)) = (body.get("description"), &mut schema) {
            object
                .entry("description")
                .or_insert_with(|| description.clone());
        }
        if body.get("required").and_then(Value::as_bool) == Some(true) {
            required.push(Value::String(BODY_ARGUMENT.to_owned()));
        }
        properties.insert(BODY_ARGUMENT.to_owned(), schema);
        body_media_type = Some(media_type.clone());
    }
    let mut schema = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        schema["required"] = Value::Array(required);
    }
    Ok(Some(Operation {
        description: description(operation, &info),
        info,
        parameters,
        body_media_type,
        idempotency_header,
        security,
        schema,
    }))
}

/// A parameter as the document declares it.
struct DeclaredParameter {
    name: String,
    location: Location,
    required: bool,
    description: Option<String>,
    schema: Value,
}

/// The path item's parameters overridden by the operation's (same name and place), resolved.
fn declared_parameters(
    spec: &OpenApiSpec,
    lists: [(Option<&Value>, Place); 2],
) -> Result<Vec<DeclaredParameter>, OpenApiError> {
    let mut parameters: Vec<DeclaredParameter> = Vec::new();
    for (list, list_place) in lists {
        let Some(list) = list else { continue };
        let Value::Array(list) = list else {
            return Err(spec.error(&list_place, "is not a list".to_owned()));
        };
        for (index, parameter) in list.iter().enumerate() {
            let place = list_place.index(index);
            let parameter = read_parameter(spec, &spec.resolve(parameter, &place)?, &place)?;
            parameters.retain(|p| !(p.name == parameter.name && p.location == parameter.location));
            parameters.push(parameter);
        }
    }
    Ok(parameters)
}

fn read_parameter(
    spec: &OpenApiSpec,
    parameter: &Value,
    place: &Place,
) -> Result<DeclaredParameter, OpenApiError> {
    let text = |key: &str| -> Result<&str, OpenApiError> {
        parameter
            .get(key)
            .and_then(Value::as_str)
            .ok_or_else(|| spec.error(&place.key(key), "is missing or not a string".to_owned()))
    };
    let name = text("name")?.to_owned();
    let location = text("in")?;
    let location = Location::parse(location).ok_or_else(|| {
        spec.error(
            &place.key("in"),
            format!("`{location}` is not one of path, query, header or cookie"),
        )
    })?;
    let required = location == Location::Path
        || parameter.get("required").and_then(Value::as_bool) == Some(true);
    // A parameter is described by `schema`, or by `content` with one media type's schema.
    let schema = parameter
        .get("schema")
        .or_else(|| {
            parameter
                .get("content")
                .and_then(Value::as_object)
                .and_then(|content| content.values().next())
                .and_then(|media| media.get("schema"))
        })
        .cloned()
        .unwrap_or_else(|| json!({"type": "string"}));
    Ok(DeclaredParameter {
        name,
        location,
        required,
        description: parameter
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_owned),
        schema,
    })
}

/// The security requirement alternatives at `place`, each the list of its scheme names.
fn security_requirements(
    spec: &OpenApiSpec,
    security: &Value,
    place: &Place,
) -> Result<Vec<Vec<String>>, OpenApiError> {
    let Value::Array(alternatives) = security else {
        return Err(spec.error(place, "is not a list".to_owned()));
    };
    alternatives
        .iter()
        .enumerate()
        .map(|(index, alternative)| match alternative {
            Value::Object(schemes) => Ok(schemes.keys().cloned().collect()),
            _ => Err(spec.error(&place.index(index), "is not a mapping".to_owned())),
        })
        .collect()
}

fn is_json(media_type: &str) -> bool {
    let essence = media_type.split(';').next().unwrap_or_default().trim();
    essence.eq_ignore_ascii_case("application/json") || essence.ends_with("+json")
}

/// The summary and the description, or the method and path when the document says neither.
fn description(operation: &Map<String, Value>, info: &OperationInfo) -> String {
    let texts: Vec<&str> = ["summary", "description"]
        .iter()
        .filter_map(|key| operation.get(*key).and_then(Value::as_str))
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .collect();
    if texts.is_empty() {
        format!("{} {}", info.method, info.path)
    } else {
        texts.join("\n\n")
    }
}

/// The tool's name: the operationId in snake case, or the method and path when there is none;
/// only ASCII letters, digits and `_`, at most [`MAX_NAME_CHARS`] characters.
fn tool_name(operation_id: Option<&str>, method: &str, path: &str) -> String {
    let source = match operation_id {
        Some(id) => id.to_owned(),
        None => format!("{method}_{path}"),
    };
    let mut name = String::with_capacity(source.len());
    let mut previous: Option<char> = None;
    for c in source.chars() {
        if c.is_ascii_alphanumeric() {
            let boundary = c.is_ascii_uppercase()
                && previous.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit());
            if boundary && !name.ends_with('_') {
                name.push('_');
            }
            name.push(c.to_ascii_lowercase());
        } else if !name.is_empty() && !name.ends_with('_') {
            name.push('_');
        }
        previous = Some(c);
    }
    let name = name.trim_end_matches('_');
    let mut name: String = name.chars().take(MAX_NAME_CHARS).collect();
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert_str(0, "op_");
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_snake_case_and_bounded() {
        assert_eq!(tool_name(Some("listPets"), "get", "/pets"), "list_pets");
        assert_eq!(
            tool_name(Some("showPetByID"), "get", "/pets/{id}"),
            "show_pet_by_id"
        );
        assert_eq!(
            tool_name(Some("create_pet_pets_post"), "post", "/pets"),
            "create_pet_pets_post"
        );
        assert_eq!(
            tool_name(None, "get", "/pets/{petId}/toys"),
            "get_pets_pet_id_toys"
        );
        assert_eq!(tool_name(Some("2fa.verify"), "post", "/"), "op_2fa_verify");
        assert_eq!(
            tool_name(Some(&"a".repeat(100)), "get", "/").len(),
            MAX_NAME_CHARS
        );
    }

    #[test]
    fn json_media_types() {
        assert!(is_json("application/json"));
        assert!(is_json("application/merge-patch+json; charset=utf-8"));
        assert!(!is_json("multipart/form-data"));
    }
}
