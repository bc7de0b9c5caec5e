//! adk-eval against ADK Python itself (google-adk 2.13.0 from PyPI, see `support/`): the same
//! ROUGE scores and stems, the same reading of eval set and config files, and result files that
//! ADK reads and scores the same way.

mod support;

use std::path::PathBuf;
use std::sync::Arc;

use adk_eval::{Criterion, EvalConfig, EvalSet, Evaluator, rouge1};
use adk_flow::LlmAgent;
use adk_test::{ClosureTool, ScriptedModel};
use serde_json::{Value, json};

fn workspace() -> PathBuf {
    adk_test::package_dir(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn rouge_scores_match_adk_python() {
    let pairs = [
        ("It is sunny in Paris.", "Paris is sunny today"),
        ("It's raining in Tokyo, 19°C.", "Tokyo: rainy, 19 degrees"),
        (
            "The weather in New York is windy.",
            "New York is windy and 12 °C",
        ),
        (
            "I have no weather data for Berlin.",
            "Sorry, there is no weather data for Berlin.",
        ),
        (
            "Hello! How can I help you today?",
            "Hi! What can I do for you?",
        ),
        (
            "running runners ran quickly happily",
            "run runner running quick happy",
        ),
        (
            "generalizations of relational conditionals",
            "generalization relations conditional",
        ),
        ("東京は雨です", "東京は晴れ"),
        ("สวัสดีครับ", "สวัสดีค่ะ"),
        ("Café naïve résumé", "cafe naive resume"),
        ("ﬁne ＡＢＣ ①", "fine abc 1"),
        ("", "Something expected"),
        ("Something said", ""),
        ("", ""),
        (
            "sky skies dying lying news innings",
            "sky sky die lie news inning",
        ),
        ("the the the the", "the"),
    ];
    let request: Vec<[&str; 2]> = pairs.iter().map(|(a, b)| [*a, *b]).collect();
    let answer = support::ask(json!({"command": "rouge", "pairs": request}));
    for ((candidate, reference), expected) in pairs.iter().zip(answer.as_array().unwrap()) {
        let score = rouge1(candidate, reference);
        let ours = [score.precision, score.recall, score.fmeasure];
        let theirs: Vec<f64> = expected
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(
            ours.as_slice(),
            theirs.as_slice(),
            "ROUGE-1 of {candidate:?} against {reference:?}"
        );
    }
}

#[test]
fn stems_match_nltk_on_the_projects_own_words() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    // Every word of the shared design documents and this repository's docs: thousands of ordinary
    // English words, stemmed by both.
    let mut text = String::new();
    for dir in [
        workspace().join("docs"),
        adk_test::shared_dir().join("docs"),
    ] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|ext| ext == "md") {
                text.push_str(&std::fs::read_to_string(path).unwrap());
            }
        }
    }
    let mut words: Vec<String> = text
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|word| word.len() > 3)
        .map(str::to_ascii_lowercase)
        .collect();
    words.extend(
        [
            "yyyy",
            "ayyy",
            "oily",
            "spied",
            "flies",
            "agreed",
            "controlling",
            "archaeology",
        ]
        .map(String::from),
    );
    words.sort();
    words.dedup();
    assert!(words.len() > 1000, "only {} words", words.len());
    let answer = support::ask(json!({"command": "stem", "words": words}));
    let mut mismatches = Vec::new();
    for (word, theirs) in words.iter().zip(answer.as_array().unwrap()) {
        // ROUGE's tokenizer stems every word of more than three letters, one token each.
        let ours = adk_eval::metrics::rouge_tokens(word);
        if ours != [theirs.as_str().unwrap()] {
            mismatches.push(format!("{word}: ours {ours:?}, NLTK {theirs}"));
        }
    }
    assert!(mismatches.is_empty(), "stems differ: {mismatches:?}");
}

/// The eval files of this repository, as adk-eval and ADK Python read them.
#[test]
fn adk_python_reads_our_eval_files_as_we_do() {
    let dir = workspace().join("examples/quickstart/eval");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".evalset.json") {
            let ours = EvalSet::from_json(&text, &name).unwrap();
            let theirs = support::ask(json!({"command": "read_eval_set", "text": text}));
            assert_eq!(summarize(&ours), theirs, "{name}");
        } else if name == adk_eval::TEST_CONFIG_FILE {
            let ours = EvalConfig::from_json(&text, &name).unwrap();
            let theirs = support::ask(json!({"command": "read_config", "text": text}));
            let ours: Vec<Value> = ours
                .criteria
                .iter()
                .map(|(name, criterion)| json!([name, criterion.threshold]))
                .collect();
            assert_eq!(Value::Array(ours), theirs, "{name}");
        }
    }
}

#[test]
fn eval_sets_written_by_adk_python_are_read() {
    let written = support::ask(json!({"command": "write_eval_set", "eval_set": {
        "eval_set_id": "weather",
        "name": "Weather",
        "eval_cases": [
            {"eval_id": "paris", "conversation": [{
                "invocation_id": "e-1",
                "user_content": {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
                "final_response": {"role": "model", "parts": [{"text": "Sunny, 21 °C."}]},
                "intermediate_data": {
                    "tool_uses": [{"name": "get_weather", "args": {"city": "Paris"}, "id": "c1"}],
                    "tool_responses": [{"name": "get_weather", "id": "c1", "response": {"sky": "sunny"}}],
                    "intermediate_responses": [["helper", [{"text": "looking it up"}]]]
                },
                "rubrics": [{"rubric_id": "r1", "rubric_content": {"text_property": "Names the sky."}, "type": "FINAL_RESPONSE_QUALITY"}]
            }], "session_input": {"app_name": "quickstart", "user_id": "ada", "state": {"user:last_city": "London"}}},
            {"eval_id": "events", "conversation": [{
                "user_content": {"role": "user", "parts": [{"text": "And Tokyo?"}]},
                "intermediate_data": {"invocation_events": [
                    {"author": "weather_agent", "content": {"role": "model", "parts": [{"function_call": {"name": "get_weather", "args": {"city": "Tokyo"}}}]}}
                ]}
            }]}
        ]
    }}));
    let text = written.as_str().unwrap();
    let set = EvalSet::from_json(text, "written.evalset.json").unwrap();
    let theirs = support::ask(json!({"command": "read_eval_set", "text": text}));
    assert_eq!(summarize(&set), theirs);
    let paris = &set.eval_cases[0].conversation.as_ref().unwrap()[0];
    assert_eq!(paris.invocation_id, "e-1");
    assert_eq!(paris.tool_responses()[0].response["sky"], "sunny");
    assert_eq!(
        paris.rubrics.as_ref().unwrap()[0].property(),
        "Names the sky."
    );
}

#[test]
fn result_files_are_read_and_scored_alike_by_adk_python() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let path = runtime.block_on(async {
        let model = ScriptedModel::new("scripted")
            // paris: the right call and a close answer.
            .then_call("get_weather", json!({"city": "Paris"}))
            .then_text("It is sunny in Paris today.")
            // tokyo: the wrong city, then a different answer.
            .then_call("get_weather", json!({"city": "Kyoto"}))
            .then_text("Kyoto is rainy.")
            // hello: no call, as expected, and a loose answer.
            .then_text("Hi there! Ask me about the weather.");
        let tool = ClosureTool::shared("get_weather", |_ctx, args| {
            Ok(json!({"city": args["city"], "sky": "sunny"}))
        });
        let agent = LlmAgent::builder("weather_agent")
            .model(model)
            .tool(tool)
            .build()
            .unwrap();
        let set = EvalSet::from_json(
            r#"{"eval_set_id": "weather", "eval_cases": [
              {"eval_id": "paris", "conversation": [{
                "user_content": {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
                "final_response": {"role": "model", "parts": [{"text": "It is sunny in Paris."}]},
                "intermediate_data": {"tool_uses": [{"name": "get_weather", "args": {"city": "Paris"}}]}}]},
              {"eval_id": "tokyo", "conversation": [{
                "user_content": {"role": "user", "parts": [{"text": "Weather in Tokyo?"}]},
                "final_response": {"role": "model", "parts": [{"text": "It is rainy in Tokyo."}]},
                "intermediate_data": {"tool_uses": [{"name": "get_weather", "args": {"city": "Tokyo"}}]}}]},
              {"eval_id": "hello", "conversation": [{
                "user_content": {"role": "user", "parts": [{"text": "Hello"}]},
                "final_response": {"role": "model", "parts": [{"text": "Hello! I can tell you the weather."}]}}]}
            ]}"#,
            "weather.evalset.json",
        )
        .unwrap();
        let config = EvalConfig::new([
            (
                "tool_trajectory_avg_score".to_owned(),
                Criterion::threshold(1.0).with_option("match_type", json!("IN_ORDER")),
            ),
            ("response_match_score".to_owned(), Criterion::threshold(0.5)),
        ]);
        let result = Evaluator::new("quickstart", Arc::new(agent))
            .config(config)
            .evaluate(&set)
            .await
            .unwrap();
        result.save(dir.path()).await.unwrap()
    });
    let text = std::fs::read_to_string(&path).unwrap();
    let answer = support::ask(json!({"command": "score_result", "text": text}));
    assert_eq!(answer["eval_set_id"], "weather");
    let cases = answer["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 3);
    for case in cases {
        let written = case["written"].as_object().unwrap();
        let rescored = case["rescored"].as_object().unwrap();
        assert_eq!(written.len(), 2, "{case}");
        for (metric, [score, status, _per_invocation]) in rescored.iter().map(|(name, value)| {
            (
                name,
                <[Value; 3]>::try_from(value.as_array().unwrap().clone()).unwrap(),
            )
        }) {
            assert_eq!(
                written[metric],
                json!([score, status]),
                "{metric} of {}",
                case["eval_id"]
            );
        }
        assert!(case["session_events"].as_u64().unwrap() >= 2, "{case}");
    }
    let statuses: Vec<(&str, i64)> = cases
        .iter()
        .map(|case| {
            (
                case["eval_id"].as_str().unwrap(),
                case["final_eval_status"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(statuses, [("paris", 1), ("tokyo", 2), ("hello", 2)]);
}

/// What both sides can say about an eval set: ids, texts, tool calls and starting state.
fn summarize(set: &EvalSet) -> Value {
    let cases: Vec<Value> = set
        .eval_cases
        .iter()
        .map(|case| {
            let invocations: Vec<Value> = case
                .conversation
                .iter()
                .flatten()
                .map(|invocation| {
                    let calls: Vec<Value> = invocation
                        .tool_calls()
                        .iter()
                        .map(|call| json!({"name": call.name, "args": call.args}))
                        .collect();
                    json!({"user": invocation.user_text(), "final": invocation.final_text(), "calls": calls})
                })
                .collect();
            json!({
                "eval_id": case.eval_id,
                "state": case.session_input.as_ref().map(|input| Value::Object(input.state.clone())),
                "invocations": invocations,
            })
        })
        .collect();
    json!({"eval_set_id": set.eval_set_id, "cases": cases})
}
