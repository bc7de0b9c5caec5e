//! The embedding adapters on the loopback server: the wire format of OpenAI's `/embeddings` and
//! Gemini's `embedContent`/`batchEmbedContents`, batching, retries of 429 and 5xx, and the typed
//! errors of refusals, malformed answers and answers with the wrong number of vectors. No public
//! recording of embedding traffic exists in the shared fixtures, so the answers are written here in
//! the documented formats.

use std::time::Duration;

use adk_core::Embedder;
use adk_model::{ErrorKind, GeminiEmbedder, OpenAiEmbedder, RetryPolicy};
use adk_test::{MockResponse, MockServer};
use serde_json::{Value, json};

/// Retries without waiting, so the retry tests take no time.
fn fast_retries() -> RetryPolicy {
    RetryPolicy::default()
        .max_attempts(3)
        .initial_backoff(Duration::from_millis(1))
        .max_backoff(Duration::from_millis(2))
}

fn texts(count: usize) -> Vec<String> {
    (0..count).map(|n| format!("text {n}")).collect()
}

/// An OpenAI embeddings answer for `indexes`, in that order, the vector of index `i` being
/// `[i, i + 0.5]`.
fn openai_answer(indexes: &[usize]) -> MockResponse {
    let data: Vec<Value> = indexes
        .iter()
        .map(|&index| {
            json!({"object": "embedding", "index": index, "embedding": [index as f32, index as f32 + 0.5]})
        })
        .collect();
    MockResponse::json(
        200,
        &json!({"object": "list", "data": data, "model": "embed-small", "usage": {"prompt_tokens": 3, "total_tokens": 3}}),
    )
}

fn openai(server: &MockServer) -> OpenAiEmbedder {
    OpenAiEmbedder::builder("embed-small")
        .base_url(format!("{}/v1", server.base_url()))
        .api_key("sk-test")
        .max_batch(2)
        .retry(fast_retries())
        .build()
        .unwrap()
}

/// The adapter's own error behind the core error an [`Embedder`] returns.
fn model_error(error: &adk_core::Error) -> &adk_model::Error {
    assert_eq!(error.kind(), adk_core::ErrorKind::Model, "{error}");
    error.downcast_source::<adk_model::Error>().unwrap()
}

#[tokio::test]
async fn openai_sends_batches_and_puts_vectors_back_in_order() {
    // The second batch's answer lists its vectors out of order, as the API allows.
    let server = MockServer::start([
        openai_answer(&[0, 1]),
        openai_answer(&[1, 0]),
        openai_answer(&[0]),
    ])
    .await;
    let embedder = openai(&server);
    let vectors = embedder.embed(&texts(5)).await.unwrap();
    assert_eq!(
        vectors,
        [
            vec![0.0, 0.5],
            vec![1.0, 1.5],
            vec![0.0, 0.5],
            vec![1.0, 1.5],
            vec![0.0, 0.5]
        ]
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for request in &requests {
        assert_eq!(request.method, "POST");
        assert_eq!(request.path, "/v1/embeddings");
        assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
    }
    assert_eq!(
        requests[0].json(),
        json!({"model": "embed-small", "input": ["text 0", "text 1"], "encoding_format": "float"})
    );
    assert_eq!(requests[2].json()["input"], json!(["text 4"]));

    // No text, no request.
    assert!(embedder.embed(&[]).await.unwrap().is_empty());
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn openai_retries_5xx_and_429_but_not_4xx() {
    let server = MockServer::start([
        MockResponse::json(503, &json!({"error": {"message": "loading model"}})),
        MockResponse::json(429, &json!({"error": {"message": "slow down"}}))
            .header("retry-after-ms", "1"),
        openai_answer(&[0]),
        MockResponse::json(
            401,
            &json!({"error": {"message": "bad key", "type": "invalid_request_error", "code": "invalid_api_key"}}),
        ),
    ])
    .await;
    let embedder = openai(&server);
    assert_eq!(embedder.embed(&texts(1)).await.unwrap(), [vec![0.0, 0.5]]);
    assert_eq!(server.requests().len(), 3);

    let error = embedder.embed(&texts(1)).await.unwrap_err();
    let model = model_error(&error);
    assert_eq!(model.status(), Some(401));
    assert_eq!(model.provider_status(), Some("invalid_api_key"));
    assert!(error.to_string().contains("bad key"), "{error}");
    assert_eq!(server.requests().len(), 4, "a 401 is not retried");
}

#[tokio::test]
async fn openai_malformed_answers_are_decode_errors() {
    let server = MockServer::start([
        MockResponse::new(200, "<html>not json</html>"),
        // One vector for two texts.
        openai_answer(&[0]),
        // Indexes that are not 0 and 1.
        openai_answer(&[0, 5]),
        // Vectors of different lengths.
        MockResponse::json(
            200,
            &json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1.0, 2.0]}]}),
        ),
    ])
    .await;
    let embedder = openai(&server);
    for expected in [
        "not json",
        "1 vectors for 2 texts",
        "indexes are not 0 to 1",
        "a vector of 2 numbers for text 1 where 1 were expected",
    ] {
        let error = embedder.embed(&texts(2)).await.unwrap_err();
        assert_eq!(model_error(&error).kind(), ErrorKind::Decode, "{error}");
        assert!(error.to_string().contains(expected), "{error}");
    }
}

#[tokio::test]
async fn openai_checks_and_can_send_the_stated_dimensions() {
    let server = MockServer::start([openai_answer(&[0]), openai_answer(&[0])]).await;
    let stated = OpenAiEmbedder::builder("embed-small")
        .base_url(server.base_url())
        .dimensions(3)
        .build()
        .unwrap();
    assert_eq!(stated.dimensions(), Some(3));
    let error = stated.embed(&texts(1)).await.unwrap_err();
    assert!(error.to_string().contains("3 were expected"), "{error}");
    assert!(server.requests()[0].json().get("dimensions").is_none());

    let shortened = OpenAiEmbedder::builder("embed-small")
        .base_url(server.base_url())
        .dimensions(2)
        .shorten_to_dimensions(true)
        .build()
        .unwrap();
    shortened.embed(&texts(1)).await.unwrap();
    assert_eq!(server.requests()[1].json()["dimensions"], 2);
    assert_eq!(server.requests()[1].header("authorization"), None);
}

fn gemini(server: &MockServer) -> GeminiEmbedder {
    GeminiEmbedder::builder("gemini-embedding-001")
        .base_url(format!("{}/v1beta", server.base_url()))
        .api_key("g-key")
        .task_type("RETRIEVAL_DOCUMENT")
        .output_dimensionality(2)
        .max_batch(2)
        .retry(fast_retries())
        .build()
        .unwrap()
}

#[tokio::test]
async fn gemini_uses_batch_embed_contents_for_many_and_embed_content_for_one() {
    let server = MockServer::start([
        MockResponse::json(
            200,
            &json!({"embeddings": [{"values": [0.1, 0.2]}, {"values": [0.3, 0.4]}]}),
        ),
        MockResponse::json(
            500,
            &json!({"error": {"code": 500, "message": "internal", "status": "INTERNAL"}}),
        ),
        MockResponse::json(200, &json!({"embedding": {"values": [0.5, 0.6]}})),
    ])
    .await;
    let vectors = gemini(&server).embed(&texts(3)).await.unwrap();
    assert_eq!(vectors, [vec![0.1, 0.2], vec![0.3, 0.4], vec![0.5, 0.6]]);
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "two batches, the second retried once");
    assert_eq!(
        requests[0].path,
        "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    );
    assert_eq!(requests[0].header("x-goog-api-key"), Some("g-key"));
    let request = |text: &str| {
        json!({
            "model": "models/gemini-embedding-001",
            "content": {"parts": [{"text": text}]},
            "taskType": "RETRIEVAL_DOCUMENT",
            "outputDimensionality": 2,
        })
    };
    assert_eq!(
        requests[0].json(),
        json!({"requests": [request("text 0"), request("text 1")]})
    );
    assert_eq!(
        requests[2].path,
        "/v1beta/models/gemini-embedding-001:embedContent"
    );
    assert_eq!(requests[2].json(), request("text 2"));
}

#[tokio::test]
async fn gemini_errors_are_typed() {
    let server = MockServer::start([
        MockResponse::json(
            400,
            &json!({"error": {"code": 400, "message": "API key not valid", "status": "INVALID_ARGUMENT"}}),
        ),
        MockResponse::json(200, &json!({"embeddings": [{"values": [0.1, 0.2]}]})),
        MockResponse::json(200, &json!({"embedding": {"vals": []}})),
        MockResponse::json(200, &json!({"embedding": {"values": [0.1, 0.2, 0.3]}})),
    ])
    .await;
    let embedder = gemini(&server);
    let error = embedder.embed(&texts(2)).await.unwrap_err();
    assert_eq!(model_error(&error).status(), Some(400));
    assert_eq!(
        model_error(&error).provider_status(),
        Some("INVALID_ARGUMENT")
    );

    let error = embedder.embed(&texts(2)).await.unwrap_err();
    assert!(
        error.to_string().contains("1 vectors for 2 texts"),
        "{error}"
    );
    let error = embedder.embed(&texts(1)).await.unwrap_err();
    assert_eq!(model_error(&error).kind(), ErrorKind::Decode, "{error}");
    assert!(error.to_string().contains("embedContent answer"), "{error}");
    let error = embedder.embed(&texts(1)).await.unwrap_err();
    assert!(error.to_string().contains("2 were expected"), "{error}");
    assert_eq!(
        server.requests().len(),
        4,
        "4xx and bad answers are not retried"
    );

    let missing = GeminiEmbedder::builder("m")
        .env_vars(&[])
        .build()
        .unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::MissingApiKey);
}
