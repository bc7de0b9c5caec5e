//! Which events of a session still count for the model: rewound invocations are left out, and a
//! compaction's summary stands in for the events it covers, as ADK Python builds its history.
//!
//! A rewind event (`actions.rewindBeforeInvocationId`) annuls itself and every event from the
//! first event of the invocation it names. A compaction event (`actions.compaction`) covers the
//! events whose timestamps lie between its start and end; only summaries no other summary
//! contains are kept, each shown as a turn of the agent at its end timestamp, and the events any
//! kept summary covers are dropped. Most sessions have neither, and then nothing is copied.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use adk_core::{Event, InvocationId, Role};

/// Whether `events` hold a compaction or a rewind, which change which earlier events count.
pub(crate) fn reshapes_history(events: &[Event]) -> bool {
    events.iter().any(|event| {
        event.actions.compaction.is_some() || event.actions.rewind_before_invocation_id.is_some()
    })
}

/// The events of `events` the model sees, summaries shown as `agent_name`'s turns; `None` when no
/// event reshapes the history, so the caller can use the events as they are.
pub(crate) fn live_events<'e>(
    events: &'e [Event],
    agent_name: &str,
) -> Option<Vec<Cow<'e, Event>>> {
    if !reshapes_history(events) {
        return None;
    }
    Some(compacted(without_rewound(events), agent_name))
}

/// `events` without the rewound ones, in their order: what a history or a compaction is built
/// from.
///
/// ```
/// use adk_core::{Event, InvocationId};
///
/// let first = Event::new(InvocationId::from("i1"), "user");
/// let second = Event::new(InvocationId::from("i2"), "user");
/// let mut rewind = Event::new(InvocationId::from("i3"), "user");
/// rewind.actions.rewind_before_invocation_id = Some(InvocationId::from("i2"));
/// let events = [first, second, rewind];
/// let live = adk_flow::without_rewound(&events);
/// assert_eq!(live.len(), 1);
/// assert_eq!(live[0].invocation_id, InvocationId::from("i1"));
/// ```
pub fn without_rewound(events: &[Event]) -> Vec<&Event> {
    let mut first_of: Option<HashMap<&InvocationId, usize>> = None;
    let mut kept = Vec::with_capacity(events.len());
    let mut index = events.len();
    while index > 0 {
        index -= 1;
        let event = &events[index];
        let Some(target) = &event.actions.rewind_before_invocation_id else {
            kept.push(event);
            continue;
        };
        let first_of = first_of.get_or_insert_with(|| {
            let mut first = HashMap::new();
            for (position, event) in events.iter().enumerate() {
                first.entry(&event.invocation_id).or_insert(position);
            }
            first
        });
        // The rewind event itself is always dropped; the events it annuls only when the invocation
        // it names came before it.
        if let Some(&start) = first_of.get(target)
            && start < index
        {
            index = start;
        }
    }
    kept.reverse();
    kept
}

/// `events` with each kept summary in place of what it covers, in timestamp order (ties keep the
/// session's order).
fn compacted<'e>(events: Vec<&'e Event>, agent_name: &str) -> Vec<Cow<'e, Event>> {
    let ranges: Vec<(usize, f64, f64)> = events
        .iter()
        .enumerate()
        .filter_map(|(index, event)| {
            let compaction = event.actions.compaction.as_ref()?;
            Some((index, compaction.start_timestamp, compaction.end_timestamp))
        })
        .collect();
    if ranges.is_empty() {
        return events.into_iter().map(Cow::Borrowed).collect();
    }
    let kept = uncontained(&ranges);
    let coverage = union(kept.iter().map(|&(_, start, end)| (start, end)));
    let covered = |timestamp: f64| {
        let after = coverage.partition_point(|&(start, _)| start <= timestamp);
        after > 0 && timestamp <= coverage[after - 1].1
    };

    let kept: HashSet<usize> = kept.iter().map(|&(index, _, _)| index).collect();
    let mut placed: Vec<(f64, usize, Cow<'e, Event>)> = Vec::with_capacity(events.len());
    for (index, event) in events.into_iter().enumerate() {
        match &event.actions.compaction {
            Some(compaction) => {
                if kept.contains(&index) {
                    placed.push((
                        compaction.end_timestamp,
                        index,
                        Cow::Owned(summary(event, agent_name)),
                    ));
                }
            }
            None if covered(event.timestamp) => {}
            None => placed.push((event.timestamp, index, Cow::Borrowed(event))),
        }
    }
    placed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    placed.into_iter().map(|(_, _, event)| event).collect()
}

/// The ranges no other range contains; of identical ranges, the latest.
fn uncontained(ranges: &[(usize, f64, f64)]) -> Vec<(usize, f64, f64)> {
    let mut sorted: Vec<(usize, f64, f64)> = ranges
        .iter()
        .copied()
        .filter(|&(_, start, end)| start <= end)
        .collect();
    sorted.sort_by(|a, b| {
        a.1.total_cmp(&b.1)
            .then(b.2.total_cmp(&a.2))
            .then(b.0.cmp(&a.0))
    });
    let mut kept = Vec::new();
    let mut furthest: Option<f64> = None;
    for range in sorted {
        if furthest.is_none_or(|end| range.2 > end) {
            furthest = Some(range.2);
            kept.push(range);
        }
    }
    kept
}

/// The union of `ranges` as disjoint ranges, by start.
fn union(ranges: impl Iterator<Item = (f64, f64)>) -> Vec<(f64, f64)> {
    let mut sorted: Vec<(f64, f64)> = ranges.collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut merged: Vec<(f64, f64)> = Vec::with_capacity(sorted.len());
    for (start, end) in sorted {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

/// The summary of compaction event `event`, as a model turn of `agent_name`.
fn summary(event: &Event, agent_name: &str) -> Event {
    let mut shown = event.clone();
    if let Some(compaction) = shown.actions.compaction.as_ref() {
        let mut content = compaction.compacted_content.clone();
        content.role = Some(Role::Model);
        shown.response.content = Some(content);
        shown.timestamp = compaction.end_timestamp;
    }
    shown.author = agent_name.to_owned();
    shown
}

#[cfg(test)]
mod tests {
    use adk_core::{Content, EventActions, EventCompaction};

    use super::*;

    fn said(invocation: &str, author: &str, text: &str, timestamp: f64) -> Event {
        let content = if author == "user" {
            Content::user(text)
        } else {
            Content::model(text)
        };
        let mut event = Event::new(InvocationId::from(invocation), author).with_content(content);
        event.timestamp = timestamp;
        event
    }

    fn compaction(start: f64, end: f64, summary: &str, timestamp: f64) -> Event {
        let mut actions = EventActions::default();
        actions.compaction = Some(EventCompaction {
            start_timestamp: start,
            end_timestamp: end,
            compacted_content: Content::model(summary),
        });
        let mut event = Event::new(InvocationId::from("c"), "user").with_actions(actions);
        event.timestamp = timestamp;
        event
    }

    fn texts(events: &[Cow<'_, Event>]) -> Vec<String> {
        events
            .iter()
            .map(|event| {
                let text: String = event
                    .content()
                    .map(|content| {
                        content
                            .parts
                            .iter()
                            .filter_map(|part| part.as_text())
                            .collect()
                    })
                    .unwrap_or_default();
                format!("{}: {text}", event.author)
            })
            .collect()
    }

    #[test]
    fn plain_histories_are_not_copied() {
        let events = [
            said("i1", "user", "hi", 1.0),
            said("i1", "agent", "hello", 2.0),
        ];
        assert!(live_events(&events, "agent").is_none());
    }

    #[test]
    fn a_summary_replaces_the_events_it_covers_at_its_end() {
        let events = [
            said("i1", "user", "one", 1.0),
            said("i1", "agent", "two", 2.0),
            said("i2", "user", "three", 3.0),
            said("i2", "agent", "four", 4.0),
            compaction(1.0, 2.0, "summary of one and two", 4.5),
            said("i3", "user", "five", 5.0),
        ];
        let live = live_events(&events, "agent").expect("a compaction reshapes");
        assert_eq!(
            texts(&live),
            [
                "agent: summary of one and two",
                "user: three",
                "agent: four",
                "user: five"
            ]
        );
        assert_eq!(live[0].content().and_then(|c| c.role), Some(Role::Model));
    }

    #[test]
    fn a_wider_summary_supersedes_the_one_it_contains_and_overlaps_keep_both() {
        let events = [
            said("i1", "user", "one", 1.0),
            said("i2", "user", "two", 2.0),
            compaction(1.0, 2.0, "first", 2.5),
            said("i3", "user", "three", 3.0),
            compaction(1.0, 3.0, "wider", 3.5),
            said("i4", "user", "four", 4.0),
            compaction(3.0, 4.0, "overlapping", 4.5),
            said("i5", "user", "five", 5.0),
        ];
        let live = live_events(&events, "agent").expect("compactions reshape");
        assert_eq!(
            texts(&live),
            ["agent: wider", "agent: overlapping", "user: five"]
        );
    }

    #[test]
    fn rewound_invocations_are_left_out() {
        let mut rewind = Event::new(InvocationId::from("i3"), "user");
        rewind.actions.rewind_before_invocation_id = Some(InvocationId::from("i2"));
        let events = [
            said("i1", "user", "one", 1.0),
            said("i2", "user", "two", 2.0),
            said("i2", "agent", "two answered", 3.0),
            rewind,
            said("i4", "user", "four", 5.0),
        ];
        let live = live_events(&events, "agent").expect("a rewind reshapes");
        assert_eq!(texts(&live), ["user: one", "user: four"]);
    }
}
