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
//! child exits, the HTTP session expires), the next request reconnects once and tries again.
//! Closing the toolset, or dropping it, ends the child process.

mod connection;
mod tool;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use adk_core::{ReadonlyContext, Result};
use async_trait::async_trait;

use crate::{Tool, ToolFilter, Toolset};
use connection::{Connection, Endpoint};
pub use tool::McpTool;

/// How long a server may take to start and answer the MCP handshake, by default.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a server may take to answer one request, by default.
const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// The tools of one MCP server. See the [module docs](self).
pub struct McpToolset {
    name: String,
    connection: Arc<Connection>,
    filter: Option<ToolFilter>,
    require_confirmation: bool,
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
        let tools = listed
            .into_iter()
            .map(|info| {
                Arc::new(McpTool::new(
                    info,
                    &self.connection,
                    self.require_confirmation,
                )) as Arc<dyn Tool>
            })
            .filter(|tool| {
                self.filter
                    .as_ref()
                    .is_none_or(|filter| filter.keeps(tool.as_ref(), ctx))
            })
            .collect();
        Ok(tools)
    }

    async fn close(&self) -> Result<()> {
        self.connection.close().await;
        Ok(())
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

    /// Sets an environment variable of the child process (stdio only; ignored over HTTP).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let Endpoint::Stdio { env, .. } = &mut self.endpoint {
            env.push((key.into(), value.into()));
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
                self.connect_timeout,
                self.request_timeout,
            )),
            filter: self.filter,
            require_confirmation: self.require_confirmation,
        }
    }
}
