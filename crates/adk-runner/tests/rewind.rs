//! Rewinding a session: the event that undoes state and artifact changes since an invocation.

mod support;

use std::sync::Arc;

use adk_core::{ArtifactService, ErrorKind, InvocationId, Part, Result};
use adk_flow::Plugin;
use adk_session::InMemoryArtifactService;
use adk_test::{ClosureTool, ScriptedModel, render_events};
use adk_tool::{Tool, ToolContext};
use async_trait::async_trait;
use expect_test::expect;
use serde_json::{Value, json};
use support::{SESSION, USER, agent, run, runner, stored};

/// Saves the `text` argument of every `note` call as a new version of `draft.txt`.
struct SaveDrafts;

#[async_trait]
impl Plugin for SaveDrafts {
    fn name(&self) -> &str {
        "save_drafts"
    }

    async fn after_tool(
        &self,
        _tool: &dyn Tool,
        args: &Value,
        ctx: &ToolContext,
        _result: &Value,
    ) -> Result<Option<Value>> {
        let text = args["text"].as_str().unwrap_or_default();
        ctx.save_artifact("draft.txt", Part::text(text)).await?;
        Ok(None)
    }
}

#[tokio::test]
async fn rewind_sets_state_and_artifacts_back_to_before_the_invocation() {
    let artifacts = Arc::new(InMemoryArtifactService::new());
    let model = ScriptedModel::new("m")
        .then_call("note", json!({"color": "red", "text": "first draft"}))
        .then_text("Noted red.")
        .then_call("note", json!({"color": "blue", "text": "second draft"}))
        .then_text("Noted blue.");
    // `note` keeps the color in session state; the second time also a new key, the user's name in
    // user state and a scratch key in temp state.
    let note = ClosureTool::shared("note", |ctx, args| {
        ctx.set_state("color", args["color"].clone())?;
        if args["color"] == json!("blue") {
            ctx.set_state("size", json!("large"))?;
            ctx.set_state("user:name", json!("Ada"))?;
            ctx.set_state("temp:scratch", json!(1))?;
        }
        Ok(json!({"saved": true}))
    });
    let saver = agent("saver", &model).tool(note).build().unwrap();
    let runner = runner(Arc::new(saver))
        .artifact_service(artifacts.clone())
        .plugin(SaveDrafts)
        .build()
        .unwrap();
    run(&runner, "Note red").await;
    let second = run(&runner, "Note blue").await;
    let blue_invocation = second.events[0].invocation_id.clone();

    let rewind = runner
        .rewind(USER, SESSION, &blue_invocation)
        .await
        .unwrap();
    expect![[r#"
        user: [color="red", size=null, artifact draft.txt v2, rewind before e-00000000-0000-4000-8000-000000000007]
    "#]]
    .assert_eq(&render_events(std::slice::from_ref(&rewind)));

    let session = stored(&runner).await;
    assert_eq!(session.state["color"], json!("red"));
    assert_eq!(session.state["size"], Value::Null);
    assert_eq!(
        session.state["user:name"],
        json!("Ada"),
        "user state is shared, not rewound"
    );
    let latest = artifacts
        .load_artifact(&session.key(), "draft.txt", None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(latest.as_text(), Some("first draft"));
    assert_eq!(session.events.last(), Some(&rewind));
}

#[tokio::test]
async fn rewinding_to_an_unknown_invocation_is_not_found() {
    let model = ScriptedModel::new("m").then_text("hi");
    let runner = runner(Arc::new(agent("a", &model).build().unwrap()))
        .build()
        .unwrap();
    run(&runner, "hello").await;
    let error = runner
        .rewind(USER, SESSION, &InvocationId::from("e-unknown"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound);
}
