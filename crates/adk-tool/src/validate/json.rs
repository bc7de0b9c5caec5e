//! What validation needs to know about JSON values: JSON Schema's types, equality that compares
//! numbers by value, and how a value is quoted in a problem.

use std::cmp::Ordering;

use serde_json::{Number, Value};

/// The longest rendering of a value in a problem; longer ones are cut, so that a huge argument
/// does not flood the message the model reads.
const RENDERED_MAX_CHARS: usize = 200;

/// JSON Schema's instance types, as bits of a set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Types(u8);

const NULL: u8 = 1;
const BOOLEAN: u8 = 2;
const OBJECT: u8 = 4;
const ARRAY: u8 = 8;
const NUMBER: u8 = 16;
const STRING: u8 = 32;
const INTEGER: u8 = 64;

/// Every type name, in the order messages list them, with its bit.
const TYPE_NAMES: [(&str, u8); 7] = [
    ("null", NULL),
    ("boolean", BOOLEAN),
    ("object", OBJECT),
    ("array", ARRAY),
    ("number", NUMBER),
    ("string", STRING),
    ("integer", INTEGER),
];

impl Types {
    /// The set holding the type named `name`, if JSON Schema has one of that name.
    pub(super) fn named(name: &str) -> Option<Self> {
        TYPE_NAMES
            .iter()
            .find(|(known, _)| *known == name)
            .map(|(_, bit)| Self(*bit))
    }

    /// The union of two sets.
    pub(super) fn with(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether `value` has one of the types: an integer is a number whose fraction is zero, and
    /// every integer is a number.
    pub(super) fn admit(self, value: &Value) -> bool {
        let bit = match value {
            Value::Null => NULL,
            Value::Bool(_) => BOOLEAN,
            Value::Object(_) => OBJECT,
            Value::Array(_) => ARRAY,
            Value::String(_) => STRING,
            Value::Number(number) => {
                return self.0 & NUMBER != 0 || (self.0 & INTEGER != 0 && is_integer(number));
            }
        };
        self.0 & bit != 0
    }

    /// The set's names, quoted: `"string"` or `"string", "null"`.
    pub(super) fn describe(self) -> String {
        TYPE_NAMES
            .iter()
            .filter(|(_, bit)| self.0 & bit != 0)
            .map(|(name, _)| format!("\"{name}\""))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether the set holds more than one type.
    pub(super) fn is_several(self) -> bool {
        self.0.count_ones() > 1
    }
}

/// Whether `number` is an integer, `2.0` included.
pub(super) fn is_integer(number: &Number) -> bool {
    number.is_i64() || number.is_u64() || number.as_f64().is_some_and(|float| float.fract() == 0.0)
}

/// Orders two numbers by value, exactly for integers.
pub(super) fn compare_numbers(a: &Number, b: &Number) -> Ordering {
    if let (Some(a), Some(b)) = (as_i128(a), as_i128(b)) {
        return a.cmp(&b);
    }
    let (a, b) = (
        a.as_f64().unwrap_or(f64::NAN),
        b.as_f64().unwrap_or(f64::NAN),
    );
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

/// A whole number as an `i128`; `None` for a float.
pub(super) fn as_i128(number: &Number) -> Option<i128> {
    number
        .as_i64()
        .map(i128::from)
        .or_else(|| number.as_u64().map(i128::from))
}

/// Whether `value` is a multiple of `divisor` (positive): exactly for integers, within rounding
/// for floats, so that `0.3` is a multiple of `0.1`.
pub(super) fn is_multiple_of(value: &Number, divisor: &Number) -> bool {
    if let (Some(value), Some(divisor)) = (as_i128(value), as_i128(divisor)) {
        return divisor != 0 && value % divisor == 0;
    }
    let (Some(value), Some(divisor)) = (value.as_f64(), divisor.as_f64()) else {
        return false;
    };
    let quotient = value / divisor;
    if !quotient.is_finite() {
        return false;
    }
    (quotient - quotient.round()).abs() <= f64::EPSILON * quotient.abs().max(1.0) * 4.0
}

/// JSON equality as JSON Schema means it: numbers equal by value (`1` is `1.0`), objects equal
/// whatever the order of their keys.
pub(super) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => compare_numbers(a, b) == Ordering::Equal,
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| equal(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, value)| b.get(key).is_some_and(|other| equal(value, other)))
        }
        _ => a == b,
    }
}

/// `value` as JSON, cut after [`RENDERED_MAX_CHARS`] characters.
pub(super) fn render(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(RENDERED_MAX_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// Values listed for a message: `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
pub(super) fn list_alternatives(values: &[Value]) -> String {
    let rendered: Vec<String> = values.iter().map(render).collect();
    match rendered.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn integers_are_numbers_and_whole_floats_are_integers() {
        let integer = Types::named("integer").unwrap();
        let number = Types::named("number").unwrap();
        assert!(integer.admit(&json!(2.0)));
        assert!(!integer.admit(&json!(2.5)));
        assert!(number.admit(&json!(2)));
        assert!(!number.admit(&json!("2")));
        assert_eq!(integer.with(number).describe(), "\"number\", \"integer\"");
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(equal(&json!([1, {"a": 2}]), &json!([1.0, {"a": 2.0}])));
        assert!(!equal(&json!(1), &json!(true)));
        assert_eq!(
            compare_numbers(&Number::from(u64::MAX), &Number::from(-1)),
            Ordering::Greater
        );
    }

    #[test]
    fn multiples_allow_for_float_rounding() {
        let number = |value: f64| Number::from_f64(value).unwrap();
        assert!(is_multiple_of(&number(0.3), &number(0.1)));
        assert!(!is_multiple_of(&number(0.35), &number(0.1)));
        assert!(is_multiple_of(&Number::from(12), &Number::from(4)));
        assert!(!is_multiple_of(&Number::from(13), &Number::from(4)));
    }

    #[test]
    fn long_values_are_cut() {
        let long = Value::String("x".repeat(500));
        assert!(render(&long).ends_with('…'));
        assert_eq!(
            list_alternatives(&[json!("a"), json!("b"), json!("c")]),
            "\"a\", \"b\" or \"c\""
        );
    }
}
