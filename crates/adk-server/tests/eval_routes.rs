//! The eval routes over real HTTP on loopback: an eval set made from a session, its cases read,
//! changed and deleted, a run scored and its result saved where ADK Python's local managers keep
//! results, ADK's status codes for what is missing, and the body's user checked when a session is
//! added.

mod support;

use adk_test::ScriptedModel;
use reqwest::Method;
use serde_json::{Value, json};
use support::{APP, TestServer, USER, run_body};

const EVALS: &str = "/dev/apps/weather";

/// A model that answers one weather turn with a tool call, then the same turn again when the
/// eval replays it.
fn weather_model() -> ScriptedModel {
    ScriptedModel::new("scripted")
        .then_call("get_weather", json!({"city": "Paris"}))
        .then_text("It is sunny in Paris.")
        .then_call("get_weather", json!({"city": "Paris"}))
        .then_text("Sunny in Paris today.")
}

#[tokio::test]
async fn a_session_becomes_a_case_that_runs_and_scores() {
    let server = TestServer::start(weather_model()).await;
    assert_eq!(
        server.get(&format!("{EVALS}/eval_sets")).await,
        (200, json!([]))
    );
    assert_eq!(
        server.get(&format!("{EVALS}/eval-sets")).await,
        (200, json!({"evalSetIds": []}))
    );

    // Create, as the Evals tab does, then once more (ADK answers 400), and with a bad id.
    let create = json!({"eval_set": {"eval_set_id": "weather_set", "eval_cases": []}});
    let (status, created) = server
        .post(&format!("{EVALS}/eval-sets"), create.clone())
        .await;
    assert_eq!(status, 200, "{created}");
    assert_eq!(created["eval_set_id"], "weather_set");
    assert_eq!(created["name"], "weather_set");
    assert_eq!(created["eval_cases"], json!([]));
    let (status, again) = server.post(&format!("{EVALS}/eval-sets"), create).await;
    assert_eq!(
        (status, again["detail"].clone()),
        (
            400,
            json!("eval set `weather_set` already exists in app `weather`")
        )
    );
    let (status, _) = server
        .post(
            &format!("{EVALS}/eval-sets"),
            json!({"eval_set": {"eval_set_id": "bad-id"}}),
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        server.get(&format!("{EVALS}/eval_sets")).await,
        (200, json!(["weather_set"]))
    );

    // A conversation, added as a case.
    server.create_session("s1").await;
    let (status, _) = server
        .post("/run", run_body("s1", "Weather in Paris?"))
        .await;
    assert_eq!(status, 200);
    let add = |eval_id: &str, session: &str| json!({"evalId": eval_id, "sessionId": session, "userId": USER});
    let path = format!("{EVALS}/eval_sets/weather_set/add_session");
    assert_eq!(
        server.post(&path, add("paris", "s1")).await,
        (200, Value::Null)
    );
    let (status, duplicate) = server.post(&path, add("paris", "s1")).await;
    assert_eq!(status, 400, "{duplicate}");
    assert_eq!(server.post(&path, add("other", "missing")).await.0, 404);
    let (status, missing_set) = server
        .post(
            &format!("{EVALS}/eval_sets/nope/add_session"),
            add("x", "s1"),
        )
        .await;
    assert_eq!(
        (status, missing_set["detail"].clone()),
        (404, json!("no eval set `nope` in app `weather`"))
    );

    // The case, in camelCase, with the session's turn as its conversation.
    assert_eq!(
        server
            .get(&format!("{EVALS}/eval_sets/weather_set/evals"))
            .await,
        (200, json!(["paris"]))
    );
    let (status, case) = server
        .get(&format!("{EVALS}/eval_sets/weather_set/evals/paris"))
        .await;
    assert_eq!(status, 200, "{case}");
    assert_eq!(case["evalId"], "paris");
    assert_eq!(
        case["sessionInput"],
        json!({"appName": APP, "userId": USER})
    );
    let turn = &case["conversation"][0];
    assert_eq!(turn["userContent"]["parts"][0]["text"], "Weather in Paris?");
    assert_eq!(
        turn["finalResponse"]["parts"][0]["text"],
        "It is sunny in Paris."
    );
    let events = turn["intermediateData"]["invocationEvents"]
        .as_array()
        .unwrap();
    assert_eq!(
        events[0]["content"]["parts"][0]["functionCall"]["args"],
        json!({"city": "Paris"})
    );
    assert_eq!(
        server
            .get(&format!("{EVALS}/eval-sets/weather_set/eval-cases/paris"))
            .await
            .1,
        case
    );
    assert_eq!(
        server
            .get(&format!("{EVALS}/eval_sets/weather_set/evals/zz"))
            .await
            .0,
        404
    );
    assert_eq!(
        server.get(&format!("{EVALS}/eval_sets/nope/evals")).await.0,
        400
    );

    // The file is ADK's: snake_case, where ADK Python's local manager looks for it.
    let file = server.eval_dir().join("weather/weather_set.evalset.json");
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(stored["eval_cases"][0]["eval_id"], "paris");

    // Updating: the path's id wins, another id in the body is refused, a missing case is 404.
    let case_path = format!("{EVALS}/eval_sets/weather_set/evals/paris");
    assert_eq!(
        server.send(Method::PUT, &case_path, case.clone()).await,
        (200, Value::Null)
    );
    let mut renamed = case.clone();
    renamed["evalId"] = json!("other");
    assert_eq!(server.send(Method::PUT, &case_path, renamed).await.0, 400);
    let mut other = case.clone();
    other["evalId"] = json!("zz");
    assert_eq!(
        server
            .send(
                Method::PUT,
                &format!("{EVALS}/eval_sets/weather_set/evals/zz"),
                other
            )
            .await
            .0,
        404
    );

    // The metrics the run dialog offers, then a run with two of them.
    let (status, info) = server.get(&format!("{EVALS}/metrics-info")).await;
    assert_eq!(status, 200);
    let names: Vec<&str> = info["metricsInfo"]
        .as_array()
        .unwrap()
        .iter()
        .map(|metric| metric["metricName"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["tool_trajectory_avg_score", "response_match_score"]);
    let run = json!({"eval_case_ids": [], "eval_metrics": [
        {"metric_name": "tool_trajectory_avg_score", "threshold": 1.0},
        {"metricName": "response_match_score", "threshold": 0.3},
    ]});
    let (status, ran) = server
        .post(&format!("{EVALS}/eval-sets/weather_set/run"), run.clone())
        .await;
    assert_eq!(status, 200, "{ran}");
    let result = &ran["runEvalResults"][0];
    assert_eq!(result["evalId"], "paris");
    assert_eq!(result["evalSetId"], "weather_set");
    assert_eq!(result["finalEvalStatus"], 1, "{result}");
    let overall = result["overallEvalMetricResults"].as_array().unwrap();
    assert_eq!(overall[0]["metricName"], "tool_trajectory_avg_score");
    assert_eq!(overall[0]["score"], 1.0);
    assert_eq!(overall[0]["evalStatus"], 1);
    let rouge = overall[1]["score"].as_f64().unwrap();
    assert!(rouge > 0.3 && rouge < 1.0, "{rouge}");
    let actual = &result["evalMetricResultPerInvocation"][0]["actualInvocation"];
    assert_eq!(
        actual["finalResponse"]["parts"][0]["text"],
        "Sunny in Paris today."
    );
    // The case ran in a session of the app's service, which the Evals tab shows.
    let session = result["sessionId"].as_str().unwrap();
    assert!(session.starts_with("adk-eval-session-"), "{session}");
    assert_eq!(result["userId"], USER);
    let (status, ran_session) = server
        .get(&format!("/apps/{APP}/users/{USER}/sessions/{session}"))
        .await;
    assert_eq!(status, 200, "{ran_session}");
    assert_eq!(ran_session["events"].as_array().unwrap().len(), 4);
    assert_eq!(
        server
            .post(&format!("{EVALS}/eval-sets/nope/run"), run.clone())
            .await
            .0,
        400
    );
    let unknown = json!({"eval_metrics": [{"metric_name": "no_such_metric", "threshold": 1}]});
    let (status, refused) = server
        .post(&format!("{EVALS}/eval-sets/weather_set/run"), unknown)
        .await;
    assert_eq!(status, 400, "{refused}");

    // The result, listed and read back under both spellings.
    let (status, ids) = server.get(&format!("{EVALS}/eval_results")).await;
    assert_eq!(status, 200);
    let id = ids[0].as_str().unwrap().to_owned();
    assert!(id.starts_with("weather_weather_set_"), "{id}");
    assert_eq!(
        server.get(&format!("{EVALS}/eval-results")).await,
        (200, json!({"evalResultIds": [id.clone()]}))
    );
    let (status, stored) = server.get(&format!("{EVALS}/eval_results/{id}")).await;
    assert_eq!(status, 200, "{stored}");
    assert_eq!(stored["evalSetResultId"], id.as_str());
    assert_eq!(
        stored["evalCaseResults"][0]["overallEvalMetricResults"][0]["score"],
        1.0
    );
    assert_eq!(
        server.get(&format!("{EVALS}/eval-results/{id}")).await.1,
        stored
    );
    let (status, missing) = server.get(&format!("{EVALS}/eval_results/missing")).await;
    assert_eq!(
        (status, missing["detail"].clone()),
        (404, json!("no eval result `missing` in app `weather`"))
    );
    assert!(
        server
            .eval_dir()
            .join(format!(
                "weather/.adk/eval_history/{id}.evalset_result.json"
            ))
            .exists()
    );

    // Deleting the case, then the set.
    assert_eq!(
        server.send(Method::DELETE, &case_path, Value::Null).await,
        (200, Value::Null)
    );
    assert_eq!(
        server.send(Method::DELETE, &case_path, Value::Null).await.0,
        404
    );
    let set_path = format!("{EVALS}/eval-sets/weather_set");
    assert_eq!(
        server.send(Method::DELETE, &set_path, Value::Null).await,
        (200, Value::Null)
    );
    assert_eq!(
        server.send(Method::DELETE, &set_path, Value::Null).await.0,
        404
    );
    assert_eq!(
        server.get(&format!("{EVALS}/eval_sets")).await,
        (200, json!([]))
    );
}

#[tokio::test]
async fn a_scenario_case_runs_with_the_simulated_user() {
    // One script for the agent and the simulated user, in the order they are asked: the agent
    // answers the starting prompt, the user asks on, the agent answers, the user ends.
    let model = ScriptedModel::new("scripted")
        .then_text("Paris is sunny.")
        .then_text("And Tokyo?")
        .then_text("Tokyo is rainy.")
        .then_text("</finished>");
    let server = TestServer::start(model).await;
    let set = json!({"eval_set_id": "simulated", "eval_cases": [{
        "eval_id": "two_cities",
        "conversation_scenario": {
            "starting_prompt": "Weather in Paris?",
            "conversation_plan": "Ask for Paris, then Tokyo, then stop.",
            "user_persona": {"id": "terse", "description": "Says little.", "behaviors": [
                {"name": "short", "description": "Short replies.",
                 "behavior_instructions": ["Five words or fewer."], "violation_rubrics": []}]}
        },
        "session_input": {"app_name": APP, "user_id": USER, "state": {}}
    }]});
    let file = server.eval_dir().join("weather/simulated.evalset.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, set.to_string()).unwrap();

    // The case as ADK's routes answer it: the scenario's fields in camelCase, the persona's as
    // they are.
    let (status, case) = server
        .get(&format!("{EVALS}/eval_sets/simulated/evals/two_cities"))
        .await;
    assert_eq!(status, 200, "{case}");
    let scenario = &case["conversationScenario"];
    assert_eq!(scenario["startingPrompt"], "Weather in Paris?");
    assert_eq!(
        scenario["userPersona"]["behaviors"][0]["behavior_instructions"],
        json!(["Five words or fewer."])
    );

    let run = json!({"eval_metrics": [{"metric_name": "response_match_score", "threshold": 0.5}]});
    let (status, ran) = server
        .post(&format!("{EVALS}/eval-sets/simulated/run"), run)
        .await;
    assert_eq!(status, 200, "{ran}");
    let result = &ran["runEvalResults"][0];
    assert_eq!(result.get("errorMessage"), None, "{result}");
    let turns: Vec<(&str, &str)> = result["evalMetricResultPerInvocation"]
        .as_array()
        .unwrap()
        .iter()
        .map(|turn| {
            let invocation = &turn["actualInvocation"];
            (
                invocation["userContent"]["parts"][0]["text"]
                    .as_str()
                    .unwrap(),
                invocation["finalResponse"]["parts"][0]["text"]
                    .as_str()
                    .unwrap(),
            )
        })
        .collect();
    assert_eq!(
        turns,
        [
            ("Weather in Paris?", "Paris is sunny."),
            ("And Tokyo?", "Tokyo is rainy.")
        ]
    );
    // Nothing to compare the answers with in a scenario: not evaluated, as in ADK.
    assert_eq!(result["overallEvalMetricResults"][0]["evalStatus"], 3);
}

#[tokio::test]
async fn names_that_could_escape_the_folder_are_refused() {
    let server = TestServer::start(ScriptedModel::new("scripted")).await;
    for path in [
        format!("{EVALS}/eval_sets/..%2Fescape/evals"),
        format!("{EVALS}/eval_results/..%2F..%2Fsecret"),
        "/dev/apps/..%2Fother/eval_sets".to_owned(),
    ] {
        let (status, answer) = server.get(&path).await;
        assert!(status == 400 || status == 404, "{path}: {status} {answer}");
    }
    assert_eq!(server.get("/dev/apps/unknown/eval_sets").await.0, 404);
}
