//! Running a task: a message starts a new task or continues one waiting for input, runs the app's
//! agent tree once on the context's session, and turns its events into A2A stream events, which
//! also update the task store.
//!
//! As in ADK Python's executor, every event with content becomes a `working` status update; the
//! task's final state is the most serious one seen (failed, then auth- or input-required, then
//! working), and a run that ends still working completes the task with its last message as the
//! artifact.
//!
//! A task runs as the caller's user (or `A2A_USER_<context>` when the server authenticates no
//! one), holding a place among the runs at once and its session's lock from before its message
//! is stored until its run ends; a stream reader that does not take an event within the write
//! timeout is let go, so a slow reader never holds the task or its cancellation.

use std::sync::Arc;
use std::time::Duration;

use adk_core::{CreateSessionRequest, ErrorKind, Event, GetSessionRequest, RunConfig, SessionKey};
use adk_gate::Caller;
use adk_runner::{RunRequest, RunStream};
use adk_session::{LockError, SessionLease};
use axum::response::Response;
use futures::StreamExt as _;
use http::StatusCode;
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, mpsc};
use tokio_util::sync::CancellationToken;

use super::Inner;
use super::http_error::{http_error, unavailable};
use super::idempotency;
use super::tasks::RunHandle;
use crate::convert::{self, event_to_message, message_to_content};
use crate::types::{
    Artifact, JsonRpcError, Message, MessageSendParams, Metadata, Part, Role, StreamEvent, Task,
    TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent, error_codes,
};

/// The prefix of the users A2A contexts run as, as ADK Python names them.
const USER_PREFIX: &str = "A2A_USER_";

/// The longest context id accepted; it becomes a session id.
const MAX_CONTEXT_ID_LEN: usize = 256;

/// How many stream events may wait for a slow client before the run waits for it.
const STREAM_BUFFER: usize = 64;

/// A started task: its id, and its stream events as they come. The task runs on whether or not
/// the events are read.
pub(super) struct Started {
    pub(super) task_id: String,
    pub(super) events: mpsc::Receiver<StreamEvent>,
}

/// Why a message was not run: a JSON-RPC error, or an HTTP answer (the server is full, the
/// session busy) that a client retries.
pub(super) enum Refusal {
    Rpc(JsonRpcError),
    Http(Response),
}

impl From<JsonRpcError> for Refusal {
    fn from(error: JsonRpcError) -> Self {
        Self::Rpc(error)
    }
}

/// What a task's run holds while it goes on: its place among the runs at once and its session's
/// lock. Dropping it frees both.
struct Admission {
    _lease: SessionLease,
    _permit: OwnedSemaphorePermit,
}

/// A task being started: what it was before this message, to put back if the run cannot start.
enum Before {
    New,
    Continued(Box<Task>),
}

/// Checks `params`, takes a place among the runs and the session's lock, stores the user's
/// message in the context's session and starts the run; every failure here is a JSON-RPC error
/// or an HTTP refusal and leaves nothing running.
pub(super) async fn start(
    inner: &Arc<Inner>,
    params: MessageSendParams,
    caller: &Caller,
    idempotency_key: Option<String>,
) -> Result<Started, Refusal> {
    let mut message = params.message;
    if message.role != Role::User {
        return Err(invalid_params("a message sent to an agent must have role \"user\"").into());
    }
    // A retry finds what its first attempt stored in the context's session, under the session's
    // lock, so it waits for an attempt still running.
    let mut early = None;
    if let Some(idempotency_key) = &idempotency_key
        && let Some(key) = session_of(inner, &message, caller)
    {
        let admission = admit(inner, &key).await?;
        if let Some(task) = idempotency::stored_task(inner, caller, &key, idempotency_key).await? {
            return Ok(replayed(inner, task, &key.user_id));
        }
        early = Some((key, admission));
    }
    let (task_id, context_id, continued) = task_of(inner, &message, caller)?;
    message.task_id = Some(task_id.clone());
    message.context_id = Some(context_id.clone());
    let content = message_to_content(&message);
    if content.parts.is_empty() {
        return Err(invalid_params(
            "the message holds no part that can be read: send text, a file or data",
        )
        .into());
    }

    // A continued task goes on as the user it belongs to; a new one belongs to the caller's user.
    let user = match &continued {
        Some(_) => inner
            .tasks
            .owner(&task_id)
            .ok_or_else(|| task_not_found(&task_id))?,
        None => user_of(caller, &context_id),
    };
    let key = SessionKey::new(inner.runner.app_name(), user, context_id.clone());
    let admission = match early {
        Some((locked, admission)) if locked == key => admission,
        _ => admit(inner, &key).await?,
    };
    ensure_session(inner, &key).await?;

    let handle = RunHandle {
        cancel: CancellationToken::new(),
        done: CancellationToken::new(),
    };
    // The task is recorded as running before the message is stored, so that a store full of
    // running tasks refuses the message before anything is stored.
    let (first, before) = match continued {
        Some(mut task) => {
            let before = Before::Continued(Box::new(task.clone()));
            task.status = TaskStatus::new(TaskState::Working);
            task.history.get_or_insert_with(Vec::new).push(message);
            let update =
                TaskStatusUpdateEvent::new(&task_id, &context_id, task.status.clone(), false);
            inner
                .tasks
                .start(task, &key.user_id, handle.clone())
                .map_err(|_| store_full(inner))?;
            (StreamEvent::StatusUpdate(update), before)
        }
        None => {
            let mut task = Task::new(&task_id, &context_id, TaskStatus::new(TaskState::Submitted));
            task.history = Some(vec![message]);
            inner
                .tasks
                .start(task.clone(), &key.user_id, handle.clone())
                .map_err(|_| store_full(inner))?;
            (StreamEvent::Task(task), Before::New)
        }
    };
    let mut request = RunRequest::new(key.user_id.clone(), key.session_id.clone()).message(content);
    if let Some(idempotency_key) = &idempotency_key {
        let mut config = RunConfig::default();
        idempotency::mark(&mut config.custom_metadata, idempotency_key, &task_id);
        request = request.run_config(config);
    }
    let run = match inner.runner.start(request).await {
        Ok(run) => run,
        Err(error) => {
            match before {
                Before::New => inner.tasks.forget(&task_id),
                Before::Continued(task) => {
                    let owner = key.user_id.clone();
                    inner.tasks.update(&task_id, |stored| *stored = *task);
                    inner.tasks.finish(&task_id);
                    tracing::debug!(task = %task_id, %owner, "the continued task is back as it was");
                }
            }
            let code = match error.kind() {
                ErrorKind::InvalidInput => error_codes::INVALID_PARAMS,
                _ => error_codes::INTERNAL_ERROR,
            };
            return Err(JsonRpcError::new(code, error.message()).into());
        }
    };

    let (sender, events) = mpsc::channel(STREAM_BUFFER);
    let driver = Driver {
        inner: inner.clone(),
        task_id: task_id.clone(),
        context_id,
        key,
        sender: Some(sender),
        cancel: handle.cancel.clone(),
        write_timeout: inner.write_timeout,
        state: TaskState::Working,
        last_message: None,
    };
    tokio::spawn(driver.run(run, first, handle, admission));
    Ok(Started { task_id, events })
}

/// The session a message goes to, when it names one: its context's, or its task's.
fn session_of(inner: &Inner, message: &Message, caller: &Caller) -> Option<SessionKey> {
    let (user, context_id) = match &message.task_id {
        Some(task_id) => {
            let task = inner.tasks.get(task_id, None, caller)?;
            (inner.tasks.owner(task_id)?, task.context_id)
        }
        None => {
            let context_id = check_context_id(message.context_id.as_deref()?).ok()?;
            (user_of(caller, &context_id), context_id)
        }
    };
    Some(SessionKey::new(inner.runner.app_name(), user, context_id))
}

/// A retried message's answer: the task its first attempt stored, held in the store (as
/// finished) so that `tasks/get` finds it, and sent as the stream's one event.
fn replayed(inner: &Inner, task: Task, owner: &str) -> Started {
    if inner.tasks.owner(&task.id).is_none() {
        let handle = RunHandle {
            cancel: CancellationToken::new(),
            done: CancellationToken::new(),
        };
        if inner.tasks.start(task.clone(), owner, handle).is_ok() {
            inner.tasks.finish(&task.id);
        }
    }
    let (sender, events) = mpsc::channel(1);
    let task_id = task.id.clone();
    // The channel has room for this one event and no reader yet: sending cannot fail.
    let _ = sender.try_send(StreamEvent::Task(task));
    Started { task_id, events }
}

/// The user a new task of `caller` runs as: its principal's user, or, when the server
/// authenticates no one, `A2A_USER_<context>` as ADK Python names it.
fn user_of(caller: &Caller, context_id: &str) -> String {
    match caller.user_id() {
        Some(user) => user.to_owned(),
        None => format!("{USER_PREFIX}{context_id}"),
    }
}

/// A place among the runs at once (503 with `Retry-After` when there is none), then the session's
/// lock (409 when another run held it for the whole wait, 503 when the lock store cannot answer).
async fn admit(inner: &Inner, key: &SessionKey) -> Result<Admission, Refusal> {
    let permit = inner.runs.clone().try_acquire_owned().map_err(|_| {
        Refusal::Http(unavailable(
            inner.retry_after,
            "too_many_runs",
            "this server already runs as many invocations at once as it may; retry later",
        ))
    })?;
    let lease = inner.locks.lock(key).await.map_err(|error| {
        Refusal::Http(match error {
            LockError::Busy { .. } => {
                http_error(StatusCode::CONFLICT, "session_busy", &error.to_string())
            }
            error => unavailable(
                inner.retry_after,
                "session_store_unavailable",
                &error.to_string(),
            ),
        })
    })?;
    Ok(Admission {
        _lease: lease,
        _permit: permit,
    })
}

fn store_full(inner: &Inner) -> Refusal {
    Refusal::Http(unavailable(
        inner.retry_after,
        "too_many_tasks",
        "this server holds as many running tasks as its task store keeps; retry later",
    ))
}

/// The task a message belongs to: the one it names, when that one is the caller's and waits for
/// input, else a new one; with its context, and the task itself when it is continued.
fn task_of(
    inner: &Inner,
    message: &Message,
    caller: &Caller,
) -> Result<(String, String, Option<Task>), JsonRpcError> {
    let Some(task_id) = &message.task_id else {
        let context_id = match &message.context_id {
            Some(context_id) => check_context_id(context_id)?,
            None => uuid::Uuid::new_v4().to_string(),
        };
        return Ok((uuid::Uuid::new_v4().to_string(), context_id, None));
    };
    let task = inner
        .tasks
        .get(task_id, None, caller)
        .ok_or_else(|| task_not_found(task_id))?;
    if let Some(context_id) = &message.context_id
        && context_id != &task.context_id
    {
        return Err(invalid_params(format!(
            "task '{task_id}' belongs to context '{}', not to context '{context_id}'",
            task.context_id
        )));
    }
    if inner.tasks.running(task_id).is_some() {
        return Err(invalid_params(format!(
            "task '{task_id}' is still running; wait for it to finish or to ask for input"
        )));
    }
    if task.status.state.is_terminal() {
        return Err(invalid_params(format!(
            "task '{task_id}' is {}; a finished task takes no more messages, start a new one",
            task.status.state.as_str()
        )));
    }
    Ok((task_id.clone(), task.context_id.clone(), Some(task)))
}

fn check_context_id(context_id: &str) -> Result<String, JsonRpcError> {
    if context_id.is_empty()
        || context_id.len() > MAX_CONTEXT_ID_LEN
        || context_id.chars().any(char::is_control)
    {
        return Err(invalid_params(format!(
            "contextId must be 1 to {MAX_CONTEXT_ID_LEN} characters without control characters"
        )));
    }
    Ok(context_id.to_owned())
}

/// Creates the context's session when it does not exist yet.
async fn ensure_session(inner: &Inner, key: &SessionKey) -> Result<(), Refusal> {
    let sessions = inner.runner.session_service();
    let internal =
        |error: adk_core::Error| JsonRpcError::new(error_codes::INTERNAL_ERROR, error.message());
    let existing = sessions
        .get_session(GetSessionRequest::new(key.clone()).recent(1))
        .await
        .map_err(internal)?;
    if existing.is_none() {
        sessions
            .create_session(
                CreateSessionRequest::new(key.app_name.clone(), key.user_id.clone())
                    .with_session_id(key.session_id.clone()),
            )
            .await
            .map_err(internal)?;
    }
    Ok(())
}

/// Runs one task to its end, sending its stream events and recording them in the store.
struct Driver {
    inner: Arc<Inner>,
    task_id: String,
    context_id: String,
    key: SessionKey,
    /// The stream's reader, until it went away or stopped reading.
    sender: Option<mpsc::Sender<StreamEvent>>,
    /// Fires when the task is cancelled.
    cancel: CancellationToken,
    /// How long an event may wait for the reader.
    write_timeout: Duration,
    state: TaskState,
    last_message: Option<Message>,
}

impl Driver {
    async fn run(
        mut self,
        mut run: RunStream,
        first: StreamEvent,
        handle: RunHandle,
        admission: Admission,
    ) {
        self.send(first).await;
        let mut working = TaskStatusUpdateEvent::new(
            &self.task_id,
            &self.context_id,
            TaskStatus::new(TaskState::Working),
            false,
        );
        working.metadata = Some(self.session_metadata());
        self.inner
            .tasks
            .set_status(&self.task_id, working.status.clone());
        self.send(StreamEvent::StatusUpdate(working)).await;

        let mut last_event: Option<Event> = None;
        let cancelled = loop {
            let next = tokio::select! {
                next = run.next() => next,
                () = handle.cancel.cancelled() => break true,
            };
            match next {
                None => break false,
                Some(Ok(event)) => {
                    self.on_event(&event).await;
                    last_event = Some(event);
                }
                Some(Err(error)) => {
                    tracing::warn!(task = %self.task_id, error = %error, "the agent failed while running an A2A task");
                    self.state = TaskState::Failed;
                    self.last_message = Some(agent_message(error.message()));
                    break false;
                }
            }
        };
        // Dropping the run's stream cancels whatever of it still runs; then the session is
        // unlocked and the run's place freed.
        drop(run);
        drop(admission);
        if cancelled {
            self.state = TaskState::Canceled;
            self.last_message = None;
        }
        self.finish(last_event.as_ref()).await;
        self.inner.tasks.finish(&self.task_id);
        handle.done.cancel();
    }

    /// One event of the run: a `working` status update with its content, remembering the most
    /// serious state it signals.
    async fn on_event(&mut self, event: &Event) {
        if event.is_partial() {
            return;
        }
        let mut signalled = TaskState::Working;
        let message = if let Some(code) = &event.response.error_code {
            signalled = TaskState::Failed;
            let text = event
                .response
                .error_message
                .clone()
                .unwrap_or_else(|| code.clone());
            Some(agent_message(&text))
        } else {
            event_to_message(event)
        };
        let Some(mut message) = message else {
            return;
        };
        message.task_id = Some(self.task_id.clone());
        message.context_id = Some(self.context_id.clone());
        if signalled == TaskState::Working {
            signalled = state_of(&message);
        }
        self.state = most_serious(self.state, signalled);
        if self.state == TaskState::Working || signalled == self.state {
            self.last_message = Some(message.clone());
        }
        let mut update = TaskStatusUpdateEvent::new(
            &self.task_id,
            &self.context_id,
            TaskStatus::new(TaskState::Working).with_message(message),
            false,
        );
        update.metadata = Some(self.event_metadata(event));
        self.inner
            .tasks
            .set_status(&self.task_id, update.status.clone());
        self.send(StreamEvent::StatusUpdate(update)).await;
    }

    /// The end of the run: the last message as an artifact and `completed`, or the final state
    /// with its message.
    async fn finish(&mut self, last_event: Option<&Event>) {
        let mut metadata = self.session_metadata();
        if let Some(event) = last_event {
            metadata.extend(self.event_metadata(event));
        }
        let mut state = self.state;
        let mut status_message = self.last_message.take();
        if state == TaskState::Working {
            state = TaskState::Completed;
            if let Some(message) = status_message
                .take()
                .filter(|message| !message.parts.is_empty())
            {
                let artifact = Artifact::new(message.parts);
                let mut update =
                    TaskArtifactUpdateEvent::new(&self.task_id, &self.context_id, artifact.clone());
                update.metadata = Some(metadata.clone());
                self.inner.tasks.add_artifact(&self.task_id, artifact);
                self.send(StreamEvent::ArtifactUpdate(update)).await;
            }
        }
        let mut status = TaskStatus::new(state);
        status.message = status_message;
        let mut update =
            TaskStatusUpdateEvent::new(&self.task_id, &self.context_id, status.clone(), true);
        update.metadata = Some(metadata);
        // The status message is already in the history, from the update that carried it.
        self.inner
            .tasks
            .update(&self.task_id, |task| task.status = status);
        self.send(StreamEvent::StatusUpdate(update)).await;
    }

    /// Sends `event` to whoever reads the task's stream. A reader that went away does not stop
    /// the task, nor does one that does not take the event within the write timeout: it is let
    /// go (its stream ends, and `tasks/get` shows the task). A cancellation does not wait for a
    /// slow reader either.
    async fn send(&mut self, event: StreamEvent) {
        let Some(sender) = &self.sender else {
            return;
        };
        if self.cancel.is_cancelled() {
            // A cancelled task waits for no reader: what does not fit now is left out, and a
            // reader with no room is let go.
            if sender.try_send(event).is_err() {
                self.sender = None;
            }
            return;
        }
        let sent = tokio::select! {
            sent = tokio::time::timeout(self.write_timeout, sender.send(event)) => sent,
            () = self.cancel.cancelled() => {
                self.sender = None;
                return;
            }
        };
        match sent {
            Ok(Ok(())) => {}
            Ok(Err(_)) => self.sender = None,
            Err(_) => {
                tracing::warn!(
                    task = %self.task_id,
                    timeout = ?self.write_timeout,
                    "an A2A stream reader stopped reading; it is let go and the task goes on"
                );
                self.sender = None;
            }
        }
    }

    fn session_metadata(&self) -> Metadata {
        Metadata::from_iter([
            (
                "adk_app_name".to_owned(),
                Value::from(self.key.app_name.clone()),
            ),
            (
                "adk_user_id".to_owned(),
                Value::from(self.key.user_id.clone()),
            ),
            (
                "adk_session_id".to_owned(),
                Value::from(self.key.session_id.as_str()),
            ),
        ])
    }

    fn event_metadata(&self, event: &Event) -> Metadata {
        let mut metadata = self.session_metadata();
        metadata.insert(
            "adk_invocation_id".to_owned(),
            Value::from(event.invocation_id.as_str()),
        );
        metadata.insert("adk_author".to_owned(), Value::from(event.author.clone()));
        metadata.insert("adk_event_id".to_owned(), Value::from(event.id.as_str()));
        if let Some(branch) = &event.branch {
            metadata.insert("adk_branch".to_owned(), Value::from(branch.clone()));
        }
        metadata
    }
}

/// The state a message of the agent signals: input required when it holds a long-running call
/// (auth required when that call asks for credentials), working otherwise.
fn state_of(message: &Message) -> TaskState {
    let long_running: Vec<&Part> = message
        .parts
        .iter()
        .filter(|part| convert::is_long_running_call(part))
        .collect();
    if long_running.is_empty() {
        return TaskState::Working;
    }
    let asks_credentials = long_running.iter().any(|part| match part {
        Part::Data(data) => {
            data.data.get("name").and_then(Value::as_str) == Some("adk_request_credential")
        }
        _ => false,
    });
    if asks_credentials {
        TaskState::AuthRequired
    } else {
        TaskState::InputRequired
    }
}

/// The more serious of two states: failed, then auth required, then input required, then working.
fn most_serious(current: TaskState, signalled: TaskState) -> TaskState {
    let rank = |state: TaskState| match state {
        TaskState::Failed => 3,
        TaskState::AuthRequired => 2,
        TaskState::InputRequired => 1,
        _ => 0,
    };
    if rank(signalled) > rank(current) {
        signalled
    } else {
        current
    }
}

fn agent_message(text: &str) -> Message {
    Message::new(Role::Agent, vec![Part::text(text)])
}

pub(super) fn invalid_params(message: impl Into<String>) -> JsonRpcError {
    JsonRpcError::new(error_codes::INVALID_PARAMS, message)
}

pub(super) fn task_not_found(task_id: &str) -> JsonRpcError {
    JsonRpcError::new(
        error_codes::TASK_NOT_FOUND,
        format!("no task '{task_id}'; it never existed or was forgotten"),
    )
}
