//! Results as text for people: a table of cases and metrics, and the details of each invocation.

use std::fmt::Write as _;

use crate::result::{EvalCaseResult, EvalSetResult};

/// A table with one row per case: its status and each metric's score, then a row of the mean of
/// each metric and the counts of cases that passed and failed.
///
/// ```text
/// case          status  tool_trajectory_avg_score  response_match_score
/// paris         PASSED  1.00                       0.83
/// small_talk    FAILED  0.00                       0.20
/// mean          1/2     0.50                       0.52
/// ```
pub fn summary_table(result: &EvalSetResult) -> String {
    let metrics = result.metric_names();
    let mut rows: Vec<Vec<String>> = Vec::with_capacity(result.eval_case_results.len() + 2);
    let mut header = vec!["case".to_owned(), "status".to_owned()];
    header.extend(metrics.iter().map(|name| (*name).to_owned()));
    rows.push(header);
    for case in &result.eval_case_results {
        let mut row = vec![case.eval_id.clone(), case.final_eval_status.to_string()];
        row.extend(metrics.iter().map(|name| {
            case.metric(name)
                .and_then(|metric| metric.score)
                .map_or_else(|| "-".to_owned(), |score| format!("{score:.2}"))
        }));
        rows.push(row);
    }
    let (passed, failed) = result.counts();
    let mut footer = vec!["mean".to_owned(), format!("{passed}/{}", passed + failed)];
    footer.extend(metrics.iter().map(|name| {
        result
            .mean_score(name)
            .map_or_else(|| "-".to_owned(), |score| format!("{score:.2}"))
    }));
    rows.push(footer);
    render(&rows)
}

/// Every invocation of a case: what the user said, the expected and actual answers and tool
/// calls, and each metric's score.
pub fn case_details(case: &EvalCaseResult) -> String {
    let mut out = format!("{} ({})\n", case.eval_id, case.final_eval_status);
    if let Some(error) = &case.error_message {
        let _ = writeln!(out, "  the agent could not run: {error}");
    }
    for (index, invocation) in case.eval_metric_result_per_invocation.iter().enumerate() {
        let actual = &invocation.actual_invocation;
        let _ = writeln!(out, "  invocation {}: {}", index + 1, actual.user_text());
        if let Some(expected) = &invocation.expected_invocation {
            let _ = writeln!(out, "    expected answer: {}", expected.final_text());
            let _ = writeln!(
                out,
                "    expected calls:  {}",
                calls(&expected.tool_calls())
            );
        }
        let _ = writeln!(out, "    actual answer:   {}", actual.final_text());
        let _ = writeln!(out, "    actual calls:    {}", calls(&actual.tool_calls()));
        for metric in &invocation.eval_metric_results {
            let score = metric
                .score
                .map_or_else(|| "-".to_owned(), |score| format!("{score:.2}"));
            let _ = writeln!(
                out,
                "    {}: {score} ({}, threshold {})",
                metric.metric_name,
                metric.eval_status,
                metric
                    .threshold
                    .map_or_else(|| "-".to_owned(), |t| t.to_string())
            );
            for rubric in metric.details.rubric_scores.iter().flatten() {
                let verdict = rubric
                    .score
                    .map_or_else(|| "-".to_owned(), |s| format!("{s:.0}"));
                let _ = writeln!(
                    out,
                    "      rubric {}: {verdict} {}",
                    rubric.rubric_id,
                    rubric.rationale.as_deref().unwrap_or_default()
                );
            }
        }
    }
    out
}

/// One line per eval set: how many cases passed and failed, as `adk eval` ends.
pub fn run_summary(results: &[EvalSetResult]) -> String {
    let mut out = String::from("Eval Run Summary\n");
    for result in results {
        let (passed, failed) = result.counts();
        let _ = writeln!(
            out,
            "{}:\n  Tests passed: {passed}\n  Tests failed: {failed}",
            result.eval_set_id
        );
    }
    out
}

fn calls(calls: &[&adk_core::FunctionCall]) -> String {
    if calls.is_empty() {
        return "(none)".to_owned();
    }
    calls
        .iter()
        .map(|call| {
            format!(
                "{}({})",
                call.name,
                serde_json::Value::Object(call.args.clone())
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Rows as columns padded to their widest cell, two spaces apart.
fn render(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|column| {
            rows.iter()
                .filter_map(|row| row.get(column))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let line: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(column, cell)| format!("{cell:<width$}", width = widths[column]))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_line_up() {
        let rows = vec![
            vec!["case".to_owned(), "score".to_owned()],
            vec!["a_long_case".to_owned(), "1.00".to_owned()],
        ];
        assert_eq!(render(&rows), "case         score\na_long_case  1.00\n");
    }
}
