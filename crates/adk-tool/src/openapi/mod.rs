//! A toolset made from an OpenAPI 3.0 / 3.1 document: one [`OpenApiTool`] per operation, calling
//! the API over HTTP with the credentials the application gives.
//!
//! ```no_run
//! # async fn example() -> Result<(), adk_tool::openapi::OpenApiError> {
//! use adk_tool::openapi::{Credential, OpenApiSpec, OpenApiToolset};
//!
//! let spec = OpenApiSpec::from_url("http://127.0.0.1:8000/openapi.json").await?;
//! let pets = OpenApiToolset::builder(spec)
//!     .name("pets")
//!     .credential("api_key", Credential::api_key("s3cret"))
//!     .operations(["list_pets", "create_pet"])
//!     .require_confirmation_for_writes(true)
//!     .build()?;
//! # Ok(()) }
//! ```

mod auth;
mod operation;
mod spec;
mod tool;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use adk_core::{BoxError, ReadonlyContext, Result};
use async_trait::async_trait;
use serde_json::Value;

pub use auth::{AuthHeaders, Credential};
pub use spec::OpenApiSpec;
pub use tool::OpenApiTool;

use crate::{Tool, Toolset};
use auth::Credentials;
use spec::Place;
use tool::Shared;

/// The default deadline of one call, from sending the request to the end of the answer.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The default limit on a success's body: larger answers are refused rather than read.
const DEFAULT_MAX_RESPONSE_BYTES: usize = 1024 * 1024;

/// A document that cannot be read or made into tools, with the place of the problem: a path in
/// the document (`paths["/pets"].get.parameters[0].in`) or a line and column.
#[derive(Debug, thiserror::Error)]
#[error("the OpenAPI document {origin}{}: {message}", .location.as_ref().map(|l| format!(" is wrong at `{l}`")).unwrap_or_default())]
pub struct OpenApiError {
    origin: String,
    location: Option<String>,
    message: String,
    #[source]
    source: Option<BoxError>,
}

impl OpenApiError {
    fn new(origin: impl Into<String>, location: Option<String>, message: String) -> Self {
        Self {
            origin: origin.into(),
            location,
            message,
            source: None,
        }
    }

    /// Where in the document the problem is, when it is at one place.
    pub fn location(&self) -> Option<&str> {
        self.location.as_deref()
    }
}

impl From<OpenApiError> for adk_core::Error {
    fn from(error: OpenApiError) -> Self {
        adk_core::Error::new(adk_core::ErrorKind::Config, error.to_string()).with_source(error)
    }
}

/// `error` and its causes, for a message: reqwest's own text says only that a request failed,
/// its sources say why (`tcp connect error: Connection refused`).
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// A URL as messages show it: without user information, query or fragment, which may hold
/// secrets.
fn shown_url(url: &reqwest::Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    shown.to_string()
}

/// One operation of the document, as filters and [`AuthHeaders`] see it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OperationInfo {
    /// The tool's name: the `operationId` in snake case (`listPets` → `list_pets`), or the method
    /// and path when the operation has none (`get_pets_pet_id`).
    pub name: String,
    /// The document's `operationId`.
    pub operation_id: Option<String>,
    /// The HTTP method, upper case.
    pub method: String,
    /// The path template (`/pets/{petId}`).
    pub path: String,
    /// The security schemes the operation may use.
    pub security_schemes: Vec<String>,
}

type OperationFilter = Box<dyn Fn(&OperationInfo) -> bool + Send + Sync>;

/// Builds an [`OpenApiToolset`]; see [`OpenApiToolset::builder`].
pub struct OpenApiToolsetBuilder {
    spec: OpenApiSpec,
    name: Option<String>,
    base_url: Option<String>,
    credentials: Vec<(String, Credential)>,
    auth_headers: Vec<Arc<dyn AuthHeaders>>,
    filter: Option<OperationFilter>,
    timeout: Duration,
    max_response_bytes: usize,
    confirm_writes: bool,
    client: Option<reqwest::Client>,
}

impl fmt::Debug for OpenApiToolsetBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenApiToolsetBuilder")
            .field("origin", &self.spec.origin)
            .field("name", &self.name)
            .field("base_url", &self.base_url)
            .field("credentials", &self.credentials)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl OpenApiToolsetBuilder {
    /// The toolset's name (default: the document's title).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Where the API is, overriding the document's first server (needed when the document has
    /// no servers and was not fetched from a URL).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// The credential for the security scheme the document names `scheme`
    /// (`components.securitySchemes`). Each call uses the first of its operation's security
    /// alternatives whose schemes all have credentials.
    pub fn credential(mut self, scheme: impl Into<String>, credential: Credential) -> Self {
        self.credentials.push((scheme.into(), credential));
        self
    }

    /// Adds headers to every call (after the credentials'), from any source. With a hook set,
    /// an operation whose security schemes have no credential is still sent: the hook is trusted
    /// to sign it.
    pub fn auth_headers(mut self, provider: Arc<dyn AuthHeaders>) -> Self {
        self.auth_headers.push(provider);
        self
    }

    /// Keeps only the operations named here, by tool name or `operationId`.
    pub fn operations<I, S>(self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let names: Vec<String> = names.into_iter().map(Into::into).collect();
        self.operation_filter(move |operation| {
            names.iter().any(|name| {
                *name == operation.name || Some(name) == operation.operation_id.as_ref()
            })
        })
    }

    /// Keeps only the operations `keep` accepts. Operations left out are not read further, so
    /// this also skips operations the toolset would refuse (a recursive schema, say).
    pub fn operation_filter(
        mut self,
        keep: impl Fn(&OperationInfo) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.filter = Some(Box::new(keep));
        self
    }

    /// The deadline of one call (default 30 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The largest successful answer read, in bytes (default 1 MiB); larger ones fail the call.
    pub fn max_response_bytes(mut self, bytes: usize) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    /// Asks the user to confirm each call of an operation that is not `GET`, `HEAD` or `OPTIONS`
    /// before it is sent, as confirmed function tools do.
    pub fn require_confirmation_for_writes(mut self, confirm: bool) -> Self {
        self.confirm_writes = confirm;
        self
    }

    /// The HTTP client to send calls with (default: one of the toolset's own).
    pub fn client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// Reads every kept operation into a tool. Fails, naming the place, on a malformed
    /// operation, an unresolvable or cyclic `$ref`, an unknown security scheme given a
    /// credential, or a missing server URL.
    pub fn build(self) -> std::result::Result<OpenApiToolset, OpenApiError> {
        let spec = &self.spec;
        let keep =
            |operation: &OperationInfo| self.filter.as_ref().is_none_or(|keep| keep(operation));
        let operations = operation::operations(spec, &keep)?;
        let base_url = base_url(spec, self.base_url.as_deref())?;
        let client = match self.client {
            Some(client) => client,
            None => reqwest::Client::builder()
                .tcp_nodelay(true)
                .build()
                .map_err(|error| {
                    let mut failed = OpenApiError::new(
                        &spec.origin,
                        None,
                        format!("cannot be served: the HTTP client failed to start: {error}"),
                    );
                    failed.source = Some(Box::new(error));
                    failed
                })?,
        };
        let shared = Arc::new(Shared {
            client,
            base_url,
            credentials: Credentials::new(spec, self.credentials)?,
            auth_headers: self.auth_headers,
            timeout: self.timeout,
            max_response_bytes: self.max_response_bytes,
            confirm_writes: self.confirm_writes,
        });
        let mut tools: Vec<Arc<dyn Tool>> = Vec::with_capacity(operations.len());
        for operation in operations {
            let name = operation.info.name.clone();
            let tool = OpenApiTool::new(operation, shared.clone()).map_err(|error| {
                spec.error(
                    &Place::root().key("paths"),
                    format!("the arguments of `{name}` are not a schema adk-rs can check: {error}"),
                )
            })?;
            tools.push(Arc::new(tool));
        }
        let name = self
            .name
            .or_else(|| spec.title().map(str::to_owned))
            .unwrap_or_else(|| "openapi".to_owned());
        Ok(OpenApiToolset { name, tools })
    }
}

/// The URL calls go to: the one given, or the document's first server (its variables at their
/// defaults, relative to the document's own URL), or the document's URL's root.
fn base_url(
    spec: &OpenApiSpec,
    given: Option<&str>,
) -> std::result::Result<reqwest::Url, OpenApiError> {
    if let Some(given) = given {
        return reqwest::Url::parse(given).map_err(|error| {
            OpenApiError::new(
                &spec.origin,
                None,
                format!("cannot be served: the base URL `{given}` is not a URL: {error}"),
            )
        });
    }
    let place = Place::root().key("servers").index(0).key("url");
    let server = spec.root.pointer("/servers/0");
    let mut url = match server.map(|server| server.get("url")) {
        Some(Some(Value::String(url))) => url.clone(),
        Some(_) => return Err(spec.error(&place, "is missing or not a string".to_owned())),
        // OpenAPI's default server is `/`, the document's own host.
        None => "/".to_owned(),
    };
    if let Some(Value::Object(variables)) = server.and_then(|server| server.get("variables")) {
        for (name, variable) in variables {
            if let Some(default) = variable.get("default").and_then(Value::as_str) {
                url = url.replace(&format!("{{{name}}}"), default);
            }
        }
    }
    let parsed = match &spec.url {
        Some(document_url) => document_url.join(&url),
        None => reqwest::Url::parse(&url),
    };
    parsed.map_err(|error| {
        spec.error(
            &place,
            format!(
                "`{url}` is not a URL calls can be sent to ({error}); give one with `base_url`"
            ),
        )
    })
}

/// The operations of an OpenAPI document as tools, one per operation. Build it with
/// [`OpenApiToolset::builder`]; every problem of the document is found then, not mid-run.
#[derive(Clone)]
pub struct OpenApiToolset {
    name: String,
    tools: Vec<Arc<dyn Tool>>,
}

impl fmt::Debug for OpenApiToolset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.tools.iter().map(|tool| tool.name()).collect();
        f.debug_struct("OpenApiToolset")
            .field("name", &self.name)
            .field("tools", &names)
            .finish()
    }
}

impl OpenApiToolset {
    /// Starts a toolset for `spec`.
    pub fn builder(spec: OpenApiSpec) -> OpenApiToolsetBuilder {
        OpenApiToolsetBuilder {
            spec,
            name: None,
            base_url: None,
            credentials: Vec::new(),
            auth_headers: Vec::new(),
            filter: None,
            timeout: DEFAULT_TIMEOUT,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            confirm_writes: false,
            client: None,
        }
    }

    /// The names of the tools, in the document's order.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|tool| tool.name())
    }

    /// The tool of that name.
    pub fn tool(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|tool| tool.name() == name)
    }
}

#[async_trait]
impl Toolset for OpenApiToolset {
    fn name(&self) -> &str {
        &self.name
    }

    async fn tools(&self, _ctx: &ReadonlyContext) -> Result<Vec<Arc<dyn Tool>>> {
        Ok(self.tools.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_urls_hide_secrets() {
        let url =
            reqwest::Url::parse("https://user:pw@api.example.com/v1/pets?api_key=k#x").unwrap();
        assert_eq!(shown_url(&url), "https://api.example.com/v1/pets");
    }
}
