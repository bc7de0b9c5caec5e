//! An agent on a scripted model with a skill toolset on a real skill folder: the skills are listed
//! in its instruction, and the model loads one and reads one of its files on demand.

mod support;

use std::sync::Arc;

use adk_test::{AgentRun, ScriptedModel};
use adk_tool::skills::SkillToolset;
use serde_json::{Value, json};
use support::agent;

#[tokio::test]
async fn a_skill_is_listed_then_loaded_and_its_reference_read_in_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let skill = dir.path().join("release-notes");
    std::fs::create_dir_all(skill.join("references")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: release-notes\ndescription: Writes release notes from a list of changes.\n---\n\
         Read references/style.md, then write one line per change.\n",
    )
    .unwrap();
    std::fs::write(skill.join("references/style.md"), "Use the past tense.").unwrap();
    let skills = SkillToolset::from_dir(dir.path()).await.unwrap();

    let model = ScriptedModel::new("gemini-2.5-flash")
        .then_call("load_skill", json!({"skill_name": "release-notes"}))
        .then_call(
            "load_skill_resource",
            json!({"skill_name": "release-notes", "file_path": "references/style.md"}),
        )
        .then_text("- Fixed the login page.");
    let writer = agent("writer", &model)
        .toolset(Arc::new(skills))
        .build()
        .unwrap();
    let run = AgentRun::new(Arc::new(writer), "Notes for: fix login page").await;
    assert!(run.error.is_none(), "{:?}", run.error);

    let requests = model.requests();
    let instruction = requests[0]
        .system_instruction
        .as_deref()
        .unwrap_or_default();
    assert!(
        instruction.contains("<name>\nrelease-notes\n</name>"),
        "{instruction}"
    );
    let responses: Vec<Value> = run
        .session
        .events
        .iter()
        .flat_map(|event| event.function_responses().cloned().collect::<Vec<_>>())
        .map(|response| Value::Object(response.response))
        .collect();
    assert_eq!(
        responses[0]["instructions"],
        "Read references/style.md, then write one line per change."
    );
    assert_eq!(responses[1]["content"], "Use the past tense.");
    // The loaded instructions reach the model in the next request's history.
    let last = requests[1].contents.last().unwrap();
    assert!(format!("{last:?}").contains("one line per change"));
}
