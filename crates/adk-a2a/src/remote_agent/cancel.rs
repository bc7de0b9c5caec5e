//! [`CancelOnDrop`]: cancels the remote task with `tasks/cancel` when a run is dropped while the
//! task still runs.

use crate::client::A2aClient;
use crate::types::{StreamEvent, TaskIdParams};

/// Watches a remote task's stream; dropped while armed, with a known task that has not ended, it
/// sends `tasks/cancel` in the background.
pub(super) struct CancelOnDrop {
    client: A2aClient,
    task: Option<String>,
    armed: bool,
}

impl CancelOnDrop {
    pub(super) fn new(client: A2aClient) -> Self {
        Self {
            client,
            task: None,
            armed: true,
        }
    }

    /// Learns the task's id from `event`, and that nothing is left to cancel once it ended.
    pub(super) fn observe(&mut self, event: &StreamEvent) {
        let task = match event {
            StreamEvent::Task(task) => Some(&task.id),
            StreamEvent::StatusUpdate(update) => Some(&update.task_id),
            StreamEvent::ArtifactUpdate(update) => Some(&update.task_id),
            StreamEvent::Message(message) => message.task_id.as_ref(),
        };
        if self.task.is_none() {
            self.task = task.cloned();
        }
        if event.ends_stream() {
            self.armed = false;
        }
    }

    /// The stream was read to its end: nothing to cancel.
    pub(super) fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let (true, Some(task)) = (self.armed, self.task.take()) else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(%task, "the run was dropped outside a runtime; the remote task is not cancelled");
            return;
        };
        let client = self.client.clone();
        runtime.spawn(async move {
            match client.cancel_task(TaskIdParams::new(task.clone())).await {
                Ok(cancelled) => {
                    tracing::debug!(%task, state = cancelled.status.state.as_str(), "cancelled the remote task");
                }
                Err(error) => tracing::warn!(%task, error = %error, "cannot cancel the remote task"),
            }
        });
    }
}
