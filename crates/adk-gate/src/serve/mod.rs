//! [`serve`]: serving a router on a listener with bounded waits — a request head must arrive
//! within the header read timeout, a connection with nothing in flight is closed after the idle
//! timeout, and a client that stops reading is cut off after the write timeout (its response
//! dropped, which cancels what produced it) — and a graceful shutdown.

mod io;

use std::convert::Infallible;
use std::future::Future;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tower::ServiceExt as _;

use io::{InFlight, TimedIo};

/// The default time a client has to send a request's head (counted from when the server waits for
/// it, so it also closes a kept-alive connection left unused that long): 30 seconds.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The default time a connection with no request in flight may stay silent: 120 seconds.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// The default time a write may wait for the client to read: 30 seconds. A streaming client that
/// stops reading for longer is cut off.
pub const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// The waits [`serve`] bounds.
///
/// ```
/// use std::time::Duration;
/// use adk_gate::ConnectionLimits;
///
/// let limits = ConnectionLimits::default().write_timeout(Duration::from_secs(10));
/// assert_eq!(limits.write_timeout_value(), Duration::from_secs(10));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    header_read_timeout: Duration,
    idle_timeout: Duration,
    write_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            write_timeout: DEFAULT_WRITE_TIMEOUT,
        }
    }
}

impl ConnectionLimits {
    /// How long a client has to send a request's head.
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// How long a connection with no request in flight may stay silent.
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// How long a write may wait for the client to read before the connection is cut.
    pub fn write_timeout(mut self, timeout: Duration) -> Self {
        self.write_timeout = timeout;
        self
    }

    /// The write timeout.
    pub fn write_timeout_value(&self) -> Duration {
        self.write_timeout
    }
}

/// Serves `router` on `listener` (HTTP/1.1 and HTTP/2) until `shutdown` completes, then stops
/// accepting, lets every connection finish its requests, and returns once they are closed.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    builder.http2().timer(TokioTimer::new());
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors, say: wait a moment rather than spin.
                    tracing::warn!(error = %error, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let in_flight = InFlight::default();
        let io = TokioIo::new(TimedIo::new(
            stream,
            in_flight.clone(),
            limits.write_timeout,
            limits.idle_timeout,
        ));
        let router = router.clone();
        // The router, each request counted as in flight (which holds off the idle timeout) from
        // its head until its body is sent.
        let service = tower::service_fn(move |request: Request<Incoming>| {
            let guard = in_flight.enter();
            let call = router.clone().oneshot(request.map(axum::body::Body::new));
            async move {
                let response = call.await?;
                Ok::<_, Infallible>(response.map(|body| GuardedBody {
                    inner: body,
                    _guard: guard,
                }))
            }
        });
        let service = hyper_util::service::TowerToHyperService::new(service);
        let connection = builder.serve_connection(io, service).into_owned();
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%peer, error = %error, "a connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

pin_project_lite::pin_project! {
    /// A response body that keeps its request counted as in flight while it is being sent.
    struct GuardedBody {
        #[pin]
        inner: axum::body::Body,
        _guard: io::InFlightGuard,
    }
}

impl hyper::body::Body for GuardedBody {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        self.project().inner.poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}
