//! Reading a `message/stream` response: Server-Sent Events, each a JSON-RPC response holding one
//! stream event, with the idle timeout and the per-event size limit applied.

use eventsource_stream::Eventsource as _;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt as _};

use super::ClientConfig;
use crate::error::A2aError;
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
                other => A2aError::InvalidResponse { url: url.clone(), message: other.to_string() },
            })?;
            if frame.data.trim().is_empty() {
                continue;
            }
            let response: JsonRpcResponse = serde_json::from_str(&frame.data).map_err(|error| {
                A2aError::InvalidResponse { url: url.clone(), message: error.to_string() }
            })?;
            let event: StreamEvent = super::result_of(response, &url)?;
            task = task.or_else(|| task_id(&event));
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

/// Passes the bytes on, failing when more than `limit` bytes arrive without a blank line (the end
/// of an SSE event) between them, so that one huge event cannot exhaust memory.
fn limit_event_size(
    bytes: impl Stream<Item = reqwest::Result<bytes::Bytes>> + Send + 'static,
    limit: usize,
    url: String,
) -> impl Stream<Item = Result<bytes::Bytes, A2aError>> + Send + 'static {
    let mut since_boundary = 0usize;
    let mut previous = Vec::<u8>::new();
    bytes.map(move |chunk| {
        let chunk = chunk.map_err(|error| {
            if error.is_timeout() {
                A2aError::Timeout { url: url.clone() }
            } else {
                A2aError::Transport { url: url.clone(), source: error }
            }
        })?;
        // The boundary may straddle two chunks, so the last bytes of the previous chunk are
        // searched together with this one.
        let mut window = std::mem::take(&mut previous);
        let carried = window.len();
        window.extend_from_slice(&chunk);
        let boundary = ["\n\n", "\r\n\r\n", "\r\r"]
            .iter()
            .filter_map(|pattern| {
                window
                    .windows(pattern.len())
                    .rposition(|candidate| candidate == pattern.as_bytes())
                    .map(|at| at + pattern.len())
            })
            .max();
        match boundary {
            Some(end) => since_boundary = window.len() - end,
            None => since_boundary += window.len() - carried,
        }
        previous = window[window.len().saturating_sub(3)..].to_vec();
        if since_boundary > limit {
            return Err(A2aError::ResponseTooLarge { url: url.clone(), limit });
        }
        Ok(chunk)
    })
}
