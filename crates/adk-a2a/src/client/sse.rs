//! Reading a `message/stream` response: Server-Sent Events, each a JSON-RPC response holding one
//! stream event, with the idle timeout and the per-event size limit applied.

use eventsource_stream::Eventsource as _;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt as _};

use super::ClientConfig;
use crate::error::{A2aError, json_problem};
use crate::types::{JsonRpcResponse, StreamEvent};

/// The events of `response`. The stream ends after the event that ends the task's stream; a
/// connection that ends before it yields [`A2aError::StreamEnded`] last.
pub(super) fn events(
    response: reqwest::Response,
    url: String,
    config: ClientConfig,
) -> BoxStream<'static, Result<StreamEvent, A2aError>> {
    let limit = config.max_response_bytes;
    let bytes = limit_event_size(response.bytes_stream(), limit, url.clone());
    let mut frames = bytes.eventsource();
    Box::pin(async_stream::try_stream! {
        let mut task = None;
        loop {
            let next = tokio::time::timeout(config.timeout, frames.next())
                .await
                .map_err(|_| A2aError::Timeout { url: url.clone() })?;
            let Some(frame) = next else {
                Err(A2aError::StreamEnded {
                    url: url.clone(),
                    task: task.clone().unwrap_or_else(|| "unknown".to_owned()),
                })?;
                break;
            };
            let frame = frame.map_err(|error| match error {
                eventsource_stream::EventStreamError::Transport(inner) => inner,
                other => A2aError::InvalidResponse {
                    url: url.clone(),
                    message: match other {
                        eventsource_stream::EventStreamError::Utf8(_) => "an event is not UTF-8".to_owned(),
                        _ => "the event stream is malformed".to_owned(),
                    },
                },
            })?;
            if frame.data.trim().is_empty() {
                continue;
            }
            let response: JsonRpcResponse = serde_json::from_str(&frame.data).map_err(|error| {
                A2aError::InvalidResponse { url: url.clone(), message: json_problem(&error) }
            })?;
            let event: StreamEvent = super::result_of(response, &url)?;
            task = task.or_else(|| task_id(&event).map(printable_id));
            let ends = event.ends_stream();
            yield event;
            if ends {
                break;
            }
        }
    })
}

fn task_id(event: &StreamEvent) -> Option<String> {
    match event {
        StreamEvent::Task(task) => Some(task.id.clone()),
        StreamEvent::StatusUpdate(update) => Some(update.task_id.clone()),
        StreamEvent::ArtifactUpdate(update) => Some(update.task_id.clone()),
        StreamEvent::Message(message) => message.task_id.clone(),
    }
}

/// A peer's task id as an error may show it: at most 64 characters, no control characters.
fn printable_id(id: String) -> String {
    id.chars().filter(|c| !c.is_control()).take(64).collect()
}

/// Passes the bytes on, failing when one event (the bytes between two blank lines) grows past
/// `limit` bytes, so that one huge event cannot exhaust memory.
fn limit_event_size(
    bytes: impl Stream<Item = reqwest::Result<bytes::Bytes>> + Send + 'static,
    limit: usize,
    url: String,
) -> impl Stream<Item = Result<bytes::Bytes, A2aError>> + Send + 'static {
    let mut event_bytes = 0usize;
    // Whether the last byte that was not `\r` ended a line; carried across chunks.
    let mut after_newline = false;
    bytes.map(move |chunk| {
        let chunk = chunk.map_err(|error| {
            if error.is_timeout() {
                A2aError::Timeout { url: url.clone() }
            } else {
                A2aError::Transport {
                    url: url.clone(),
                    source: error.without_url(),
                }
            }
        })?;
        for &byte in chunk.iter() {
            match byte {
                b'\r' => {}
                b'\n' if after_newline => event_bytes = 0,
                b'\n' => after_newline = true,
                _ => {
                    after_newline = false;
                    event_bytes += 1;
                    if event_bytes > limit {
                        return Err(A2aError::ResponseTooLarge {
                            url: url.clone(),
                            limit,
                        });
                    }
                }
            }
        }
        Ok(chunk)
    })
}
