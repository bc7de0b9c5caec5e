//! Events compaction: the compaction events the runner appends after invocations, and the history
//! the model sees before and after them, with a scripted summarizer and a scripted model.

mod support;

use std::fmt::Write as _;
use std::sync::Arc;

use adk_core::{
    Content, CreateSessionRequest, ErrorKind, Event, InvocationId, LlmRequest, Part, Result,
    Session,
};
use adk_runner::{CompactionConfig, LlmSummarizer, Runner, Summarizer};
use adk_test::ScriptedModel;
use async_trait::async_trait;
use expect_test::expect;
use parking_lot::Mutex;
use serde_json::json;
use support::{APP, SESSION, USER, agent, run, runner, stored};

/// Summarizes a window as the texts it holds, and records each window's size.
#[derive(Default)]
struct ScriptedSummarizer {
    windows: Mutex<Vec<usize>>,
}

#[async_trait]
impl Summarizer for ScriptedSummarizer {
    async fn summarize(&self, events: &[&Event]) -> Result<Option<Content>> {
        self.windows.lock().push(events.len());
        let texts: Vec<String> = events.iter().map(|event| text_of(event)).collect();
        Ok(Some(Content::model(format!(
            "summary of [{}]",
            texts.join(" | ")
        ))))
    }
}

/// Always fails.
struct FailingSummarizer;

#[async_trait]
impl Summarizer for FailingSummarizer {
    async fn summarize(&self, _events: &[&Event]) -> Result<Option<Content>> {
        Err(adk_core::Error::new(ErrorKind::Model, "summarizer down"))
    }
}

/// The text an event shows: its content's, or its summary's.
fn text_of(event: &Event) -> String {
    let content = match &event.actions.compaction {
        Some(compaction) => Some(&compaction.compacted_content),
        None => event.content(),
    };
    content
        .map(|content| content.parts.iter().filter_map(Part::as_text).collect())
        .unwrap_or_default()
}

/// The contents of `request`, one `role: text` line each.
fn contents(request: &LlmRequest) -> String {
    let mut log = String::new();
    for content in request.contents.iter() {
        let role = content
            .role
            .map(|role| format!("{role:?}"))
            .unwrap_or_default();
        let text: String = content.parts.iter().filter_map(Part::as_text).collect();
        let _ = writeln!(log, "{role}: {text}");
    }
    log
}

/// The compaction events of the stored session, as `start..end: summary`, timestamps relative to
/// the test clock's start.
fn compactions(session: &Session) -> String {
    let mut log = String::new();
    for event in &session.events {
        if let Some(compaction) = &event.actions.compaction {
            let _ = writeln!(
                log,
                "{} {}..{}: {}",
                event.author,
                compaction.start_timestamp - adk_test::StepClock::START,
                compaction.end_timestamp - adk_test::StepClock::START,
                text_of(event)
            );
        }
    }
    log
}

fn answering(count: usize) -> ScriptedModel {
    (1..=count).fold(ScriptedModel::new("m"), |model, n| {
        model.then_text(&format!("a{n}"))
    })
}

#[tokio::test]
async fn a_sliding_window_summarizes_every_two_invocations_with_one_of_overlap() {
    let model = answering(5);
    let summarizer = Arc::new(ScriptedSummarizer::default());
    let runner = runner(Arc::new(agent("agent", &model).build().unwrap()))
        .compaction(CompactionConfig::new(summarizer.clone()).sliding_window(2, 1))
        .build()
        .unwrap();
    for question in ["q1", "q2", "q3", "q4", "q5"] {
        let outcome = run(&runner, question).await;
        assert!(outcome.error.is_none(), "{:?}", outcome.error);
    }

    // Before the first compaction the model sees every event; after it, the summary in their
    // place; after the second, the second summary, which overlaps the first by one invocation.
    let requests = model.requests();
    expect![[r#"
        User: q1
        Model: a1
        User: q2
    "#]]
    .assert_eq(&contents(&requests[1]));
    expect![[r#"
        Model: summary of [q1 | a1 | q2 | a2]
        User: q3
    "#]]
    .assert_eq(&contents(&requests[2]));
    expect![[r#"
        Model: summary of [q1 | a1 | q2 | a2]
        Model: summary of [q2 | a2 | q3 | a3 | q4 | a4]
        User: q5
    "#]]
    .assert_eq(&contents(&requests[4]));
    expect![[r#"
        user 0..3: summary of [q1 | a1 | q2 | a2]
        user 2..8: summary of [q2 | a2 | q3 | a3 | q4 | a4]
    "#]]
    .assert_eq(&compactions(&stored(&runner).await));
}

/// A session of `count` events of history (questions and answers, one invocation per pair) at
/// timestamps 1, 2, ..., before the test clock's.
async fn session_with_history(runner: &Runner, count: usize) {
    let sessions = runner.session_service();
    let mut session = sessions
        .create_session(CreateSessionRequest::new(APP, USER).with_session_id(SESSION))
        .await
        .unwrap();
    for i in 0..count {
        let (author, content) = if i % 2 == 0 {
            ("user", Content::user(format!("h{i}")))
        } else {
            ("agent", Content::model(format!("h{i}")))
        };
        let mut event =
            Event::new(InvocationId::from(format!("h-{}", i / 2)), author).with_content(content);
        event.timestamp = (i + 1) as f64;
        sessions.append_event(&mut session, event).await.unwrap();
    }
}

#[tokio::test]
async fn a_token_threshold_keeps_the_request_small_at_10_1000_and_10000_events() {
    for count in [10, 1_000, 10_000] {
        let model = answering(2);
        let summarizer = Arc::new(ScriptedSummarizer::default());
        let runner = runner(Arc::new(agent("agent", &model).build().unwrap()))
            .compaction(CompactionConfig::new(summarizer.clone()).token_threshold(1, 4))
            .build()
            .unwrap();
        session_with_history(&runner, count).await;

        run(&runner, "first").await;
        run(&runner, "second").await;

        let requests = model.requests();
        // Before: the whole history and the question.
        assert_eq!(requests[0].contents.len(), count + 1, "at {count} events");
        // After: the summary, the 4 events kept, and the question, whatever the history's length.
        assert_eq!(requests[1].contents.len(), 6, "at {count} events");
        assert!(text_of_content(&requests[1].contents[0]).starts_with("summary of [h0 | h1"));
        assert_eq!(text_of_content(&requests[1].contents[5]), "second");
        // The first window held everything but the 4 newest events (of the history, `first` and
        // its answer); the second, the previous summary and the 2 events no longer kept.
        assert_eq!(
            *summarizer.windows.lock(),
            [count + 2 - 4, 3],
            "at {count} events"
        );
    }
}

fn text_of_content(content: &Content) -> String {
    content.parts.iter().filter_map(Part::as_text).collect()
}

#[tokio::test]
async fn a_compaction_event_written_by_adk_python_is_honoured() {
    let model = answering(1);
    let runner = runner(Arc::new(agent("agent", &model).build().unwrap()))
        .build()
        .unwrap();
    session_with_history(&runner, 6).await;
    // A compaction event as ADK Python 2.13 stores it (camelCase, as in the session database and
    // the REST API), covering the first four events.
    let written: Event = serde_json::from_value(json!({
        "id": "c0a1",
        "invocationId": "e-5c1",
        "author": "user",
        "timestamp": 6.5,
        "actions": {
            "stateDelta": {},
            "artifactDelta": {},
            "requestedAuthConfigs": {},
            "requestedToolConfirmations": {},
            "compaction": {
                "startTimestamp": 1.0,
                "endTimestamp": 4.0,
                "compactedContent": {"role": "model", "parts": [{"text": "The user asked h0 and h2."}]}
            }
        }
    }))
    .unwrap();
    let sessions = runner.session_service();
    let mut session = stored(&runner).await;
    sessions.append_event(&mut session, written).await.unwrap();

    run(&runner, "next").await;

    expect![[r#"
        Model: The user asked h0 and h2.
        User: h4
        Model: h5
        User: next
    "#]]
    .assert_eq(&contents(&model.requests()[0]));
}

#[tokio::test]
async fn rewound_invocations_are_left_out_of_the_history() {
    let model = answering(3);
    let runner = runner(Arc::new(agent("agent", &model).build().unwrap()))
        .build()
        .unwrap();
    run(&runner, "q1").await;
    let second = run(&runner, "q2").await;
    runner
        .rewind(USER, SESSION, &second.last().invocation_id)
        .await
        .unwrap();
    run(&runner, "q3").await;

    expect![[r#"
        User: q1
        Model: a1
        User: q3
    "#]]
    .assert_eq(&contents(&model.requests()[2]));
}

#[tokio::test]
async fn a_failing_summarizer_leaves_the_invocation_and_the_events_alone() {
    let model = answering(2);
    let runner = runner(Arc::new(agent("agent", &model).build().unwrap()))
        .compaction(CompactionConfig::new(Arc::new(FailingSummarizer)).sliding_window(1, 0))
        .build()
        .unwrap();
    let outcome = run(&runner, "q1").await;
    assert!(outcome.error.is_none());
    assert_eq!(text_of(outcome.last()), "a1");
    let session = stored(&runner).await;
    assert_eq!(compactions(&session), "");
    assert_eq!(session.events.len(), 2);
}

#[tokio::test]
async fn a_config_without_a_trigger_is_refused() {
    let model = answering(0);
    let summarizer = Arc::new(ScriptedSummarizer::default());
    let built = runner(Arc::new(agent("agent", &model).build().unwrap()))
        .compaction(CompactionConfig::new(summarizer))
        .build();
    let error = built.expect_err("the config is refused");
    assert_eq!(error.kind(), ErrorKind::Config);
    assert!(error.to_string().contains("sliding_window"), "{error}");
}

#[tokio::test]
async fn the_llm_summarizer_asks_its_model_with_the_events_rendered() {
    let model = ScriptedModel::new("summarizer").then_text("They talked about Paris.");
    let summarizer = LlmSummarizer::new(model.clone()).prompt("Summarize:\n{conversation_history}");
    let question =
        Event::new(InvocationId::from("i"), "user").with_content(Content::user("Paris?"));
    let call = Event::new(InvocationId::from("i"), "agent").with_content(Content::new(
        adk_core::Role::Model,
        [Part::function_call(adk_core::FunctionCall::new(
            "get_weather",
            json!({"city": "Paris"}),
        ))],
    ));
    let summary = summarizer.summarize(&[&question, &call]).await.unwrap();

    assert_eq!(
        summary.map(|content| text_of_content(&content)),
        Some("They talked about Paris.".to_owned())
    );
    expect![[r#"
        User: Summarize:
        user: Paris?
        agent called tool: get_weather({"city":"Paris"})
    "#]]
    .assert_eq(&contents(&model.requests()[0]));
}

/// A runner that compacts only on an overflow (`RunnerBuilder::overflow_compaction`), never
/// after an invocation.
fn overflow_only(model: &ScriptedModel, summarizer: Arc<ScriptedSummarizer>) -> Runner {
    runner(Arc::new(agent("agent", model).build().unwrap()))
        .overflow_compaction(summarizer)
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_compaction_config_answers_an_overflow_too() {
    let model = ScriptedModel::new("m")
        .then_text("a1")
        .then_fail_with(ErrorKind::ContextOverflow, "the prompt is too long")
        .then_text("a2");
    let summarizer = Arc::new(ScriptedSummarizer::default());
    let runner = runner(Arc::new(agent("agent", &model).build().unwrap()))
        .compaction(CompactionConfig::new(summarizer.clone()).sliding_window(1_000, 0))
        .build()
        .unwrap();
    assert!(run(&runner, "q1").await.error.is_none());
    let outcome = run(&runner, "q2").await;
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    assert_eq!(text_of(outcome.last()), "a2");
    assert_eq!(*summarizer.windows.lock(), [2]);
}

#[tokio::test]
async fn a_context_overflow_compacts_the_history_once_and_the_call_is_retried() {
    let model = ScriptedModel::new("m")
        .then_text("a1")
        .then_fail_with(ErrorKind::ContextOverflow, "the prompt is too long")
        .then_text("a2");
    let summarizer = Arc::new(ScriptedSummarizer::default());
    let runner = overflow_only(&model, summarizer.clone());
    assert!(run(&runner, "q1").await.error.is_none());

    let outcome = run(&runner, "q2").await;
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    assert_eq!(text_of(outcome.last()), "a2");
    // The overflowing request held the whole history; the retry holds the summary of the earlier
    // invocation and this invocation's message.
    let requests = model.requests();
    expect![[r#"
        User: q1
        Model: a1
        User: q2
    "#]]
    .assert_eq(&contents(&requests[1]));
    expect![[r#"
        Model: summary of [q1 | a1]
        User: q2
    "#]]
    .assert_eq(&contents(&requests[2]));
    assert_eq!(*summarizer.windows.lock(), [2]);
    expect![[r#"
        user 0..1: summary of [q1 | a1]
    "#]]
    .assert_eq(&compactions(&stored(&runner).await));
}

#[tokio::test]
async fn a_second_overflow_after_compacting_is_a_typed_error() {
    let model = ScriptedModel::new("m")
        .then_text("a1")
        .then_fail_with(ErrorKind::ContextOverflow, "the prompt is too long")
        .then_fail_with(ErrorKind::ContextOverflow, "the prompt is still too long");
    let summarizer = Arc::new(ScriptedSummarizer::default());
    let runner = overflow_only(&model, summarizer.clone());
    assert!(run(&runner, "q1").await.error.is_none());

    let outcome = run(&runner, "q2").await;
    let error = outcome.error.expect("the second overflow ends the run");
    assert_eq!(error.kind(), ErrorKind::ContextOverflow);
    assert!(
        error.to_string().contains("even after compacting"),
        "{error}"
    );
    assert!(error.to_string().contains("still too long"), "{error}");
    // One compaction, one retry: the model was asked three times in all.
    assert_eq!(*summarizer.windows.lock(), [2]);
    assert_eq!(model.remaining(), 0);
    assert_eq!(model.requests().len(), 3);
}

#[tokio::test]
async fn an_overflow_with_nothing_before_the_invocation_is_a_typed_error_at_once() {
    let model = ScriptedModel::new("m")
        .then_fail_with(ErrorKind::ContextOverflow, "the prompt is too long");
    let summarizer = Arc::new(ScriptedSummarizer::default());
    let runner = overflow_only(&model, summarizer.clone());

    let error = run(&runner, "q1")
        .await
        .error
        .expect("the overflow ends the run");
    assert_eq!(error.kind(), ErrorKind::ContextOverflow);
    assert!(
        error.to_string().contains("even after compacting"),
        "{error}"
    );
    assert!(summarizer.windows.lock().is_empty());
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn without_compaction_an_overflow_passes_on_unchanged() {
    let model = ScriptedModel::new("m")
        .then_fail_with(ErrorKind::ContextOverflow, "the prompt is too long");
    let runner = runner(Arc::new(agent("agent", &model).build().unwrap()))
        .build()
        .unwrap();
    let error = run(&runner, "q1")
        .await
        .error
        .expect("the overflow ends the run");
    assert_eq!(error.kind(), ErrorKind::ContextOverflow);
    assert!(
        !error.to_string().contains("even after compacting"),
        "{error}"
    );
    assert_eq!(model.requests().len(), 1);
}
