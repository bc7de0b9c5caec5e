//! Reading a string of the config and checking it while serde_yaml reads it, so that a rejected
//! value is reported at its own line and column rather than at the mapping around it.

use std::fmt;

use serde::Deserializer;
use serde::de::{self, Visitor};

/// Reads a string and turns it into a `T` with `parse`; an `Err` from `parse` is the message of
/// the error, placed at the string.
pub(crate) fn parse_string<'de, D, T>(
    deserializer: D,
    expecting: &'static str,
    parse: impl FnOnce(&str) -> Result<T, String>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    deserializer.deserialize_str(StringVisitor { expecting, parse })
}

struct StringVisitor<F> {
    expecting: &'static str,
    parse: F,
}

impl<'de, T, F> Visitor<'de> for StringVisitor<F>
where
    F: FnOnce(&str) -> Result<T, String>,
{
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<T, E> {
        (self.parse)(value).map_err(E::custom)
    }
}

/// `names` as a list for a message: `` `a`, `b` and `c` ``.
pub(crate) fn quoted_list<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let names: Vec<String> = names.into_iter().map(|name| format!("`{name}`")).collect();
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}
