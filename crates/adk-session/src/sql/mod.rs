//! The SQL session store: one store ([`store::SqlStore`]) over a [`dialect::Dialect`] per
//! database, which events a request selects, and reading rows back; and the SQL memory service
//! ([`memory::SqlMemory`]) over its own [`memory::MemoryDialect`].

use std::ops::Range;
use std::sync::Arc;

use adk_core::{Event, GetSessionRequest};
use serde_json::{Map, Value};

use crate::error::{Error, Result};

#[cfg_attr(
    not(feature = "sqlite"),
    allow(dead_code, reason = "only SQLite groups appends")
)]
pub(crate) mod appends;
pub(crate) mod begin;
pub(crate) mod dialect;
pub(crate) mod layout;
pub(crate) mod memory;
pub(crate) mod store;

/// Above this many events, parsing moves to the blocking pool.
const PARSE_INLINE_MAX: usize = 256;
/// Above this many events, parsing is split between threads.
const PARSE_PARALLEL_MIN: usize = 2_048;

/// What separates events when a query joins their JSON into one string: compact `serde_json`
/// output never holds a raw newline (it escapes them in strings), and one string per session
/// instead of one row per event makes loading long sessions several times faster.
pub(crate) const EVENT_SEPARATOR: char = '\n';

/// Which events of a session a [`GetSessionRequest`] asks for.
#[derive(Debug, Clone, Copy)]
pub(crate) enum EventFilter {
    /// All, oldest first.
    All,
    /// The most recent `count`, at or after `after` when given.
    Recent { count: i64, after: Option<f64> },
    /// Those at or after a timestamp.
    After(f64),
}

impl EventFilter {
    /// The filter of `request`.
    pub(crate) fn of(request: &GetSessionRequest) -> Self {
        match (request.recent_limit(), request.after_timestamp) {
            (None, None) => Self::All,
            (None, Some(after)) => Self::After(after),
            (Some(count), after) => Self::Recent {
                count: i64::try_from(count).unwrap_or(i64::MAX),
                after,
            },
        }
    }
}

/// Parses the events of a session from their JSON joined by [`EVENT_SEPARATOR`] (`None` when
/// there are none). Many events are parsed on the blocking pool, split between cores; the pool's
/// threads are long-lived, so their allocator arenas stay warm from one load to the next.
pub(crate) async fn parse_events(joined: Option<String>) -> Result<Vec<Event>> {
    let Some(joined) = joined.filter(|joined| !joined.is_empty()) else {
        return Ok(Vec::new());
    };
    let count = joined.matches(EVENT_SEPARATOR).count() + 1;
    if count <= PARSE_INLINE_MAX {
        return parse_lines(&joined);
    }
    // Splitting pays only with cores to spare: on two cores shared with the async workers it
    // measured slower than one parser.
    let cores = std::thread::available_parallelism().map_or(1, |cores| cores.get());
    if count < PARSE_PARALLEL_MIN || cores < 4 {
        // The text moves to the pool uncopied and the events come back in the vector they were
        // parsed into. (A vector sized for `count` up front measured a third slower: glibc maps
        // a fresh region for it at every load, and faults its pages in again.)
        return tokio::task::spawn_blocking(move || parse_lines(&joined))
            .await
            .map_err(parser_failed)?;
    }
    let chunks = cores.min(4);
    let joined: Arc<str> = Arc::from(joined);
    let parsers: Vec<_> = chunk_ranges(&joined, chunks)
        .into_iter()
        .map(|range| {
            let joined = Arc::clone(&joined);
            tokio::task::spawn_blocking(move || parse_lines(&joined[range]))
        })
        .collect();
    let mut events = Vec::with_capacity(count);
    for parser in parsers {
        let parsed = parser.await.map_err(parser_failed)??;
        events.extend(parsed);
    }
    Ok(events)
}

/// The error of a parser task that panicked or was cancelled.
fn parser_failed(join: tokio::task::JoinError) -> Error {
    Error::storage("parsing stored events", join)
}

/// Parses events that come one per row while the rows are still coming: every
/// [`ROW_BATCH`] rows go to the blocking pool as one batch, so parsing overlaps the database
/// producing and sending the rest, and no row is copied into a joined string. A load of no more
/// than [`PARSE_INLINE_MAX`] rows is parsed where it is read. The rows should come in the order
/// of their positions; should a database send them otherwise, the events are put in that order
/// once parsed.
#[derive(Default)]
pub(crate) struct RowParser {
    batch: Vec<String>,
    parsing: Vec<tokio::task::JoinHandle<Result<Vec<Event>>>>,
    /// Each row's position, in the order the rows came.
    positions: Vec<i64>,
    /// Whether a row came before one of a lower position.
    unordered: bool,
}

/// How many rows a [`RowParser`] hands to the blocking pool at once.
const ROW_BATCH: usize = 1_024;

impl RowParser {
    /// Takes the stored JSON of the event at `position`.
    pub(crate) fn push(&mut self, position: i64, row: String) {
        if self.positions.last().is_some_and(|&last| last > position) {
            self.unordered = true;
        }
        self.positions.push(position);
        self.batch.push(row);
        if self.batch.len() == ROW_BATCH {
            let batch = std::mem::take(&mut self.batch);
            self.parsing
                .push(tokio::task::spawn_blocking(move || parse_rows(&batch)));
        }
    }

    /// The events of every row taken, in the order of their positions.
    pub(crate) async fn finish(self) -> Result<Vec<Event>> {
        let events = if self.parsing.is_empty() && self.batch.len() <= PARSE_INLINE_MAX {
            parse_rows(&self.batch)?
        } else {
            let mut events = Vec::new();
            for parser in self.parsing {
                let mut parsed = parser.await.map_err(parser_failed)??;
                // The first batch's vector becomes the result rather than being copied into it.
                if events.is_empty() {
                    events = parsed;
                } else {
                    events.append(&mut parsed);
                }
            }
            events.append(&mut parse_rows(&self.batch)?);
            events
        };
        if !self.unordered {
            return Ok(events);
        }
        let mut positioned: Vec<(i64, Event)> = self.positions.into_iter().zip(events).collect();
        positioned.sort_by_key(|(position, _)| *position);
        Ok(positioned.into_iter().map(|(_, event)| event).collect())
    }
}

/// Parses one event per row.
fn parse_rows(rows: &[String]) -> Result<Vec<Event>> {
    rows.iter().map(|row| parse_event(row)).collect()
}

/// Parses one stored event.
fn parse_event(json: &str) -> Result<Event> {
    serde_json::from_str(json).map_err(|error| Error::corrupt("an event", error))
}

/// Up to `chunks` byte ranges of `joined` of about equal size, each whole lines.
fn chunk_ranges(joined: &str, chunks: usize) -> Vec<Range<usize>> {
    let target = joined.len().div_ceil(chunks.max(1));
    let mut ranges = Vec::with_capacity(chunks);
    let mut start = 0;
    while start < joined.len() {
        let end = match joined[(start + target).min(joined.len())..].find(EVENT_SEPARATOR) {
            Some(offset) => (start + target).min(joined.len()) + offset,
            None => joined.len(),
        };
        ranges.push(start..end);
        start = end + 1;
    }
    ranges
}

/// Parses events joined by [`EVENT_SEPARATOR`].
fn parse_lines(joined: &str) -> Result<Vec<Event>> {
    joined.split(EVENT_SEPARATOR).map(parse_event).collect()
}

/// Parses a state column: a JSON object.
pub(crate) fn parse_state(text: &str) -> Result<Map<String, Value>> {
    serde_json::from_str(text).map_err(|error| Error::corrupt("a state", error))
}

/// A state as the JSON text stored.
pub(crate) fn state_json(state: &Map<String, Value>, what: &str) -> Result<String> {
    serde_json::to_string(state).map_err(|error| Error::corrupt(what, error))
}

/// Serializes an event for storage.
pub(crate) fn event_json(event: &Event) -> Result<String> {
    serde_json::to_string(event).map_err(|error| Error::corrupt("serializing an event", error))
}

/// Whether `error` is a violated unique or primary key constraint.
pub(crate) fn is_unique_violation(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(db) if db.is_unique_violation())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_whole_lines_covering_everything() {
        let joined = "aa\nbbb\nc\ndddd\ne";
        for chunks in 1..=6 {
            let ranges = chunk_ranges(joined, chunks);
            let lines: Vec<&str> = ranges
                .iter()
                .flat_map(|range| joined[range.clone()].split(EVENT_SEPARATOR))
                .collect();
            assert_eq!(lines, ["aa", "bbb", "c", "dddd", "e"], "{chunks} chunks");
        }
    }

    /// Rows a database sent out of their positions' order come back in it, whether parsed
    /// where they were read or in batches on the blocking pool.
    #[tokio::test]
    async fn rows_come_back_in_the_order_of_their_positions() {
        for count in [5_i64, 2_500] {
            let mut parser = RowParser::default();
            // Positions count down, so every row comes before one of a lower position.
            for position in (1..=count).rev() {
                let event = Event::new(adk_core::InvocationId::from("e-1"), position.to_string());
                parser.push(position, event_json(&event).unwrap());
            }
            let authors: Vec<i64> = parser
                .finish()
                .await
                .unwrap()
                .iter()
                .map(|event| event.author.parse().unwrap())
                .collect();
            assert_eq!(authors, (1..=count).collect::<Vec<_>>(), "{count} rows");
        }
    }
}
