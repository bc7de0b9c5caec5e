//! Embedding adapters: [`OpenAiEmbedder`] (`POST {base}/embeddings`, which OpenAI, llama.cpp's
//! server, vLLM and Ollama share) and [`GeminiEmbedder`] (`embedContent`, `batchEmbedContents`).
//! Both send texts in batches of at most `max_batch` over the chat adapters' transport, so they
//! retry, time out, bound their reads and report errors the same way.

#[cfg(feature = "gemini")]
mod gemini;
#[cfg(feature = "openai")]
mod openai;

#[cfg(feature = "gemini")]
pub use gemini::{GeminiEmbedder, GeminiEmbedderBuilder};
#[cfg(feature = "openai")]
pub use openai::{OpenAiEmbedder, OpenAiEmbedderBuilder};

use crate::error::{Error, ErrorKind};

/// Checks that one batch's answer holds a vector for each of its `asked` texts, all of one length
/// (`dimensions` when the builder stated it) and none empty, so that a broken server fails the call here, with the URL named, rather than
/// in a memory store later.
fn check_batch(
    url: &str,
    asked: usize,
    dimensions: Option<usize>,
    vectors: &[Vec<f32>],
) -> Result<(), Error> {
    let fail = |what: String| {
        Err(Error::new(
            ErrorKind::Decode,
            format!(
                "{} answered {what}; the server may not serve this embedding model, check the \
                 model name and the base URL",
                crate::error::shown_url(url)
            ),
        ))
    };
    if vectors.len() != asked {
        return fail(format!("{} vectors for {asked} texts", vectors.len()));
    }
    let length = dimensions.unwrap_or_else(|| vectors.first().map_or(0, Vec::len));
    if let Some(index) = vectors
        .iter()
        .position(|vector| vector.is_empty() || vector.len() != length)
    {
        return fail(format!(
            "a vector of {} numbers for text {index} where {length} were expected",
            vectors[index].len()
        ));
    }
    Ok(())
}

/// The default of `max_batch`: how many texts one request carries. 100 is the most Gemini's
/// `batchEmbedContents` takes; OpenAI takes up to 2,048 inputs but also caps the tokens of a
/// request, which 100 short texts stay well under.
const DEFAULT_MAX_BATCH: usize = 100;
