//! [`TimedIo`]: a connection that fails when a write makes no progress for the write timeout (the
//! peer stopped reading) or when nothing moves for the idle timeout while no request is in flight.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// How many requests of one connection are being answered; the idle timeout waits while any is.
#[derive(Clone, Debug, Default)]
pub(super) struct InFlight(Arc<AtomicUsize>);

impl InFlight {
    pub(super) fn enter(&self) -> InFlightGuard {
        self.0.fetch_add(1, Ordering::AcqRel);
        InFlightGuard(self.0.clone())
    }

    fn is_idle(&self) -> bool {
        self.0.load(Ordering::Acquire) == 0
    }
}

/// One request being answered; dropping it (the response's body is done or dropped) ends it.
pub(super) struct InFlightGuard(Arc<AtomicUsize>);

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A stream with a write timeout and an idle timeout.
pub(super) struct TimedIo<T> {
    inner: T,
    in_flight: InFlight,
    write_timeout: Duration,
    idle_timeout: Duration,
    /// When bytes last moved in either direction.
    last_activity: Instant,
    /// Armed while a write waits; fires the write timeout.
    write_deadline: Pin<Box<Sleep>>,
    write_armed: bool,
    /// Fires the idle timeout (moved on lazily from `last_activity`).
    idle_deadline: Pin<Box<Sleep>>,
}

impl<T> TimedIo<T> {
    pub(super) fn new(
        inner: T,
        in_flight: InFlight,
        write_timeout: Duration,
        idle_timeout: Duration,
    ) -> Self {
        let now = Instant::now();
        Self {
            inner,
            in_flight,
            write_timeout,
            idle_timeout,
            last_activity: now,
            write_deadline: Box::pin(tokio::time::sleep_until(now + write_timeout)),
            write_armed: false,
            idle_deadline: Box::pin(tokio::time::sleep_until(now + idle_timeout)),
        }
    }

    /// After a write went through: the write timeout is disarmed.
    fn wrote(&mut self) {
        self.write_armed = false;
        self.last_activity = Instant::now();
    }

    /// A write that is pending: an error once it waited the write timeout.
    fn write_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        if !self.write_armed {
            self.write_armed = true;
            self.write_deadline
                .as_mut()
                .reset(Instant::now() + self.write_timeout);
        }
        ready!(self.write_deadline.as_mut().poll(cx));
        Poll::Ready(timed_out(
            "the peer stopped reading: a write made no progress for the write timeout",
        ))
    }
}

fn timed_out(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, what.to_owned())
}

impl<T: AsyncRead + Unpin> AsyncRead for TimedIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(result) => {
                if buf.filled().len() > before {
                    this.last_activity = Instant::now();
                }
                Poll::Ready(result)
            }
            Poll::Pending => {
                // Waiting for the peer: the idle timeout runs unless a request is in flight (a
                // long run legitimately keeps a connection quiet).
                loop {
                    let deadline = this.last_activity + this.idle_timeout;
                    if this.idle_deadline.deadline() != deadline {
                        this.idle_deadline.as_mut().reset(deadline);
                    }
                    ready!(this.idle_deadline.as_mut().poll(cx));
                    if this.in_flight.is_idle() {
                        return Poll::Ready(Err(timed_out("the connection was idle too long")));
                    }
                    this.last_activity = Instant::now();
                }
            }
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for TimedIo<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_write(cx, buf) {
            Poll::Ready(result) => {
                this.wrote();
                Poll::Ready(result)
            }
            Poll::Pending => this.write_pending(cx).map(Err),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_write_vectored(cx, bufs) {
            Poll::Ready(result) => {
                this.wrote();
                Poll::Ready(result)
            }
            Poll::Pending => this.write_pending(cx).map(Err),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_flush(cx) {
            Poll::Ready(result) => {
                this.write_armed = false;
                Poll::Ready(result)
            }
            Poll::Pending => this.write_pending(cx).map(Err),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
