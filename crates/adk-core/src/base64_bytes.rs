//! Bytes as base64 strings in JSON: written URL-safe with padding as ADK Python writes them, read
//! in the standard or the URL-safe alphabet, padded or not.

use base64::Engine as _;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use bytes::Bytes;
use serde::{Deserialize, Deserializer, Serializer};

const WRITE: GeneralPurpose = base64::engine::general_purpose::URL_SAFE;

const READ_CONFIG: GeneralPurposeConfig =
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
const READ_STANDARD: GeneralPurpose = GeneralPurpose::new(&alphabet::STANDARD, READ_CONFIG);
const READ_URL_SAFE: GeneralPurpose = GeneralPurpose::new(&alphabet::URL_SAFE, READ_CONFIG);

/// Encodes bytes the way ADK Python does: URL-safe alphabet, with padding.
pub(crate) fn encode(bytes: &[u8]) -> String {
    WRITE.encode(bytes)
}

/// Decodes base64 in either alphabet; a string mixing both is an error.
pub(crate) fn decode(text: &str) -> Result<Bytes, base64::DecodeError> {
    let engine = if text.contains(['-', '_']) {
        &READ_URL_SAFE
    } else {
        &READ_STANDARD
    };
    engine.decode(text).map(Bytes::from)
}

pub(crate) fn serialize<S: Serializer>(bytes: &Bytes, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&encode(bytes))
}

pub(crate) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Bytes, D::Error> {
    let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
    decode(&text).map_err(serde::de::Error::custom)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_url_safe_with_padding_like_python() {
        assert_eq!(encode(&[0xfb]), "-w==");
    }

    #[test]
    fn reads_both_alphabets_with_or_without_padding() {
        for text in ["-w==", "+w==", "-w", "+w"] {
            assert_eq!(decode(text).unwrap().as_ref(), &[0xfb], "{text}");
        }
        assert!(decode("not base64!").is_err());
    }
}
