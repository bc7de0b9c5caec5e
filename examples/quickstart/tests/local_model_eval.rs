//! The quickstart's eval set on the local model, as `adk eval quickstart` runs it without a key:
//! SmolLM2-135M behind llama.cpp, prompted tool calling, greedy decoding (temperature 0) on the
//! server's fixed seed, so a run repeats and a drop in quality is a regression.
//!
//! The floors are the scores the local model reached when this test was written (see
//! `docs/local-model.md`), kept a little below them where one case more or less would not mean
//! the protocol broke: the mean tool-trajectory score (1.00 reached), the mean ROUGE-1 match
//! (0.49 reached), and the sky words, which must all come from a tool, always. The first run on a
//! machine builds `llama-server` into the user cache (about 15 minutes on 2 cores); later runs
//! take about a minute.

use std::path::Path;

use adk::RunConfig;
use adk::eval::{EvalConfig, EvalSet, Evaluator};
use adk::model::OpenAi;
use adk_local_model::{LocalModel, LocalModelConfig, ProgressEvent};
use quickstart::eval::{SKY_WORD_GROUNDED, metrics};

/// The lowest mean tool-trajectory score that passes: the issue asks for 0.9, the model reaches 1.
const TRAJECTORY_FLOOR: f64 = 0.95;

/// The lowest mean ROUGE-1 F-measure against the expected answers that passes.
const RESPONSE_MATCH_FLOOR: f64 = 0.4;

/// How many times the agent may run one tool with the same arguments in a turn, as the launcher
/// sets it for the local model.
const MAX_REPEATED_TOOL_CALLS: u32 = 2;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_quickstart_eval_set_holds_its_floor_on_the_local_model() {
    let config = LocalModelConfig::from_env().expect("a cache directory");
    let progress = |event: &ProgressEvent| eprintln!("local model: {event:?}");
    let local = LocalModel::ensure(config, &progress)
        .await
        .expect("the local model is ready");
    let server = local.start().await.expect("the server starts");
    let model = OpenAi::builder(server.model_name())
        .base_url(server.base_url())
        .api_key(server.api_key())
        .prompted_tools(true)
        .build()
        .expect("the adapter builds");

    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("eval");
    let set = EvalSet::load(dir.join("quickstart.evalset.json"))
        .await
        .expect("the eval set reads");
    let criteria = EvalConfig::load(dir.join("test_config.json"))
        .await
        .expect("the criteria read");
    let agent = quickstart::root_agent(model).expect("the agent builds");
    let mut evaluator = Evaluator::new(quickstart::APP_NAME, agent)
        .config(criteria)
        .run_config(RunConfig::default().with_max_repeated_tool_calls(MAX_REPEATED_TOOL_CALLS));
    for (name, metric) in metrics() {
        evaluator = evaluator.metric(name, metric);
    }
    let result = evaluator.evaluate(&set).await.expect("the set runs");

    for case in &result.eval_case_results {
        eprintln!("{} {}", case.eval_id, case.final_eval_status);
    }
    assert_eq!(result.eval_case_results.len(), set.eval_cases.len());
    let score = |metric: &str| {
        result
            .mean_score(metric)
            .unwrap_or_else(|| panic!("{metric} was scored"))
    };
    let trajectory = score("tool_trajectory_avg_score");
    assert!(
        trajectory >= TRAJECTORY_FLOOR,
        "tool trajectory {trajectory:.2} fell below {TRAJECTORY_FLOOR}"
    );
    let response = score("response_match_score");
    assert!(
        response >= RESPONSE_MATCH_FLOOR,
        "response match {response:.2} fell below {RESPONSE_MATCH_FLOOR}"
    );
    let grounded = score(SKY_WORD_GROUNDED);
    assert_eq!(
        grounded, 1.0,
        "an answer stated weather that no tool returned"
    );
}
