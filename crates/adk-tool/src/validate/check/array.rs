//! The checks of arrays: sizes, `uniqueItems`, `prefixItems` and `items`, `contains`, and
//! `unevaluatedItems`.

use serde_json::Value;

use super::evaluated::SeenItems;
use super::{Checker, Path, Problem, counted};
use crate::validate::compile::Keywords;
use crate::validate::json::{equal, render};

impl Checker<'_> {
    pub(super) fn array(
        &mut self,
        k: &Keywords,
        value: &Value,
        items: &[Value],
        path: &Path<'_>,
        depth: usize,
    ) -> bool {
        let mut valid = true;
        let length = items.len() as u64;
        if let Some(min) = k.min_items
            && length < min
        {
            fail!(
                self,
                valid,
                path,
                format!("{} has fewer than {}", render(value), counted(min, "item"))
            );
        }
        if let Some(max) = k.max_items
            && length > max
        {
            fail!(
                self,
                valid,
                path,
                format!("{} has more than {}", render(value), counted(max, "item"))
            );
        }
        if k.unique_items
            && items
                .iter()
                .enumerate()
                .any(|(index, item)| items[..index].iter().any(|seen| equal(seen, item)))
        {
            fail!(
                self,
                valid,
                path,
                format!("{} has non-unique elements", render(value))
            );
        }
        for (index, item) in items.iter().enumerate() {
            let schema = k
                .prefix_items
                .get(index)
                .copied()
                .or(k.items.filter(|_| index >= k.prefix_items.len()));
            if let Some(schema) = schema {
                apply!(
                    self,
                    valid,
                    self.node(schema, item, &Path::Index(path, index), depth)
                );
            }
        }
        if let Some(contains) = k.contains {
            let matching = items
                .iter()
                .filter(|item| self.admits(contains, item, depth))
                .count() as u64;
            let min = k.min_contains.unwrap_or(1);
            if matching < min {
                let message = if k.min_contains.is_none() {
                    format!(
                        "{} has no item that matches the schema under 'contains'",
                        render(value)
                    )
                } else {
                    format!(
                        "{} has {matching} items that match the schema under 'contains', fewer than {min}",
                        render(value)
                    )
                };
                fail!(self, valid, path, message);
            }
            if let Some(max) = k.max_contains
                && matching > max
            {
                fail!(
                    self,
                    valid,
                    path,
                    format!(
                        "{} has {matching} items that match the schema under 'contains', more than {max}",
                        render(value)
                    )
                );
            }
        }
        if let Some(unevaluated) = k.unevaluated_items {
            let mut seen = SeenItems::new(items.len());
            self.evaluated_items(k, value, items, depth, false, &mut seen);
            for (index, item) in items.iter().enumerate() {
                if !seen.has(index) {
                    apply!(
                        self,
                        valid,
                        self.node(unevaluated, item, &Path::Index(path, index), depth)
                    );
                }
            }
        }
        valid
    }
}
