//! What the flow lets through from a tool-response event before it reaches the history: results
//! cut to `RunConfig::max_tool_result_bytes`, so that one tool cannot flood the model's context
//! or storage, and no `app:` state when the app does not let tools write it.

use adk_core::internal::InvocationControl as _;
use adk_core::{Event, InvocationContext, PartData, StateScope};
use serde_json::{Map, Value};

use super::ToolStateScopes;

/// Applies the invocation's limits to the tool-response event `event`.
pub(super) fn screen(ctx: &InvocationContext, event: &mut Event) {
    let limit = ctx.run_config().max_tool_result_bytes;
    if limit > 0
        && let Some(content) = event.response.content.as_mut()
    {
        for part in &mut content.parts {
            if let PartData::FunctionResponse(response) = &mut part.data
                && let Some(cut) = truncated(&response.response, limit)
            {
                tracing::warn!(
                    tool = %response.name,
                    limit,
                    "a tool result was larger than RunConfig::max_tool_result_bytes and was cut"
                );
                response.response = cut;
            }
        }
    }
    if !ctx.invocation_data::<ToolStateScopes>().allows_app() {
        event.actions.state_delta.retain(|key, _| {
            let shared = StateScope::of(key) == StateScope::App;
            if shared {
                tracing::warn!(
                    agent = %event.author,
                    key = %key,
                    "a tool set app: state, which this app does not allow; the change is dropped"
                );
            }
            !shared
        });
    }
}

/// The result cut to `limit` bytes of its JSON text, with a note saying how much was left out;
/// `None` when it fits. A result that fits is measured without being copied or kept as text.
fn truncated(result: &Map<String, Value>, limit: usize) -> Option<Map<String, Value>> {
    if json_len(result) <= limit {
        return None;
    }
    let text = Value::Object(result.clone()).to_string();
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let note = format!(
        "[adk: the tool's result was {} bytes of JSON; only the first {end} bytes are shown]",
        text.len()
    );
    let mut cut = Map::new();
    cut.insert("result".to_owned(), Value::String(text[..end].to_owned()));
    cut.insert("truncated".to_owned(), Value::String(note));
    Some(cut)
}

/// The length of `value`'s JSON text, counted as it is written.
fn json_len(value: &Map<String, Value>) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Writing a JSON map into a counter cannot fail.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn results_over_the_limit_are_cut_at_a_char_boundary_with_a_note() {
        let small = json!({"ok": true}).as_object().cloned().unwrap();
        assert_eq!(truncated(&small, 100), None);
        assert_eq!(json_len(&small), "{\"ok\":true}".len());
        let big = json!({"text": "é".repeat(100)})
            .as_object()
            .cloned()
            .unwrap();
        let cut = truncated(&big, 20).unwrap();
        let shown = cut["result"].as_str().unwrap();
        assert!(
            shown.len() <= 20 && shown.starts_with("{\"text\":\"é"),
            "{shown}"
        );
        assert!(
            cut["truncated"].as_str().unwrap().contains("was 211 bytes"),
            "{cut:?}"
        );
    }
}
