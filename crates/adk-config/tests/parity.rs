//! Parity with ADK Python: configs written the way its documentation and samples write them
//! (`tests/fixtures/parity`) load unchanged, dotted Python paths name registered function tools,
//! and every valid fixture also passes the JSON Schema that `cargo xtask codegen` writes, while
//! a bad one does not.

mod support;

use std::path::{Path, PathBuf};

use adk_config::AgentLoader;
use adk_test::ScriptedModel;
use adk_tool::FunctionTool;
use expect_test::expect;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use support::{ScriptedResolver, fixture, render_tree, run, runner};

/// The arguments of `check_prime`.
#[derive(Deserialize, JsonSchema)]
struct Numbers {
    /// The numbers to check.
    nums: Vec<u64>,
}

async fn check_prime(args: Numbers) -> Result<Vec<String>, String> {
    Ok(args
        .nums
        .iter()
        .map(|&n| {
            let prime = n > 1 && (2..n).take_while(|d| d * d <= n).all(|d| n % d != 0);
            format!("{n} is {}prime", if prime { "" } else { "not " })
        })
        .collect())
}

/// The arguments of `check_guess`.
#[derive(Deserialize, JsonSchema)]
struct Guess {
    /// The number guessed.
    guess: u32,
}

async fn check_guess(args: Guess) -> Result<&'static str, String> {
    Ok(match args.guess.cmp(&42) {
        std::cmp::Ordering::Less => "higher",
        std::cmp::Ordering::Greater => "lower",
        std::cmp::Ordering::Equal => "right",
    })
}

/// A loader with the parity fixtures' function tools registered, serving every Gemini model
/// they name with a scripted model.
fn loader(resolver: &ScriptedResolver) -> AgentLoader {
    AgentLoader::new()
        .function_tool(FunctionTool::new(
            "check_prime",
            "Tells which numbers are prime.",
            check_prime,
        ))
        .function_tool(FunctionTool::new(
            "check_guess",
            "Tells whether the guess is right, too low or too high.",
            check_guess,
        ))
        .model_resolver(resolver.clone())
}

#[tokio::test]
async fn configs_written_for_adk_python_load_unchanged() {
    let resolver = ScriptedResolver::new()
        .serve("gemini-2.5-flash", ScriptedModel::new("gemini-2.5-flash"))
        .serve("gemini-2.0-flash", ScriptedModel::new("gemini-2.0-flash"));
    let loader = loader(&resolver);
    let mut trees = String::new();
    for app in [
        "assistant",
        "prime_checker",
        "tutor",
        "guessing_game",
        "notion_mcp",
        "remote_mcp",
        "story_pipeline",
    ] {
        let root = loader
            .load(fixture(&format!("parity/{app}")))
            .await
            .unwrap_or_else(|error| panic!("{error}"));
        trees.push_str(&render_tree(&root));
    }
    expect![[r#"
        assistant_agent (LlmAgent): "A helpful agent that answers the user's questions." tools []
        prime_agent (LlmAgent): "Tells which numbers are prime." tools [check_prime]
        root_agent (LlmAgent): "A tutor for programming and for mathematics." tools []
          code_tutor_agent (LlmAgent): "Teaches programming." tools []
          math_tutor_agent (LlmAgent): "Teaches mathematics." tools []
        guessing_game_loop (LoopAgent): ""
          guesser_agent (LlmAgent): "Guesses a number from 1 to 100." tools []
          checker_agent (LlmAgent): "Checks the guess and ends the game when it is right." tools [check_guess, exit_loop]
        notion_agent (LlmAgent): "" tools []
        remote_tools_agent (LlmAgent): "Uses the tools of a remote MCP server." tools []
        story_pipeline (SequentialAgent): "Writes a story, then critiques it from two sides at once."
          story_writer (LlmAgent): "Writes a short story." tools []
          critics (ParallelAgent): "Two critics read the story at the same time."
            style_critic (LlmAgent): "" tools []
            plot_critic (LlmAgent): "" tools []
    "#]].assert_eq(&trees);
}

#[tokio::test]
async fn a_dotted_python_path_names_the_registered_function_tool() {
    let model = ScriptedModel::new("gemini-2.5-flash")
        .then_call("check_prime", json!({"nums": [7, 9]}))
        .then_text("7 is prime; 9 is not.");
    let resolver = ScriptedResolver::new().serve("gemini-2.5-flash", model);
    let root = loader(&resolver)
        .load(fixture("parity/prime_checker"))
        .await
        .unwrap();
    let outcome = run(&runner(root), "Are 7 and 9 prime?").await;
    expect![[r#"
        prime_agent: call check_prime {"nums":[7,9]}
        prime_agent: response check_prime {"result":["7 is prime","9 is not prime"]}
        prime_agent: "7 is prime; 9 is not."
    "#]]
    .assert_eq(&outcome.render());
}

#[tokio::test]
async fn the_guessing_game_loops_until_the_checker_exits() {
    let model = ScriptedModel::new("gemini-2.0-flash")
        .then_text("50")
        .then_call("check_guess", json!({"guess": 50}))
        .then_text("Lower.")
        .then_text("42")
        .then_calls(&[
            ("check_guess", json!({"guess": 42})),
            ("exit_loop", json!({})),
        ]);
    let resolver = ScriptedResolver::new().serve("gemini-2.0-flash", model.clone());
    let root = loader(&resolver)
        .load(fixture("parity/guessing_game"))
        .await
        .unwrap();
    let runner = runner(root);
    let outcome = run(&runner, "Let's play.").await;
    expect![[r#"
        guesser_agent: "50" [guess="50"]
        checker_agent: call check_guess {"guess":50}
        checker_agent: response check_guess {"result":"lower"}
        checker_agent: "Lower." [hint="Lower."]
        guesser_agent: "42" [guess="42"]
        checker_agent: call check_guess {"guess":42} call exit_loop {}
        checker_agent: response check_guess {"result":"right"} response exit_loop {"result":null} [escalate, skip summarization]
    "#]].assert_eq(&outcome.render());
    assert_eq!(outcome.state_set("guess"), Some(&json!("42")));
    assert_eq!(model.remaining(), 0);
}

/// Every YAML file under `dir`, recursively, sorted.
fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(yaml_files(&path));
        } else if path
            .extension()
            .is_some_and(|extension| extension == "yaml")
        {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// The YAML file at `path` as JSON.
fn as_json(path: &Path) -> serde_json::Value {
    let value: serde_yaml::Value = serde_yaml::from_str(&std::fs::read_to_string(path).unwrap())
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_json::to_value(value).unwrap()
}

#[test]
fn every_valid_fixture_passes_the_json_schema_and_bad_ones_do_not() {
    let schema = adk_config::json_schema();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let mut valid = Vec::new();
    for dir in ["keys", "parity", "apps", "models"] {
        valid.extend(yaml_files(&fixture(dir)));
    }
    assert!(valid.len() > 30, "{valid:?}");
    for file in &valid {
        let instance = as_json(file);
        let errors: Vec<String> = validator
            .iter_errors(&instance)
            .map(|error| error.to_string())
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", file.display());
    }
    // Keys, classes, values and tools the loader refuses, the schema refuses too.
    for bad in [
        "unknown_key",
        "loop_key_on_llm_agent",
        "workflow_model",
        "wrong_type",
        "nested_wrong_type",
        "unknown_agent_class",
        "unknown_model",
        "callbacks",
        "model_code",
        "code_sub_agent",
        "unknown_generate_key",
        "missing_name",
        "negative_iterations",
        "mcp_sse",
        "mcp_without_args",
    ] {
        let file = fixture(&format!("errors/{bad}.yaml"));
        assert!(
            !validator.is_valid(&as_json(&file)),
            "{} passes the schema",
            file.display()
        );
    }
}
