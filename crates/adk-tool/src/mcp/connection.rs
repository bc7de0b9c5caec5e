//! The connection to one MCP server: started lazily, restarted when it drops, closed when the
//! toolset is closed or dropped.
//!
//! What the connection guards against:
//! - A stdio server gets only a small safelist of this process's environment
//!   ([`INHERITED_ENV`]) plus what the toolset names, so API keys and database URLs do not reach
//!   third-party packages.
//! - No message from the server is read past `max_message_bytes`.
//! - A tool call is sent again after a lost connection only when it was never sent or the tool
//!   says it is idempotent: a connection can drop after the server acted, and a confirmed side
//!   effect must not run twice.
//! - The session lock is never held across a close, and every close is bounded, so one server
//!   that hangs on shutdown does not stall the calls of the toolset.
//! - Messages name the server by its program or URL only, and never quote what the server wrote
//!   to stderr into a tool's result (it goes to the log at debug level, scrubbed of the toolset's
//!   secrets).

use std::collections::VecDeque;
use std::future::Future;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject, Tool as McpToolInfo};
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{Peer, RoleClient, ServiceError, ServiceExt};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;

use super::endpoint::{Endpoint, INHERITED_ENV, scrub};
use super::limited_lines::LimitedLines;
use crate::{ToolError, ToolErrorKind};

/// How much of a server's stderr is kept for the error of a failed start.
const STDERR_KEPT_LINES: usize = 20;

/// The longest stderr line kept.
const STDERR_KEPT_CHARS: usize = 300;

/// How long a failed start waits for the rest of the server's stderr.
const STDERR_GRACE: Duration = Duration::from_millis(500);

/// The limits and timeouts of a connection.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) connect_timeout: Duration,
    pub(crate) request_timeout: Duration,
    /// How long closing a session may take, the child's exit included, before the child is
    /// killed (stdio) or the session abandoned (HTTP).
    pub(crate) close_timeout: Duration,
    pub(crate) max_message_bytes: usize,
}

/// A live session with the server.
struct Live {
    service: RunningService<RoleClient, ()>,
    generation: u64,
    child: Option<Child>,
    oversized: Arc<AtomicBool>,
    close_timeout: Duration,
}

impl Live {
    /// Ends the session within its close timeout: the service closes its transport (a stdio
    /// server reads the end of its input and exits), then a child still running is killed.
    async fn close(mut self) {
        let closing = async {
            let _ = self.service.close().await;
            if let Some(child) = self.child.as_mut() {
                let _ = child.wait().await;
            }
        };
        if tokio::time::timeout(self.close_timeout, closing)
            .await
            .is_err()
        {
            tracing::warn!("an MCP session did not close in time and was abandoned");
        }
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill().await;
        }
    }
}

/// Closes `live` in the background, so that no caller waits for it.
fn close_in_background(live: Live) {
    tokio::spawn(live.close());
}

/// Whether a request may be sent again after the connection was lost while it was under way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resend {
    /// Sending it again is harmless (listing tools, an idempotent tool).
    Safe,
    /// Only when it surely never reached the server.
    IfNeverSent,
}

/// The connection state of one toolset.
pub(crate) struct Connection {
    endpoint: Endpoint,
    limits: Limits,
    live: tokio::sync::Mutex<Option<Live>>,
    generation: parking_lot::Mutex<u64>,
    process_id: parking_lot::Mutex<Option<u32>>,
    stderr: Arc<parking_lot::Mutex<VecDeque<String>>>,
}

impl Connection {
    pub(crate) fn new(endpoint: Endpoint, limits: Limits) -> Self {
        Self {
            endpoint,
            limits,
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

    /// How messages name the server.
    pub(crate) fn label(&self) -> String {
        self.endpoint.label()
    }

    /// Lists the server's tools.
    pub(crate) async fn list_tools(&self) -> Result<Vec<McpToolInfo>, ToolError> {
        self.request("list its tools", Resend::Safe, |peer| async move {
            peer.list_all_tools().await
        })
        .await
    }

    /// Calls tool `name` with `arguments`; `resend` says whether a call lost with its connection
    /// may be sent again.
    pub(crate) async fn call_tool(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        resend: Resend,
    ) -> Result<CallToolResult, ToolError> {
        let params = CallToolRequestParams::new(name.to_owned());
        let params = match arguments {
            Some(arguments) => params.with_arguments(arguments),
            None => params,
        };
        self.request(&format!("call `{name}`"), resend, move |peer| {
            let params = params.clone();
            async move { peer.call_tool(params).await }
        })
        .await
    }

    /// Closes the session: the child process is asked to exit, then killed; bounded by the close
    /// timeout.
    pub(crate) async fn close(&self) {
        let live = self.live.lock().await.take();
        *self.process_id.lock() = None;
        if let Some(live) = live {
            live.close().await;
        }
    }

    /// Runs `operation` on the session, connecting first if needed. When the connection turns out
    /// to be gone, it reconnects and, if `resend` allows, tries once more.
    async fn request<T, F, Fut>(
        &self,
        what: &str,
        resend: Resend,
        operation: F,
    ) -> Result<T, ToolError>
    where
        F: Fn(Peer<RoleClient>) -> Fut,
        Fut: Future<Output = Result<T, ServiceError>>,
    {
        let (generation, peer) = self.peer().await?;
        match self.timed(operation(peer)).await {
            Err(RequestFailure::ConnectionLost(error)) => {
                let oversized = self.forget(generation).await;
                if oversized {
                    return Err(self.oversized_error(what));
                }
                let never_sent = matches!(error, ServiceError::TransportSend(_))
                    && matches!(self.endpoint, Endpoint::Stdio { .. });
                if resend == Resend::IfNeverSent && !never_sent {
                    return Err(self.lost_during_error(what, error));
                }
                tracing::warn!(server = %self.endpoint.label(), %error, "MCP connection lost, reconnecting");
                let (generation, peer) = self.peer().await?;
                match self.timed(operation(peer)).await {
                    Err(RequestFailure::ConnectionLost(_)) if self.forget(generation).await => {
                        Err(self.oversized_error(what))
                    }
                    result => result.map_err(|failure| self.request_error(what, failure)),
                }
            }
            result => result.map_err(|failure| self.request_error(what, failure)),
        }
    }

    /// Runs `request` under the request timeout and sorts its failure.
    async fn timed<T>(
        &self,
        request: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, RequestFailure> {
        match tokio::time::timeout(self.limits.request_timeout, request).await {
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
                    self.limits.request_timeout
                ),
            ),
            RequestFailure::ConnectionLost(error) => ToolError::new(
                ToolErrorKind::McpRequest,
                format!(
                    "The connection to the MCP server {server} was lost when asked to {what}, \
                     and again after reconnecting: {}",
                    self.scrubbed(&error.to_string())
                ),
            )
            .with_source(error),
            RequestFailure::Failed(error) => ToolError::new(
                ToolErrorKind::McpRequest,
                format!(
                    "The MCP server {server} failed to {what}: {}",
                    self.scrubbed(&error.to_string())
                ),
            )
            .with_source(error),
        }
    }

    fn lost_during_error(&self, what: &str, error: ServiceError) -> ToolError {
        ToolError::new(
            ToolErrorKind::McpRequest,
            format!(
                "The connection to the MCP server {} was lost while it was asked to {what}. The \
                 call may or may not have taken effect, so it was not sent again; check before \
                 calling it again.",
                self.endpoint.label()
            ),
        )
        .with_source(error)
    }

    fn oversized_error(&self, what: &str) -> ToolError {
        ToolError::new(
            ToolErrorKind::McpProtocol,
            format!(
                "The MCP server {} sent a message larger than {} bytes (the toolset's \
                 `max_message_bytes`) when asked to {what}; the connection was closed.",
                self.endpoint.label(),
                self.limits.max_message_bytes
            ),
        )
    }

    /// The peer of the live session, connecting when there is none or it has closed. A stale
    /// session is closed in the background, never under the lock.
    async fn peer(&self) -> Result<(u64, Peer<RoleClient>), ToolError> {
        let mut live = self.live.lock().await;
        if let Some(current) = live.as_ref()
            && !current.service.is_closed()
            && !current.service.peer().is_transport_closed()
        {
            return Ok((current.generation, current.service.peer().clone()));
        }
        if let Some(stale) = live.take() {
            close_in_background(stale);
        }
        let (service, child, oversized) = self.connect().await?;
        *self.process_id.lock() = child.as_ref().and_then(Child::id);
        let generation = {
            let mut counter = self.generation.lock();
            *counter += 1;
            *counter
        };
        let peer = service.peer().clone();
        *live = Some(Live {
            service,
            generation,
            child,
            oversized,
            close_timeout: self.limits.close_timeout,
        });
        Ok((generation, peer))
    }

    /// Drops session `generation` if it is still the live one (a concurrent call may have
    /// replaced it already), closing it in the background. Returns whether that session ended
    /// because the server sent a message over the limit.
    async fn forget(&self, generation: u64) -> bool {
        let stale = {
            let mut live = self.live.lock().await;
            if live
                .as_ref()
                .is_some_and(|current| current.generation == generation)
            {
                live.take()
            } else {
                None
            }
        };
        let Some(stale) = stale else {
            return false;
        };
        let oversized = stale.oversized.load(Ordering::Acquire);
        close_in_background(stale);
        oversized
    }

    async fn connect(
        &self,
    ) -> Result<
        (
            RunningService<RoleClient, ()>,
            Option<Child>,
            Arc<AtomicBool>,
        ),
        ToolError,
    > {
        let oversized = Arc::new(AtomicBool::new(false));
        let mut stderr_reader = None;
        let mut child = None;
        let handshake = match &self.endpoint {
            Endpoint::Stdio { .. } => {
                let Spawned {
                    child: mut spawned,
                    stdout,
                    stdin,
                    stderr,
                } = self.spawn()?;
                self.stderr.lock().clear();
                if let Some(stderr) = stderr {
                    stderr_reader = Some(self.read_stderr(stderr));
                }
                let stdout =
                    LimitedLines::new(stdout, self.limits.max_message_bytes, oversized.clone());
                let transport = AsyncRwTransport::new_client(stdout, stdin);
                let handshake =
                    tokio::time::timeout(self.limits.connect_timeout, ().serve(transport)).await;
                if !matches!(handshake, Ok(Ok(_))) {
                    let _ = spawned.start_kill();
                }
                child = Some(spawned);
                handshake
            }
            Endpoint::StreamableHttp { url, bearer_token } => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                config.max_sse_event_size = self.limits.max_message_bytes;
                if let Some(token) = bearer_token {
                    config = config.auth_header(token.as_str());
                }
                let transport = StreamableHttpClientTransport::from_config(config);
                tokio::time::timeout(self.limits.connect_timeout, ().serve(transport)).await
            }
        };
        if !matches!(handshake, Ok(Ok(_)))
            && let Some(reader) = stderr_reader
        {
            // A server that failed usually says why on stderr as it exits; give the reader a
            // moment to catch its last lines for the error message.
            let _ = tokio::time::timeout(STDERR_GRACE, reader).await;
        }
        let server = self.endpoint.label();
        match handshake {
            Ok(Ok(service)) => Ok((service, child, oversized)),
            Ok(Err(error)) => Err(self.handshake_error(error)),
            Err(_) => Err(ToolError::new(
                ToolErrorKind::McpConnect,
                format!(
                    "The MCP server {server} did not complete the MCP handshake within {:?}; \
                     check that it speaks MCP on this transport.{}",
                    self.limits.connect_timeout,
                    self.stderr_note()
                ),
            )),
        }
    }

    /// Starts the stdio server with the safelisted environment.
    fn spawn(&self) -> Result<Spawned, ToolError> {
        let Endpoint::Stdio {
            program,
            args,
            env,
            inherit_env,
            current_dir,
        } = &self.endpoint
        else {
            unreachable!("spawn is called for stdio endpoints only");
        };
        let mut command = tokio::process::Command::new(program);
        command
            .args(args)
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let inherited = INHERITED_ENV
            .iter()
            .copied()
            .chain(inherit_env.iter().map(String::as_str));
        for name in inherited {
            if let Some(value) = std::env::var_os(name) {
                command.env(name, value);
            }
        }
        command.envs(env.iter().cloned());
        if let Some(dir) = current_dir {
            command.current_dir(dir);
        }
        let mut child = command.spawn().map_err(|error| {
            ToolError::new(
                ToolErrorKind::McpConnect,
                format!(
                    "Could not start the MCP server {}: {error}. Check that the program is \
                     installed and on PATH.",
                    self.endpoint.label()
                ),
            )
            .with_source(error)
        })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ToolError::new(
                ToolErrorKind::McpConnect,
                format!(
                    "The MCP server {} started without piped stdin and stdout.",
                    self.endpoint.label()
                ),
            ));
        };
        let stderr = child.stderr.take();
        Ok(Spawned {
            child,
            stdout,
            stdin,
            stderr,
        })
    }

    /// Reads the server's stderr into the debug log and keeps its last lines, scrubbed of the
    /// toolset's secrets, for the error of a failed start.
    fn read_stderr(&self, stderr: tokio::process::ChildStderr) -> tokio::task::JoinHandle<()> {
        let kept = self.stderr.clone();
        let secrets: Vec<String> = self
            .endpoint
            .secrets()
            .into_iter()
            .map(str::to_owned)
            .collect();
        tokio::spawn(async move {
            let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let line: String = scrub(&line, &secrets)
                    .chars()
                    .filter(|c| !c.is_control() || *c == '\t')
                    .take(STDERR_KEPT_CHARS)
                    .collect();
                tracing::debug!(target: "adk_tool::mcp::stderr", "{line}");
                let mut kept = kept.lock();
                if kept.len() == STDERR_KEPT_LINES {
                    kept.pop_front();
                }
                kept.push_back(line);
            }
        })
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
                "The MCP server {server} failed the MCP handshake ({}); check that it is an \
                 MCP server and speaks JSON-RPC on this transport.{}",
                self.scrubbed(&error.to_string()),
                self.stderr_note()
            ),
        )
        .with_source(error)
    }

    /// The end of the server's stderr, for the errors of a failed start: these reach whoever set
    /// the toolset up, not the model.
    fn stderr_note(&self) -> String {
        let kept = self.stderr.lock();
        if kept.is_empty() {
            return String::new();
        }
        let lines: Vec<&str> = kept.iter().map(String::as_str).collect();
        format!(" Its stderr ended with:\n{}", lines.join("\n"))
    }

    fn scrubbed(&self, text: &str) -> String {
        scrub(text, &self.endpoint.secrets())
    }
}

/// A started stdio server and its pipes.
struct Spawned {
    child: Child,
    stdout: tokio::process::ChildStdout,
    stdin: tokio::process::ChildStdin,
    stderr: Option<tokio::process::ChildStderr>,
}

/// Why a request failed.
enum RequestFailure {
    TimedOut,
    ConnectionLost(ServiceError),
    Failed(ServiceError),
}
