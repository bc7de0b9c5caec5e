//! Server-sent events: a response byte stream turned into the `data` payloads of its events, as
//! the SSE standard reads them (LF, CR or CRLF line ends, comment lines skipped, one space after
//! the colon dropped, the data lines of an event joined by LF), with a cap on the size of one
//! event so that a server cannot make the client buffer without end (a line that never ends, an
//! event that never closes).
//!
//! The parser is written for this one job: it finds line ends with `memchr`, copies only the data
//! it keeps, and knows nothing of event types, ids or retry times, which model streams do not use.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;

use crate::error::{Error, ErrorKind};

/// The default of the builders' `max_event_bytes`: the largest one SSE event may be, 16 MiB.
pub(crate) const DEFAULT_MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// The byte order mark a stream may start with, which the standard says to skip.
const BOM: &[u8] = "\u{feff}".as_bytes();

/// The `data` payloads of the SSE events in `bytes`, in order. Comment lines (`: ...`) and events
/// without data are skipped, as is an event the stream ends inside; a transport failure
/// mid-stream becomes [`ErrorKind::StreamCut`] ([`ErrorKind::Timeout`] when the deadline passed),
/// an event longer than `max_event_bytes` (its lines together, line ends excluded) ends the
/// stream with [`ErrorKind::ResponseTooLarge`], and data that is not UTF-8 with
/// [`ErrorKind::Decode`].
pub fn sse_data<S, B, E>(
    bytes: S,
    max_event_bytes: usize,
) -> impl Stream<Item = Result<String, Error>> + Send
where
    S: Stream<Item = Result<B, E>> + Send,
    B: AsRef<[u8]> + Send,
    E: std::error::Error + Send + Sync + 'static,
{
    SseData {
        inner: bytes,
        parser: Parser::new(max_event_bytes),
        ready: VecDeque::new(),
        ended: false,
    }
}

pin_project_lite::pin_project! {
    /// The stream [`sse_data`] returns.
    struct SseData<S> {
        #[pin]
        inner: S,
        parser: Parser,
        ready: VecDeque<Result<String, Error>>,
        ended: bool,
    }
}

impl<S, B, E> Stream for SseData<S>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
    E: std::error::Error + Send + Sync + 'static,
{
    type Item = Result<String, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut this = self.project();
        loop {
            if let Some(item) = this.ready.pop_front() {
                return Poll::Ready(Some(item));
            }
            if *this.ended {
                return Poll::Ready(None);
            }
            match this.inner.as_mut().poll_next(cx) {
                Poll::Ready(Some(Ok(chunk))) => {
                    if let Err(error) = this.parser.push(chunk.as_ref(), this.ready) {
                        this.ready.push_back(Err(error));
                        *this.ended = true;
                    }
                }
                Poll::Ready(Some(Err(error))) => {
                    this.ready.push_back(Err(transport_error(error)));
                    *this.ended = true;
                }
                // An event the stream ends inside was never complete: it is dropped, as the
                // standard says.
                Poll::Ready(None) => *this.ended = true,
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

/// What the parser holds between chunks: the line being read, the data of the event being read.
#[derive(Debug)]
struct Parser {
    limit: usize,
    /// The start of a line cut by a chunk's end.
    line: Vec<u8>,
    /// The event's data so far, its lines joined by LF.
    data: Vec<u8>,
    /// Whether the event has a data line yet (an empty one counts).
    has_data: bool,
    /// The bytes of the event's lines so far, line ends excluded.
    event_bytes: usize,
    /// Whether the last byte seen was a CR, so that an LF right after it ends no line.
    after_cr: bool,
    /// Whether the stream's first bytes were seen (for the byte order mark).
    started: bool,
}

impl Parser {
    fn new(limit: usize) -> Self {
        Self {
            limit,
            line: Vec::new(),
            data: Vec::new(),
            has_data: false,
            event_bytes: 0,
            after_cr: false,
            started: false,
        }
    }

    /// Reads `chunk`, adding the payload of each event it completes to `ready`.
    fn push(
        &mut self,
        mut chunk: &[u8],
        ready: &mut VecDeque<Result<String, Error>>,
    ) -> Result<(), Error> {
        if !self.started && !chunk.is_empty() {
            self.started = true;
            chunk = chunk.strip_prefix(BOM).unwrap_or(chunk);
        }
        let mut start = 0;
        for end in memchr::memchr2_iter(b'\n', b'\r', chunk) {
            let after_cr = std::mem::replace(&mut self.after_cr, chunk[end] == b'\r');
            if chunk[end] == b'\n' && after_cr && end == start {
                // The LF of a CRLF: the CR ended the line.
                start = end + 1;
                continue;
            }
            if self.line.is_empty() {
                self.line_end(&chunk[start..end], ready)?;
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(&chunk[start..end]);
                self.line_end(&line, ready)?;
                line.clear();
                self.line = line;
            }
            start = end + 1;
        }
        let rest = &chunk[start..];
        if !rest.is_empty() {
            self.after_cr = false;
            self.line.extend_from_slice(rest);
        }
        if self.event_bytes + self.line.len() > self.limit {
            return Err(too_large(self.limit));
        }
        Ok(())
    }

    /// Handles one whole line: an empty one ends the event, a `data` field adds to it.
    fn line_end(
        &mut self,
        line: &[u8],
        ready: &mut VecDeque<Result<String, Error>>,
    ) -> Result<(), Error> {
        if line.is_empty() {
            self.event_bytes = 0;
            let data = std::mem::take(&mut self.data);
            if std::mem::take(&mut self.has_data) && !data.is_empty() {
                let payload = String::from_utf8(data).map_err(|_| {
                    Error::new(
                        ErrorKind::Decode,
                        "the response is not a valid event stream: an event's data is not \
                         UTF-8; check the base URL",
                    )
                })?;
                ready.push_back(Ok(payload));
            }
            return Ok(());
        }
        self.event_bytes += line.len();
        if self.event_bytes > self.limit {
            return Err(too_large(self.limit));
        }
        let (field, value) = match memchr::memchr(b':', line) {
            // A comment.
            Some(0) => return Ok(()),
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        if field == b"data" {
            if self.has_data {
                self.data.push(b'\n');
            }
            self.data.extend_from_slice(value);
            self.has_data = true;
        }
        Ok(())
    }
}

fn too_large(limit: usize) -> Error {
    Error::new(
        ErrorKind::ResponseTooLarge { limit },
        format!(
            "one event of the response stream passed {limit} bytes (the builder's \
             `max_event_bytes`); the server may be broken or hostile, or raise the limit"
        ),
    )
}

fn transport_error<E: std::error::Error + Send + Sync + 'static>(error: E) -> Error {
    let timed_out = (&error as &dyn std::error::Error)
        .downcast_ref::<reqwest::Error>()
        .is_some_and(reqwest::Error::is_timeout);
    if timed_out {
        Error::new(
            ErrorKind::Timeout,
            format!(
                "the response stream passed the timeout: {error}; raise the builder's `timeout`"
            ),
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

#[cfg(test)]
mod tests {
    use futures::StreamExt as _;

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

    #[tokio::test]
    async fn multi_line_data_joins_with_lf_and_other_fields_are_ignored() {
        let events = parse(&[
            "\u{feff}event: message\nid: 7\ndata: first\ndata:second\ndata\nretry: 10\n\n",
            "data: {\"end\":true}\n\ndata: never finished",
        ])
        .await;
        assert_eq!(
            events,
            [
                Ok("first\nsecond\n".to_owned()),
                Ok("{\"end\":true}".to_owned())
            ]
        );
    }

    #[tokio::test]
    async fn data_that_is_not_utf8_is_a_decode_error() {
        let stream = futures::stream::iter([Ok::<_, std::io::Error>(&b"data: \xff\xfe\n\n"[..])]);
        let events: Vec<_> = sse_data(stream, DEFAULT_MAX_EVENT_BYTES).collect().await;
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].as_ref().unwrap_err().kind(), ErrorKind::Decode);
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
