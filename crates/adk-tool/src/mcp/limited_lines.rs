//! [`LimitedLines`]: a stdio server's output, read one JSON-RPC line at a time, that fails once a
//! line passes the toolset's `max_message_bytes`, so that a server cannot make the client buffer
//! without end (a message that never ends, or one far larger than any answer should be).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// Passes `inner` through while counting the bytes of the current line; past `limit` the read
/// fails with [`std::io::ErrorKind::InvalidData`] and `tripped` is set, which ends the connection.
pub(crate) struct LimitedLines<R> {
    inner: R,
    limit: usize,
    line_bytes: usize,
    tripped: Arc<AtomicBool>,
}

impl<R> LimitedLines<R> {
    pub(crate) fn new(inner: R, limit: usize, tripped: Arc<AtomicBool>) -> Self {
        Self {
            inner,
            limit,
            line_bytes: 0,
            tripped,
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LimitedLines<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.tripped.load(Ordering::Acquire) {
            return Poll::Ready(Err(too_large(self.limit)));
        }
        let before = buf.filled().len();
        let this = &mut *self;
        let result = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &result {
            for &byte in &buf.filled()[before..] {
                if byte == b'\n' {
                    this.line_bytes = 0;
                } else {
                    this.line_bytes += 1;
                }
            }
            if this.line_bytes > this.limit {
                this.tripped.store(true, Ordering::Release);
                // A failed read hands out nothing.
                buf.set_filled(before);
                return Poll::Ready(Err(too_large(this.limit)));
            }
        }
        result
    }
}

fn too_large(limit: usize) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("an MCP message passed {limit} bytes"),
    )
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt as _;

    use super::*;

    #[tokio::test]
    async fn a_line_past_the_limit_fails_the_read() {
        let tripped = Arc::new(AtomicBool::new(false));
        let input: &[u8] = b"short\nalso short\nthis one is far too long\n";
        let mut reader = LimitedLines::new(input, 12, tripped.clone());
        let mut read = Vec::new();
        let error = reader.read_to_end(&mut read).await.unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
        assert!(tripped.load(Ordering::Acquire));
    }
}
