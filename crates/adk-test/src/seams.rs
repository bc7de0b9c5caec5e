//! Deterministic [`IdGen`] and [`Clock`] for tests whose output must not change between runs.

use std::sync::atomic::{AtomicU64, Ordering};

use adk_core::{Clock, IdGen};

/// Ids from a counter, shaped like uuids: `00000000-0000-4000-8000-000000000001`, `...02`, ...
#[derive(Debug, Default)]
pub struct SequentialIds {
    next: AtomicU64,
}

impl IdGen for SequentialIds {
    fn new_uuid(&self) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        format!("00000000-0000-4000-8000-{n:012}")
    }
}

/// A clock that starts at `1_700_000_000.0` and moves one second forward each time it is read.
#[derive(Debug, Default)]
pub struct StepClock {
    reads: AtomicU64,
}

impl StepClock {
    /// The first time the clock reports.
    pub const START: f64 = 1_700_000_000.0;
}

impl Clock for StepClock {
    fn now(&self) -> f64 {
        // Counts stay far below 2^53, so the conversion is exact.
        Self::START + self.reads.fetch_add(1, Ordering::Relaxed) as f64
    }
}
