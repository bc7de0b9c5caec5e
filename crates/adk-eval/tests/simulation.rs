//! Conversation simulation: scenario cases run with a scripted model playing the user and a
//! scripted agent, the turns and scores checked, and the same files read by ADK Python.

mod support;

use std::sync::{Arc, Mutex};

use adk_eval::{
    ConversationScenario, ConversationScenarios, Criterion, EvalCase, EvalConfig, EvalError,
    EvalSet, EvalStatus, Evaluator, Judge, UserSimulatorConfig, metrics,
};
use adk_flow::LlmAgent;
use adk_test::{ClosureTool, ScriptedModel};
use serde_json::{Value, json};

/// A judge that answers from a list, in order, and keeps the prompts it was given.
#[derive(Default)]
struct ListJudge {
    answers: Mutex<Vec<&'static str>>,
    prompts: Mutex<Vec<String>>,
}

impl ListJudge {
    fn answering(answers: &[&'static str]) -> Arc<Self> {
        Arc::new(Self {
            answers: Mutex::new(answers.iter().rev().copied().collect()),
            prompts: Mutex::default(),
        })
    }
}

#[async_trait::async_trait]
impl Judge for ListJudge {
    async fn judge(&self, prompt: &str, _model: Option<&str>) -> Result<String, EvalError> {
        self.prompts.lock().unwrap().push(prompt.to_owned());
        let verdict = self
            .answers
            .lock()
            .unwrap()
            .pop()
            .expect("a judge answer left");
        Ok(format!(
            r#"{{"reasoning": "scripted", "is_valid": "{verdict}"}}"#
        ))
    }
}

fn weather_agent(model: ScriptedModel) -> LlmAgent {
    let tool = ClosureTool::shared("get_weather", |_ctx, args| {
        Ok(json!({"city": args["city"], "sky": "sunny", "celsius": 21}))
    });
    LlmAgent::builder("weather")
        .model(Arc::new(model))
        .tool(tool)
        .build()
        .unwrap()
}

fn scenario() -> ConversationScenario {
    ConversationScenario::new(
        "What's the weather in Paris?",
        "Ask for the weather in Paris, then in Tokyo. Stop once both are answered.",
    )
}

fn quality_config(threshold: f64) -> EvalConfig {
    EvalConfig::new([(
        metrics::PER_TURN_USER_SIMULATOR_QUALITY_V1.to_owned(),
        Criterion::threshold(threshold)
            .with_option("judge_model_options", json!({"num_samples": 1})),
    )])
}

#[tokio::test]
async fn a_simulated_user_drives_the_agent_until_it_ends_the_conversation() {
    let agent_model = ScriptedModel::new("agent")
        .then_call("get_weather", json!({"city": "Paris"}))
        .then_text("Paris is sunny, 21 °C.")
        .then_text("Tokyo is rainy.");
    let user = Arc::new(
        ScriptedModel::new("user")
            .then_text("And in Tokyo?")
            .then_text("Thanks! </finished>"),
    );
    let judge = ListJudge::answering(&["valid", "valid"]);
    let set = EvalSet::new(
        "weather",
        vec![EvalCase::simulated("two-cities", scenario())],
    );
    let result = Evaluator::new("weather", Arc::new(weather_agent(agent_model)))
        .config(quality_config(0.8))
        .user_simulator(user.clone())
        .judge(judge.clone())
        .evaluate(&set)
        .await
        .unwrap();

    let case = &result.eval_case_results[0];
    assert_eq!(case.error_message, None);
    let turns: Vec<(String, String)> = case
        .eval_metric_result_per_invocation
        .iter()
        .map(|turn| {
            (
                turn.actual_invocation.user_text(),
                turn.actual_invocation.final_text(),
            )
        })
        .collect();
    assert_eq!(
        turns,
        [
            (
                "What's the weather in Paris?".to_owned(),
                "Paris is sunny, 21 °C.".to_owned()
            ),
            ("And in Tokyo?".to_owned(), "Tokyo is rainy.".to_owned()),
        ]
    );
    assert_eq!(
        case.eval_metric_result_per_invocation[0]
            .actual_invocation
            .tool_calls()[0]
            .args["city"],
        "Paris"
    );

    // The starting prompt is sent as written; the simulator is asked twice, each time with the
    // plan and the conversation so far.
    let asked = user.requests();
    assert_eq!(asked.len(), 2);
    let first = asked[0].contents[0].text().unwrap();
    assert!(first.contains("then in Tokyo"), "{first}");
    assert!(
        first.contains("user: What's the weather in Paris?\n\nweather: Paris is sunny, 21 °C."),
        "{first}"
    );
    assert!(
        !first.contains("get_weather"),
        "tools are left out unless asked for: {first}"
    );
    let second = asked[1].contents[0].text().unwrap();
    assert!(
        second.contains("user: And in Tokyo?\n\nweather: Tokyo is rainy."),
        "{second}"
    );

    // The first turn is scored without the judge; the second and the ending are judged.
    let quality = &case.overall_eval_metric_results[0];
    assert_eq!(
        quality.metric_name,
        metrics::PER_TURN_USER_SIMULATOR_QUALITY_V1
    );
    assert_eq!(quality.score, Some(1.0));
    assert_eq!(quality.eval_status, EvalStatus::Passed);
    let prompts = judge.prompts.lock().unwrap();
    assert_eq!(prompts.len(), 2);
    assert!(
        prompts[0].contains("Next user message: \"And in Tokyo?\""),
        "{}",
        prompts[0]
    );
    assert!(
        prompts[1].contains("Next user message: \"</finished>\""),
        "{}",
        prompts[1]
    );
    assert!(
        prompts[1].contains("agent: Tokyo is rainy."),
        "{}",
        prompts[1]
    );
    assert!(result.passed());
}

#[tokio::test]
async fn a_wrong_ending_fails_the_last_turn() {
    let agent_model = ScriptedModel::new("agent").then_text("Which city?");
    let user = ScriptedModel::new("user").then_text("</finished>");
    let set = EvalSet::new("weather", vec![EvalCase::simulated("quits", scenario())]);
    let result = Evaluator::new("weather", Arc::new(weather_agent(agent_model)))
        .config(quality_config(0.8))
        .user_simulator(Arc::new(user))
        .judge(ListJudge::answering(&["invalid"]))
        .evaluate(&set)
        .await
        .unwrap();
    let case = &result.eval_case_results[0];
    let quality = &case.overall_eval_metric_results[0];
    // One turn, started right, but ended too early: the ending's verdict replaces it.
    assert_eq!(quality.score, Some(0.0));
    assert_eq!(quality.eval_status, EvalStatus::Failed);
    assert_eq!(
        case.eval_metric_result_per_invocation[0].eval_metric_results[0].eval_status,
        EvalStatus::Failed
    );
    assert!(!result.passed());
}

#[tokio::test]
async fn the_conversation_stops_at_the_limit_of_user_messages() {
    let mut agent_model = ScriptedModel::new("agent");
    let mut user = ScriptedModel::new("user");
    for _ in 0..5 {
        agent_model = agent_model.then_text("Could you say that again?");
        user = user.then_text("The weather in Paris, please.");
    }
    let user = Arc::new(user);
    let set = EvalSet::new("weather", vec![EvalCase::simulated("loop", scenario())]);
    let config = EvalConfig::new([])
        .with_user_simulator_config(UserSimulatorConfig::default().with_max_allowed_invocations(3));
    let result = Evaluator::new("weather", Arc::new(weather_agent(agent_model)))
        .config(config)
        .user_simulator(user.clone())
        .evaluate(&set)
        .await
        .unwrap();
    let case = &result.eval_case_results[0];
    assert_eq!(case.eval_metric_result_per_invocation.len(), 3);
    assert_eq!(
        user.requests().len(),
        2,
        "the starting prompt needs no model call"
    );
}

#[tokio::test]
async fn a_scenario_case_without_a_simulator_fails_and_says_why() {
    let agent_model = ScriptedModel::new("agent").then_text("Hello.");
    let set = EvalSet::new(
        "weather",
        vec![
            EvalCase::simulated("simulated", scenario()),
            EvalCase::new("scripted", Vec::new()),
        ],
    );
    let evaluator = Evaluator::new("weather", Arc::new(weather_agent(agent_model)));
    let (message, cases) = first_case_error(evaluator, &set).await;
    assert!(
        message.contains("simulated") && message.contains("Evaluator::user_simulator"),
        "{message}"
    );
    assert_eq!(cases, 2, "the other cases still run");
}

/// The error message of `set`'s first case under `evaluator`, and how many cases ran.
async fn first_case_error(evaluator: Evaluator, set: &EvalSet) -> (String, usize) {
    let result = evaluator.evaluate(set).await.unwrap();
    let message = result.eval_case_results[0]
        .error_message
        .clone()
        .expect("the case failed with a message");
    (message, result.eval_case_results.len())
}

#[tokio::test]
async fn a_failing_simulator_model_fails_the_case_not_the_eval() {
    let agent_model = ScriptedModel::new("agent").then_text("Paris is sunny.");
    let user = ScriptedModel::new("user").then_fail("quota exhausted");
    let set = EvalSet::new("weather", vec![EvalCase::simulated("broken", scenario())]);
    let evaluator = Evaluator::new("weather", Arc::new(weather_agent(agent_model)))
        .user_simulator(Arc::new(user));
    let (message, _) = first_case_error(evaluator, &set).await;
    assert!(
        message.contains("user simulator") && message.contains("quota exhausted"),
        "{message}"
    );
}

#[test]
fn adk_python_reads_the_same_scenarios_eval_set_and_config() {
    let scenarios = r#"{"scenarios": [
        {"starting_prompt": "What's the weather in Paris?",
         "conversation_plan": "Ask for Paris, then Tokyo, then stop.",
         "user_persona": {"id": "terse", "description": "Says little.",
           "behaviors": [{"name": "short", "description": "Short replies.",
             "behavior_instructions": ["Five words or fewer."],
             "violation_rubrics": ["A message of more than five words."]}]}},
        {"starting_prompt": "Hi", "conversation_plan": "Say hello, then stop."}
    ]}"#;
    let ours = ConversationScenarios::from_json(scenarios, "weather.scenarios.json").unwrap();
    let cases: Vec<EvalCase> = ours
        .scenarios
        .iter()
        .enumerate()
        .map(|(index, scenario)| EvalCase::simulated(format!("case-{index}"), scenario.clone()))
        .collect();
    let eval_set = serde_json::to_string(&EvalSet::new("weather", cases)).unwrap();
    let config = r#"{"criteria": {"per_turn_user_simulator_quality_v1": {"threshold": 0.8,
        "judge_model_options": {"num_samples": 1}, "stop_signal": "</finished>"}},
        "user_simulator_config": {"type": "llm_backed", "model": "gemini-2.5-flash",
          "max_allowed_invocations": 6, "include_function_calls": true}}"#;
    let parsed = EvalConfig::from_json(config, "test_config.json").unwrap();
    let simulator = parsed.user_simulator_config.as_ref().unwrap();
    assert_eq!(simulator.max_allowed_invocations, 6);
    assert!(simulator.include_function_calls);

    let theirs = support::ask(json!({
        "command": "read_scenarios",
        "scenarios": scenarios,
        "eval_set": eval_set,
        "config": config,
    }));
    for (index, scenario) in ours.scenarios.iter().enumerate() {
        let their = &theirs["scenarios"][index];
        assert_eq!(their["starting_prompt"], scenario.starting_prompt.as_str());
        assert_eq!(
            their["conversation_plan"],
            scenario.conversation_plan.as_str()
        );
        assert_eq!(
            their["persona"],
            scenario
                .user_persona
                .as_ref()
                .map_or(Value::Null, |persona| json!(persona.id))
        );
        assert_eq!(
            theirs["eval_set_plans"][index],
            scenario.conversation_plan.as_str()
        );
    }
    let our_metrics: Vec<(String, f64)> = parsed
        .criteria
        .iter()
        .map(|(name, criterion)| (name.clone(), criterion.threshold))
        .collect();
    assert_eq!(
        theirs["config"],
        json!({"max_allowed_invocations": simulator.max_allowed_invocations,
               "include_function_calls": simulator.include_function_calls,
               "model": simulator.model,
               "metrics": our_metrics})
    );
}
