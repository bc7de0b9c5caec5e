//! The `args` of an `McpToolset` tool entry, in the shape of ADK Python's `McpToolsetConfig`:
//! exactly one of `stdio_server_params`, `stdio_connection_params` (a server started as a local
//! process) or `streamable_http_connection_params` (a server reached over streamable HTTP), and
//! optionally a `tool_filter`.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer};

use super::context;
use super::section::{self, Section};

/// Where an MCP server is and which of its tools the agent sees.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "McpToolset args",
    description = "The MCP server whose tools the agent may call: exactly one of \
        stdio_server_params, stdio_connection_params or streamable_http_connection_params."
)]
pub(crate) struct McpToolsetArgs {
    /// A server started as a local process that speaks MCP on its standard input and output.
    #[serde(default, deserialize_with = "section::optional")]
    pub(crate) stdio_server_params: Option<StdioServerParams>,
    /// A server started as a local process, with how long it may take to start.
    #[serde(default, deserialize_with = "section::optional")]
    pub(crate) stdio_connection_params: Option<StdioConnectionParams>,
    /// A server reached over MCP's streamable HTTP transport.
    #[serde(default, deserialize_with = "section::optional")]
    pub(crate) streamable_http_connection_params: Option<StreamableHttpParams>,
    /// The names of the server's tools the agent sees; all of them when absent.
    #[serde(default)]
    pub(crate) tool_filter: Option<Vec<String>>,
}

impl Section for McpToolsetArgs {
    const WHAT: &'static str = "the McpToolset args";
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        (
            "sse_connection_params",
            "adk-rs speaks MCP over stdio or streamable HTTP, not over the older SSE transport; \
             use `streamable_http_connection_params` with the server's streamable HTTP URL",
        ),
        (
            "tool_name_prefix",
            "adk-rs offers an MCP server's tools under their own names; drop the key",
        ),
        (
            "tool_list_cache_ttl_seconds",
            "adk-rs asks the server for its tools at each step; drop the key",
        ),
        (
            "auth_scheme",
            "adk-rs has no OAuth flows for MCP servers; send a token with \
             `headers: {Authorization: Bearer <token>}` in `streamable_http_connection_params`",
        ),
        (
            "auth_credential",
            "adk-rs has no OAuth flows for MCP servers; send a token with \
             `headers: {Authorization: Bearer <token>}` in `streamable_http_connection_params`",
        ),
        (
            "credential_key",
            "adk-rs has no OAuth flows for MCP servers; drop the key",
        ),
        (
            "use_mcp_resources",
            "adk-rs offers an MCP server's tools, not its resources; drop the key",
        ),
    ];

    fn check(&self) -> Result<(), String> {
        let connection = self.clone().into_server()?.connection;
        if matches!(connection, McpConnection::Stdio { .. }) {
            context::with(|context| {
                if context.stdio_mcp_allowed {
                    Ok(())
                } else {
                    Err("this loader does not start MCP servers as local processes \
                         (AgentLoader::stdio_mcp_servers(false)); reach the server with \
                         `streamable_http_connection_params` instead"
                        .to_owned())
                }
            })?;
        }
        Ok(())
    }
}

impl McpToolsetArgs {
    /// The server the args describe, when they name exactly one.
    pub(crate) fn into_server(self) -> Result<McpServer, String> {
        let connection = match (
            self.stdio_server_params,
            self.stdio_connection_params,
            self.streamable_http_connection_params,
        ) {
            (Some(params), None, None) => McpConnection::Stdio {
                params,
                connect_timeout: None,
            },
            (None, Some(connection), None) => McpConnection::Stdio {
                params: connection.server_params,
                connect_timeout: connection.timeout.map(|timeout| timeout.0),
            },
            (None, None, Some(http)) => McpConnection::StreamableHttp {
                bearer_token: http.bearer_token()?.map(str::to_owned),
                connect_timeout: http.timeout.map(|timeout| timeout.0),
                request_timeout: http.sse_read_timeout.map(|timeout| timeout.0),
                url: http.url,
            },
            _ => {
                return Err(
                    "the McpToolset args need exactly one of `stdio_server_params`, \
                     `stdio_connection_params` and `streamable_http_connection_params`"
                        .to_owned(),
                );
            }
        };
        Ok(McpServer {
            connection,
            tool_filter: self.tool_filter,
        })
    }
}

/// An MCP server, as the args describe it once checked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct McpServer {
    pub(crate) connection: McpConnection,
    /// The names of the server's tools the agent sees; all of them when `None`.
    pub(crate) tool_filter: Option<Vec<String>>,
}

/// How to reach an MCP server.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum McpConnection {
    /// A local process speaking MCP on its standard input and output.
    Stdio {
        params: StdioServerParams,
        connect_timeout: Option<Duration>,
    },
    /// A streamable HTTP endpoint.
    StreamableHttp {
        url: String,
        bearer_token: Option<String>,
        connect_timeout: Option<Duration>,
        request_timeout: Option<Duration>,
    },
}

/// A server started as a local process: the command, its arguments, its environment and working
/// directory.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StdioServerParams {
    /// The program to start (`npx`, `node`, `uvx`, a path), found on `PATH` like a shell does.
    pub(crate) command: String,
    /// Its arguments.
    #[serde(default)]
    pub(crate) args: Vec<String>,
    /// Environment variables set for it, on top of those it inherits.
    #[serde(default)]
    pub(crate) env: Option<BTreeMap<String, String>>,
    /// Its working directory; relative paths are relative to the directory the process runs in.
    #[serde(default)]
    pub(crate) cwd: Option<String>,
}

impl Section for StdioServerParams {
    const WHAT: &'static str = "the stdio server params";
    const REQUIRED: &'static [&'static str] = &["command"];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        (
            "encoding",
            "adk-rs always speaks UTF-8 to MCP servers; drop the key",
        ),
        (
            "encoding_error_handler",
            "adk-rs always speaks UTF-8 to MCP servers; drop the key",
        ),
    ];

    fn check(&self) -> Result<(), String> {
        if self.command.trim().is_empty() {
            return Err("`command` is empty; name the program that runs the MCP server".to_owned());
        }
        Ok(())
    }
}

/// A server started as a local process, with how long it may take to start.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StdioConnectionParams {
    /// The process to start.
    #[serde(deserialize_with = "section::required")]
    pub(crate) server_params: StdioServerParams,
    /// How long, in seconds, the server may take to start and answer MCP's handshake.
    #[serde(default)]
    pub(crate) timeout: Option<Seconds>,
}

impl Section for StdioConnectionParams {
    const WHAT: &'static str = "the stdio connection params";
    const REQUIRED: &'static [&'static str] = &["server_params"];
}

/// A server reached over MCP's streamable HTTP transport.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StreamableHttpParams {
    /// The server's endpoint, for example `http://127.0.0.1:3001/mcp`.
    pub(crate) url: String,
    /// Headers sent with every request; adk-rs sends `Authorization: Bearer <token>` and no
    /// other.
    #[serde(default)]
    pub(crate) headers: Option<BTreeMap<String, String>>,
    /// How long, in seconds, the server may take to answer MCP's handshake.
    #[serde(default)]
    pub(crate) timeout: Option<Seconds>,
    /// How long, in seconds, the server may take to answer one request.
    #[serde(default)]
    pub(crate) sse_read_timeout: Option<Seconds>,
}

impl Section for StreamableHttpParams {
    const WHAT: &'static str = "the streamable HTTP connection params";
    const REQUIRED: &'static [&'static str] = &["url"];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[(
        "terminate_on_close",
        "adk-rs decides itself how an MCP session ends; drop the key",
    )];

    fn check(&self) -> Result<(), String> {
        if !(self.url.starts_with("http://") || self.url.starts_with("https://")) {
            return Err(format!(
                "`url` `{}` is not an http:// or https:// URL",
                self.url
            ));
        }
        self.bearer_token().map(|_| ())
    }
}

impl StreamableHttpParams {
    /// The token of the `Authorization: Bearer` header, if there is one; any other header is
    /// an error, as adk-rs's MCP client sends no other.
    pub(crate) fn bearer_token(&self) -> Result<Option<&str>, String> {
        let mut token = None;
        for (name, value) in self.headers.iter().flatten() {
            let bearer = name
                .eq_ignore_ascii_case("authorization")
                .then(|| value.strip_prefix("Bearer "))
                .flatten();
            match bearer {
                Some(bearer) => token = Some(bearer),
                None => {
                    return Err(format!(
                        "the header `{name}` cannot be sent: adk-rs sends MCP servers only \
                         `Authorization: Bearer <token>`"
                    ));
                }
            }
        }
        Ok(token)
    }
}

/// A duration in seconds, as ADK Python writes timeouts: a number that is not negative.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Seconds(pub(crate) Duration);

impl<'de> Deserialize<'de> for Seconds {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(SecondsVisitor)
    }
}

struct SecondsVisitor;

impl<'de> Visitor<'de> for SecondsVisitor {
    type Value = Seconds;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number of seconds")
    }

    fn visit_f64<E: de::Error>(self, seconds: f64) -> Result<Seconds, E> {
        Duration::try_from_secs_f64(seconds)
            .map(Seconds)
            .map_err(|_| {
                E::custom(format!(
                    "{seconds} is not a number of seconds: use 0 or more"
                ))
            })
    }

    fn visit_u64<E: de::Error>(self, seconds: u64) -> Result<Seconds, E> {
        Ok(Seconds(Duration::from_secs(seconds)))
    }

    fn visit_i64<E: de::Error>(self, seconds: i64) -> Result<Seconds, E> {
        u64::try_from(seconds)
            .map(|seconds| Seconds(Duration::from_secs(seconds)))
            .map_err(|_| {
                E::custom(format!(
                    "{seconds} is not a number of seconds: use 0 or more"
                ))
            })
    }
}

impl JsonSchema for Seconds {
    fn schema_name() -> Cow<'static, str> {
        "Seconds".into()
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "number", "minimum": 0 })
    }
}
