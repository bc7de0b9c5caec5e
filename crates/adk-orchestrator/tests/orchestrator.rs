//! The orchestrator on scripted models: phases in order (asserted from events), concurrency,
//! dependency outputs, retries, timeouts, cancellation, analysis retries and failure, the three
//! kinds of processor, and the result in the state.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::time::Duration;

use adk_core::{Agent, Content, ErrorKind, InvocationContext, Session, SessionKey};
use adk_orchestrator::{
    AgentProcessor, AnalysisError, AnalysisFailure, AnalyzerConfig, DEFAULT_RESULT_KEY,
    FailureReason, FlexibleOrchestrator, FnProcessor, OrchestrationConfig, OrchestratorResult,
    RetryConfig, ToolProcessor, XmlErrorCode,
};
use adk_test::{AgentRun, ClosureTool, ScriptedModel};
use futures::StreamExt as _;
use serde_json::{Value, json};
use support::{echo, orchestrator, plan_xml, position, statuses};

fn result_of(run: &AgentRun) -> OrchestratorResult {
    let value = run
        .session
        .state
        .get(DEFAULT_RESULT_KEY)
        .unwrap_or_else(|| panic!("no result in the state: {}", run.render()));
    OrchestratorResult::from_value(value).unwrap()
}

fn fast_retries(attempts: u32) -> OrchestrationConfig {
    OrchestrationConfig::default()
        .with_retry(RetryConfig::new(attempts).with_initial_backoff(Duration::from_millis(1)))
}

#[tokio::test]
async fn a_plan_with_dependencies_runs_phase_by_phase() {
    let plan = plan_xml(&[
        ("d", "echo", &["c"]),
        ("c", "echo", &["a", "b"]),
        ("a", "echo", &[]),
        ("b", "echo", &[]),
    ]);
    let analyzer = ScriptedModel::new("analyzer").then_text(&plan);
    let agent = orchestrator(analyzer.clone(), OrchestrationConfig::default())
        .build()
        .unwrap();
    let run = AgentRun::new(agent, "Do the four steps.").await;
    assert!(run.error.is_none(), "{}", run.render());

    let seen = statuses(&run.events);
    assert_eq!(seen[0], "planned");
    // Every task of a phase ends before any task of the next phase starts.
    for (earlier, later) in [("a", "c"), ("b", "c"), ("c", "d")] {
        assert!(
            position(&seen, &format!("task_completed {earlier}"))
                < position(&seen, &format!("task_started {later}")),
            "{seen:?}"
        );
    }
    assert_eq!(seen.last().map(String::as_str), Some("finished"));

    let result = result_of(&run);
    assert_eq!(result.phases, [vec!["a", "b"], vec!["c"], vec!["d"]]);
    assert_eq!(
        result.completed_tasks["c"],
        json!("done c [a=done a [] b=done b []]")
    );
    assert!(result.is_success());
    // The summary shows the final task's output.
    let summary = run.events.last().unwrap().text().unwrap();
    assert!(summary.starts_with("done d [c="), "{summary}");
    assert!(
        summary.contains("4 of 4 tasks completed in 3 phase(s)"),
        "{summary}"
    );

    // The analyzer was told the processors and asked to plan the user's request.
    let request = &analyzer.requests()[0];
    let instruction = request.system_instruction.as_deref().unwrap();
    assert!(
        instruction.contains("- echo: Does a step."),
        "{instruction}"
    );
    assert!(
        request.contents[0]
            .text()
            .unwrap()
            .contains("Do the four steps.")
    );

    // Task events are on the task's own branch.
    let started_c = run
        .events
        .iter()
        .find(|event| {
            event
                .text()
                .is_some_and(|text| text.starts_with("Task c (step)"))
        })
        .unwrap();
    assert_eq!(started_c.branch.as_deref(), Some("planner.c"));
}

/// A processor that waits until `needed` tasks are running at once, recording the most seen.
fn gathering(needed: usize, running: Arc<AtomicUsize>, most: Arc<AtomicUsize>) -> FnProcessor {
    FnProcessor::new("Waits for company.", move |_input| {
        let (running, most) = (running.clone(), most.clone());
        async move {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            while most.load(Ordering::SeqCst) < needed {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            running.fetch_sub(1, Ordering::SeqCst);
            Ok(json!("ok"))
        }
    })
}

#[tokio::test]
async fn tasks_of_a_phase_run_concurrently_up_to_the_limit() {
    let plan = plan_xml(&[
        ("a", "gather", &[]),
        ("b", "gather", &[]),
        ("c", "gather", &[]),
    ]);
    for (limit, expected_most) in [(2, 2), (1, 1)] {
        let (running, most) = (Arc::default(), Arc::new(AtomicUsize::new(0)));
        let agent = FlexibleOrchestrator::builder("planner")
            .model(ScriptedModel::new("analyzer").then_text(&plan))
            .processor("gather", gathering(limit, running, most.clone()))
            .config(OrchestrationConfig::default().with_max_concurrent(limit))
            .build()
            .unwrap();
        let run = AgentRun::new(agent, "Gather.").await;
        assert!(result_of(&run).is_success(), "{}", run.render());
        assert_eq!(most.load(Ordering::SeqCst), expected_most, "limit {limit}");
    }
}

#[tokio::test]
async fn a_failing_task_is_retried_then_failed_while_its_siblings_complete() {
    let attempts = Arc::new(AtomicU32::new(0));
    let counted = attempts.clone();
    let flaky = FnProcessor::new("Always fails.", move |input| {
        counted.fetch_add(1, Ordering::SeqCst);
        async move {
            Err(adk_core::Error::new(
                ErrorKind::Tool,
                format!("attempt {} broke", input.attempt),
            ))
        }
    });
    let plan = plan_xml(&[
        ("bad", "flaky", &[]),
        ("good", "echo", &[]),
        ("after_bad", "echo", &["bad"]),
        ("after_good", "echo", &["good"]),
    ]);
    let agent = orchestrator(
        ScriptedModel::new("analyzer").then_text(&plan),
        fast_retries(3),
    )
    .processor("flaky", flaky)
    .build()
    .unwrap();
    let run = AgentRun::new(agent, "Try.").await;
    assert!(run.error.is_none(), "{}", run.render());
    assert_eq!(attempts.load(Ordering::SeqCst), 3);

    let seen = statuses(&run.events);
    let bad: Vec<&String> = seen
        .iter()
        .filter(|status| status.ends_with(" bad"))
        .collect();
    assert_eq!(
        bad,
        [
            "task_started bad",
            "task_retrying bad",
            "task_retrying bad",
            "task_failed bad"
        ]
    );
    assert!(seen.contains(&"task_completed good".to_owned()), "{seen:?}");
    assert!(
        seen.contains(&"task_completed after_good".to_owned()),
        "{seen:?}"
    );
    // The task that depends on the failed one never starts.
    assert!(
        !seen.contains(&"task_started after_bad".to_owned()),
        "{seen:?}"
    );

    let result = result_of(&run);
    let failure = &result.failed_tasks["bad"];
    assert_eq!(failure.reason, FailureReason::Error);
    assert_eq!(failure.attempts, 3);
    assert!(failure.message.contains("attempt 3 broke"), "{failure}");
    assert_eq!(
        result.failed_tasks["after_bad"].reason,
        FailureReason::DependencyFailed
    );
    assert_eq!(result.completed_tasks.len(), 2);
    let summary = run.events.last().unwrap().text().unwrap();
    assert!(
        summary.contains("failed: after_bad: dependency_failed, bad: error"),
        "{summary}"
    );
}

#[tokio::test]
async fn a_task_that_fails_once_succeeds_on_retry() {
    let attempts = Arc::new(AtomicU32::new(0));
    let counted = attempts.clone();
    let once = FnProcessor::new("Fails the first time.", move |input| {
        counted.fetch_add(1, Ordering::SeqCst);
        async move {
            if input.attempt == 1 {
                Err(adk_core::Error::new(ErrorKind::Tool, "not yet"))
            } else {
                Ok(json!("second time lucky"))
            }
        }
    });
    let plan = plan_xml(&[("t", "once", &[])]);
    let agent = orchestrator(
        ScriptedModel::new("analyzer").then_text(&plan),
        fast_retries(3),
    )
    .processor("once", once)
    .build()
    .unwrap();
    let run = AgentRun::new(agent, "Try.").await;
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
    assert_eq!(
        result_of(&run).completed_tasks["t"],
        json!("second time lucky")
    );
}

#[tokio::test(start_paused = true)]
async fn an_attempt_over_the_timeout_is_stopped_and_fails_the_task() {
    let stopped = Arc::new(AtomicU32::new(0));
    let counter = stopped.clone();
    let stuck = FnProcessor::new("Never answers.", move |_input| {
        let guard = DropCounter(counter.clone());
        async move {
            let _guard = guard;
            futures::future::pending::<()>().await;
            Ok(Value::Null)
        }
    });
    let plan = plan_xml(&[("slow", "stuck", &[]), ("quick", "echo", &[])]);
    let config = fast_retries(2).with_default_timeout(Some(Duration::from_secs(30)));
    let agent = orchestrator(ScriptedModel::new("analyzer").then_text(&plan), config)
        .processor("stuck", stuck)
        .build()
        .unwrap();
    let run = AgentRun::new(agent, "Wait.").await;
    let result = result_of(&run);
    let failure = &result.failed_tasks["slow"];
    assert_eq!(failure.reason, FailureReason::Timeout);
    assert_eq!(failure.attempts, 2);
    assert!(failure.message.contains("30s"), "{failure}");
    // Both attempts were stopped: their futures were dropped.
    assert_eq!(stopped.load(Ordering::SeqCst), 2);
    assert_eq!(result.completed_tasks["quick"], json!("done quick []"));
}

/// Counts its drops: how a test sees that work was stopped.
struct DropCounter(Arc<AtomicU32>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn cancellation_stops_the_running_phase_and_no_later_phase_starts() {
    let stopped = Arc::new(AtomicU32::new(0));
    let counter = stopped.clone();
    // The first task cancels the invocation and then waits for ever; its sibling waits too.
    let canceller = FnProcessor::new("Cancels the run.", move |input| {
        let guard = DropCounter(counter.clone());
        async move {
            let _guard = guard;
            if input.task.id == "first" {
                input.ctx.cancellation().cancel();
            }
            futures::future::pending::<()>().await;
            Ok(Value::Null)
        }
    });
    let plan = plan_xml(&[
        ("first", "cancel", &[]),
        ("sibling", "cancel", &[]),
        ("later", "echo", &["first"]),
    ]);
    let agent: Arc<dyn Agent> = Arc::new(
        orchestrator(
            ScriptedModel::new("analyzer").then_text(&plan),
            OrchestrationConfig::default(),
        )
        .processor("cancel", canceller)
        .build()
        .unwrap(),
    );
    let token = tokio_util::sync::CancellationToken::new();
    let ctx =
        InvocationContext::builder(agent.clone(), Session::new(SessionKey::new("a", "u", "s")))
            .user_content(Content::user("Go."))
            .cancellation(token.clone())
            .build()
            .unwrap();
    let events: Vec<_> = agent.run(ctx).collect().await;
    let events: Vec<_> = events.into_iter().map(Result::unwrap).collect();
    assert!(token.is_cancelled());
    assert_eq!(
        stopped.load(Ordering::SeqCst),
        2,
        "both running tasks were dropped"
    );

    let seen = statuses(&events);
    assert!(seen.contains(&"task_started first".to_owned()), "{seen:?}");
    assert!(
        !seen.iter().any(|status| status.ends_with(" later")),
        "{seen:?}"
    );
    let last = events.last().unwrap();
    let result =
        OrchestratorResult::from_value(&last.actions.state_delta[DEFAULT_RESULT_KEY]).unwrap();
    assert!(result.cancelled);
    for id in ["first", "sibling", "later"] {
        assert_eq!(
            result.failed_tasks[id].reason,
            FailureReason::Cancelled,
            "{id}"
        );
    }
}

#[tokio::test]
async fn an_unusable_answer_is_sent_back_until_one_plans() {
    let cycle = plan_xml(&[("a", "echo", &["b"]), ("b", "echo", &["a"])]);
    let good = plan_xml(&[("a", "echo", &[])]);
    let analyzer = ScriptedModel::new("analyzer")
        .then_text("I would start with research.")
        .then_text(&cycle)
        .then_text(&good);
    let agent = orchestrator(analyzer.clone(), OrchestrationConfig::default())
        .build()
        .unwrap();
    let run = AgentRun::new(agent, "Plan it.").await;
    assert!(run.error.is_none(), "{}", run.render());
    let seen = statuses(&run.events);
    assert_eq!(
        seen[..3],
        ["analysis_retrying", "analysis_retrying", "planned"]
    );
    let requests = analyzer.requests();
    assert_eq!(requests.len(), 3);
    // Each retry sees the rejected answers and why they were rejected.
    let last_contents: Vec<String> = requests[2]
        .contents
        .iter()
        .filter_map(Content::text)
        .collect();
    assert_eq!(last_contents.len(), 5, "{last_contents:?}");
    assert!(
        last_contents[2].contains("no_tasks_section"),
        "{last_contents:?}"
    );
    assert!(
        last_contents[4].contains("a -> b -> a"),
        "{last_contents:?}"
    );
    assert_eq!(result_of(&run).completed_tasks["a"], json!("done a []"));
}

#[tokio::test]
async fn demonstrations_come_before_the_request() {
    let plan = plan_xml(&[("a", "echo", &[])]);
    let analyzer = ScriptedModel::new("analyzer").then_text(&plan);
    let agent = orchestrator(analyzer.clone(), OrchestrationConfig::default())
        .analyzer(AnalyzerConfig::default().with_example("Do x.", "<tasks>x</tasks>"))
        .build()
        .unwrap();
    let run = AgentRun::new(agent, "Do y.").await;
    assert!(run.error.is_none(), "{}", run.render());
    let contents: Vec<(Option<adk_core::Role>, String)> = analyzer.requests()[0]
        .contents
        .iter()
        .map(|content| (content.role, content.text().unwrap()))
        .collect();
    assert_eq!(
        contents,
        [
            (
                Some(adk_core::Role::User),
                "Plan this request:\nDo x.".to_owned()
            ),
            (Some(adk_core::Role::Model), "<tasks>x</tasks>".to_owned()),
            (
                Some(adk_core::Role::User),
                "Plan this request:\nDo y.".to_owned()
            ),
        ]
    );
}

#[tokio::test]
async fn the_run_fails_when_no_attempt_gives_a_plan() {
    let analyzer = ScriptedModel::new("analyzer")
        .then_text("<tasks><task id=\"a\"/></tasks>")
        .then_fail("the model is down");
    let agent = orchestrator(analyzer, OrchestrationConfig::default())
        .analyzer(AnalyzerConfig::default().with_max_attempts(2))
        .build()
        .unwrap();
    let run = AgentRun::new(agent, "Plan it.").await;
    let error = run.error.as_ref().expect("the run fails");
    assert_eq!(error.kind(), ErrorKind::Agent);
    assert!(
        error.message().contains("no usable plan in 2 attempt(s)"),
        "{error}"
    );
    let analysis = error.downcast_source::<AnalysisError>().unwrap();
    assert!(
        matches!(&analysis.last, AnalysisFailure::Model(model) if model.message() == "the model is down")
    );

    let analyzer = ScriptedModel::new("analyzer").then_text("<tasks><task id=\"a\"/></tasks>");
    let agent = orchestrator(analyzer, OrchestrationConfig::default())
        .analyzer(AnalyzerConfig::default().with_max_attempts(1))
        .build()
        .unwrap();
    let run = AgentRun::new(agent, "Plan it.").await;
    let analysis = run
        .error
        .as_ref()
        .unwrap()
        .downcast_source::<AnalysisError>()
        .unwrap();
    assert!(
        matches!(&analysis.last, AnalysisFailure::Parse(parse) if parse.code == XmlErrorCode::MalformedTasks)
    );
    // Nothing ran, and the analyzer's answer is kept as an event.
    assert_eq!(run.events.len(), 1);
}

#[tokio::test]
async fn tool_and_agent_processors_and_an_unknown_processor() {
    let lookup = ClosureTool::shared("lookup", |ctx, args| {
        ctx.set_state("last_lookup", args["city"].clone())?;
        Ok(json!({"city": args["city"], "sky": "sunny"}))
    });
    let writer_model = ScriptedModel::new("writer-model").then_text("Paris is sunny today.");
    let writer = adk_flow::LlmAgent::builder("writer")
        .description("Writes the answer.")
        .model(writer_model.clone())
        .include_contents(adk_flow::IncludeContents::None)
        .build()
        .unwrap();
    let plan = r#"<tasks>
      <task id="look" type="lookup" processor="weather"><metadata><item key="city">Paris</item></metadata></task>
      <task id="write" type="write" processor="writer"><description>Write it up.</description>
        <dependencies><dep>look</dep></dependencies></task>
      <task id="odd" type="other" processor="nobody"/>
    </tasks>"#;
    let agent = FlexibleOrchestrator::builder("planner")
        .model(ScriptedModel::new("analyzer").then_text(plan))
        .processor("weather", ToolProcessor::new(lookup))
        .processor("writer", AgentProcessor::new(writer))
        .build()
        .unwrap();
    assert_eq!(agent.sub_agents()[0].name(), "writer");
    let run = AgentRun::new(agent, "How is Paris?").await;
    assert!(run.error.is_none(), "{}", run.render());
    let log = run.render();
    // The tool's call and response are events of the task, on its branch, with its state change.
    assert!(
        log.contains(r#"planner@planner.look: call lookup {"city":"Paris"}"#),
        "{log}"
    );
    assert!(
        log.contains(r#"planner@planner.look: response lookup {"city":"Paris","sky":"sunny"} [last_lookup="Paris"]"#),
        "{log}"
    );
    // The agent answered on its branch, and read its task with the tool's result.
    assert!(
        log.contains(r#"writer@planner.write: "Paris is sunny today.""#),
        "{log}"
    );
    let brief = writer_model.requests()[0].contents[0].text().unwrap();
    assert!(
        brief.contains("Task write (write): Write it up."),
        "{brief}"
    );
    assert!(
        brief.contains(r#"- look: {"city":"Paris","sky":"sunny"}"#),
        "{brief}"
    );

    let result = result_of(&run);
    assert_eq!(
        result.completed_tasks["write"],
        json!("Paris is sunny today.")
    );
    assert_eq!(
        result.failed_tasks["odd"].reason,
        FailureReason::NoProcessor
    );
    assert_eq!(
        result.failed_tasks["odd"].message,
        "no processor is registered as 'nobody'; the processors are: weather, writer"
    );
    assert_eq!(run.session.state["last_lookup"], json!("Paris"));
}

#[test]
fn building_needs_a_model_and_a_processor() {
    let error = FlexibleOrchestrator::builder("planner")
        .processor("echo", echo())
        .build()
        .err()
        .unwrap();
    assert!(error.message().contains("no model"), "{error}");
    let error = FlexibleOrchestrator::builder("planner")
        .model(ScriptedModel::new("m"))
        .build()
        .err()
        .unwrap();
    assert!(error.message().contains("no processor"), "{error}");
}
