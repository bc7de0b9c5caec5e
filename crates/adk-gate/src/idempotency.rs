//! Idempotency keys: the `Idempotency-Key` header, or a field of the body for clients that cannot
//! set headers, checked the same way by every server that takes them (the API server's runs and
//! A2A's messages).

use http::HeaderValue;

/// The request header that carries an idempotency key.
pub const IDEMPOTENCY_KEY_HEADER: &str = "idempotency-key";

/// The run-metadata (`customMetadata`) key under which a run's stored events carry its
/// idempotency key, so that a retry on any replica finds what the first attempt stored.
pub const IDEMPOTENCY_METADATA_KEY: &str = "adkIdempotencyKey";

/// The longest idempotency key taken, as common payment APIs take.
pub const MAX_IDEMPOTENCY_KEY_LEN: usize = 255;

/// Why a request's idempotency key was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IdempotencyKeyError {
    /// The header's value is not visible ASCII text.
    #[error("the `Idempotency-Key` header must be visible ASCII text")]
    HeaderNotText,
    /// The header and the body's field name two different keys.
    #[error("the `Idempotency-Key` header and {field} differ; send one key")]
    Differ {
        /// How the body's field reads in the message, such as "the body's `idempotencyKey`".
        field: &'static str,
    },
    /// The key is empty, too long, or not visible ASCII.
    #[error("an idempotency key is 1 to {MAX_IDEMPOTENCY_KEY_LEN} visible ASCII characters")]
    Invalid,
}

/// The request's idempotency key: the header's or the body's `field` (named `field_name` in the
/// errors); both given must agree, and the key must be 1 to [`MAX_IDEMPOTENCY_KEY_LEN`] visible
/// ASCII characters.
///
/// ```
/// use adk_gate::{IdempotencyKeyError, idempotency_key};
/// use http::HeaderValue;
///
/// let header = HeaderValue::from_static("order-42");
/// let key = idempotency_key(Some(&header), None, "the body's `idempotencyKey`");
/// assert_eq!(key, Ok(Some("order-42".to_owned())));
/// assert_eq!(
///     idempotency_key(Some(&header), Some("order-43".into()), "the body's `idempotencyKey`"),
///     Err(IdempotencyKeyError::Differ { field: "the body's `idempotencyKey`" })
/// );
/// assert_eq!(idempotency_key(None, Some(String::new()), "x"), Err(IdempotencyKeyError::Invalid));
/// ```
///
/// # Errors
///
/// [`IdempotencyKeyError`] saying what is wrong with the key.
pub fn idempotency_key(
    header: Option<&HeaderValue>,
    field: Option<String>,
    field_name: &'static str,
) -> Result<Option<String>, IdempotencyKeyError> {
    let header = header
        .map(|value| {
            value
                .to_str()
                .map(str::to_owned)
                .map_err(|_| IdempotencyKeyError::HeaderNotText)
        })
        .transpose()?;
    let key = match (header, field) {
        (Some(header), Some(field)) if header != field => {
            return Err(IdempotencyKeyError::Differ { field: field_name });
        }
        (Some(key), _) | (None, Some(key)) => key,
        (None, None) => return Ok(None),
    };
    let visible = key.bytes().all(|byte| byte.is_ascii_graphic());
    if key.is_empty() || key.len() > MAX_IDEMPOTENCY_KEY_LEN || !visible {
        return Err(IdempotencyKeyError::Invalid);
    }
    Ok(Some(key))
}
