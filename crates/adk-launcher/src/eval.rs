//! `eval`: runs an app on ADK eval sets and scores it, as ADK Python's `adk eval` does, with a
//! progress bar, a table per set and a non-zero exit when a case fails.
//!
//! Each argument is an eval set file, optionally followed by `:case,case` to run only those cases.
//! The criteria come from `--config`, else from the `test_config.json` beside the eval set when one
//! set is given, else ADK's defaults. Results are saved as ADK's `*.evalset_result.json` files.

use std::sync::Arc;

use adk_eval::{EvalConfig, EvalSet, EvalSetResult, Evaluator, LlmJudge, Metric, report};
use adk_tool::Tool;
use futures::StreamExt as _;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::apps::{self, App};
use crate::args::EvalArgs;
use crate::error::{Context as _, LaunchError, LaunchErrorKind};

/// Custom metrics the program offers to its eval sets, by name.
pub(crate) type Metrics = Vec<(String, Arc<dyn Metric>)>;

/// Runs `eval`: every eval set on the app `args.agent`.
pub(crate) async fn eval(
    apps: &[App],
    function_tools: &[Arc<dyn Tool>],
    metrics: &Metrics,
    args: EvalArgs,
) -> Result<(), LaunchError> {
    let app = apps::find(apps, &args.agent)?;
    let sets = load_sets(&args.eval_sets).await?;
    let config = load_config(&args, &sets).await?;
    println!("Using evaluation criteria: {}", criteria_line(&config));

    let built = apps::build(std::slice::from_ref(app), &args.model, function_tools, true).await?;
    let (app_name, agent) = built.apps[0].clone();
    let mut evaluator = Evaluator::new(app_name.clone(), agent)
        .config(config)
        .run_config(built.run_config());
    for (name, metric) in metrics {
        evaluator = evaluator.metric(name.clone(), metric.clone());
    }
    if args.judge {
        let judge = built.chosen_model().await?;
        evaluator = evaluator.judge(LlmJudge::new(judge));
    }
    // A simulated user, played by the chosen model, for the cases with a conversation scenario.
    let simulated = sets
        .iter()
        .flat_map(|(set, _)| &set.eval_cases)
        .any(|case| case.conversation_scenario.is_some());
    if simulated {
        evaluator = evaluator.user_simulator(built.chosen_model().await?);
    }
    let unjudged = evaluator.check().context(LaunchErrorKind::Usage, || {
        "the eval config cannot run".to_owned()
    })?;
    if !unjudged.is_empty() {
        eprintln!(
            "adk: {} need a judge and are not evaluated; pass --judge to judge them with the chosen model",
            unjudged.join(", ")
        );
    }
    println!("adk: evaluating {app_name} on {}", built.model_name());

    let mut results = Vec::with_capacity(sets.len());
    for (set, only) in &sets {
        let result = run_set(&evaluator, &app_name, set, only).await?;
        println!("\n{}:\n{}", set.eval_set_id, report::summary_table(&result));
        if args.print_detailed_results {
            for case in &result.eval_case_results {
                println!("{}", report::case_details(case));
            }
        }
        let saved = result
            .save(&args.results_dir)
            .await
            .context(LaunchErrorKind::Io, || {
                "cannot save the eval result".to_owned()
            })?;
        println!("adk: result saved to {}", saved.display());
        results.push(result);
    }

    println!("*********************************************************************");
    print!("{}", report::run_summary(&results));
    let failed: usize = results.iter().map(|result| result.counts().1).sum();
    let total: usize = results
        .iter()
        .map(|result| result.eval_case_results.len())
        .sum();
    if total == 0 {
        return Err(LaunchError::new(LaunchErrorKind::Run, "no eval case ran"));
    }
    if failed > 0 {
        return Err(LaunchError::new(
            LaunchErrorKind::Run,
            format!("{failed} of {total} eval cases failed"),
        ));
    }
    Ok(())
}

/// Each eval set argument's set and the cases it names.
async fn load_sets(arguments: &[String]) -> Result<Vec<(EvalSet, Vec<String>)>, LaunchError> {
    let mut sets = Vec::with_capacity(arguments.len());
    for argument in arguments {
        let (path, only) = adk_eval::split_eval_set_argument(argument);
        let set = EvalSet::load(path)
            .await
            .context(LaunchErrorKind::Usage, || {
                format!("cannot read the eval set {path}")
            })?;
        sets.push((set, only));
    }
    Ok(sets)
}

/// The config `--config` names, or the `test_config.json` beside the only eval set, or ADK's
/// defaults.
async fn load_config(
    args: &EvalArgs,
    sets: &[(EvalSet, Vec<String>)],
) -> Result<EvalConfig, LaunchError> {
    if let Some(path) = &args.config {
        return EvalConfig::load(path)
            .await
            .context(LaunchErrorKind::Usage, || {
                format!("cannot read the eval config {}", path.display())
            });
    }
    if let ([only], [_]) = (args.eval_sets.as_slice(), sets) {
        let (path, _) = adk_eval::split_eval_set_argument(only);
        return EvalConfig::beside(path)
            .await
            .context(LaunchErrorKind::Usage, || {
                format!("cannot read the eval config beside {path}")
            });
    }
    Ok(EvalConfig::default())
}

/// `metric: threshold` pairs, as one line.
fn criteria_line(config: &EvalConfig) -> String {
    config
        .criteria
        .iter()
        .map(|(name, criterion)| format!("{name} >= {}", criterion.threshold))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Runs one set with a progress bar over its cases.
async fn run_set(
    evaluator: &Evaluator,
    app_name: &str,
    set: &EvalSet,
    only: &[String],
) -> Result<EvalSetResult, LaunchError> {
    let count = if only.is_empty() {
        set.eval_cases.len()
    } else {
        only.len()
    };
    let progress = progress_bar(count as u64, &set.eval_set_id);
    let mut cases = Vec::with_capacity(count);
    let mut stream = Box::pin(evaluator.run(set, Some(only)));
    while let Some(case) = stream.next().await {
        let case = case.context(LaunchErrorKind::Run, || {
            format!("cannot evaluate {}", set.eval_set_id)
        })?;
        progress.set_message(format!("{} {}", case.eval_id, case.final_eval_status));
        progress.inc(1);
        if progress.is_hidden() {
            // Without a terminal (CI logs), one line per case says how far the eval is.
            eprintln!(
                "{}: case {}/{count} {} {}",
                set.eval_set_id,
                progress.position(),
                case.eval_id,
                case.final_eval_status
            );
        }
        cases.push(case);
    }
    progress.finish_and_clear();
    Ok(EvalSetResult::finished(app_name, &set.eval_set_id, cases))
}

/// A bar on standard error when it is a terminal; hidden otherwise, where a line per case is
/// printed instead.
fn progress_bar(length: u64, set: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(length), ProgressDrawTarget::stderr());
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    if let Ok(style) =
        ProgressStyle::with_template(&format!("{set} [{{bar:30}}] {{pos}}/{{len}} cases {{msg}}"))
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}
