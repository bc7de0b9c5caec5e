//! The server benchmark's shared parts (`cargo xtask bench --serve`): reading a `/run_sse`
//! stream's events, judging whether a turn answered correctly, percentiles, and the lines the
//! load client prints for xtask to read.

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

/// The app every server under test serves the weather agent as.
pub const APP: &str = "quickstart";

/// The answer the mock model gives once it has the tool's result, which every turn must end with.
pub const ANSWER: &str = "It is sunny in Paris, 21 degrees.";

/// Splits the complete server-sent events at the front of `buffer` off it and returns their
/// `data:` payloads; an event still being received stays in `buffer`. Events end with a blank
/// line, written `\n\n` or `\r\n\r\n`.
pub fn drain_events(buffer: &mut Vec<u8>) -> Vec<Vec<u8>> {
    let mut payloads = Vec::new();
    while let Some((end, separator)) = event_end(buffer) {
        let frame: Vec<u8> = buffer.drain(..end + separator).collect();
        let mut data = Vec::new();
        for line in frame[..end].split(|byte| *byte == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if let Some(value) = line.strip_prefix(b"data:") {
                if !data.is_empty() {
                    data.push(b'\n');
                }
                data.extend_from_slice(value.strip_prefix(b" ").unwrap_or(value));
            }
        }
        if !data.is_empty() {
            payloads.push(data);
        }
    }
    payloads
}

/// Where the first event in `buffer` ends, and the length of the blank line that ends it.
fn event_end(buffer: &[u8]) -> Option<(usize, usize)> {
    let lf = buffer.windows(2).position(|two| two == b"\n\n");
    let crlf = buffer.windows(4).position(|four| four == b"\r\n\r\n");
    match (lf, crlf) {
        (Some(lf), Some(crlf)) if crlf < lf => Some((crlf, 4)),
        (Some(lf), _) => Some((lf, 2)),
        (None, Some(crlf)) => Some((crlf, 4)),
        (None, None) => None,
    }
}

/// What a turn's events showed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TurnCheck {
    /// An event asked for `get_weather`.
    pub tool_call: bool,
    /// An event carried `get_weather`'s response.
    pub tool_response: bool,
    /// A complete (not partial) event said [`ANSWER`].
    pub final_text: bool,
    /// The server's error, when an event reported one.
    pub error: Option<String>,
}

impl TurnCheck {
    /// Takes one event (a `/run_sse` payload, as JSON) into account.
    pub fn observe(&mut self, event: &Value) {
        if let Some(error) = event.get("error").filter(|error| !error.is_null()) {
            self.error.get_or_insert_with(|| error.to_string());
        }
        if let Some(code) = event.get("errorCode").filter(|code| !code.is_null()) {
            self.error.get_or_insert_with(|| {
                format!("{code}: {}", event["errorMessage"].as_str().unwrap_or(""))
            });
        }
        let partial = event["partial"].as_bool().unwrap_or(false);
        for part in event["content"]["parts"].as_array().into_iter().flatten() {
            if part["functionCall"]["name"] == "get_weather" {
                self.tool_call = true;
            }
            if part["functionResponse"]["name"] == "get_weather" {
                self.tool_response = true;
            }
            if !partial
                && part["text"]
                    .as_str()
                    .is_some_and(|text| text.trim() == ANSWER)
            {
                self.final_text = true;
            }
        }
    }

    /// Whether the turn answered correctly: the tool was called, its response recorded and the
    /// answer given.
    pub fn correct(&self) -> bool {
        self.error.is_none() && self.tool_call && self.tool_response && self.final_text
    }

    /// What is missing from an incorrect turn, in words.
    pub fn describe(&self) -> String {
        if let Some(error) = &self.error {
            return format!("the server reported an error: {error}");
        }
        let missing: Vec<&str> = [
            (self.tool_call, "the get_weather call"),
            (self.tool_response, "the tool's response"),
            (self.final_text, "the final answer"),
        ]
        .into_iter()
        .filter(|(seen, _)| !seen)
        .map(|(_, what)| what)
        .collect();
        format!("the events lack {}", missing.join(", "))
    }
}

/// The value at `fraction` (0.5 for the median, 0.99 for p99) of `sorted`, by the nearest-rank
/// method; zero for no values.
pub fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((sorted.len() as f64) * fraction).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// One timed round: `clients` concurrent clients, each creating its session and running one
/// turn. Printed by `perf-load` as `round <JSON>`.
#[derive(Debug, Clone, Serialize)]
pub struct Round {
    /// How many clients ran at once.
    pub clients: usize,
    /// Turns that answered correctly.
    pub correct: usize,
    /// Turns whose stream ended without the tool call, its response or the answer.
    pub wrong: usize,
    /// Turns that failed: a refused connection, an HTTP error, an error event, or the timeout.
    pub failed: usize,
    /// One failure or wrong turn, described, when there was one.
    pub sample_failure: Option<String>,
    /// From the first client starting to the last stream ending, in microseconds.
    pub wall_us: u64,
    /// Time from posting `/run_sse` to its first event: median and p99, in microseconds.
    pub first_event_us: [u64; 2],
    /// Time from posting `/run_sse` to its stream's end: median and p99, in microseconds.
    pub last_event_us: [u64; 2],
    /// The server's CPU time (user and system) during the round, in microseconds.
    pub server_cpu_us: u64,
}

/// One memory round: `clients` streams held open on a model that does not answer yet. Printed
/// by `perf-load` as `memory <JSON>`.
#[derive(Debug, Clone, Serialize)]
pub struct Memory {
    /// How many streams were opened.
    pub clients: usize,
    /// The server's resident set before they were opened, in KiB.
    pub idle_kib: u64,
    /// The server's resident set while they were all open, in KiB.
    pub held_kib: u64,
    /// How many of them had reached the model when the resident set was read.
    pub at_model: usize,
    /// Turns that did not answer correctly once the model answered.
    pub failed: usize,
}

/// The median and p99 of `times`, in microseconds.
pub fn p50_p99(times: &mut [Duration]) -> [u64; 2] {
    times.sort();
    [0.5, 0.99]
        .map(|fraction| u64::try_from(percentile(times, fraction).as_micros()).unwrap_or(u64::MAX))
}

/// The CPU time (user plus system) process `pid` has used, from `/proc/<pid>/stat`.
///
/// # Errors
///
/// When the process is gone or its stat line is not what Linux writes.
pub fn process_cpu(pid: u32) -> std::io::Result<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    cpu_of_stat(&stat).ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("unexpected /proc/{pid}/stat: {stat}"),
        )
    })
}

/// utime + stime of a `/proc/<pid>/stat` line. The command name (field 2) is in parentheses and
/// may hold spaces, so fields are counted after its closing parenthesis; the times are in clock
/// ticks, which Linux's ABI fixes at 100 a second for user space.
fn cpu_of_stat(stat: &str) -> Option<Duration> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name come state (field 3) ... utime (14) and stime (15): indices 11 and 12 here.
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// The resident set of process `pid` in KiB, from `/proc/<pid>/status`.
///
/// # Errors
///
/// When the process is gone or its status has no `VmRSS` line.
pub fn process_rss_kib(pid: u32) -> std::io::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.split_whitespace().next()?.parse().ok())
        .ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidData, "no VmRSS in /proc status")
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn events_are_split_on_either_line_end_and_a_partial_one_waits() {
        let mut buffer =
            b"data: {\"a\":1}\n\ndata: {\"b\":2}\r\n\r\n: comment\n\ndata: {\"c\"".to_vec();
        let events = drain_events(&mut buffer);
        assert_eq!(events, vec![b"{\"a\":1}".to_vec(), b"{\"b\":2}".to_vec()]);
        assert_eq!(buffer, b"data: {\"c\"");
        buffer.extend_from_slice(b":3}\n\n");
        assert_eq!(drain_events(&mut buffer), vec![b"{\"c\":3}".to_vec()]);
        assert!(buffer.is_empty());
    }

    #[test]
    fn a_turn_is_correct_with_the_call_the_response_and_the_whole_answer() {
        let mut check = TurnCheck::default();
        check.observe(&json!({"content": {"parts": [{"functionCall": {"name": "get_weather"}}]}}));
        check.observe(
            &json!({"content": {"parts": [{"functionResponse": {"name": "get_weather"}}]}}),
        );
        check.observe(&json!({"partial": true, "content": {"parts": [{"text": ANSWER}]}}));
        assert!(!check.correct());
        assert_eq!(check.describe(), "the events lack the final answer");
        check.observe(&json!({"content": {"parts": [{"text": ANSWER}]}}));
        assert!(check.correct());
        check.observe(&json!({"error": "boom"}));
        assert!(!check.correct());
        assert_eq!(check.describe(), "the server reported an error: \"boom\"");
    }

    #[test]
    fn percentiles_take_the_nearest_rank() {
        let times: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile(&times, 0.5), Duration::from_millis(50));
        assert_eq!(percentile(&times, 0.99), Duration::from_millis(99));
        assert_eq!(percentile(&times[..1], 0.99), Duration::from_millis(1));
        assert_eq!(percentile(&[], 0.5), Duration::ZERO);
        let mut shuffled = vec![Duration::from_micros(3), Duration::from_micros(1)];
        assert_eq!(p50_p99(&mut shuffled), [1, 3]);
    }

    #[test]
    fn cpu_time_is_read_after_the_command_name() {
        let stat = "4242 (adk api (server)) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 31 0 0 20 0 9 0 100 0 0";
        assert_eq!(cpu_of_stat(stat), Some(Duration::from_millis(2810)));
        assert_eq!(cpu_of_stat("4242 (x) S 1"), None);
        assert!(process_cpu(std::process::id()).is_ok());
        assert!(process_rss_kib(std::process::id()).unwrap() > 0);
    }
}
