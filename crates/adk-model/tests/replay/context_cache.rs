//! Gemini's explicit context cache against a loopback fake of the `cachedContents` routes (no
//! recording of them exists): a cache is created for the stable prefix, reused while valid,
//! created anew when it served its calls, when the prefix changes or when it expires, deleted when
//! replaced and when the model is dropped; calls name it and send only what follows it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use adk_core::{Clock, Content, FunctionDeclaration, LlmRequest};
use adk_model::{ContextCacheConfig, GeminiModel, RetryPolicy};
use adk_test::{MockResponse, MockServer, ReceivedRequest};
use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::common;

/// A clock the test moves by hand.
#[derive(Debug, Default)]
struct ManualClock(AtomicU64);

impl Clock for ManualClock {
    fn now(&self) -> f64 {
        1_800_000_000.0 + self.0.load(Ordering::SeqCst) as f64
    }
}

/// What the fake did with the cache routes, in order: `create c1 (N contents)`, `delete c1`.
type Log = Arc<Mutex<Vec<String>>>;

/// The fake's answer to a cache route, or `None` for a model call. Like the API, it makes a
/// name for each cache, and answers an unknown or deleted cache with 404.
fn cache_routes(
    log: &Log,
) -> impl Fn(&ReceivedRequest) -> Option<MockResponse> + Send + Sync + 'static {
    let log = log.clone();
    let live: Arc<Mutex<Vec<String>>> = Arc::default();
    move |request| {
        if request.method == "POST" && request.path == "/v1beta/cachedContents" {
            let body = request.json();
            assert!(
                body["model"].as_str().unwrap().starts_with("models/"),
                "{body}"
            );
            assert!(body["ttl"].as_str().unwrap().ends_with('s'), "{body}");
            let mut log = log.lock();
            let name = format!(
                "cachedContents/c{}",
                log.iter().filter(|line| line.starts_with("create")).count() + 1
            );
            let contents = body["contents"].as_array().unwrap().len();
            log.push(format!("create {name} ({contents} contents)"));
            live.lock().push(name.clone());
            return Some(MockResponse::json(
                200,
                &json!({"name": name, "model": body["model"], "expireTime": "2030-01-01T00:00:00Z"}),
            ));
        }
        if request.method == "DELETE" {
            let name = request.path.trim_start_matches("/v1beta/").to_owned();
            log.lock().push(format!("delete {name}"));
            let mut live = live.lock();
            let known = live
                .iter()
                .position(|live| *live == name)
                .map(|index| live.remove(index));
            return Some(match known {
                Some(_) => MockResponse::json(200, &json!({})),
                None => MockResponse::json(
                    404,
                    &json!({"error": {"code": 404, "message": "not found", "status": "NOT_FOUND"}}),
                ),
            });
        }
        if let Some(cached) = request.json()["cachedContent"].as_str()
            && !live.lock().iter().any(|live| live == cached)
        {
            return Some(MockResponse::json(
                403,
                &json!({"error": {"code": 403, "message": "CachedContent not found", "status": "PERMISSION_DENIED"}}),
            ));
        }
        None
    }
}

fn answer() -> MockResponse {
    MockResponse::json(
        200,
        &json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}],
                "usageMetadata": {"promptTokenCount": 900, "cachedContentTokenCount": 800, "candidatesTokenCount": 1, "totalTokenCount": 901}}),
    )
}

fn request(system: &str, turns: usize) -> LlmRequest {
    let mut contents = Vec::new();
    for turn in 0..turns {
        contents.push(Content::user(format!("question {turn}")));
        contents.push(Content::model(format!("answer {turn}")));
    }
    contents.push(Content::user("the newest question"));
    let mut request = LlmRequest::new("", contents);
    request.append_instructions([system]);
    request.append_tools([FunctionDeclaration::new("lookup", "Looks a thing up.")]);
    request
}

/// The model calls the server received, as `(cachedContent, number of contents, whether the
/// system instruction and tools were sent)`.
fn calls(server: &MockServer) -> Vec<(Option<String>, usize, bool)> {
    server
        .requests()
        .iter()
        .filter(|request| request.path.ends_with(":generateContent"))
        .map(|request| {
            let body: Value = request.json();
            (
                body["cachedContent"].as_str().map(str::to_owned),
                body["contents"].as_array().unwrap().len(),
                body.get("systemInstruction").is_some() || body.get("tools").is_some(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_cache_is_created_reused_replaced_and_deleted() {
    let log = Log::default();
    let server =
        MockServer::start_checked(std::iter::repeat_n(answer(), 6), cache_routes(&log)).await;
    let clock = Arc::new(ManualClock::default());
    let model = GeminiModel::builder("gemini-2.5-flash")
        .api_key("k")
        .base_url(format!("{}/v1beta", server.base_url()))
        .retry(RetryPolicy::none())
        .clock(clock.clone())
        .context_cache(
            ContextCacheConfig::default()
                .ttl(Duration::from_secs(600))
                .cache_intervals(2),
        )
        .build()
        .unwrap();
    let long = "You are a careful assistant. ".repeat(20);
    // 1: a cache of the instruction and tools; 2: reused by a longer history; 3: it served its
    // two calls, so a new one covers the longer history; 4: the instruction changed; 5: reused;
    // 6: expired.
    let steps: [(&str, usize, u64); 6] = [
        (&long, 0, 0),
        (&long, 1, 10),
        (&long, 2, 10),
        ("Another instruction.", 2, 10),
        ("Another instruction.", 3, 10),
        ("Another instruction.", 3, 600),
    ];
    for (system, turns, advance) in steps {
        clock.0.fetch_add(advance, Ordering::SeqCst);
        let outcome = common::run(&model, request(system, turns), false).await;
        assert_eq!(
            outcome
                .last()
                .usage_metadata
                .unwrap()
                .cached_content_token_count,
            Some(800)
        );
    }
    assert_eq!(
        *log.lock(),
        [
            "create cachedContents/c1 (0 contents)",
            "delete cachedContents/c1",
            "create cachedContents/c2 (4 contents)",
            "delete cachedContents/c2",
            "create cachedContents/c3 (4 contents)",
            "delete cachedContents/c3",
            "create cachedContents/c4 (6 contents)",
        ]
    );
    let c = |name: &str| Some(format!("cachedContents/{name}"));
    assert_eq!(
        calls(&server),
        [
            (c("c1"), 1, false),
            (c("c1"), 3, false),
            (c("c2"), 1, false),
            (c("c3"), 1, false),
            (c("c3"), 3, false),
            (c("c4"), 1, false),
        ]
    );

    // Dropping the model deletes its cache.
    drop(model);
    let deleted = async {
        while !log
            .lock()
            .iter()
            .any(|line| line == "delete cachedContents/c4")
        {
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), deleted)
        .await
        .expect("the last cache was deleted when the model was dropped");
}

#[tokio::test]
async fn a_prefix_below_the_minimum_is_sent_whole_without_a_cache() {
    let log = Log::default();
    let server = MockServer::start_checked([answer()], cache_routes(&log)).await;
    let model = GeminiModel::builder("gemini-2.5-flash")
        .api_key("k")
        .base_url(format!("{}/v1beta", server.base_url()))
        .retry(RetryPolicy::none())
        .context_cache(ContextCacheConfig::default().min_tokens(4096))
        .build()
        .unwrap();
    let outcome = common::run(&model, request("Short.", 1), false).await;
    outcome.last();
    assert!(log.lock().is_empty());
    assert_eq!(calls(&server), [(None, 3, true)]);
}
