//! Server-sent events: a response byte stream turned into the `data` payloads of its events, with
//! the maintained `eventsource-stream` parser (LF or CRLF line ends, comment lines skipped).

use eventsource_stream::{EventStreamError, Eventsource as _};
use futures::{Stream, StreamExt as _};

use crate::error::{Error, ErrorKind};

/// The `data` payloads of the SSE events in `bytes`, in order. Comment lines (`: ...`) and events
/// without data are skipped; a transport failure mid-stream becomes [`ErrorKind::StreamCut`]
/// ([`ErrorKind::Timeout`] when the deadline passed).
pub fn sse_data<S, B, E>(bytes: S) -> impl Stream<Item = Result<String, Error>> + Send
where
    S: Stream<Item = Result<B, E>> + Send,
    B: AsRef<[u8]> + Send,
    E: std::error::Error + Send + Sync + 'static,
{
    bytes.eventsource().filter_map(|event| {
        std::future::ready(match event {
            Ok(event) if event.data.is_empty() => None,
            Ok(event) => Some(Ok(event.data)),
            Err(error) => Some(Err(stream_error(error))),
        })
    })
}

fn stream_error<E: std::error::Error + Send + Sync + 'static>(error: EventStreamError<E>) -> Error {
    match error {
        EventStreamError::Transport(error) => {
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
        sse_data(stream)
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
        let events: Vec<_> = sse_data(stream).collect().await;
        assert_eq!(events[0].as_deref().unwrap(), "1");
        assert_eq!(events[1].as_ref().unwrap_err().kind(), ErrorKind::StreamCut);
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
                sse_data(stream)
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
