//! Times as ADK Python stores them in SQLite: `DATETIME` text in UTC,
//! `YYYY-MM-DD HH:MM:SS.ffffff`, which sorts in time order as text.

use chrono::{DateTime, NaiveDateTime};

use crate::error::{Error, Result};

/// The text format with microseconds, as SQLAlchemy writes it.
const FORMAT: &str = "%Y-%m-%d %H:%M:%S%.6f";

/// Seconds since the Unix epoch as `DATETIME` text, rounded to the microsecond (times outside
/// the years 1 to 9999 are clamped to them, so that the text still sorts in time order).
pub(crate) fn to_text(seconds: f64) -> String {
    if seconds == f64::NEG_INFINITY {
        // Below every stored time: the lower bound of "no lower bound".
        return String::new();
    }
    let micros = (seconds * 1e6).round();
    // The range chrono represents; casting a clamped finite float is exact enough here.
    #[allow(clippy::cast_possible_truncation)]
    let micros = micros.clamp(-62_135_596_800e6, 253_402_300_799e6) as i64;
    DateTime::from_timestamp_micros(micros)
        .unwrap_or_default()
        .naive_utc()
        .format(FORMAT)
        .to_string()
}

/// `DATETIME` text (with or without fractional seconds, as SQLite's own `CURRENT_TIMESTAMP`
/// writes it) as seconds since the Unix epoch.
pub(crate) fn from_text(text: &str) -> Result<f64> {
    let parsed = NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f")
        .or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S"))
        .map_err(|error| Error::corrupt(format!("a stored time {text:?}"), error))?;
    let micros = parsed.and_utc().timestamp_micros();
    // Microseconds since 1970 fit a double exactly for the next 285 years.
    #[allow(clippy::cast_precision_loss)]
    Ok(micros as f64 / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_to_the_microsecond() {
        let text = to_text(1_795_554_435.353_893_5);
        assert_eq!(text, "2026-11-24 21:07:15.353894");
        assert_eq!(from_text(&text).unwrap(), 1_795_554_435.353_894);
    }

    #[test]
    fn reads_times_without_fractions() {
        assert_eq!(from_text("1970-01-01 00:00:10").unwrap(), 10.0);
        assert!(from_text("yesterday").is_err());
    }

    #[test]
    fn sorts_in_time_order_as_text() {
        assert!(to_text(9.5) < to_text(10.0));
        assert!(to_text(f64::NEG_INFINITY) < to_text(-1e12));
    }
}
