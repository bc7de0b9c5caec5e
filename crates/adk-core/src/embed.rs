//! The [`Embedder`] contract: texts in, vectors out, in batches, from a named model. Adapters live
//! in `adk-model`; memory services in `adk-session` store the vectors beside the model's name.

use async_trait::async_trait;

use crate::{Error, ErrorKind, Result};

/// Turns texts into vectors whose cosine similarity says how close their meanings are.
///
/// Batch-first: [`embed`](Self::embed) takes many texts and returns one vector per text, in
/// order, so that an adapter sends as few requests as its provider allows. Errors are of kind
/// [`ErrorKind::Model`] (the adapter's own error is the source) or [`ErrorKind::Config`].
///
/// ```
/// use adk_core::{Embedder, Result};
///
/// /// Counts of the letters `a` and `b`: a toy, enough to show the contract.
/// struct Letters;
///
/// #[async_trait::async_trait]
/// impl Embedder for Letters {
///     fn model(&self) -> &str {
///         "letters-v1"
///     }
///
///     fn dimensions(&self) -> Option<usize> {
///         Some(2)
///     }
///
///     async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
///         Ok(texts
///             .iter()
///             .map(|text| vec![text.matches('a').count() as f32, text.matches('b').count() as f32])
///             .collect())
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<()> {
/// let vectors = Letters.embed(&["abba".into(), "a".into()]).await?;
/// assert_eq!(vectors, [vec![2.0, 2.0], vec![1.0, 0.0]]);
/// # Ok(())
/// # }
/// ```
#[async_trait]
pub trait Embedder: Send + Sync {
    /// The model's name or id, stored beside each vector it made: vectors of different models are
    /// never compared, and a store re-embeds what another model made.
    fn model(&self) -> &str;

    /// How many numbers each vector has, when known before the first call.
    fn dimensions(&self) -> Option<usize>;

    /// One vector per text of `texts`, in the same order. An empty slice gives an empty answer
    /// without a call.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>>;
}

/// Checks what an embedder answered for `asked` texts: one vector per text, all of one length (the
/// embedder's dimensions when it states them), none empty and no number infinite or NaN. Memory
/// services run every answer through it, so a faulty embedder fails the call with a clear error
/// instead of storing vectors that rank nothing.
///
/// ```
/// use adk_core::check_embeddings;
///
/// assert!(check_embeddings("m", Some(2), 1, &[vec![0.5, 0.5]]).is_ok());
/// let error = check_embeddings("m", None, 2, &[vec![0.5, 0.5]]).unwrap_err();
/// assert!(error.message().contains("1 vectors for 2 texts"), "{error}");
/// ```
pub fn check_embeddings(
    model: &str,
    dimensions: Option<usize>,
    asked: usize,
    vectors: &[Vec<f32>],
) -> Result<()> {
    let fail = |what: String| {
        Err(Error::new(
            ErrorKind::Model,
            format!("the embedding model {model} answered {what}; check the model and the server"),
        ))
    };
    if vectors.len() != asked {
        return fail(format!("{} vectors for {asked} texts", vectors.len()));
    }
    let Some(first) = vectors.first() else {
        return Ok(());
    };
    let expected = dimensions.unwrap_or(first.len());
    for (index, vector) in vectors.iter().enumerate() {
        if vector.is_empty() || vector.len() != expected {
            return fail(format!(
                "a vector of {} numbers for text {index}, where {expected} were expected",
                vector.len()
            ));
        }
        if vector.iter().any(|number| !number.is_finite()) {
            return fail(format!(
                "a vector with a number that is not finite for text {index}"
            ));
        }
    }
    Ok(())
}

crate::__into_shared!(
    /// An [`Embedder`] as a builder takes it: the embedder itself, an `Arc` of it, or an
    /// `Arc<dyn Embedder>`.
    IntoEmbedder,
    into_embedder,
    Embedder,
    "`{Self}` is not an embedder"
);
