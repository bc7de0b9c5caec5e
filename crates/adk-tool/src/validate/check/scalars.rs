//! The checks of numbers (`multipleOf`, the bounds) and strings (lengths, `pattern`).

use serde_json::Value;

use super::{Checker, Path, Problem, counted};
use crate::validate::compile::Keywords;
use crate::validate::json::{compare_numbers, is_multiple_of, render};

impl Checker<'_> {
    pub(super) fn number(&mut self, k: &Keywords, value: &Value, path: &Path<'_>) -> bool {
        let mut valid = true;
        let Value::Number(number) = value else {
            return valid;
        };
        if let Some(divisor) = &k.multiple_of
            && !is_multiple_of(number, divisor)
        {
            fail!(
                self,
                valid,
                path,
                format!("{number} is not a multiple of {divisor}")
            );
        }
        use std::cmp::Ordering::{Equal, Greater, Less};
        let bounds = [
            (&k.minimum, [Less, Less], "less than the minimum"),
            (&k.maximum, [Greater, Greater], "greater than the maximum"),
            (
                &k.exclusive_minimum,
                [Less, Equal],
                "less than or equal to the minimum",
            ),
            (
                &k.exclusive_maximum,
                [Greater, Equal],
                "greater than or equal to the maximum",
            ),
        ];
        for (bound, refused, words) in bounds {
            if let Some(bound) = bound
                && refused.contains(&compare_numbers(number, bound))
            {
                fail!(self, valid, path, format!("{number} is {words} of {bound}"));
            }
        }
        valid
    }

    pub(super) fn string(
        &mut self,
        k: &Keywords,
        value: &Value,
        text: &str,
        path: &Path<'_>,
    ) -> bool {
        let mut valid = true;
        if k.min_length.is_some() || k.max_length.is_some() {
            let length = text.chars().count() as u64;
            if let Some(min) = k.min_length
                && length < min
            {
                fail!(
                    self,
                    valid,
                    path,
                    format!(
                        "{} is shorter than {}",
                        render(value),
                        counted(min, "character")
                    )
                );
            }
            if let Some(max) = k.max_length
                && length > max
            {
                fail!(
                    self,
                    valid,
                    path,
                    format!(
                        "{} is longer than {}",
                        render(value),
                        counted(max, "character")
                    )
                );
            }
        }
        if let Some(pattern) = &k.pattern
            && !pattern.regex.is_match(text)
        {
            fail!(
                self,
                valid,
                path,
                format!("{} does not match {:?}", render(value), pattern.source)
            );
        }
        valid
    }
}
