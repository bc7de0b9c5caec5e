//! Resuming a workflow from the session: what each node run did in the invocation being
//! continued (its output, route, questions and the user's answers), and whether a run is replayed
//! from that record or run again.
//!
//! A workflow keeps no state between turns besides the session's events. When the user answers a
//! question, the workflow runs again from `START`; each node run it reaches is looked up in the
//! record (by path, so the run ids come out the same), and one that completed is fast-forwarded
//! with its recorded output, one that waited for the answer completes with it (or runs again with
//! it, when it is rerun on resume), and the first one with no record runs for real.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use adk_core::{Event, NodePath, Route, USER_AUTHOR};
use serde_json::Value;

use crate::{Node, REQUEST_INPUT_FUNCTION};

/// The function the flow calls to ask the user for a credential; a workflow node's auth request
/// is one too.
const REQUEST_CREDENTIAL_FUNCTION: &str = "adk_request_credential";

/// What the record says about one node run.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ChildScan {
    pub(crate) output: Option<Value>,
    pub(crate) error_code: Option<String>,
    pub(crate) route: Option<Route>,
    pub(crate) branch: Option<String>,
    pub(crate) isolation_scope: Option<Arc<str>>,
    pub(crate) transfer_to_agent: Option<String>,
    pub(crate) interrupt_ids: BTreeSet<String>,
    pub(crate) resolved_ids: BTreeSet<String>,
    pub(crate) resolved_responses: BTreeMap<String, Value>,
    pub(crate) finished_after_resume: bool,
}

/// The node runs below `base` in `events`: with `by_child`, one record per direct child
/// (keyed by its `name@run` segment) covering its whole subtree; without, one record for `base`
/// itself (keyed by `""`).
pub(crate) fn scan(
    events: &[Event],
    base: &NodePath,
    by_child: bool,
) -> HashMap<String, ChildScan> {
    let mut records: HashMap<String, ChildScan> = HashMap::new();
    let mut owner_of_interrupt: HashMap<String, String> = HashMap::new();
    let call_ids: HashSet<&str> = events
        .iter()
        .flat_map(Event::function_calls)
        .filter_map(|call| call.id.as_ref().map(|id| id.as_str()))
        .collect();
    for event in events {
        if event.author == USER_AUTHOR {
            if records.is_empty() && owner_of_interrupt.is_empty() {
                continue;
            }
            record_answers(event, &owner_of_interrupt, &mut records);
            continue;
        }
        let path = &event.node_info.path;
        let owner = if by_child {
            if !path.is_descendant_of(base) {
                continue;
            }
            direct_child_segment(base, path).to_owned()
        } else {
            if !path.is_within(base) {
                continue;
            }
            String::new()
        };
        let owner_path = if by_child {
            with_segment(base, &owner)
        } else {
            base.clone()
        };
        let is_direct = if by_child {
            path.parent() == *base
        } else {
            path == base
        };
        let record = records.entry(owner.clone()).or_default();
        if is_direct && let Some(scope) = &event.isolation_scope {
            record.isolation_scope = Some(scope.clone());
        }
        let has_claimed_branch = event.output.is_some()
            && event
                .node_info
                .output_for
                .as_ref()
                .is_some_and(|paths| paths.len() > 1)
            && event.function_responses().next().is_none();
        let is_tool_branch = event
            .branch
            .as_deref()
            .is_some_and(|branch| is_tool_branch(branch, owner_path.name(), &call_ids));
        if is_direct && event.branch.is_some() && !has_claimed_branch && !is_tool_branch {
            record.branch.clone_from(&event.branch);
        }
        let message_output = event.output.is_none()
            && event.node_info.message_as_output == Some(true)
            && event.content().is_some();
        let has_output = event.output.is_some() || message_output;
        let delegated = has_output
            && event
                .node_info
                .output_for
                .as_ref()
                .is_some_and(|paths| paths.contains(&owner_path));
        if is_direct || delegated {
            if let Some(output) = &event.output {
                record.output = Some(output.clone());
                if is_direct && !has_claimed_branch && !is_tool_branch {
                    record.branch.clone_from(&event.branch);
                }
            } else if message_output {
                let text = event.text().unwrap_or_default();
                record.output = Some(Value::String(text.trim().to_owned()));
            }
            if let Some(route) = &event.actions.route {
                record.route = Some(route.clone());
            }
            if let Some(target) = &event.actions.transfer_to_agent {
                record.transfer_to_agent = Some(target.clone());
            }
            let has_result = has_output
                || event.actions.route.is_some()
                || event.actions.transfer_to_agent.is_some();
            if has_result || (event.response.error_code.is_none() && !event.is_partial()) {
                record.error_code = None;
            } else if let Some(code) = &event.response.error_code {
                record.error_code = Some(code.clone());
            }
        }
        let interrupts = interrupt_ids(event);
        for id in &interrupts {
            record.interrupt_ids.insert(id.clone());
            record.resolved_ids.remove(id);
            record.resolved_responses.remove(id);
            owner_of_interrupt.insert(id.clone(), owner.clone());
        }
        if is_direct {
            record.finished_after_resume = interrupts.is_empty()
                && record.error_code.is_none()
                && !event.is_partial()
                && event.function_calls().next().is_none()
                && event.function_responses().next().is_none();
        }
    }
    records
}

/// Records the user's answers in `event` against the runs that asked.
fn record_answers(
    event: &Event,
    owner_of_interrupt: &HashMap<String, String>,
    records: &mut HashMap<String, ChildScan>,
) {
    let branch_run_ids: Vec<&str> = event
        .branch
        .as_deref()
        .map(|branch| {
            branch
                .split('.')
                .filter_map(|segment| segment.rsplit_once('@').map(|(_, id)| id))
                .collect()
        })
        .unwrap_or_default();
    for response in event.function_responses() {
        let Some(id) = &response.id else { continue };
        let answer = unwrap_response(&Value::Object(response.response.clone()));
        if let Some(owner) = owner_of_interrupt.get(id.as_str()) {
            let record = records.entry(owner.clone()).or_default();
            record.resolved_ids.insert(id.as_str().to_owned());
            // The node stopped to ask: what it emitted before is not its result.
            record.output = None;
            record
                .resolved_responses
                .insert(id.as_str().to_owned(), answer);
            record.finished_after_resume = false;
        } else if !branch_run_ids.is_empty() {
            for record in records.values_mut() {
                let matching: Vec<String> = record
                    .interrupt_ids
                    .iter()
                    .filter(|asked| branch_run_ids.contains(&asked.as_str()))
                    .cloned()
                    .collect();
                for asked in matching {
                    record.resolved_ids.insert(asked.clone());
                    record.resolved_responses.insert(asked, answer.clone());
                    record.output = None;
                    record.finished_after_resume = false;
                }
            }
        }
    }
}

/// The questions an event asks: its long-running call ids, and the ids of input and credential
/// requests written without them.
pub(crate) fn interrupt_ids(event: &Event) -> Vec<String> {
    let mut ids: Vec<String> = event
        .long_running_tool_ids
        .iter()
        .flatten()
        .map(|id| id.as_str().to_owned())
        .collect();
    for call in event.function_calls() {
        if (call.name == REQUEST_INPUT_FUNCTION || call.name == REQUEST_CREDENTIAL_FUNCTION)
            && let Some(id) = &call.id
            && !ids.iter().any(|known| known == id.as_str())
        {
            ids.push(id.as_str().to_owned());
        }
    }
    ids
}

/// An answer as the node receives it: `{"result": x}` is `x` (a string holding JSON is parsed,
/// as the web UI sends typed text that way); anything else as it is.
pub(crate) fn unwrap_response(response: &Value) -> Value {
    if let Value::Object(map) = response
        && map.len() == 1
        && let Some(value) = map.get("result")
    {
        if let Value::String(text) = value {
            return serde_json::from_str(text).unwrap_or_else(|_| value.clone());
        }
        return value.clone();
    }
    response.clone()
}

/// `base` with the segment `segment` (`name@run`) below it.
pub(crate) fn with_segment(base: &NodePath, segment: &str) -> NodePath {
    if base.is_empty() {
        NodePath::new(segment)
    } else {
        NodePath::new(&format!("{base}/{segment}"))
    }
}

/// The segment of the direct child of `base` on the way to `path`.
fn direct_child_segment<'p>(base: &NodePath, path: &'p NodePath) -> &'p str {
    let rest = if base.is_empty() {
        path.as_str()
    } else {
        &path.as_str()[base.as_str().len() + 1..]
    };
    rest.split('/').next().unwrap_or(rest)
}

/// Whether `branch` is where a tool's message went (`<tool>@<call id>`), not a node's own branch.
fn is_tool_branch(branch: &str, node_name: &str, call_ids: &HashSet<&str>) -> bool {
    let Some(leaf) = branch.rsplit('.').next() else {
        return false;
    };
    let Some((name, id)) = leaf.rsplit_once('@') else {
        return false;
    };
    call_ids.contains(id) && name != node_name
}

/// Whether a node run found in the record runs again, and with what.
#[derive(Debug, Default)]
pub(crate) struct Interception {
    pub(crate) should_run: bool,
    pub(crate) output: Option<Value>,
    pub(crate) route: Option<Route>,
    pub(crate) interrupts: Vec<String>,
    pub(crate) resume_inputs: BTreeMap<String, Value>,
}

/// What to do with a run of `node` whose record is `record` (ADK's rules): a workflow always runs
/// again (its children decide for themselves); a run still waiting on unanswered questions keeps
/// waiting (or reruns with the answers so far); a failed run reruns; a completed run is
/// fast-forwarded; a run whose questions were all answered completes with the answer, or reruns
/// with the answers. A `dynamic` run (one a node started itself) that left no outcome runs again;
/// a graph node that left none completed without an output.
pub(crate) fn intercept(node: &Node, record: &ChildScan, dynamic: bool) -> Interception {
    let answers = || record.resolved_responses.clone();
    if node.kind() == crate::NodeKind::Workflow {
        return Interception {
            should_run: true,
            resume_inputs: answers(),
            ..Interception::default()
        };
    }
    let options = node.options();
    let unresolved: Vec<String> = record
        .interrupt_ids
        .difference(&record.resolved_ids)
        .cloned()
        .collect();
    let mut result = Interception::default();
    if !unresolved.is_empty() {
        if options.rerun_on_resume && !record.resolved_ids.is_empty() {
            result.should_run = true;
            result.resume_inputs = answers();
        } else {
            result.interrupts = unresolved;
        }
    } else if record.error_code.is_some() {
        result.should_run = true;
        result.resume_inputs = answers();
    } else if record.route.is_some()
        || record.output.is_some()
        || record.transfer_to_agent.is_some()
    {
        result.output.clone_from(&record.output);
        result.route.clone_from(&record.route);
    } else if !record.interrupt_ids.is_empty() {
        if !options.rerun_on_resume {
            let answers = answers();
            result.output = Some(if answers.len() == 1 {
                answers.into_values().next().unwrap_or(Value::Null)
            } else {
                Value::Object(answers.into_iter().collect())
            });
        } else if !record.finished_after_resume || options.wait_for_output {
            result.should_run = true;
            result.resume_inputs = answers();
        }
    } else if options.wait_for_output || (options.rerun_on_resume && !record.finished_after_resume)
    {
        result.should_run = true;
        result.resume_inputs = answers();
    } else {
        result.should_run = dynamic && !options.rerun_on_resume;
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use adk_core::{Content, FunctionResponse, InvocationId, Part, Role};
    use serde_json::json;

    fn event_at(path: &str) -> Event {
        let mut event = Event::new(InvocationId::from("e-1"), "wf");
        event.node_info.path = NodePath::new(path);
        event
    }

    #[test]
    fn answers_resolve_the_questions_of_the_runs_that_asked() {
        let mut asked = event_at("wf@1/ask@1");
        asked.long_running_tool_ids = Some(vec!["q1".into()]);
        let mut done = event_at("wf@1/draft@1").with_output(json!("d"));
        done.node_info.output_for = Some(vec![NodePath::new("wf@1/draft@1")]);
        let answer = Event::new(InvocationId::from("e-1"), USER_AUTHOR).with_content(Content::new(
            Role::User,
            [Part::function_response(
                FunctionResponse::new(REQUEST_INPUT_FUNCTION, json!({"result": "{\"ok\": true}"}))
                    .with_id("q1"),
            )],
        ));
        let records = scan(&[done, asked, answer], &NodePath::new("wf@1"), true);
        assert_eq!(records["draft@1"].output, Some(json!("d")));
        let ask = &records["ask@1"];
        assert!(ask.resolved_ids.contains("q1"));
        assert_eq!(ask.resolved_responses["q1"], json!({"ok": true}));
    }

    #[test]
    fn an_answered_run_completes_with_the_answer_unless_it_reruns() {
        let record = ChildScan {
            interrupt_ids: ["q1".to_owned()].into(),
            resolved_ids: ["q1".to_owned()].into(),
            resolved_responses: [("q1".to_owned(), json!({"approved": true}))].into(),
            ..ChildScan::default()
        };
        let node = crate::Node::function("ask", |_: Value| async { Ok::<_, crate::NodeError>(()) });
        let plain = intercept(&node, &record, false);
        assert!(!plain.should_run);
        assert_eq!(plain.output, Some(json!({"approved": true})));
        let rerun = intercept(&node.rerun_on_resume(true), &record, false);
        assert!(rerun.should_run);
        assert_eq!(rerun.resume_inputs["q1"], json!({"approved": true}));
    }
}
