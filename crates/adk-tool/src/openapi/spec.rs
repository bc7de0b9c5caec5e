//! An OpenAPI 3.0 / 3.1 document ([`OpenApiSpec`]): read from JSON or YAML text, a file or a URL,
//! with its version checked, and the local `$ref`s of what an operation uses resolved, refusing
//! cycles and references to other documents, every error naming its place.

use std::fmt::{self, Write as _};
use std::path::Path;

use serde_json::{Map, Value};

use super::OpenApiError;

/// How many `$ref`s may be followed one inside another before the document is refused; deeper
/// nesting is a generated document gone wrong, and the limit keeps the stack bounded.
const MAX_REFERENCE_DEPTH: usize = 64;

/// How long fetching a document may take.
const FETCH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The largest document fetched: far above the largest public API descriptions, low enough that
/// a server that never stops sending cannot exhaust memory.
const MAX_DOCUMENT_BYTES: usize = 64 * 1024 * 1024;

/// An OpenAPI 3.0 or 3.1 document, parsed and version-checked, ready for
/// [`OpenApiToolset::builder`](super::OpenApiToolset::builder).
///
/// ```
/// use adk_tool::openapi::OpenApiSpec;
///
/// let spec = OpenApiSpec::parse(r#"
/// openapi: 3.0.3
/// info: {title: Pets, version: "1"}
/// paths: {}
/// "#).unwrap();
/// assert_eq!(spec.title(), Some("Pets"));
///
/// let error = OpenApiSpec::parse("openapi: 2.0\npaths: {}").unwrap_err();
/// assert!(error.to_string().contains("at `openapi`"), "{error}");
/// ```
#[derive(Debug, Clone)]
pub struct OpenApiSpec {
    pub(crate) root: Value,
    /// Where the document came from, for messages: `a document given as text`, a path or a URL.
    pub(crate) origin: String,
    /// The document's own URL, against which relative server URLs resolve.
    pub(crate) url: Option<reqwest::Url>,
}

impl OpenApiSpec {
    /// Parses a document written in JSON or YAML.
    pub fn parse(text: &str) -> Result<Self, OpenApiError> {
        Self::from_text(text, "given as text".to_owned(), None)
    }

    /// Reads and parses the document in the file at `path` (JSON or YAML).
    pub async fn from_file(path: impl AsRef<Path>) -> Result<Self, OpenApiError> {
        let path = path.as_ref();
        let origin = format!("`{}`", path.display());
        let text = tokio::fs::read_to_string(path).await.map_err(|error| {
            OpenApiError::new(&origin, None, format!("cannot be read: {error}"))
        })?;
        Self::from_text(&text, origin, None)
    }

    /// Fetches and parses the document at `url` (JSON or YAML), within 60 s and 64 MiB.
    /// Relative server URLs in it, and a document without servers, resolve against this URL.
    pub async fn from_url(url: &str) -> Result<Self, OpenApiError> {
        let parsed = reqwest::Url::parse(url).map_err(|error| {
            OpenApiError::new(format!("`{url}`"), None, format!("is not a URL: {error}"))
        })?;
        let origin = format!("`{}`", super::shown_url(&parsed));
        let failed = |error: reqwest::Error| {
            let error = super::with_causes(&error.without_url());
            OpenApiError::new(&origin, None, format!("cannot be fetched: {error}"))
        };
        let client = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .build()
            .map_err(failed)?;
        let mut response = client.get(parsed.clone()).send().await.map_err(failed)?;
        let status = response.status();
        if !status.is_success() {
            return Err(OpenApiError::new(
                &origin,
                None,
                format!("cannot be fetched: the server answered {status}"),
            ));
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(failed)? {
            if bytes.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err(OpenApiError::new(
                    &origin,
                    None,
                    format!("is larger than the {MAX_DOCUMENT_BYTES} bytes read"),
                ));
            }
            bytes.extend_from_slice(&chunk);
        }
        let text = String::from_utf8(bytes)
            .map_err(|_| OpenApiError::new(&origin, None, "is not UTF-8 text".to_owned()))?;
        Self::from_text(&text, origin, Some(parsed))
    }

    fn from_text(
        text: &str,
        origin: String,
        url: Option<reqwest::Url>,
    ) -> Result<Self, OpenApiError> {
        let root = parse_text(text, &origin)?;
        let spec = Self { root, origin, url };
        spec.check_version()?;
        Ok(spec)
    }

    /// The document's `info.title`.
    pub fn title(&self) -> Option<&str> {
        self.root.pointer("/info/title").and_then(Value::as_str)
    }

    fn check_version(&self) -> Result<(), OpenApiError> {
        let Value::Object(_) = self.root else {
            return Err(self.error(&Place::root(), "the document is not a mapping".to_owned()));
        };
        let place = Place::root().key("openapi");
        match self.root.get("openapi") {
            Some(Value::String(version))
                if version.starts_with("3.0.") || version.starts_with("3.1.") =>
            {
                Ok(())
            }
            Some(version) => Err(self.error(
                &place,
                format!("version {version} is not OpenAPI 3.0 or 3.1 (convert Swagger 2.0 documents first)"),
            )),
            None => Err(self.error(&place, "is missing: this is not an OpenAPI 3 document".to_owned())),
        }
    }

    pub(crate) fn error(&self, place: &Place, message: String) -> OpenApiError {
        OpenApiError::new(&self.origin, Some(place.to_string()), message)
    }

    /// `value` (found at `place`) with every local `$ref` in it replaced by what it points to.
    /// Keys beside a `$ref` (a `description`, as OpenAPI 3.1 allows) override the target's.
    pub(crate) fn resolve(&self, value: &Value, place: &Place) -> Result<Value, OpenApiError> {
        let mut following = Vec::new();
        self.resolve_in(value, place, &mut following)
    }

    /// `value` itself when it is not a `$ref`, or what its chain of `$ref`s ends at, with the
    /// place to name in errors; nothing inside is resolved.
    pub(crate) fn dereference<'a>(
        &'a self,
        value: &'a Value,
        place: &Place,
    ) -> Result<(&'a Value, Place), OpenApiError> {
        let mut value = value;
        let mut place = place.clone();
        for _ in 0..MAX_REFERENCE_DEPTH {
            let Some(reference) = value.get("$ref") else {
                return Ok((value, place));
            };
            let ref_place = place.key("$ref");
            let Some(pointer) = reference.as_str().and_then(|r| r.strip_prefix('#')) else {
                return Err(self.error(
                    &ref_place,
                    "is not a reference within the document (`#/...`)".to_owned(),
                ));
            };
            value = pointer_target(&self.root, pointer).ok_or_else(|| {
                self.error(
                    &ref_place,
                    format!("`#{pointer}` points to nothing in the document"),
                )
            })?;
            place = Place::reference(&format!("#{pointer}"));
        }
        Err(self.error(
            &place,
            format!("references are nested more than {MAX_REFERENCE_DEPTH} deep"),
        ))
    }

    fn resolve_in(
        &self,
        value: &Value,
        place: &Place,
        following: &mut Vec<String>,
    ) -> Result<Value, OpenApiError> {
        match value {
            Value::Object(object) => {
                if let Some(reference) = object.get("$ref") {
                    return self.follow(object, reference, place, following);
                }
                let mut resolved = Map::with_capacity(object.len());
                for (key, item) in object {
                    let item = self.resolve_in(item, &place.key(key), following)?;
                    resolved.insert(key.clone(), item);
                }
                Ok(Value::Object(resolved))
            }
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(index, item)| self.resolve_in(item, &place.index(index), following))
                .collect::<Result<_, _>>()
                .map(Value::Array),
            other => Ok(other.clone()),
        }
    }

    fn follow(
        &self,
        object: &Map<String, Value>,
        reference: &Value,
        place: &Place,
        following: &mut Vec<String>,
    ) -> Result<Value, OpenApiError> {
        let place = place.key("$ref");
        let Value::String(reference) = reference else {
            return Err(self.error(&place, "is not a string".to_owned()));
        };
        let Some(pointer) = reference.strip_prefix('#') else {
            return Err(self.error(
                &place,
                format!(
                    "`{reference}` points into another document; only references within the \
                     document (`#/...`) are followed, so bundle the document first"
                ),
            ));
        };
        if following.contains(reference) {
            let mut chain = String::new();
            for step in following.iter().skip_while(|step| *step != reference) {
                let _ = write!(chain, "{step} → ");
            }
            chain.push_str(reference);
            return Err(self.error(
                &place,
                format!(
                    "the references form a cycle ({chain}); a recursive schema cannot be declared \
                     to a model, so leave this operation out with the operation filter"
                ),
            ));
        }
        if following.len() >= MAX_REFERENCE_DEPTH {
            return Err(self.error(
                &place,
                format!("references are nested more than {MAX_REFERENCE_DEPTH} deep"),
            ));
        }
        let target = pointer_target(&self.root, pointer).ok_or_else(|| {
            self.error(
                &place,
                format!("`{reference}` points to nothing in the document"),
            )
        })?;
        following.push(reference.clone());
        let target_place = Place::reference(reference);
        let resolved = self.resolve_in(target, &target_place, following);
        following.pop();
        let mut resolved = resolved?;
        if let Value::Object(resolved) = &mut resolved {
            for (key, item) in object.iter().filter(|(key, _)| *key != "$ref") {
                let item = self.resolve_in(item, &place.key(key), following)?;
                resolved.insert(key.clone(), item);
            }
        }
        Ok(resolved)
    }
}

/// Parses JSON (when the text starts with `{`, for serde_json's sharper messages) or YAML.
fn parse_text(text: &str, origin: &str) -> Result<Value, OpenApiError> {
    if text.trim_start().starts_with('{') {
        serde_json::from_str(text).map_err(|error| {
            OpenApiError::new(
                origin,
                Some(format!("line {}, column {}", error.line(), error.column())),
                format!("is not valid JSON: {error}"),
            )
        })
    } else {
        serde_yaml::from_str(text).map_err(|error| {
            let place = error
                .location()
                .map(|at| format!("line {}, column {}", at.line(), at.column()));
            OpenApiError::new(origin, place, format!("is not valid YAML: {error}"))
        })
    }
}

/// What a JSON pointer (RFC 6901, as it appears in a `$ref` after `#`, possibly percent-encoded)
/// points to in `root`.
fn pointer_target<'a>(root: &'a Value, pointer: &str) -> Option<&'a Value> {
    if pointer.is_empty() {
        return Some(root);
    }
    let pointer = percent_decode(pointer)?;
    root.pointer(&pointer)
}

fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&byte, tail)) = rest.split_first() {
        if byte == b'%' {
            let hex = std::str::from_utf8(tail.get(..2)?).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            rest = &tail[2..];
        } else {
            bytes.push(byte);
            rest = tail;
        }
    }
    String::from_utf8(bytes).ok()
}

/// A place in the document, shown as a path (`paths["/pets/{id}"].get.parameters[0].in`) in
/// error messages.
#[derive(Debug, Clone)]
pub(crate) struct Place(String);

impl Place {
    pub(crate) fn root() -> Self {
        Self(String::new())
    }

    /// The place a `$ref` points to, shown as the reference itself.
    fn reference(reference: &str) -> Self {
        Self(reference.to_owned())
    }

    pub(crate) fn key(&self, key: &str) -> Self {
        let plain = !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '-');
        let mut place = self.0.clone();
        if plain {
            if !place.is_empty() {
                place.push('.');
            }
            place.push_str(key);
        } else {
            let _ = write!(place, "[{key:?}]");
        }
        Self(place)
    }

    pub(crate) fn index(&self, index: usize) -> Self {
        Self(format!("{}[{index}]", self.0))
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            f.write_str("the root")
        } else {
            f.write_str(&self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spec(root: Value) -> OpenApiSpec {
        OpenApiSpec {
            root,
            origin: "given as text".to_owned(),
            url: None,
        }
    }

    #[test]
    fn places_read_like_paths() {
        let place = Place::root()
            .key("paths")
            .key("/pets/{id}")
            .key("get")
            .key("parameters")
            .index(0);
        assert_eq!(
            place.to_string(),
            r#"paths["/pets/{id}"].get.parameters[0]"#
        );
        assert_eq!(Place::root().to_string(), "the root");
    }

    #[test]
    fn references_resolve_with_their_siblings_over_the_target() {
        let spec = spec(json!({
            "components": {"schemas": {
                "Pet": {"type": "object", "properties": {"tag": {"$ref": "#/components/schemas/Tag"}}},
                "Tag": {"type": "string", "description": "a tag"},
                "a/b": {"type": "integer"}
            }}
        }));
        let resolved = spec
            .resolve(
                &json!({"items": {"$ref": "#/components/schemas/Pet"},
                        "other": {"$ref": "#/components/schemas/a~1b", "description": "odd"}}),
                &Place::root(),
            )
            .unwrap();
        assert_eq!(
            resolved,
            json!({
                "items": {"type": "object", "properties": {"tag": {"type": "string", "description": "a tag"}}},
                "other": {"type": "integer", "description": "odd"}
            })
        );
    }

    #[test]
    fn cycles_dangling_and_external_references_are_refused_by_place() {
        let spec = spec(json!({
            "components": {"schemas": {
                "Node": {"type": "object", "properties": {"child": {"$ref": "#/components/schemas/Node"}}}
            }}
        }));
        let place = Place::root().key("body");
        let cycle = spec
            .resolve(&json!({"$ref": "#/components/schemas/Node"}), &place)
            .unwrap_err()
            .to_string();
        assert!(
            cycle.contains("at `#/components/schemas/Node.properties.child.$ref`")
                && cycle.contains("cycle (#/components/schemas/Node → #/components/schemas/Node)"),
            "{cycle}"
        );
        let dangling = spec
            .resolve(&json!({"$ref": "#/components/schemas/Nope"}), &place)
            .unwrap_err()
            .to_string();
        assert!(
            dangling.contains("at `body.$ref`: `#/components/schemas/Nope` points to nothing"),
            "{dangling}"
        );
        let external = spec
            .resolve(&json!({"$ref": "pets.yaml#/Pet"}), &place)
            .unwrap_err()
            .to_string();
        assert!(
            external.contains("points into another document"),
            "{external}"
        );
    }

    #[test]
    fn syntax_errors_name_the_line() {
        let yaml = OpenApiSpec::parse("openapi: 3.0.0\npaths:\n  /a: [\n").unwrap_err();
        assert!(yaml.to_string().contains("line "), "{yaml}");
        assert!(yaml.to_string().contains("is not valid YAML"), "{yaml}");
        let json = OpenApiSpec::parse("{\"openapi\": \"3.1.0\",\n \"paths\": {,}}").unwrap_err();
        assert!(
            json.to_string()
                .contains("at `line 2, column 12`: is not valid JSON"),
            "{json}"
        );
        assert_eq!(json.location(), Some("line 2, column 12"));
    }

    #[test]
    fn percent_encoded_pointers_decode() {
        assert_eq!(percent_decode("/a%20b").as_deref(), Some("/a b"));
        assert_eq!(percent_decode("/a%2"), None);
    }
}
