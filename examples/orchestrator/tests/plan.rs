//! The example on a scripted model: a two-city plan runs its lookups, the packing list and the
//! note, and the answer shows the note.

use adk::testing::ScriptedModel;
use adk_test::AgentRun;

#[tokio::test]
async fn a_two_city_trip_is_planned_and_run() {
    let plan = r#"<tasks>
      <task id="w1" type="lookup" processor="weather" priority="1"><metadata><item key="city">Paris</item></metadata></task>
      <task id="w2" type="lookup" processor="weather" priority="1"><metadata><item key="city">Tokyo</item></metadata></task>
      <task id="pack" type="pack" processor="packing" priority="2"><dependencies><dep>w1</dep><dep>w2</dep></dependencies></task>
      <task id="note" type="write" processor="writer" priority="3"><dependencies><dep>w1</dep><dep>w2</dep><dep>pack</dep></dependencies></task>
    </tasks>"#;
    let model = ScriptedModel::new("scripted")
        .then_text(plan)
        .then_text("Pack an umbrella for Tokyo and sunglasses for Paris.");
    let agent = orchestrator::root_agent(model.clone()).unwrap();
    let run = AgentRun::new(agent, "Paris and Tokyo next week: what should I pack?").await;
    assert!(run.error.is_none(), "{}", run.render());
    let answer = run.events.last().unwrap().text().unwrap();
    assert!(
        answer.starts_with("Pack an umbrella for Tokyo and sunglasses for Paris."),
        "{answer}"
    );
    assert!(
        answer.contains("4 of 4 tasks completed in 3 phase(s)"),
        "{answer}"
    );
    // The writer saw only its task, with the packing list the closure made.
    let writer_request = &model.requests()[1];
    assert_eq!(writer_request.contents.len(), 1);
    let brief = writer_request.contents[0].text().unwrap();
    assert!(brief.contains("umbrella (for Tokyo)"), "{brief}");
    assert!(brief.contains("sunglasses (for Paris)"), "{brief}");
}
