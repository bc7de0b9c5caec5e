//! The example on a scripted model: a trip request fans out to both scouts, the join gathers
//! their notes by name and the planner answers for the workflow; anything else takes the
//! default route to small talk. Every event names the node run it comes from.

use std::collections::BTreeSet;

use adk::core::Route;
use adk_test::{AgentRun, ScriptedModel};

#[tokio::test]
async fn a_trip_fans_out_to_the_scouts_and_the_planner_answers() {
    let model = ScriptedModel::new("scripted")
        .then_text("scout note one")
        .then_text("scout note two")
        .then_text("Day 1: the castle. Day 2: the river.");
    let agent = workflow::root_agent(model.clone()).unwrap();
    let run = AgentRun::new(agent, "A weekend trip to Lisbon?").await;
    assert!(run.error.is_none(), "{}", run.render());
    let paths: BTreeSet<&str> = run
        .events
        .iter()
        .map(|event| event.node_info.path.as_str())
        .collect();
    let expected: BTreeSet<&str> = [
        "trip_planner@1/intake@1",
        "trip_planner@1/weather_scout@1",
        "trip_planner@1/sights_scout@1",
        "trip_planner@1/gather@1",
        "trip_planner@1/planner@1",
    ]
    .into();
    assert_eq!(paths, expected);

    let intake = &run.events[0];
    assert_eq!(intake.actions.route, Some(Route::from("trip")));
    assert_eq!(
        run.session.state.get("request").and_then(|v| v.as_str()),
        Some("A weekend trip to Lisbon?")
    );

    // The join's output holds both scouts' notes by node name, and the planner read it.
    let gather = run
        .events
        .iter()
        .find(|event| event.node_info.path.as_str() == "trip_planner@1/gather@1")
        .unwrap();
    let notes = gather.output.as_ref().unwrap();
    let mut keys: Vec<&str> = notes
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["sights_scout", "weather_scout"]);
    let planner_request = model.requests().pop().unwrap();
    let brief = planner_request.contents.last().unwrap().text().unwrap();
    assert!(
        brief.contains("scout note one") && brief.contains("scout note two"),
        "{brief}"
    );

    // The planner's text is the workflow's output.
    let last = run.events.last().unwrap();
    assert_eq!(
        last.text().as_deref(),
        Some("Day 1: the castle. Day 2: the river.")
    );
    let output_for: Vec<&str> = last
        .node_info
        .output_for
        .iter()
        .flatten()
        .map(|path| path.as_str())
        .collect();
    assert_eq!(output_for, ["trip_planner@1/planner@1", "trip_planner@1"]);
}

#[tokio::test]
async fn anything_else_takes_the_default_route_to_small_talk() {
    let model = ScriptedModel::new("scripted").then_text("Hello! Shall I plan a trip?");
    let agent = workflow::root_agent(model.clone()).unwrap();
    let run = AgentRun::new(agent, "hello there").await;
    assert!(run.error.is_none(), "{}", run.render());
    let paths: Vec<&str> = run
        .events
        .iter()
        .map(|event| event.node_info.path.as_str())
        .collect();
    assert_eq!(
        paths,
        ["trip_planner@1/intake@1", "trip_planner@1/small_talk@1"]
    );
    assert_eq!(run.events[0].actions.route, None);
    assert_eq!(model.requests().len(), 1);
}

#[test]
fn trip_words_route_to_the_scouts() {
    assert_eq!(workflow::route_of("Plan my HOLIDAY"), Some("trip"));
    assert_eq!(workflow::route_of("what is 2 + 2?"), None);
}
