//! [`serve`]: runs one app's A2A server on its own, behind its gate and with bounded connection
//! waits, until a shutdown signal.

use std::future::Future;

use tokio::net::TcpListener;

use super::A2aServer;
use crate::error::A2aError;

/// Binds `address` (`host:port`) and serves `server`'s router there until `shutdown` completes,
/// then stops taking connections and returns once the open ones are closed. Tasks already
/// running finish on their own. The server answers to the hosts of its gate and to the address
/// it is bound to; its connections have the server's [`ConnectionLimits`](adk_gate::ConnectionLimits).
///
/// This is what a command line's `a2a` subcommand calls; pair it with a signal future such as
/// Ctrl-C.
///
/// ```no_run
/// # async fn run(runner: adk_runner::Runner) -> Result<(), adk_a2a::A2aError> {
/// let server = adk_a2a::A2aServer::builder(runner)
///     .url("http://127.0.0.1:8001/")
///     .build()?;
/// adk_a2a::serve(server, "127.0.0.1:8001", async {
///     let _ = tokio::signal::ctrl_c().await;
/// })
/// .await
/// # }
/// ```
pub async fn serve(
    server: A2aServer,
    address: &str,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), A2aError> {
    let listener = TcpListener::bind(address)
        .await
        .map_err(|source| A2aError::Io {
            what: format!("cannot listen on {address}"),
            source,
        })?;
    serve_listener(server, listener, shutdown).await
}

/// Serves `server`'s router on `listener` until `shutdown` completes, as [`serve`] does.
pub async fn serve_listener(
    server: A2aServer,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), A2aError> {
    let address = listener
        .local_addr()
        .map(|address| address.to_string())
        .unwrap_or_default();
    tracing::info!(app = server.app_name(), %address, "serving A2A");
    let mut gate = server.gate().clone();
    if let Ok(local) = listener.local_addr()
        && !local.ip().is_unspecified()
    {
        gate = gate.with_host(&local.ip().to_string());
    }
    let router = gate.apply(server.ungated_router());
    adk_gate::serve(listener, router, server.connection_limits(), shutdown)
        .await
        .map_err(|source| A2aError::Io {
            what: format!("the A2A server on {address} failed"),
            source,
        })
}
