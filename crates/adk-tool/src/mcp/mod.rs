//! The MCP toolset (feature `mcp`): the tools of a Model Context Protocol server, over stdio (a
//! child process) or streamable HTTP, on the official `rmcp` crate.
//!
//! ```no_run
//! use adk_tool::mcp::McpToolset;
//! use adk_tool::ToolFilter;
//!
//! // A server started as a child process, offering only two of its tools.
//! let files = McpToolset::stdio("npx", ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"])
//!     .tool_filter(ToolFilter::names(["read_text_file", "list_directory"]))
//!     .build();
//!
//! // A server reached over streamable HTTP.
//! let remote = McpToolset::streamable_http("http://127.0.0.1:3001/mcp")
//!     .name("remote")
//!     .build();
//! ```
//!
//! The server is started (or reached) on the first call to
//! [`tools`](crate::Toolset::tools), not when the toolset is built. When the connection drops (the
//! child exits, the HTTP session expires), the next request reconnects and lists the tools again;
//! a tool call lost with its connection is sent again only when the server marks the tool
//! idempotent, as the server may have acted already. Closing the toolset, or dropping it, ends
//! the child process.
//!
//! # An MCP server is not trusted
//!
//! - A stdio server's process gets only a small safelist of this process's environment (`PATH`,
//!   `HOME`, the locale, the temporary folder, certificate locations) plus what the builder names
//!   with [`env`](McpToolsetBuilder::env) and [`inherit_env`](McpToolsetBuilder::inherit_env).
//! - Tool names must be plain identifiers; descriptions and the texts inside schemas lose control
//!   and invisible characters and are cut to
//!   [`max_description_chars`](McpToolsetBuilder::max_description_chars).
//! - The tools are listed again on every [`tools`](crate::Toolset::tools) call; a tool whose
//!   description or schema changed since it was first listed is left out (with a warning) unless
//!   [`accept_tool_changes`](McpToolsetBuilder::accept_tool_changes) is on, so a server cannot
//!   swap a reviewed tool for a poisoned one mid-session. A name that collides with another tool of
//!   the agent is refused by the flow.
//! - No message is read past [`max_message_bytes`](McpToolsetBuilder::max_message_bytes).
//! - Error messages name the server by its program or URL, never its arguments, environment or
//!   token, and `Debug` output redacts them.

mod connection;
mod endpoint;
mod limited_lines;
mod tool;
mod untrusted;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use adk_core::{ReadonlyContext, Result};
use async_trait::async_trait;

use crate::{Tool, ToolFilter, Toolset};
use connection::{Connection, Limits};
use endpoint::Endpoint;
pub use endpoint::INHERITED_ENV;
pub use tool::McpTool;

/// How long a server may take to start and answer the MCP handshake, by default.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a server may take to answer one request, by default.
const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// How long closing a session may take, by default, before the child is killed.
const DEFAULT_CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// The largest message read from a server, by default: 16 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// The longest tool description (and text inside a tool's schema) offered to the model, by
/// default, in characters.
pub const DEFAULT_MAX_DESCRIPTION_CHARS: usize = 2048;

/// The tools of one MCP server. See the [module docs](self).
pub struct McpToolset {
    name: String,
    connection: Arc<Connection>,
    filter: Option<ToolFilter>,
    require_confirmation: bool,
    max_description_chars: usize,
    accept_tool_changes: bool,
    /// The fingerprint of each tool's definition when it was first listed.
    first_seen: parking_lot::Mutex<HashMap<String, u64>>,
}

impl McpToolset {
    /// A toolset whose server is the child process `program args...`, speaking MCP on its stdin and
    /// stdout.
    pub fn stdio<I, S>(program: impl Into<String>, args: I) -> McpToolsetBuilder
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        McpToolsetBuilder::new(Endpoint::Stdio {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
            inherit_env: Vec::new(),
            current_dir: None,
        })
    }

    /// A toolset whose server is the streamable HTTP endpoint at `url` (for example
    /// `http://127.0.0.1:3001/mcp`).
    pub fn streamable_http(url: impl Into<String>) -> McpToolsetBuilder {
        McpToolsetBuilder::new(Endpoint::StreamableHttp {
            url: url.into(),
            bearer_token: None,
        })
    }

    /// The id of the server's child process while connected over stdio.
    pub fn process_id(&self) -> Option<u32> {
        self.connection.process_id()
    }
}

#[async_trait]
impl Toolset for McpToolset {
    fn name(&self) -> &str {
        &self.name
    }

    async fn tools(&self, ctx: &ReadonlyContext) -> Result<Vec<Arc<dyn Tool>>> {
        let listed = self.connection.list_tools().await?;
        let mut tools = Vec::with_capacity(listed.len());
        for info in listed {
            let tool = match untrusted::vet(info, self.max_description_chars) {
                Ok(tool) => tool,
                Err(reason) => {
                    tracing::warn!(toolset = %self.name, server = %self.connection.label(), "an MCP tool was refused: {reason}");
                    continue;
                }
            };
            if !self.keeps_definition(&tool.name, tool.fingerprint) {
                continue;
            }
            let tool = Arc::new(McpTool::new(
                tool,
                &self.connection,
                self.require_confirmation,
            )) as Arc<dyn Tool>;
            if self
                .filter
                .as_ref()
                .is_none_or(|filter| filter.keeps(tool.as_ref(), ctx))
            {
                tools.push(tool);
            }
        }
        Ok(tools)
    }

    async fn close(&self) -> Result<()> {
        self.connection.close().await;
        Ok(())
    }
}

impl McpToolset {
    /// Whether the tool named `name` may be offered with this definition: it is new, or the same
    /// as when first listed, or changes are accepted.
    fn keeps_definition(&self, name: &str, fingerprint: u64) -> bool {
        let mut first_seen = self.first_seen.lock();
        match first_seen.get(name) {
            None => {
                first_seen.insert(name.to_owned(), fingerprint);
                true
            }
            Some(&seen) if seen == fingerprint => true,
            Some(_) if self.accept_tool_changes => {
                tracing::warn!(toolset = %self.name, tool = name, "an MCP tool changed its definition; the new one is offered");
                first_seen.insert(name.to_owned(), fingerprint);
                true
            }
            Some(_) => {
                tracing::warn!(toolset = %self.name, tool = name, "an MCP tool changed its description or schema since it was first listed; it is left out (McpToolsetBuilder::accept_tool_changes)");
                false
            }
        }
    }
}

impl std::fmt::Debug for McpToolset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpToolset")
            .field("name", &self.name)
            .field("filter", &self.filter)
            .finish_non_exhaustive()
    }
}

/// Builds an [`McpToolset`]; made by [`McpToolset::stdio`] or [`McpToolset::streamable_http`].
#[must_use]
#[derive(Debug)]
pub struct McpToolsetBuilder {
    endpoint: Endpoint,
    name: Option<String>,
    filter: Option<ToolFilter>,
    require_confirmation: bool,
    connect_timeout: Duration,
    request_timeout: Duration,
    close_timeout: Duration,
    max_message_bytes: usize,
    max_description_chars: usize,
    accept_tool_changes: bool,
}

impl McpToolsetBuilder {
    fn new(endpoint: Endpoint) -> Self {
        Self {
            endpoint,
            name: None,
            filter: None,
            require_confirmation: false,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            close_timeout: DEFAULT_CLOSE_TIMEOUT,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_description_chars: DEFAULT_MAX_DESCRIPTION_CHARS,
            accept_tool_changes: false,
        }
    }

    /// The toolset's name, for messages and filters; by default `mcp`.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Offers only the tools that pass `filter`.
    pub fn tool_filter(mut self, filter: ToolFilter) -> Self {
        self.filter = Some(filter);
        self
    }

    /// Whether every call of the server's tools needs the user's confirmation.
    pub fn require_confirmation(mut self, required: bool) -> Self {
        self.require_confirmation = required;
        self
    }

    /// How long the server may take to start and answer the handshake (30 s by default).
    pub fn connect_timeout(mut self, limit: Duration) -> Self {
        self.connect_timeout = limit;
        self
    }

    /// How long the server may take to answer one request (60 s by default).
    pub fn request_timeout(mut self, limit: Duration) -> Self {
        self.request_timeout = limit;
        self
    }

    /// How long closing a session may take before the child process is killed (stdio) or the
    /// session abandoned (HTTP); 5 s by default. A session that dropped is closed in the
    /// background, so a server slow to close stalls no call.
    pub fn close_timeout(mut self, limit: Duration) -> Self {
        self.close_timeout = limit;
        self
    }

    /// The largest message read from the server, in bytes (default
    /// [`DEFAULT_MAX_MESSAGE_BYTES`]); a larger one ends the connection with a
    /// [`McpProtocol`](crate::ToolErrorKind::McpProtocol) error naming the limit.
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }

    /// The longest tool description, and text inside a tool's schema, offered to the model, in
    /// characters (default [`DEFAULT_MAX_DESCRIPTION_CHARS`]); longer ones are cut.
    pub fn max_description_chars(mut self, chars: usize) -> Self {
        self.max_description_chars = chars;
        self
    }

    /// Offers a tool whose description or schema changed since it was first listed (default:
    /// such a tool is left out, with a warning).
    pub fn accept_tool_changes(mut self, accept: bool) -> Self {
        self.accept_tool_changes = accept;
        self
    }

    /// Sets an environment variable of the child process (stdio only; ignored over HTTP). The
    /// child gets only these, those named with [`inherit_env`](Self::inherit_env) and a small
    /// safelist of this process's (see the [module docs](self)).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let Endpoint::Stdio { env, .. } = &mut self.endpoint {
            env.push((key.into(), value.into()));
        }
        self
    }

    /// Passes this process's variable `name`, when set, on to the child process (stdio only;
    /// ignored over HTTP): for what a server needs that the safelist lacks, such as
    /// `npm_config_registry` for `npx`, or a key meant for that server.
    pub fn inherit_env(mut self, name: impl Into<String>) -> Self {
        if let Endpoint::Stdio { inherit_env, .. } = &mut self.endpoint {
            inherit_env.push(name.into());
        }
        self
    }

    /// Sets the working directory of the child process (stdio only; ignored over HTTP).
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        if let Endpoint::Stdio { current_dir, .. } = &mut self.endpoint {
            *current_dir = Some(dir.into());
        }
        self
    }

    /// Sends `Authorization: Bearer <token>` with every request (HTTP only; ignored over stdio).
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        if let Endpoint::StreamableHttp { bearer_token, .. } = &mut self.endpoint {
            *bearer_token = Some(token.into());
        }
        self
    }

    /// Builds the toolset. Nothing is started until its tools are first asked for.
    pub fn build(self) -> McpToolset {
        McpToolset {
            name: self.name.unwrap_or_else(|| "mcp".to_owned()),
            connection: Arc::new(Connection::new(
                self.endpoint,
                Limits {
                    connect_timeout: self.connect_timeout,
                    request_timeout: self.request_timeout,
                    close_timeout: self.close_timeout,
                    max_message_bytes: self.max_message_bytes,
                },
            )),
            filter: self.filter,
            require_confirmation: self.require_confirmation,
            max_description_chars: self.max_description_chars,
            accept_tool_changes: self.accept_tool_changes,
            first_seen: parking_lot::Mutex::default(),
        }
    }
}
