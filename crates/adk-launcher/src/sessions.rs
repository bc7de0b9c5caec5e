//! `sessions resume <app> <user> <session>`: continues the invocation of a stored session that a
//! crash cut off, from its last stored event (`Runner::resume_interrupted`), and prints what it
//! answers; says so when the session's last invocation had ended.

use std::sync::Arc;

use adk_core::{PartData, StreamingMode};
use adk_tool::Tool;
use futures::StreamExt as _;

use crate::apps;
use crate::args::ResumeArgs;
use crate::error::{Context as _, LaunchError, LaunchErrorKind};
use crate::store;
use crate::terminal::printable;

pub(crate) async fn resume(
    apps: &[apps::App],
    function_tools: &[Arc<dyn Tool>],
    args: ResumeArgs,
) -> Result<(), LaunchError> {
    let app = apps::choose(apps, Some(&args.app))?;
    let built = apps::build(
        std::slice::from_ref(&app),
        &args.model,
        function_tools,
        true,
    )
    .await?;
    let services = store::open(&args.services).await?;
    let (app_name, agent) = built.apps[0].clone();
    let runner = services.runner(&app_name, agent, false, false, built.overflow_summarizer())?;
    let resumed = runner
        .resume_interrupted(
            args.user.as_str(),
            args.session.as_str(),
            // Streamed, as `run` asks its model; the partial events are not printed.
            built.run_config().with_streaming_mode(StreamingMode::Sse),
        )
        .await
        .context(LaunchErrorKind::Run, || {
            format!("cannot resume session {} of {}", args.session, args.user)
        })?;
    let Some(mut events) = resumed else {
        println!(
            "adk: session {} of {} in {app_name} has nothing to resume: its last invocation ended",
            args.session, args.user
        );
        return Ok(());
    };
    let invocation = events
        .invocation_id()
        .map(ToString::to_string)
        .unwrap_or_default();
    println!(
        "adk: resuming invocation {invocation} of session {}",
        args.session
    );
    while let Some(event) = events.next().await {
        let event = event.context(LaunchErrorKind::Run, || {
            format!("the resumed invocation {invocation} failed")
        })?;
        if event.is_partial() {
            continue;
        }
        for part in event
            .content()
            .map(|content| content.parts.as_slice())
            .unwrap_or_default()
        {
            let line = match &part.data {
                PartData::Text(text) if !part.thought => text.clone(),
                PartData::FunctionCall(call) => format!("[calls {}]", call.name),
                PartData::FunctionResponse(response) => format!("[{} answered]", response.name),
                _ => continue,
            };
            println!("{}: {}", printable(&event.author), printable(&line));
        }
    }
    runner.close().await.context(LaunchErrorKind::Run, || {
        "cannot close the runner".to_owned()
    })
}
