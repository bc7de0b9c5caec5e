//! [`InvocationControl`]: what the crates of adk-rs do to an invocation that agents and tools
//! never do themselves: end or pause it, count its model calls, apply stored events to its
//! session, keep invocation-wide data, and checkpoint agents' progress.
//!
//! It is public only so that sibling crates (the flow, the runner, the orchestrator) can reach
//! it; it is hidden from the documentation and not part of the API: it may change in any release.

use std::any::TypeId;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::{AgentProgress, InvocationContext};
use crate::{Agent, Error, ErrorKind, Result, Session};

/// The invocation's controls, for the crates of adk-rs only.
pub trait InvocationControl {
    /// Ends the invocation: no agent takes another step after the current one.
    fn end_invocation(&self);

    /// Marks the invocation paused: an agent yielded an event after which it
    /// [should pause](InvocationContext::should_pause_after). The agents on the path of that
    /// event stop and do not checkpoint that they ended, so the invocation can resume there.
    fn pause(&self);

    /// Counts one model call, failing with [`ErrorKind::LlmCallsLimitExceeded`] past the limit.
    fn count_llm_call(&self) -> Result<()>;

    /// Changes the session (the runner applies stored events through it).
    fn with_session_mut<R>(&self, change: impl FnOnce(&mut Session) -> R) -> R;

    /// Data of type `T` that every context of this invocation shares, made with `T::default()` on
    /// first use: invocation-scoped caches of upper layers (the flow keeps the history it built
    /// for each branch, so that each step only adds what is new).
    fn invocation_data<T: Default + Send + Sync + 'static>(&self) -> Arc<T>;

    /// The progress agent `agent_name` checkpointed in this invocation.
    fn agent_progress(&self, agent_name: &str) -> Option<AgentProgress>;

    /// Records the progress of `agent_name`; `None` forgets it.
    fn set_agent_progress(&self, agent_name: &str, progress: Option<AgentProgress>);

    /// Forgets the progress of every agent below `agent_name`, so that they start afresh (a loop
    /// agent's next iteration).
    fn reset_sub_agent_progress(&self, agent_name: &str);
}

impl InvocationControl for InvocationContext {
    fn end_invocation(&self) {
        self.invocation.ended.store(true, Ordering::Release);
    }

    fn pause(&self) {
        self.invocation.paused.store(true, Ordering::Release);
    }

    fn count_llm_call(&self) -> Result<()> {
        let limit = self.run_config().max_llm_calls;
        let calls = self.invocation.llm_calls.fetch_add(1, Ordering::AcqRel) + 1;
        if limit > 0 && calls > limit {
            return Err(Error::new(
                ErrorKind::LlmCallsLimitExceeded,
                format!(
                    "the invocation exceeded its limit of {limit} model calls; raise RunConfig::max_llm_calls if this is expected"
                ),
            ));
        }
        Ok(())
    }

    fn with_session_mut<R>(&self, change: impl FnOnce(&mut Session) -> R) -> R {
        change(&mut self.invocation.session.write())
    }

    fn invocation_data<T: Default + Send + Sync + 'static>(&self) -> Arc<T> {
        let shared = self
            .invocation
            .data
            .lock()
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Arc::new(T::default()))
            .clone();
        shared
            .downcast::<T>()
            .unwrap_or_else(|_| unreachable!("the entry of a TypeId holds that type"))
    }

    fn agent_progress(&self, agent_name: &str) -> Option<AgentProgress> {
        self.invocation
            .agent_progress
            .lock()
            .get(agent_name)
            .cloned()
    }

    fn set_agent_progress(&self, agent_name: &str, progress: Option<AgentProgress>) {
        let mut all = self.invocation.agent_progress.lock();
        match progress {
            Some(progress) => all.insert(agent_name.to_owned(), progress),
            None => all.remove(agent_name),
        };
    }

    fn reset_sub_agent_progress(&self, agent_name: &str) {
        let Some(agent) = self.agent_tree().find(agent_name) else {
            return;
        };
        let mut all = self.invocation.agent_progress.lock();
        let mut pending: Vec<&Arc<dyn Agent>> = agent.sub_agents().iter().collect();
        while let Some(sub_agent) = pending.pop() {
            all.remove(sub_agent.name());
            pending.extend(sub_agent.sub_agents());
        }
    }
}
