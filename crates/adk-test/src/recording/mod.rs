//! Recorded HTTP traffic: one [`Exchange`] per request/response pair, read from the container
//! formats described in the shared folder's `FORMATS.md` (httprr, VCR YAML and rig cassettes).

mod httprr;
mod rig;
mod vcr;

use std::fmt;
use std::path::{Path, PathBuf};

/// One recorded request and the response the service gave to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    /// The HTTP method, upper case (`POST`).
    pub method: String,
    /// The path of the request URL, without host or query (`/v1beta/models/m:generateContent`).
    pub path: String,
    /// The query string without the leading `?`, empty when there is none.
    pub query: String,
    /// The request body as recorded; for pydantic-ai cassettes it is re-serialized JSON.
    pub request_body: Vec<u8>,
    /// The response status code.
    pub status: u16,
    /// Response headers worth replaying; framing headers (`Content-Length`, `Transfer-Encoding`,
    /// `Content-Encoding`, `Connection`) are dropped, since the stored body is already decoded.
    pub response_headers: Vec<(String, String)>,
    /// The response body, decompressed.
    pub response_body: Vec<u8>,
}

impl Exchange {
    /// The request body parsed as JSON, or `None` when it is empty or not JSON.
    pub fn request_json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.request_body).ok()
    }

    /// The response body parsed as JSON, or `None` when it is not JSON (an SSE stream, say).
    pub fn response_json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.response_body).ok()
    }

    /// The response body as text (lossy for invalid UTF-8).
    pub fn response_text(&self) -> String {
        String::from_utf8_lossy(&self.response_body).into_owned()
    }

    /// The value of response header `name` (case-insensitive).
    pub fn response_header(&self, name: &str) -> Option<&str> {
        self.response_headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The data payloads of an SSE response body, in order (comment lines skipped).
    pub fn sse_data(&self) -> Vec<String> {
        self.response_text()
            .split('\n')
            .map(|line| line.trim_end_matches('\r'))
            .filter_map(|line| line.strip_prefix("data:"))
            .map(|data| data.strip_prefix(' ').unwrap_or(data).to_owned())
            .collect()
    }
}

/// A recording that could not be read: which file and what was wrong with it.
#[derive(Debug)]
pub struct RecordingError {
    path: PathBuf,
    message: String,
}

impl RecordingError {
    pub(crate) fn new(path: &Path, message: impl Into<String>) -> Self {
        Self {
            path: path.to_owned(),
            message: message.into(),
        }
    }
}

impl fmt::Display for RecordingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot read recording {}: {}; check the file against FORMATS.md in the shared folder",
            self.path.display(),
            self.message
        )
    }
}

impl std::error::Error for RecordingError {}

/// Reads every exchange of the recording at `path`, choosing the format from its content: httprr
/// (first line `httprr trace v1`), VCR YAML (top key `interactions:`) or a rig cassette
/// (`when:`/`then:` documents).
pub fn load_recording(path: impl AsRef<Path>) -> Result<Vec<Exchange>, RecordingError> {
    let path = path.as_ref();
    let bytes =
        std::fs::read(path).map_err(|error| RecordingError::new(path, error.to_string()))?;
    if bytes.starts_with(httprr::MAGIC) {
        return httprr::parse(&bytes).map_err(|message| RecordingError::new(path, message));
    }
    let text = std::str::from_utf8(&bytes)
        .map_err(|error| RecordingError::new(path, format!("YAML is not UTF-8: {error}")))?;
    let exchanges =
        if text.trim_start().starts_with("interactions:") || text.contains("\ninteractions:") {
            vcr::parse(text)
        } else if text.contains("when:") && text.contains("then:") {
            rig::parse(text)
        } else {
            Err("unknown format: neither httprr, VCR YAML nor a rig cassette".to_owned())
        };
    exchanges.map_err(|message| RecordingError::new(path, message))
}

/// Whether a recorded response header is about framing or encoding, which a replay recomputes.
pub(crate) fn is_framing_header(name: &str) -> bool {
    [
        "content-length",
        "transfer-encoding",
        "content-encoding",
        "connection",
    ]
    .iter()
    .any(|framing| name.eq_ignore_ascii_case(framing))
}

/// Splits an absolute or relative URL into its path and query.
pub(crate) fn split_url(url: &str) -> (String, String) {
    let without_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let path_and_query = if url.contains("://") {
        without_scheme
            .find('/')
            .map_or("/", |start| &without_scheme[start..])
    } else {
        without_scheme
    };
    match path_and_query.split_once('?') {
        Some((path, query)) => (path.to_owned(), query.to_owned()),
        None => (path_and_query.to_owned(), String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_path_and_query() {
        assert_eq!(
            split_url("https://h.example/v1beta/models/m:streamGenerateContent?alt=sse"),
            (
                "/v1beta/models/m:streamGenerateContent".into(),
                "alt=sse".into()
            )
        );
        assert_eq!(
            split_url("/v1/chat/completions"),
            ("/v1/chat/completions".into(), String::new())
        );
    }

    #[test]
    fn sse_data_skips_comments_and_accepts_crlf() {
        let exchange = Exchange {
            method: "POST".into(),
            path: "/".into(),
            query: String::new(),
            request_body: Vec::new(),
            status: 200,
            response_headers: Vec::new(),
            response_body: b": PROCESSING\n\ndata: {\"a\":1}\r\n\r\ndata: [DONE]\n\n".to_vec(),
        };
        assert_eq!(exchange.sse_data(), ["{\"a\":1}", "[DONE]"]);
    }
}
