//! The connection to one MCP server: started lazily, restarted once when it drops, closed when
//! the toolset is closed or dropped.

use std::collections::VecDeque;
use std::future::Future;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject, Tool as McpToolInfo};
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{Peer, RoleClient, ServiceError, ServiceExt};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::{ToolError, ToolErrorKind};

/// How much of a server's stderr is kept for error messages.
const STDERR_KEPT_LINES: usize = 20;

/// How long a failed start waits for the rest of the server's stderr.
const STDERR_GRACE: Duration = Duration::from_millis(500);

/// How to reach a server.
#[derive(Debug, Clone)]
pub(crate) enum Endpoint {
    /// A child process speaking MCP on its stdin and stdout.
    Stdio {
        program: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        current_dir: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint.
    StreamableHttp {
        url: String,
        bearer_token: Option<String>,
    },
}

impl Endpoint {
    /// How messages name the server: its command line or its URL.
    pub(crate) fn label(&self) -> String {
        match self {
            Self::Stdio { program, args, .. } => {
                let mut label = program.clone();
                for arg in args {
                    label.push(' ');
                    label.push_str(arg);
                }
                format!("`{label}`")
            }
            Self::StreamableHttp { url, .. } => format!("at {url}"),
        }
    }
}

/// A live session with the server.
struct Live {
    service: RunningService<RoleClient, ()>,
    generation: u64,
}

/// The connection state of one toolset.
pub(crate) struct Connection {
    endpoint: Endpoint,
    connect_timeout: Duration,
    request_timeout: Duration,
    live: tokio::sync::Mutex<Option<Live>>,
    generation: parking_lot::Mutex<u64>,
    process_id: parking_lot::Mutex<Option<u32>>,
    stderr: Arc<parking_lot::Mutex<VecDeque<String>>>,
}

impl Connection {
    pub(crate) fn new(
        endpoint: Endpoint,
        connect_timeout: Duration,
        request_timeout: Duration,
    ) -> Self {
        Self {
            endpoint,
            connect_timeout,
            request_timeout,
            live: tokio::sync::Mutex::new(None),
            generation: parking_lot::Mutex::new(0),
            process_id: parking_lot::Mutex::new(None),
            stderr: Arc::default(),
        }
    }

    /// The id of the server's child process, while connected over stdio.
    pub(crate) fn process_id(&self) -> Option<u32> {
        *self.process_id.lock()
    }

    /// Lists the server's tools.
    pub(crate) async fn list_tools(&self) -> Result<Vec<McpToolInfo>, ToolError> {
        self.request("list its tools", |peer| async move {
            peer.list_all_tools().await
        })
        .await
    }

    /// Calls tool `name` with `arguments`.
    pub(crate) async fn call_tool(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> Result<CallToolResult, ToolError> {
        let params = CallToolRequestParams::new(name.to_owned());
        let params = match arguments {
            Some(arguments) => params.with_arguments(arguments),
            None => params,
        };
        self.request(&format!("call `{name}`"), move |peer| {
            let params = params.clone();
            async move { peer.call_tool(params).await }
        })
        .await
    }

    /// Closes the session: the child process is asked to exit, then killed.
    pub(crate) async fn close(&self) {
        let live = self.live.lock().await.take();
        *self.process_id.lock() = None;
        if let Some(mut live) = live {
            let _ = live.service.close().await;
        }
    }

    /// Runs `operation` on the session, connecting first if needed. When the connection turns out
    /// to be gone, it reconnects once and tries again.
    async fn request<T, F, Fut>(&self, what: &str, operation: F) -> Result<T, ToolError>
    where
        F: Fn(Peer<RoleClient>) -> Fut,
        Fut: Future<Output = Result<T, ServiceError>>,
    {
        let (generation, peer) = self.peer().await?;
        match self.timed(operation(peer)).await {
            Err(RequestFailure::ConnectionLost(error)) => {
                tracing::warn!(server = %self.endpoint.label(), %error, "MCP connection lost, reconnecting");
                self.forget(generation).await;
                let (_, peer) = self.peer().await?;
                self.timed(operation(peer))
                    .await
                    .map_err(|failure| self.request_error(what, failure))
            }
            result => result.map_err(|failure| self.request_error(what, failure)),
        }
    }

    /// Runs `request` under the request timeout and sorts its failure.
    async fn timed<T>(
        &self,
        request: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, RequestFailure> {
        match tokio::time::timeout(self.request_timeout, request).await {
            Err(_) => Err(RequestFailure::TimedOut),
            Ok(Err(error @ (ServiceError::TransportClosed | ServiceError::TransportSend(_)))) => {
                Err(RequestFailure::ConnectionLost(error))
            }
            Ok(Err(error)) => Err(RequestFailure::Failed(error)),
            Ok(Ok(value)) => Ok(value),
        }
    }

    fn request_error(&self, what: &str, failure: RequestFailure) -> ToolError {
        let server = self.endpoint.label();
        match failure {
            RequestFailure::TimedOut => ToolError::new(
                ToolErrorKind::Timeout,
                format!(
                    "The MCP server {server} did not answer within {:?} when asked to {what}.",
                    self.request_timeout
                ),
            ),
            RequestFailure::ConnectionLost(error) => ToolError::new(
                ToolErrorKind::McpRequest,
                format!(
                    "The connection to the MCP server {server} was lost when asked to {what}, \
                     and again after reconnecting: {error}{}",
                    self.stderr_note()
                ),
            )
            .with_source(error),
            RequestFailure::Failed(error) => ToolError::new(
                ToolErrorKind::McpRequest,
                format!("The MCP server {server} failed to {what}: {error}"),
            )
            .with_source(error),
        }
    }

    /// The peer of the live session, connecting when there is none or it has closed.
    async fn peer(&self) -> Result<(u64, Peer<RoleClient>), ToolError> {
        let mut live = self.live.lock().await;
        if let Some(current) = live.as_ref()
            && !current.service.is_closed()
            && !current.service.peer().is_transport_closed()
        {
            return Ok((current.generation, current.service.peer().clone()));
        }
        if let Some(mut stale) = live.take() {
            let _ = stale.service.close().await;
        }
        let service = self.connect().await?;
        let generation = {
            let mut counter = self.generation.lock();
            *counter += 1;
            *counter
        };
        let peer = service.peer().clone();
        *live = Some(Live {
            service,
            generation,
        });
        Ok((generation, peer))
    }

    /// Drops session `generation` if it is still the live one (a concurrent call may have
    /// replaced it already).
    async fn forget(&self, generation: u64) {
        let mut live = self.live.lock().await;
        if live
            .as_ref()
            .is_some_and(|current| current.generation == generation)
            && let Some(mut stale) = live.take()
        {
            let _ = stale.service.close().await;
        }
    }

    async fn connect(&self) -> Result<RunningService<RoleClient, ()>, ToolError> {
        let server = self.endpoint.label();
        let mut stderr_reader = None;
        let handshake = match &self.endpoint {
            Endpoint::Stdio {
                program,
                args,
                env,
                current_dir,
            } => {
                let mut command = tokio::process::Command::new(program);
                command.args(args).envs(env.iter().cloned());
                if let Some(dir) = current_dir {
                    command.current_dir(dir);
                }
                let (transport, stderr) = TokioChildProcess::builder(command)
                    .stderr(Stdio::piped())
                    .spawn()
                    .map_err(|error| {
                        ToolError::new(
                            ToolErrorKind::McpConnect,
                            format!(
                                "Could not start the MCP server {server}: {error}. Check that \
                                 the program is installed and on PATH."
                            ),
                        )
                        .with_source(error)
                    })?;
                *self.process_id.lock() = transport.id();
                self.stderr.lock().clear();
                if let Some(stderr) = stderr {
                    let kept = self.stderr.clone();
                    stderr_reader = Some(tokio::spawn(async move {
                        let mut lines = BufReader::new(stderr).lines();
                        while let Ok(Some(line)) = lines.next_line().await {
                            tracing::debug!(target: "adk_tool::mcp::stderr", "{line}");
                            let mut kept = kept.lock();
                            if kept.len() == STDERR_KEPT_LINES {
                                kept.pop_front();
                            }
                            kept.push_back(line);
                        }
                    }));
                }
                tokio::time::timeout(self.connect_timeout, ().serve(transport)).await
            }
            Endpoint::StreamableHttp { url, bearer_token } => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                if let Some(token) = bearer_token {
                    config = config.auth_header(token.as_str());
                }
                let transport = StreamableHttpClientTransport::from_config(config);
                tokio::time::timeout(self.connect_timeout, ().serve(transport)).await
            }
        };
        if !matches!(handshake, Ok(Ok(_)))
            && let Some(reader) = stderr_reader
        {
            // A server that failed usually says why on stderr as it exits; give the reader a
            // moment to catch its last lines for the error message.
            let _ = tokio::time::timeout(STDERR_GRACE, reader).await;
        }
        match handshake {
            Ok(Ok(service)) => Ok(service),
            Ok(Err(error)) => Err(self.handshake_error(error)),
            Err(_) => Err(ToolError::new(
                ToolErrorKind::McpConnect,
                format!(
                    "The MCP server {server} did not complete the MCP handshake within {:?}; \
                     check that it speaks MCP on this transport.{}",
                    self.connect_timeout,
                    self.stderr_note()
                ),
            )),
        }
    }

    fn handshake_error(&self, error: ClientInitializeError) -> ToolError {
        let server = self.endpoint.label();
        let kind = match error {
            ClientInitializeError::ExpectedInitResponse(_)
            | ClientInitializeError::ExpectedInitResult(_)
            | ClientInitializeError::ConflictInitResponseId(..)
            | ClientInitializeError::UncorrelatedErrorResponse { .. } => ToolErrorKind::McpProtocol,
            _ => ToolErrorKind::McpConnect,
        };
        ToolError::new(
            kind,
            format!(
                "The MCP server {server} failed the MCP handshake ({error}); check that it is an \
                 MCP server and speaks JSON-RPC on this transport.{}",
                self.stderr_note()
            ),
        )
        .with_source(error)
    }

    /// The end of the server's stderr, for error messages.
    fn stderr_note(&self) -> String {
        let kept = self.stderr.lock();
        if kept.is_empty() {
            return String::new();
        }
        let lines: Vec<&str> = kept.iter().map(String::as_str).collect();
        format!(" Its stderr ended with:\n{}", lines.join("\n"))
    }
}

/// Why a request failed.
enum RequestFailure {
    TimedOut,
    ConnectionLost(ServiceError),
    Failed(ServiceError),
}
