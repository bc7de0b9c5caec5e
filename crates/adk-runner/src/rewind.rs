//! Rewinding a session to the moment before an invocation: the state and artifact deltas that
//! undo what happened since.

use std::collections::BTreeMap;
use std::sync::Arc;

use adk_core::{
    ArtifactService, Error, ErrorKind, Event, InvocationId, Part, Result, Session, StateScope,
};
use serde_json::{Map, Value};

/// The MIME type of the empty part that stands for an artifact that did not exist yet.
const REMOVED_ARTIFACT_MIME_TYPE: &str = "application/octet-stream";

/// The index of the first event of invocation `invocation_id`.
pub(crate) fn rewind_point(session: &Session, invocation_id: &InvocationId) -> Result<usize> {
    session
        .events
        .iter()
        .position(|event| &event.invocation_id == invocation_id)
        .ok_or_else(|| {
            Error::new(
                ErrorKind::NotFound,
                format!(
                    "session '{}' has no invocation '{invocation_id}' to rewind to",
                    session.id
                ),
            )
        })
}

/// The state delta that sets every session-scoped key back to its value before event `point`: keys
/// changed since get their old value, keys that did not exist then are set to `null`. `app:` and
/// `user:` keys are shared with other sessions and are left alone; `temp:` keys are never stored.
pub(crate) fn state_delta(session: &Session, point: usize) -> Map<String, Value> {
    let mut before = Map::new();
    for event in &session.events[..point] {
        for (key, value) in &event.actions.state_delta {
            if is_session_scoped(key) {
                before.insert(key.clone(), value.clone());
            }
        }
    }
    let mut delta = Map::new();
    for (key, value) in &before {
        if session.state.get(key) != Some(value) {
            delta.insert(key.clone(), value.clone());
        }
    }
    for (key, value) in &session.state {
        if is_session_scoped(key) && !before.contains_key(key) && !value.is_null() {
            delta.insert(key.clone(), Value::Null);
        }
    }
    delta
}

fn is_session_scoped(key: &str) -> bool {
    StateScope::of(key) == StateScope::Session
}

/// Saves, for every artifact of the session changed since event `point`, a new version that
/// copies the version it had then (an empty part when it did not exist yet), and returns the
/// artifact delta naming those versions. `user:` artifacts are shared with other sessions and are
/// left alone.
pub(crate) async fn artifact_delta(
    artifacts: Option<&Arc<dyn ArtifactService>>,
    session: &Session,
    point: usize,
) -> Result<BTreeMap<String, u64>> {
    let versions = |events: &[Event]| {
        let mut versions = BTreeMap::new();
        for event in events {
            versions.extend(event.actions.artifact_delta.clone());
        }
        versions
    };
    let before = versions(&session.events[..point]);
    let now = versions(&session.events);
    let changed: Vec<(String, Option<u64>)> = now
        .iter()
        .filter(|(name, version)| !name.starts_with("user:") && before.get(*name) != Some(version))
        .map(|(name, _)| (name.clone(), before.get(name).copied()))
        .collect();
    let mut delta = BTreeMap::new();
    if changed.is_empty() {
        return Ok(delta);
    }
    let artifacts = artifacts.ok_or_else(|| {
        Error::new(
            ErrorKind::Config,
            "rewinding artifacts needs an artifact service; give the runner one",
        )
    })?;
    let key = session.key();
    for (name, version_before) in changed {
        let part = match version_before {
            Some(version) => artifacts
                .load_artifact(&key, &name, Some(version))
                .await?
                .ok_or_else(|| {
                    Error::new(
                        ErrorKind::NotFound,
                        format!("version {version} of artifact '{name}' is gone; cannot rewind it"),
                    )
                })?,
            None => Part::inline_data(REMOVED_ARTIFACT_MIME_TYPE, Vec::<u8>::new()),
        };
        let version = artifacts
            .save_artifact(&key, &name, part, Map::new())
            .await?;
        delta.insert(name, version);
    }
    Ok(delta)
}

#[cfg(test)]
mod tests {
    use adk_core::{Event, SessionKey};
    use serde_json::json;

    use super::*;

    fn event(invocation: &str, delta: Value) -> Event {
        let mut event = Event::new(InvocationId::from(invocation), "agent");
        event.actions.state_delta = delta.as_object().cloned().unwrap_or_default();
        event
    }

    #[test]
    fn the_state_delta_restores_old_values_and_nulls_new_keys() {
        let mut session = Session::new(SessionKey::new("app", "u", "s"));
        let events = [
            event("e-1", json!({"a": 1, "gone": true, "user:name": "Ada"})),
            event(
                "e-2",
                json!({"a": 2, "b": "new", "app:mode": "x", "user:name": "Grace"}),
            ),
            event("e-3", json!({"gone": null, "c": null})),
        ];
        for (revision, event) in events.into_iter().enumerate() {
            session.apply_event(event, revision as u64 + 1);
        }
        let point = rewind_point(&session, &InvocationId::from("e-2")).unwrap();
        assert_eq!(
            Value::Object(state_delta(&session, point)),
            json!({"a": 1, "b": null, "gone": true})
        );
    }
}
