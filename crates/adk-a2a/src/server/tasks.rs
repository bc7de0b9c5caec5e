//! The tasks a server remembers: each task's latest state, and for a running task the token that
//! cancels it and the one that says it finished.

use std::collections::{HashMap, VecDeque};

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::types::{Artifact, Task, TaskStatus};

/// One task and, while it runs, its tokens.
struct Record {
    task: Task,
    run: Option<RunHandle>,
}

/// The tokens of a running task.
#[derive(Clone)]
pub(crate) struct RunHandle {
    /// Cancelled to stop the run.
    pub(crate) cancel: CancellationToken,
    /// Cancelled by the run when it finished.
    pub(crate) done: CancellationToken,
}

/// The tasks, bounded: past the limit the oldest tasks that do not run are forgotten.
pub(crate) struct TaskStore {
    limit: usize,
    inner: Mutex<Store>,
}

#[derive(Default)]
struct Store {
    records: HashMap<String, Record>,
    order: VecDeque<String>,
}

impl TaskStore {
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            limit,
            inner: Mutex::default(),
        }
    }

    /// A copy of task `id`, its history cut to the last `history_length` messages.
    pub(crate) fn get(&self, id: &str, history_length: Option<usize>) -> Option<Task> {
        let store = self.inner.lock();
        let mut task = store.records.get(id)?.task.clone();
        if let (Some(length), Some(history)) = (history_length, task.history.as_mut()) {
            let cut = history.len().saturating_sub(length);
            history.drain(..cut);
        }
        Some(task)
    }

    /// The run handle of task `id`, while it runs.
    pub(crate) fn running(&self, id: &str) -> Option<RunHandle> {
        self.inner.lock().records.get(id)?.run.clone()
    }

    /// Records `task` as running with `run`, replacing what was known of it.
    pub(crate) fn start(&self, task: Task, run: RunHandle) {
        let mut store = self.inner.lock();
        let id = task.id.clone();
        let known = store
            .records
            .insert(
                id.clone(),
                Record {
                    task,
                    run: Some(run),
                },
            )
            .is_some();
        if !known {
            store.order.push_back(id);
        }
        self.evict(&mut store);
    }

    /// Sets task `id`'s status, moving a message of the status into the history.
    pub(crate) fn set_status(&self, id: &str, status: TaskStatus) {
        self.update(id, |task| {
            if let Some(message) = &status.message {
                task.history
                    .get_or_insert_with(Vec::new)
                    .push(message.clone());
            }
            task.status = status;
        });
    }

    /// Adds `artifact` to task `id`.
    pub(crate) fn add_artifact(&self, id: &str, artifact: Artifact) {
        self.update(id, |task| {
            task.artifacts.get_or_insert_with(Vec::new).push(artifact)
        });
    }

    /// Marks task `id` as no longer running.
    pub(crate) fn finish(&self, id: &str) {
        if let Some(record) = self.inner.lock().records.get_mut(id) {
            record.run = None;
        }
    }

    /// Changes task `id` with `change`, unless it was forgotten.
    pub(crate) fn update(&self, id: &str, change: impl FnOnce(&mut Task)) {
        if let Some(record) = self.inner.lock().records.get_mut(id) {
            change(&mut record.task);
        }
    }

    fn evict(&self, store: &mut Store) {
        let mut kept = VecDeque::new();
        while store.records.len() > self.limit {
            let Some(oldest) = store.order.pop_front() else {
                break;
            };
            if store
                .records
                .get(&oldest)
                .is_some_and(|record| record.run.is_some())
            {
                kept.push_back(oldest);
            } else {
                store.records.remove(&oldest);
            }
        }
        while let Some(id) = kept.pop_back() {
            store.order.push_front(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Message, TaskState};

    fn task(id: &str) -> Task {
        Task::new(id, "ctx", TaskStatus::new(TaskState::Completed))
    }

    fn handle() -> RunHandle {
        RunHandle {
            cancel: CancellationToken::new(),
            done: CancellationToken::new(),
        }
    }

    #[test]
    fn the_oldest_finished_tasks_are_forgotten_first() {
        let store = TaskStore::new(2);
        store.start(task("running"), handle());
        store.start(task("a"), handle());
        store.finish("a");
        store.start(task("b"), handle());
        assert!(store.get("running", None).is_some());
        assert!(store.get("a", None).is_none());
        assert!(store.get("b", None).is_some());
    }

    #[test]
    fn history_is_cut_to_the_length_asked() {
        let store = TaskStore::new(10);
        store.start(task("t"), handle());
        for text in ["one", "two", "three"] {
            let message = Message::new(
                crate::types::Role::User,
                vec![crate::types::Part::text(text)],
            );
            store.update("t", |task| {
                task.history.get_or_insert_with(Vec::new).push(message)
            });
        }
        let history = store.get("t", Some(1)).unwrap().history.unwrap();
        assert_eq!(history.len(), 1);
        assert_eq!(history[0].text().as_deref(), Some("three"));
    }
}
