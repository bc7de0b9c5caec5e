//! [`LogCapture`]: everything `tracing` writes on the test's thread, as text a test can search.

use std::io::Write;
use std::sync::Arc;

use parking_lot::Mutex;
use tracing::subscriber::DefaultGuard;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::fmt::format::FmtSpan;

/// Captures every log line and span of every level written on the current thread while it
/// lives: events with their fields and the fields of the spans they are in, and a line for each
/// span as it opens and closes with the fields recorded on it by then.
///
/// A test on a current-thread tokio runtime (the default of `#[tokio::test]`) sees everything its
/// futures log, spawned tasks included.
///
/// ```
/// let logs = adk_test::LogCapture::start();
/// tracing::info!(user = "ada", "signed in");
/// assert!(logs.text().contains("signed in user=\"ada\""));
/// ```
pub struct LogCapture {
    buffer: SharedBuffer,
    _guard: DefaultGuard,
    _second: tracing::Dispatch,
}

impl LogCapture {
    /// Starts capturing on this thread.
    pub fn start() -> Self {
        let buffer = SharedBuffer::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(buffer.clone())
            .with_max_level(tracing::Level::TRACE)
            .with_span_events(FmtSpan::NEW | FmtSpan::CLOSE)
            .with_ansi(false)
            .finish();
        let guard = tracing::subscriber::set_default(subscriber);
        // With a single subscriber in the process, `tracing` decides whether a callsite is
        // enabled by asking the default subscriber of whichever thread reaches it first: a test
        // running at the same time on another thread, without a subscriber, would switch this
        // one's spans off for good. A second (silent) subscriber makes it ask every subscriber.
        let second = tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default());
        tracing::callsite::rebuild_interest_cache();
        Self {
            buffer,
            _guard: guard,
            _second: second,
        }
    }

    /// What was captured so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.buffer.0.lock()).into_owned()
    }
}

/// The bytes written so far, shared with the subscriber's writers.
#[derive(Clone, Default)]
struct SharedBuffer(Arc<Mutex<Vec<u8>>>);

impl Write for SharedBuffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for SharedBuffer {
    type Writer = Self;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}
