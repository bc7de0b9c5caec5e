//! The run of an invocation's agent: the run-level plugin hooks around it, each event through
//! the on-event hooks into storage, and events compaction after it.

use std::sync::Arc;

use adk_core::{Error, Event, InvocationContext, Result};
use async_stream::try_stream;
use futures::{Stream, StreamExt as _};

use super::Inner;
use crate::persist::persist_event;

impl Inner {
    /// Runs the invocation's agent between the run-level plugin hooks, storing each event.
    pub(super) fn run_agent(
        self: &Arc<Self>,
        ctx: InvocationContext,
    ) -> impl Stream<Item = Result<Event>> + Send + 'static {
        let inner = self.clone();
        // The larger futures it awaits (the hooks before the run, storing each event, compaction)
        // are boxed: this stream's state is as large as the largest of them, and it waits on the
        // agent for most of the run.
        try_stream! {
            let before = Box::pin(inner.before_run(&ctx)).await;
            match before {
                Ok(Some(event)) => {
                    yield *event;
                    return;
                }
                Ok(None) => {}
                Err(error) => {
                    inner.on_run_error(&ctx, &error).await;
                    Err(error)?;
                }
            }
            let mut events = ctx.agent().clone().run(ctx.clone());
            let mut failure = None;
            loop {
                let Some(event) = events.next().await else {
                    break;
                };
                let accepted = Box::pin(inner.accept_event(&ctx, event)).await;
                match accepted {
                    Ok(event) => yield *event,
                    Err(error) => {
                        failure = Some(error);
                        break;
                    }
                }
            }
            // The agent's stream is dropped before the error hooks run, so nothing of the failed
            // run is still going on when they see it.
            drop(events);
            if let Some(error) = failure {
                inner.on_run_error(&ctx, &error).await;
                Err(error)?;
            }
            for plugin in inner.plugins.iter() {
                plugin.after_run(&ctx).await?;
            }
            Box::pin(inner.compact(&ctx)).await;
        }
    }

    /// After an invocation, appends the compaction event the config calls for, if any. It is not
    /// yielded: the invocation's answer is already out. A failure is logged and loses nothing, as
    /// the events stay and the next invocation tries again.
    async fn compact(&self, ctx: &InvocationContext) {
        let Some(config) = &self.compaction else {
            return;
        };
        // The window is copied under the session lock, which is not held while the summary is
        // written.
        let Some(window) = ctx.with_session(|session| config.window(&session.events)) else {
            return;
        };
        let stored = match config.summarize(&window).await {
            Ok(Some(event)) => {
                let mut event = event;
                event.id = self.services.ids.event_id();
                event.invocation_id = self.services.ids.invocation_id();
                event.timestamp = self.services.clock.now();
                persist_event(&self.sessions, ctx, &event).await
            }
            Ok(None) => Ok(()),
            Err(error) => Err(error),
        };
        if let Err(error) = stored {
            tracing::warn!(%error, "events compaction failed; the events stay as they are");
        }
    }

    /// The before-run hooks: the first plugin that returns content ends the run with it, as an
    /// event of the root agent that is stored and yielded.
    async fn before_run(&self, ctx: &InvocationContext) -> Result<Option<Box<Event>>> {
        for plugin in self.plugins.iter() {
            if let Some(content) = plugin.before_run(ctx).await? {
                let mut event = ctx
                    .with_agent(self.tree.root().clone())
                    .new_event()
                    .with_content(content);
                event.add_run_metadata(&ctx.run_config().custom_metadata);
                persist_event(&self.sessions, ctx, &event).await?;
                return Ok(Some(Box::new(event)));
            }
        }
        Ok(None)
    }

    /// One event of the agent: the on-event hooks (the first that returns an event replaces it),
    /// the run's custom metadata, then storage unless it is partial.
    async fn accept_event(
        &self,
        ctx: &InvocationContext,
        event: Result<Event>,
    ) -> Result<Box<Event>> {
        // Boxed: the run's stream holds it across its yield, and inline it would take room in
        // that stream's state for the whole run.
        let mut event = Box::new(event?);
        for plugin in self.plugins.iter() {
            if let Some(replaced) = plugin.on_event(ctx, &event).await? {
                *event = replaced;
                break;
            }
        }
        event.add_run_metadata(&ctx.run_config().custom_metadata);
        if !event.is_partial() {
            persist_event(&self.sessions, ctx, &event).await?;
        }
        Ok(event)
    }

    /// Tells every plugin that the run failed; a plugin's own failure here is logged, as the run's
    /// error is the one to report.
    async fn on_run_error(&self, ctx: &InvocationContext, error: &Error) {
        for plugin in self.plugins.iter() {
            if let Err(hook_error) = plugin.on_run_error(ctx, error).await {
                tracing::warn!(plugin = plugin.name(), error = %hook_error, "on_run_error hook failed");
            }
        }
    }
}
