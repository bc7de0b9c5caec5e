//! The tasks a server remembers: each task's latest state, the user it belongs to, and for a
//! running task the token that cancels it and the one that says it finished.
//!
//! The store is bounded by count and by bytes, running tasks included: past either bound the
//! oldest tasks that do not run are forgotten; a task that grows past its own byte limit loses its
//! oldest history (the newest messages and the artifacts stay); and a new task is refused while
//! the running ones alone fill the store.

use std::collections::{HashMap, VecDeque};
use std::io;

use adk_gate::Caller;
use parking_lot::Mutex;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

#[cfg(test)]
use crate::types::Message;
use crate::types::{Artifact, Part, Task, TaskStatus};

/// One task, who it belongs to, what it costs and, while it runs, its tokens.
struct Record {
    task: Task,
    owner: String,
    run: Option<RunHandle>,
    bytes: usize,
}

/// The tokens of a running task.
#[derive(Clone)]
pub(crate) struct RunHandle {
    /// Cancelled to stop the run.
    pub(crate) cancel: CancellationToken,
    /// Cancelled by the run when it finished.
    pub(crate) done: CancellationToken,
}

/// The limits of a [`TaskStore`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct TaskLimits {
    /// How many tasks are remembered.
    pub(crate) tasks: usize,
    /// How many bytes of tasks are remembered, all together.
    pub(crate) bytes: usize,
    /// How many bytes one task may hold before its oldest history is dropped.
    pub(crate) task_bytes: usize,
}

/// The tasks, bounded by count and bytes.
pub(crate) struct TaskStore {
    limits: TaskLimits,
    inner: Mutex<Store>,
}

#[derive(Default)]
struct Store {
    records: HashMap<String, Record>,
    order: VecDeque<String>,
    bytes: usize,
}

/// The store cannot take another task: the running ones fill it.
#[derive(Debug)]
pub(crate) struct StoreFull;

impl TaskStore {
    pub(crate) fn new(limits: TaskLimits) -> Self {
        Self {
            limits,
            inner: Mutex::default(),
        }
    }

    /// A copy of task `id`, its history cut to the last `history_length` messages, when `caller`
    /// may see it; a task of another user is as good as unknown.
    pub(crate) fn get(
        &self,
        id: &str,
        history_length: Option<usize>,
        caller: &Caller,
    ) -> Option<Task> {
        let store = self.inner.lock();
        let record = store.records.get(id)?;
        if !caller.may_act_for(&record.owner) {
            return None;
        }
        let mut task = record.task.clone();
        if let (Some(length), Some(history)) = (history_length, task.history.as_mut()) {
            let cut = history.len().saturating_sub(length);
            history.drain(..cut);
        }
        Some(task)
    }

    /// The user task `id` belongs to.
    pub(crate) fn owner(&self, id: &str) -> Option<String> {
        Some(self.inner.lock().records.get(id)?.owner.clone())
    }

    /// The run handle of task `id`, while it runs.
    pub(crate) fn running(&self, id: &str) -> Option<RunHandle> {
        self.inner.lock().records.get(id)?.run.clone()
    }

    /// Records `task` of user `owner` as running with `run`, replacing what was known of it;
    /// fails when as many tasks run as the store can hold at their full size.
    pub(crate) fn start(&self, task: Task, owner: &str, run: RunHandle) -> Result<(), StoreFull> {
        let mut store = self.inner.lock();
        let id = task.id.clone();
        let running = store
            .records
            .values()
            .filter(|record| record.run.is_some() && record.task.id != id)
            .count();
        // Each running task may grow to its own bound and cannot be forgotten, so the store
        // holds only as many as fit whole.
        let max_running =
            (self.limits.bytes / self.limits.task_bytes.max(1)).clamp(1, self.limits.tasks);
        if running >= max_running {
            return Err(StoreFull);
        }
        let bytes = task_bytes(&task);
        let record = Record {
            task,
            owner: owner.to_owned(),
            run: Some(run),
            bytes,
        };
        match store.records.insert(id.clone(), record) {
            Some(old) => store.bytes -= old.bytes,
            None => store.order.push_back(id.clone()),
        }
        store.bytes += bytes;
        self.trim(&mut store, &id);
        self.evict(&mut store);
        Ok(())
    }

    /// Sets task `id`'s status, moving a message of the status into the history. What the task
    /// costs changes by what was added and replaced, so a long task is not measured whole again.
    pub(crate) fn set_status(&self, id: &str, status: TaskStatus) {
        let added = json_size(&status) + status.message.as_ref().map_or(0, json_size);
        self.change(id, added, |task| {
            let replaced = json_size(&task.status);
            if let Some(message) = &status.message {
                task.history
                    .get_or_insert_with(Vec::new)
                    .push(message.clone());
            }
            task.status = status;
            replaced
        });
    }

    /// Adds `artifact` to task `id`.
    pub(crate) fn add_artifact(&self, id: &str, artifact: Artifact) {
        let added = json_size(&artifact);
        self.change(id, added, |task| {
            task.artifacts.get_or_insert_with(Vec::new).push(artifact);
            0
        });
    }

    /// Forgets task `id` (one whose run could not start).
    pub(crate) fn forget(&self, id: &str) {
        let mut store = self.inner.lock();
        if let Some(record) = store.records.remove(id) {
            store.bytes -= record.bytes;
            store.order.retain(|kept| kept != id);
        }
    }

    /// Marks task `id` as no longer running.
    pub(crate) fn finish(&self, id: &str) {
        let mut store = self.inner.lock();
        if let Some(record) = store.records.get_mut(id) {
            record.run = None;
        }
        self.evict(&mut store);
    }

    /// Changes task `id` with `change`, unless it was forgotten, keeping it within its bound (the
    /// task is measured whole again: for changes of any kind, seldom made).
    pub(crate) fn update(&self, id: &str, change: impl FnOnce(&mut Task)) {
        let mut store = self.inner.lock();
        let Some(record) = store.records.get_mut(id) else {
            return;
        };
        change(&mut record.task);
        let before = record.bytes;
        record.bytes = task_bytes(&record.task);
        let after = record.bytes;
        store.bytes = store.bytes - before + after;
        self.trim(&mut store, id);
        self.evict(&mut store);
    }

    /// Changes task `id` with `change`, which adds `added` bytes and returns how many it
    /// replaced; then keeps the task and the store within their bounds.
    fn change(&self, id: &str, added: usize, change: impl FnOnce(&mut Task) -> usize) {
        let mut store = self.inner.lock();
        let Some(record) = store.records.get_mut(id) else {
            return;
        };
        let replaced = change(&mut record.task);
        let before = record.bytes;
        record.bytes = (before + added).saturating_sub(replaced);
        let after = record.bytes;
        store.bytes = (store.bytes + after).saturating_sub(before);
        self.trim(&mut store, id);
        self.evict(&mut store);
    }

    /// How many bytes the remembered tasks hold.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.inner.lock().bytes
    }

    /// Keeps task `id` within its own bound: its oldest history goes first; then what is still
    /// too large (a huge artifact or status message) is replaced by a note saying so. What was
    /// dropped was sent on the task's stream as it came; only `tasks/get` no longer shows it.
    fn trim(&self, store: &mut Store, id: &str) {
        let limit = self.limits.task_bytes;
        let Some(record) = store.records.get_mut(id) else {
            return;
        };
        if record.bytes <= limit {
            return;
        }
        let before = record.bytes;
        let mut bytes = before;
        if let Some(history) = record.task.history.as_mut() {
            let mut cut = 0;
            while bytes > limit && cut < history.len() {
                bytes = bytes.saturating_sub(json_size(&history[cut]));
                cut += 1;
            }
            history.drain(..cut);
        }
        if bytes > limit {
            // The history alone could not make room: a huge artifact or status message.
            let note = |bytes: usize| {
                vec![Part::text(format!(
                    "[{bytes} bytes not kept: more than this server keeps of one task; they \
                     were sent on the task's stream]"
                ))]
            };
            for artifact in record.task.artifacts.iter_mut().flatten() {
                let bytes = json_size(&artifact.parts);
                if bytes > limit / 2 {
                    artifact.parts = note(bytes);
                }
            }
            if let Some(message) = record.task.status.message.as_mut() {
                let bytes = json_size(&message.parts);
                if bytes > limit / 2 {
                    message.parts = note(bytes);
                }
            }
            bytes = task_bytes(&record.task);
        }
        record.bytes = bytes;
        tracing::debug!(
            task = id,
            before,
            after = bytes,
            "a task was cut to its bound"
        );
        store.bytes = (store.bytes + bytes).saturating_sub(before);
    }

    /// Forgets the oldest tasks that do not run while the store holds too many or too many bytes.
    fn evict(&self, store: &mut Store) {
        let mut kept = VecDeque::new();
        while store.records.len() > self.limits.tasks || store.bytes > self.limits.bytes {
            let Some(oldest) = store.order.pop_front() else {
                break;
            };
            if store
                .records
                .get(&oldest)
                .is_some_and(|record| record.run.is_some())
            {
                kept.push_back(oldest);
            } else if let Some(record) = store.records.remove(&oldest) {
                store.bytes -= record.bytes;
            }
        }
        while let Some(id) = kept.pop_back() {
            store.order.push_front(id);
        }
    }
}

/// About how many bytes a task holds: the length of its JSON.
fn task_bytes(task: &Task) -> usize {
    json_size(task)
}

/// The length of `value`'s JSON, counted without writing it anywhere.
fn json_size<T: Serialize>(value: &T) -> usize {
    struct Counter(usize);
    impl io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Protocol types of JSON values always serialize.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

/// The size of a message, for messages about the store.
#[cfg(test)]
fn message_bytes(message: &Message) -> usize {
    json_size(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Role, TaskState};

    fn task(id: &str) -> Task {
        Task::new(id, "ctx", TaskStatus::new(TaskState::Completed))
    }

    fn handle() -> RunHandle {
        RunHandle {
            cancel: CancellationToken::new(),
            done: CancellationToken::new(),
        }
    }

    fn store(tasks: usize, bytes: usize, task_bytes: usize) -> TaskStore {
        TaskStore::new(TaskLimits {
            tasks,
            bytes,
            task_bytes,
        })
    }

    fn text(text: &str) -> Message {
        Message::new(Role::User, vec![Part::text(text)])
    }

    #[test]
    fn the_oldest_finished_tasks_are_forgotten_first() {
        let store = store(2, usize::MAX, 1 << 20);
        let open = Caller::open();
        store.start(task("running"), "u", handle()).unwrap();
        store.start(task("a"), "u", handle()).unwrap();
        store.finish("a");
        store.start(task("b"), "u", handle()).unwrap();
        assert!(store.get("running", None, &open).is_some());
        assert!(store.get("a", None, &open).is_none());
        assert!(store.get("b", None, &open).is_some());
        // Both remembered tasks run: a third cannot start.
        assert!(store.start(task("c"), "u", handle()).is_err());
    }

    #[test]
    fn history_is_cut_to_the_length_asked() {
        let store = store(10, usize::MAX, usize::MAX);
        store.start(task("t"), "u", handle()).unwrap();
        for word in ["one", "two", "three"] {
            store.update("t", |task| {
                task.history.get_or_insert_with(Vec::new).push(text(word))
            });
        }
        let history = store
            .get("t", Some(1), &Caller::open())
            .unwrap()
            .history
            .unwrap();
        assert_eq!(history.len(), 1);
        assert_eq!(history[0].text().as_deref(), Some("three"));
    }

    #[test]
    fn a_task_of_another_user_is_unknown_to_a_caller() {
        let store = store(10, usize::MAX, usize::MAX);
        store.start(task("t"), "ada", handle()).unwrap();
        let ada =
            Caller::authenticated(std::sync::Arc::new(adk_gate::Principal::new("ada")), false);
        let bob =
            Caller::authenticated(std::sync::Arc::new(adk_gate::Principal::new("bob")), false);
        let admin =
            Caller::authenticated(std::sync::Arc::new(adk_gate::Principal::new("root")), true);
        assert!(store.get("t", None, &ada).is_some());
        assert!(store.get("t", None, &bob).is_none());
        assert!(store.get("t", None, &admin).is_some());
        assert_eq!(store.owner("t").as_deref(), Some("ada"));
    }

    #[test]
    fn security_resource_bounds_running_tasks_are_bounded_by_bytes_too() {
        let message = text(&"x".repeat(10_000));
        let one = message_bytes(&message);
        // Each task may hold about three messages; the store about ten.
        let store = store(1_000, 10 * one + 2_000, 3 * one + 500);
        store.start(task("a"), "u", handle()).unwrap();
        for _ in 0..50 {
            store.set_status(
                "a",
                TaskStatus::new(TaskState::Working).with_message(message.clone()),
            );
        }
        let kept = store.get("a", None, &Caller::open()).unwrap();
        assert!(
            kept.history.unwrap().len() <= 3,
            "a running task keeps its newest history only"
        );
        assert!(store.bytes() <= 10 * one + 2_000);

        // Running tasks that fill the store keep new ones out rather than grow past the bound.
        let mut refused = 0;
        let huge = text(&"y".repeat(100 * one));
        for index in 0..20 {
            let id = format!("t{index}");
            if store.start(task(&id), "u", handle()).is_err() {
                refused += 1;
                continue;
            }
            for _ in 0..3 {
                store.set_status(
                    &id,
                    TaskStatus::new(TaskState::Working).with_message(message.clone()),
                );
            }
            store.add_artifact(&id, Artifact::new(huge.parts.clone()));
        }
        assert!(refused > 0);
        assert!(store.bytes() <= 10 * one + 2_000, "{}", store.bytes());
    }
}
