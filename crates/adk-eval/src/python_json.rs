//! JSON text exactly as Python's `json.dumps(value, sort_keys=True)` writes it, byte for byte:
//! keys sorted, `", "` between items and `": "` after keys, every character outside printable
//! ASCII escaped as `\uXXXX` (UTF-16 surrogate pairs beyond the Basic Multilingual Plane), and
//! floats as Python's `repr` writes them. ADK hashes this text to name the eval cases it makes
//! from conversation scenarios, so adk-eval must write the same bytes to arrive at the same names.

use std::fmt::Write as _;

use serde_json::{Number, Value};

/// `value` as Python's `json.dumps(value, sort_keys=True)` writes it.
pub(crate) fn dumps_sorted(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, &mut out);
    out
}

fn write_value(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(number) => write_number(number, out),
        Value::String(text) => write_string(text, out),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            // Python sorts keys as strings, by code point; `str`'s order is the same.
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by_key(|(key, _)| *key);
            out.push('{');
            for (index, (key, item)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                write_string(key, out);
                out.push_str(": ");
                write_value(item, out);
            }
            out.push('}');
        }
    }
}

/// A string with Python's `ensure_ascii` escaping: `\"`, `\\`, the five short escapes, and
/// `\uXXXX` (lowercase hex) for every other character that is not printable ASCII.
fn write_string(text: &str, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

/// An integer as it is; a float as Python's `repr`: the shortest digits that read back the same,
/// in positional notation when the decimal exponent is from -4 to 15 (with `.0` when whole), and
/// as `d.ddde+XX` otherwise.
fn write_number(number: &Number, out: &mut String) {
    if number.is_i64() || number.is_u64() {
        let _ = write!(out, "{number}");
        return;
    }
    let Some(float) = number.as_f64() else {
        let _ = write!(out, "{number}");
        return;
    };
    // `{:e}` gives the shortest round-trip digits with a decimal exponent: `1.5e-7`, `1e16`.
    let scientific = format!("{float:e}");
    let (mantissa, exponent) = scientific
        .split_once('e')
        .unwrap_or((scientific.as_str(), "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..16).contains(&exponent) {
        let positional = format!("{float}");
        out.push_str(&positional);
        if !positional.contains('.') {
            out.push_str(".0");
        }
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        let _ = write!(out, "{mantissa}e{sign}{:02}", exponent.unsigned_abs());
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_are_sorted_and_separated_as_python_separates_them() {
        let value = json!({"b": [1, true, null], "a": {"d": "x", "c": []}});
        assert_eq!(
            dumps_sorted(&value),
            r#"{"a": {"c": [], "d": "x"}, "b": [1, true, null]}"#
        );
    }

    #[test]
    fn non_ascii_and_control_characters_are_escaped_as_python_escapes_them() {
        let value = json!("Météo à Zürich ☀ 🌧\t\"q\"\\ \u{1}\u{7f}/");
        assert_eq!(
            dumps_sorted(&value),
            r#""M\u00e9t\u00e9o \u00e0 Z\u00fcrich \u2600 \ud83c\udf27\t\"q\"\\ \u0001\u007f/""#
        );
    }

    #[test]
    fn floats_are_written_as_python_reprs_them() {
        let cases = [
            (1.0, "1.0"),
            (0.5, "0.5"),
            (1e16, "1e+16"),
            (123_456_789.25, "123456789.25"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5e-7, "-2.5e-07"),
            (1.5e300, "1.5e+300"),
        ];
        for (float, python) in cases {
            assert_eq!(dumps_sorted(&json!(float)), python, "{float}");
        }
    }
}
