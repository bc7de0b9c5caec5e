//! Helpers of this crate's test suites: plans written as the analyzer writes them, and the
//! orchestrator's statuses read back from events.

#![allow(dead_code, unreachable_pub)]

use adk_core::Event;
use adk_orchestrator::event_status;

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
