//! Server-sent events: a response byte stream turned into the `data` payloads of its events, with
//! the maintained `eventsource-stream` parser (LF or CRLF line ends, comment lines skipped), and a
//! cap on the size of one event so that a server cannot make the client buffer without end (a
//! line that never ends, an event that never closes).

use std::pin::Pin;
use std::task::{Context, Poll};

use eventsource_stream::{EventStreamError, Eventsource as _};
use futures::{Stream, StreamExt as _};

use crate::error::{Error, ErrorKind};

/// The default of the builders' `max_event_bytes`: the largest one SSE event may be, 16 MiB.
pub(crate) const DEFAULT_MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// The `data` payloads of the SSE events in `bytes`, in order. Comment lines (`: ...`) and events
/// without data are skipped; a transport failure mid-stream becomes [`ErrorKind::StreamCut`]
/// ([`ErrorKind::Timeout`] when the deadline passed), and an event longer than `max_event_bytes`
/// (its lines together, line ends excluded) ends the stream with [`ErrorKind::ResponseTooLarge`].
pub fn sse_data<S, B, E>(
    bytes: S,
    max_event_bytes: usize,
) -> impl Stream<Item = Result<String, Error>> + Send
where
    S: Stream<Item = Result<B, E>> + Send,
    B: AsRef<[u8]> + Send,
    E: std::error::Error + Send + Sync + 'static,
{
    EventSizeLimit::new(bytes, max_event_bytes)
        .eventsource()
        .filter_map(|event| {
            std::future::ready(match event {
                Ok(event) if event.data.is_empty() => None,
                Ok(event) => Some(Ok(event.data)),
                Err(error) => Some(Err(stream_error(error))),
            })
        })
}

/// A failure of the byte stream under an [`EventSizeLimit`].
#[derive(Debug, thiserror::Error)]
enum LimitedError<E> {
    #[error(transparent)]
    Transport(E),
    #[error("one event of the stream passed {limit} bytes")]
    EventTooLarge { limit: usize },
}

pin_project_lite::pin_project! {
    /// Passes the chunks of a byte stream through while counting the bytes of the event being
    /// read; past the limit it yields [`LimitedError::EventTooLarge`] and ends.
    struct EventSizeLimit<S> {
        #[pin]
        inner: S,
        limit: usize,
        event_bytes: usize,
        line_bytes: usize,
        after_cr: bool,
        failed: bool,
    }
}

impl<S> EventSizeLimit<S> {
    fn new(inner: S, limit: usize) -> Self {
        Self {
            inner,
            limit,
            event_bytes: 0,
            line_bytes: 0,
            after_cr: false,
            failed: false,
        }
    }
}

impl<S, B, E> Stream for EventSizeLimit<S>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
{
    type Item = Result<B, LimitedError<E>>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.project();
        if *this.failed {
            return Poll::Ready(None);
        }
        let chunk = match this.inner.poll_next(cx) {
            Poll::Ready(Some(Ok(chunk))) => chunk,
            Poll::Ready(Some(Err(error))) => {
                return Poll::Ready(Some(Err(LimitedError::Transport(error))));
            }
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => return Poll::Pending,
        };
        // An event ends at an empty line; a line ends at LF, CR or CRLF. The line ends are found
        // with `memchr`, so the bytes between them are counted in bulk.
        let bytes = chunk.as_ref();
        let mut start = 0;
        for end in memchr::memchr2_iter(b'\n', b'\r', bytes) {
            let text = end - start;
            if text > 0 {
                *this.line_bytes += text;
                *this.event_bytes += text;
                *this.after_cr = false;
            }
            start = end + 1;
            if bytes[end] == b'\n' && *this.after_cr {
                // The LF of a CRLF: the CR ended the line.
                *this.after_cr = false;
                continue;
            }
            if *this.line_bytes == 0 {
                *this.event_bytes = 0;
            }
            *this.line_bytes = 0;
            *this.after_cr = bytes[end] == b'\r';
        }
        let rest = bytes.len() - start;
        if rest > 0 {
            *this.line_bytes += rest;
            *this.event_bytes += rest;
            *this.after_cr = false;
        }
        if *this.event_bytes > *this.limit {
            *this.failed = true;
            return Poll::Ready(Some(Err(LimitedError::EventTooLarge {
                limit: *this.limit,
            })));
        }
        Poll::Ready(Some(Ok(chunk)))
    }
}

fn stream_error<E: std::error::Error + Send + Sync + 'static>(
    error: EventStreamError<LimitedError<E>>,
) -> Error {
    match error {
        EventStreamError::Transport(LimitedError::EventTooLarge { limit }) => Error::new(
            ErrorKind::ResponseTooLarge { limit },
            format!(
                "one event of the response stream passed {limit} bytes (the builder's \
                 `max_event_bytes`); the server may be broken or hostile, or raise the limit"
            ),
        ),
        EventStreamError::Transport(LimitedError::Transport(error)) => {
            let timed_out = (&error as &dyn std::error::Error)
                .downcast_ref::<reqwest::Error>()
                .is_some_and(reqwest::Error::is_timeout);
            if timed_out {
                Error::new(
                    ErrorKind::Timeout,
                    format!("the response stream passed the timeout: {error}; raise the builder's `timeout`"),
                )
                .with_source(error)
            } else {
                Error::new(
                    ErrorKind::StreamCut,
                    format!("the response stream broke before the model finished: {error}; retry the call"),
                )
                .with_source(error)
            }
        }
        other => Error::new(
            ErrorKind::Decode,
            format!("the response is not a valid event stream: {other}; check the base URL"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn parse(chunks: &[&'static str]) -> Vec<Result<String, ErrorKind>> {
        let stream = futures::stream::iter(
            chunks
                .iter()
                .map(|chunk| Ok::<_, std::io::Error>(chunk.as_bytes())),
        );
        sse_data(stream, 64)
            .map(|item| item.map_err(|error| error.kind()))
            .collect()
            .await
    }

    #[tokio::test]
    async fn events_split_across_chunks_with_crlf_and_comments() {
        let events = parse(&[
            ": OPENROUTER PROCESSING\n\n",
            "data: {\"a\"",
            ":1}\r\n\r\ndata: [DONE]\n\n",
        ])
        .await;
        assert_eq!(
            events,
            [Ok("{\"a\":1}".to_owned()), Ok("[DONE]".to_owned())]
        );
    }

    #[tokio::test]
    async fn a_transport_error_is_a_stream_cut() {
        let stream = futures::stream::iter([
            Ok(&b"data: 1\n\n"[..]),
            Err(std::io::Error::other("connection reset")),
        ]);
        let events: Vec<_> = sse_data(stream, DEFAULT_MAX_EVENT_BYTES).collect().await;
        assert_eq!(events[0].as_deref().unwrap(), "1");
        assert_eq!(events[1].as_ref().unwrap_err().kind(), ErrorKind::StreamCut);
    }

    #[tokio::test]
    async fn an_event_past_the_limit_ends_the_stream_with_a_typed_error() {
        // 60 bytes of data in two lines fit; a line that never ends does not.
        let events = parse(&[
            "data: 0123456789012345678901234\r\ndata: 0123456789012345678901234\r\n\r\n",
            "data: ",
            "x",
            Box::leak("y".repeat(100).into_boxed_str()),
            "never reached\n\n",
        ])
        .await;
        assert_eq!(events.len(), 2, "{events:?}");
        assert!(events[0].is_ok());
        assert_eq!(events[1], Err(ErrorKind::ResponseTooLarge { limit: 64 }));

        // Many events in one chunk, CRLF, LF and CR alike, each under the limit, pass together.
        let many = "data: 0123456789012345678901234567890123\r\n\r\n".repeat(5)
            + &"data: 0123456789012345678901234567890123\r\r".repeat(5)
            + &"data: 0123456789012345678901234567890123\n\n".repeat(5);
        let events = parse(&[Box::leak(many.into_boxed_str())]).await;
        assert_eq!(events.len(), 15, "{events:?}");
        assert!(events.iter().all(Result::is_ok), "{events:?}");
    }

    mod properties {
        //! The parser against generated streams: however the bytes are cut into chunks (inside a
        //! line, a line end or a multi-byte character), the same payloads come out.

        use proptest::prelude::*;

        use super::*;

        /// Cases per property.
        const CASES: u32 = 2048;

        /// The payloads of a body cut at `cuts` (fractions of its length).
        fn parse_cut(body: &str, cuts: &[f64]) -> Vec<Result<String, ErrorKind>> {
            let bytes = body.as_bytes();
            let mut ends: Vec<usize> = cuts
                .iter()
                .map(|fraction| (bytes.len() as f64 * fraction) as usize)
                .collect();
            ends.push(bytes.len());
            ends.sort_unstable();
            let mut start = 0;
            let mut chunks = Vec::new();
            for end in ends {
                chunks.push(bytes[start..end].to_vec());
                start = end;
            }
            let stream = futures::stream::iter(chunks.into_iter().map(Ok::<_, std::io::Error>));
            let runtime = tokio::runtime::Builder::new_current_thread()
                .build()
                .expect("a runtime");
            runtime.block_on(
                sse_data(stream, DEFAULT_MAX_EVENT_BYTES)
                    .map(|item| item.map_err(|error| error.kind()))
                    .collect(),
            )
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(CASES))]

            #[test]
            fn any_chunk_split_gives_the_same_payloads(
                payloads in prop::collection::vec("[^\r\n]{1,40}", 0..6),
                comments in prop::collection::vec(any::<bool>(), 6),
                crlf in any::<bool>(),
                cuts in prop::collection::vec(0.0..1.0f64, 0..12),
            ) {
                let end = if crlf { "\r\n" } else { "\n" };
                let mut body = String::new();
                for (index, payload) in payloads.iter().enumerate() {
                    if comments[index] {
                        body.push_str(&format!(": keep-alive{end}{end}"));
                    }
                    body.push_str(&format!("data: {payload}{end}{end}"));
                }
                // The field's value starts after one optional space, as the SSE standard says.
                let expected: Vec<Result<String, ErrorKind>> = payloads
                    .iter()
                    .map(|payload| Ok(payload.clone()))
                    .filter(|payload| payload.as_ref().is_ok_and(|text| !text.is_empty()))
                    .collect();
                prop_assert_eq!(parse_cut(&body, &[]), expected.clone());
                prop_assert_eq!(parse_cut(&body, &cuts), expected);
            }

            #[test]
            fn arbitrary_bytes_never_make_the_parser_panic(
                bytes in prop::collection::vec(any::<u8>(), 0..200),
                cuts in prop::collection::vec(0.0..1.0f64, 0..6),
            ) {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let _ = parse_cut(&text, &cuts);
            }
        }
    }
}
