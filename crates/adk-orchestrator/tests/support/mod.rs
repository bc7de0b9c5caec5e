//! Helpers of this crate's test suites: an orchestrator with an echoing processor, plans written
//! as the analyzer writes them, and the orchestrator's statuses read back from events.

#![allow(dead_code, unreachable_pub)]

use adk_core::Event;
use adk_orchestrator::{FlexibleOrchestrator, FnProcessor, OrchestrationConfig, event_status};
use adk_test::ScriptedModel;
use serde_json::json;

/// A plan in the analyzer's XML: `(id, processor, dependencies)` for each task.
pub fn plan_xml(tasks: &[(&str, &str, &[&str])]) -> String {
    let mut xml = String::from("<tasks>\n");
    for (id, processor, dependencies) in tasks {
        xml.push_str(&format!(
            "  <task id=\"{id}\" type=\"step\" processor=\"{processor}\">\n    <description>Do {id}.</description>\n    <dependencies>"
        ));
        for dependency in *dependencies {
            xml.push_str(&format!("<dep>{dependency}</dep>"));
        }
        xml.push_str("</dependencies>\n  </task>\n");
    }
    xml.push_str("</tasks>");
    xml
}

/// The orchestrator's statuses in `events`, in order, as `status task` (or `status` alone).
pub fn statuses(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(event_status)
        .map(|status| {
            let name = status["status"].as_str().unwrap_or_default();
            match status.get("task").and_then(|task| task.as_str()) {
                Some(task) => format!("{name} {task}"),
                None => name.to_owned(),
            }
        })
        .collect()
}

/// The position of `status` in `statuses`.
pub fn position(statuses: &[String], status: &str) -> usize {
    statuses
        .iter()
        .position(|seen| seen == status)
        .unwrap_or_else(|| panic!("no '{status}' in {statuses:?}"))
}

/// A processor that answers `done <id>` and lists the outputs it was given.
pub fn echo() -> FnProcessor {
    FnProcessor::new("Does a step.", |input| async move {
        let inputs: Vec<String> = input
            .dependency_outputs
            .iter()
            .map(|(id, output)| format!("{id}={}", output.as_str().unwrap_or_default()))
            .collect();
        Ok(json!(format!(
            "done {} [{}]",
            input.task.id,
            inputs.join(" ")
        )))
    })
}

/// The orchestrator `planner` on `analyzer`, with [`echo`] as its processor `echo`.
pub fn orchestrator(
    analyzer: ScriptedModel,
    config: OrchestrationConfig,
) -> adk_orchestrator::FlexibleOrchestratorBuilder {
    FlexibleOrchestrator::builder("planner")
        .model(analyzer)
        .processor("echo", echo())
        .config(config)
}
