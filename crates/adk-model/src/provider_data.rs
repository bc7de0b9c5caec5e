//! Data a provider hands out that must go back to the same provider unchanged (Anthropic's thinking
//! signatures and redacted thinking, the Responses API's reasoning items and item ids), kept in a
//! part's `extra` map under keys named for the provider, so that a history stays one
//! `adk_core::Content` list whichever model wrote it.
//!
//! An adapter reads only its own keys and never sends another provider's: a thinking signature is
//! valid only for the provider that made it, and a history can hold turns of several providers (a
//! fallback from one model to another, say).

#[cfg(feature = "gemini")]
use adk_core::Part;
#[cfg(feature = "gemini")]
use serde_json::Map;

/// On a thought part: the signature Anthropic gave its thinking block, as text.
#[cfg(feature = "anthropic")]
pub(crate) const ANTHROPIC_SIGNATURE: &str = "anthropicSignature";

/// On a thought part without text: the opaque data of an Anthropic `redacted_thinking` block.
#[cfg(feature = "anthropic")]
pub(crate) const ANTHROPIC_REDACTED_THINKING: &str = "anthropicRedactedThinking";

/// On a part without data: an Anthropic content block of a kind the adapter does not know (a
/// server tool's, say), as received, sent back as it came.
#[cfg(feature = "anthropic")]
pub(crate) const ANTHROPIC_BLOCK: &str = "anthropicBlock";

/// On a thought part: the Responses API's `reasoning` item as received, sent back as an input
/// item (its `encrypted_content` carries the reasoning when nothing is stored server-side).
#[cfg(feature = "openai")]
pub(crate) const OPENAI_REASONING: &str = "openaiReasoning";

/// On a function-call part: the Responses API's id of the `function_call` item (`fc_...`), which
/// a reasoning item sent back before it refers to.
#[cfg(feature = "openai")]
pub(crate) const OPENAI_ITEM_ID: &str = "openaiItemId";

/// The prefixes of every provider's keys, for the adapters that send parts as they serialize.
#[cfg(feature = "gemini")]
const PROVIDER_PREFIXES: [&str; 2] = ["anthropic", "openai"];

/// Whether `part` carries data only a provider understands in its `extra` map.
#[cfg(feature = "gemini")]
pub(crate) fn has_provider_data(part: &Part) -> bool {
    part.extra.keys().any(|key| is_provider_key(key))
}

/// `extra` without the providers' keys.
#[cfg(feature = "gemini")]
pub(crate) fn without_provider_data(
    extra: &Map<String, serde_json::Value>,
) -> Map<String, serde_json::Value> {
    extra
        .iter()
        .filter(|(key, _)| !is_provider_key(key))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

#[cfg(feature = "gemini")]
fn is_provider_key(key: &str) -> bool {
    PROVIDER_PREFIXES
        .iter()
        .any(|prefix| key.starts_with(prefix))
}

#[cfg(all(test, feature = "gemini", feature = "anthropic"))]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_provider_keys_are_recognised_and_removed() {
        let mut part = Part::thought("hmm");
        part.extra.insert("videoMetadata".into(), json!({}));
        assert!(!has_provider_data(&part));
        part.extra.insert(ANTHROPIC_SIGNATURE.into(), json!("sig"));
        assert!(has_provider_data(&part));
        let kept = without_provider_data(&part.extra);
        assert_eq!(kept.keys().collect::<Vec<_>>(), ["videoMetadata"]);
    }
}
