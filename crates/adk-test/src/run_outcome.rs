//! [`RunOutcome`]: what a run's stream yielded, collected to its end, for tests that run agents
//! through the runner and compare the events with an expected log.

use std::fmt::Write as _;

use adk_core::{Error, Event, Result};
use futures::{Stream, StreamExt as _};

use crate::render_events;

/// Every event a run yielded, in order, and the error it ended with.
#[derive(Debug, Default)]
pub struct RunOutcome {
    /// The events, partial ones included.
    pub events: Vec<Event>,
    /// The last error the stream yielded.
    pub error: Option<Error>,
}

impl RunOutcome {
    /// Polls `run` to its end, keeping every event and the last error.
    pub async fn collect(run: impl Stream<Item = Result<Event>>) -> Self {
        let mut run = std::pin::pin!(run);
        let mut outcome = Self::default();
        while let Some(item) = run.next().await {
            match item {
                Ok(event) => outcome.events.push(event),
                Err(failure) => outcome.error = Some(failure),
            }
        }
        outcome
    }

    /// The events one per line ([`render_events`]), then the error if there was one.
    pub fn render(&self) -> String {
        let mut log = render_events(&self.events);
        if let Some(error) = &self.error {
            let _ = writeln!(log, "error: {error}");
        }
        log
    }

    /// The value the run's events last set for state `key`.
    pub fn state_set(&self, key: &str) -> Option<&serde_json::Value> {
        self.events
            .iter()
            .rev()
            .find_map(|event| event.actions.state_delta.get(key))
    }

    /// The last event.
    ///
    /// # Panics
    ///
    /// When the run yielded none.
    pub fn last(&self) -> &Event {
        self.events.last().expect("the run yielded events")
    }
}
