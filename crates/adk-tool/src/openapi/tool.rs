//! [`OpenApiTool`]: one operation as a tool. A call checks the model's arguments, asks for
//! confirmation when configured to, builds the request (path, query, headers, cookies, JSON body,
//! credentials), sends it and reads a bounded answer.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use adk_core::{FunctionDeclaration, Result};
use async_trait::async_trait;
use reqwest::Url;
use serde_json::{Value, json};

use super::auth::{AuthHeaders, Credentials};
use super::operation::{BODY_ARGUMENT, Location, Operation};
use super::{OperationInfo, shown_url};
use crate::function_tool::{ConfirmationGate, confirmation_gate};
use crate::oauth2::Access;
use crate::schema::is_empty_object;
use crate::{
    ArgumentValidator, Tool, ToolContext, ToolEffect, ToolError, ToolErrorKind, simplify_schema,
};

/// How much of an error answer the model reads; the rest is cut, saying so.
const ERROR_BODY_CHARS: usize = 2048;

/// What a call answers while the user is asked to sign in for it.
const SIGN_IN_PENDING: &str = "waiting for the user to sign in";

/// What every tool of one toolset shares.
pub(crate) struct Shared {
    pub(crate) client: reqwest::Client,
    pub(crate) base_url: Url,
    pub(crate) credentials: Credentials,
    pub(crate) auth_headers: Vec<Arc<dyn AuthHeaders>>,
    pub(crate) timeout: Duration,
    pub(crate) max_response_bytes: usize,
    pub(crate) confirm_writes: bool,
}

/// One operation of an OpenAPI document as a tool, made by
/// [`OpenApiToolset`](super::OpenApiToolset).
///
/// Its arguments are the operation's parameters by name (a name used in two places gets the
/// place as a prefix: `path_id`, `header_id`) and the JSON request body under `body`. A success
/// answers the response's JSON (or its text when it is not JSON, `null` when empty); any other
/// status is a [`ToolError`] of kind [`HttpStatus`](ToolErrorKind::HttpStatus) whose message
/// holds the status and the start of the body, so the model can correct its call.
///
/// An operation that declares an `Idempotency-Key` header parameter (as payment APIs do) gets
/// the call's [`ToolContext::idempotency_key`] in it, the same for every run of that call (a
/// resume, another replica), and the model is not asked for it; such an operation is
/// [`Idempotent`](ToolEffect::Idempotent) whatever its method.
pub struct OpenApiTool {
    operation: Operation,
    validator: ArgumentValidator,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for OpenApiTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenApiTool")
            .field("operation", &self.operation.info)
            .finish_non_exhaustive()
    }
}

impl OpenApiTool {
    pub(crate) fn new(
        operation: Operation,
        shared: Arc<Shared>,
    ) -> std::result::Result<Self, ToolError> {
        let validator = ArgumentValidator::new(&operation.schema)?;
        Ok(Self {
            operation,
            validator,
            shared,
        })
    }

    /// The operation this tool calls.
    pub fn operation(&self) -> &OperationInfo {
        &self.operation.info
    }

    fn needs_confirmation(&self) -> bool {
        self.shared.confirm_writes
            && !matches!(
                self.operation.info.method.as_str(),
                "GET" | "HEAD" | "OPTIONS"
            )
    }

    fn error(&self, kind: ToolErrorKind, message: String) -> ToolError {
        ToolError::new(
            kind,
            format!("`{}` failed: {message}", self.operation.info.name),
        )
    }

    /// The URL of a call: the base URL, the path with its parameters filled in, the query.
    fn url(&self, args: &Value, extra_query: &[(String, String)]) -> Url {
        let mut path = self.operation.info.path.clone();
        for parameter in self.parameters(args, Location::Path) {
            let (parameter, value) = parameter;
            let value = encode_path_segment(&scalar_text(value));
            path = path.replace(&format!("{{{}}}", parameter.name), &value);
        }
        let mut url = self.shared.base_url.clone();
        let joined = format!(
            "{}/{}",
            url.path().trim_end_matches('/'),
            path.trim_start_matches('/')
        );
        url.set_path(&joined);
        let mut pairs = Vec::new();
        for (parameter, value) in self.parameters(args, Location::Query) {
            match value {
                // Arrays are sent as repeated keys, OpenAPI's default (`form`, exploded).
                Value::Array(items) => pairs.extend(
                    items
                        .iter()
                        .map(|item| (parameter.name.clone(), scalar_text(item))),
                ),
                other => pairs.push((parameter.name.clone(), scalar_text(other))),
            }
        }
        pairs.extend(extra_query.iter().cloned());
        if !pairs.is_empty() {
            url.query_pairs_mut().extend_pairs(pairs);
        }
        url
    }

    /// The parameters of `location` the model gave a (non-null) value for.
    fn parameters<'a>(
        &'a self,
        args: &'a Value,
        location: Location,
    ) -> impl Iterator<Item = (&'a super::operation::Parameter, &'a Value)> {
        self.operation
            .parameters
            .iter()
            .filter(move |parameter| parameter.location == location)
            .filter_map(move |parameter| {
                args.get(&parameter.argument)
                    .filter(|value| !value.is_null())
                    .map(|value| (parameter, value))
            })
    }

    async fn call(&self, ctx: &ToolContext, args: &Value) -> Result<Value> {
        // Without credentials for the operation's schemes, the `AuthHeaders` hooks are trusted
        // to sign the call; with neither, the call would only be refused by the server.
        let applied = self
            .shared
            .credentials
            .apply(&self.operation.security)
            .or_else(|| (!self.shared.auth_headers.is_empty()).then(Default::default))
            .ok_or_else(|| {
                self.error(
                    ToolErrorKind::Failed,
                    format!(
                        "the operation needs credentials for the security scheme {}, and none \
                         were configured; it cannot be called",
                        scheme_names(&self.operation.security)
                    ),
                )
            })?;
        let url = self.url(args, &applied.query);
        let method = reqwest::Method::from_bytes(self.operation.info.method.as_bytes())
            .unwrap_or(reqwest::Method::GET);
        let mut request = self
            .shared
            .client
            .request(method, url.clone())
            .timeout(self.shared.timeout)
            .header(reqwest::header::ACCEPT, "application/json");
        for (parameter, value) in self.parameters(args, Location::Header) {
            request = request.header(parameter.name.as_str(), scalar_text(value));
        }
        if let (Some(header), Some(key)) =
            (&self.operation.idempotency_header, ctx.idempotency_key())
        {
            request = request.header(header.as_str(), key);
        }
        let mut cookies: Vec<String> = self
            .parameters(args, Location::Cookie)
            .map(|(parameter, value)| format!("{}={}", parameter.name, scalar_text(value)))
            .collect();
        cookies.extend(
            applied
                .cookies
                .iter()
                .map(|(name, value)| format!("{name}={value}")),
        );
        if !cookies.is_empty() {
            request = request.header(reqwest::header::COOKIE, cookies.join("; "));
        }
        for (name, value) in &applied.headers {
            request = request.header(name.as_str(), value.as_str());
        }
        for auth in &applied.oauth2 {
            match auth.access_token(ctx).await? {
                Access::Token(token) => {
                    request = request.bearer_auth(token.secret());
                }
                // The call's event asks the user to sign in; the call runs again once they did.
                _ => return Ok(json!({"status": SIGN_IN_PENDING})),
            }
        }
        for provider in &self.shared.auth_headers {
            for (name, value) in provider.headers(ctx, &self.operation.info).await? {
                request = request.header(name, value);
            }
        }
        if let (Some(media_type), Some(body)) = (
            &self.operation.body_media_type,
            args.get(BODY_ARGUMENT).filter(|body| !body.is_null()),
        ) {
            let bytes = serde_json::to_vec(body)
                .map_err(|error| self.error(ToolErrorKind::Serialization, error.to_string()))?;
            request = request
                .header(reqwest::header::CONTENT_TYPE, media_type.as_str())
                .body(bytes);
        }
        let shown = shown_url(&url);
        let unreachable = |error: reqwest::Error| {
            // reqwest's message names the URL with its query, which may hold an API key.
            let error = super::with_causes(&error.without_url());
            self.error(
                ToolErrorKind::HttpRequest,
                format!(
                    "{} {shown} could not be completed: {error}",
                    self.operation.info.method
                ),
            )
        };
        let mut response = request.send().await.map_err(unreachable)?;
        let status = response.status();
        let mut body = Vec::new();
        let mut truncated = false;
        while let Some(chunk) = response.chunk().await.map_err(unreachable)? {
            if body.len() + chunk.len() > self.shared.max_response_bytes {
                if status.is_success() {
                    return Err(self
                        .error(
                            ToolErrorKind::HttpRequest,
                            format!(
                                "the answer of {} {shown} is larger than the limit of {} bytes",
                                self.operation.info.method, self.shared.max_response_bytes
                            ),
                        )
                        .into());
                }
                truncated = true;
                break;
            }
            body.extend_from_slice(&chunk);
        }
        if status.is_success() {
            return Ok(answer(&body));
        }
        let text = String::from_utf8_lossy(&body);
        let mut message = format!("{} {shown} answered {status}", self.operation.info.method);
        if !text.trim().is_empty() {
            let shown_body: String = text.chars().take(ERROR_BODY_CHARS).collect();
            let _ = write!(message, ": {shown_body}");
            if truncated || shown_body.len() < text.len() {
                message.push_str(" [cut]");
            }
        }
        Err(self.error(ToolErrorKind::HttpStatus, message).into())
    }
}

#[async_trait]
impl Tool for OpenApiTool {
    fn name(&self) -> &str {
        &self.operation.info.name
    }

    /// HTTP's own word on the method: `GET`, `HEAD` and `OPTIONS` are safe, `PUT` and `DELETE`
    /// idempotent, and anything else (`POST`, `PATCH`) may act again when repeated, unless the
    /// operation takes an `Idempotency-Key` header, which the call's key fills.
    fn effect(&self) -> ToolEffect {
        match self.operation.info.method.as_str() {
            "GET" | "HEAD" | "OPTIONS" => ToolEffect::ReadOnly,
            "PUT" | "DELETE" => ToolEffect::Idempotent,
            _ if self.operation.idempotency_header.is_some() => ToolEffect::Idempotent,
            _ => ToolEffect::Effectful,
        }
    }

    fn description(&self) -> &str {
        &self.operation.description
    }

    fn declaration(&self) -> Option<FunctionDeclaration> {
        let declaration = FunctionDeclaration::new(self.name(), self.description());
        let parameters = simplify_schema(self.operation.schema.clone());
        Some(if is_empty_object(&parameters) {
            declaration
        } else {
            declaration.with_parameters(parameters)
        })
    }

    async fn run(&self, ctx: ToolContext, args: Value) -> Result<Value> {
        self.validator.validate(self.name(), &args)?;
        if let ConfirmationGate::Respond(response) =
            confirmation_gate(&ctx, self.name(), self.needs_confirmation())?
        {
            return Ok(response);
        }
        self.call(&ctx, &args).await
    }
}

/// A success's body: its JSON, its text when it is not JSON, `null` when empty.
fn answer(body: &[u8]) -> Value {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Value::Null;
    }
    serde_json::from_slice(body).unwrap_or_else(|_| json!({"text": String::from_utf8_lossy(body)}))
}

/// A parameter's value as it appears in a URL or header: strings as they are, other values as
/// JSON.
fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Percent-encodes everything in a path segment but RFC 3986's unreserved characters, so a value
/// cannot add segments (`../admin`) or a query.
fn encode_path_segment(value: &str) -> String {
    let mut encoded = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            encoded.push(char::from(byte));
        } else {
            let _ = write!(encoded, "%{byte:02X}");
        }
    }
    // `.` and `..` alone would still move up the path once normalised.
    match encoded.as_str() {
        "." => "%2E".to_owned(),
        ".." => "%2E%2E".to_owned(),
        _ => encoded,
    }
}

fn scheme_names(security: &[Vec<String>]) -> String {
    security
        .iter()
        .map(|alternative| {
            alternative
                .iter()
                .map(|scheme| format!("`{scheme}`"))
                .collect::<Vec<_>>()
                .join(" and ")
        })
        .collect::<Vec<_>>()
        .join(" or ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_segments_cannot_escape() {
        assert_eq!(encode_path_segment("a b/../c?d"), "a%20b%2F..%2Fc%3Fd");
        assert_eq!(encode_path_segment(".."), "%2E%2E");
        assert_eq!(encode_path_segment("été"), "%C3%A9t%C3%A9");
    }

    #[test]
    fn answers_are_json_text_or_null() {
        assert_eq!(answer(b"{\"a\":1}"), json!({"a": 1}));
        assert_eq!(answer(b"plain"), json!({"text": "plain"}));
        assert_eq!(answer(b" \n"), Value::Null);
    }
}
