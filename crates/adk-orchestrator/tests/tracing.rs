//! The orchestrator's spans: phases under the agent's span and tasks under their phase.
//!
//! The only test of its binary: the test's subscriber is thread-local, and tracing caches whether
//! a span's call site is wanted across threads, so another test running the orchestrator at the
//! same time without a subscriber could have the phase's call site cached as unwanted.

mod support;

use adk_orchestrator::OrchestrationConfig;
use adk_test::{AgentRun, ScriptedModel};
use support::{orchestrator, plan_xml};
use tracing_subscriber::layer::SubscriberExt as _;

#[tokio::test]
async fn the_run_is_traced_with_phase_and_task_spans() {
    let store = adk_telemetry::span_store::SpanStore::new(1_000);
    let subscriber = tracing_subscriber::registry().with(store.layer());
    let _default = tracing::subscriber::set_default(subscriber);

    let plan = plan_xml(&[("a", "echo", &[]), ("b", "echo", &["a"])]);
    let agent = orchestrator(
        ScriptedModel::new("analyzer").then_text(&plan),
        OrchestrationConfig::default(),
    )
    .build()
    .unwrap();
    let run = AgentRun::new(agent, "Trace me.").await;
    assert!(run.error.is_none(), "{}", run.render());
    let spans = store.session_spans("test_session");
    let named = |name: &str| {
        spans
            .iter()
            .find(|span| span.name == name)
            .unwrap_or_else(|| {
                panic!(
                    "no span {name}: {:?}",
                    spans.iter().map(|s| &s.name).collect::<Vec<_>>()
                )
            })
    };
    let agent_span = named("invoke_agent planner");
    let call = named("call_llm");
    let model = named("generate_content analyzer");
    let phase = named("phase 2");
    let task = named("task b");
    assert_eq!(call.parent_span_id, Some(agent_span.span_id));
    assert_eq!(model.parent_span_id, Some(call.span_id));
    assert_eq!(phase.parent_span_id, Some(agent_span.span_id));
    assert_eq!(task.parent_span_id, Some(phase.span_id));
}
