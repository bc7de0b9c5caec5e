//! [`AppendQueue`]: appends committed in groups where a database has one writer (SQLite).
//!
//! With one writer, every append of the process waits for the appends before it, and each paid
//! for its own transaction: its `BEGIN IMMEDIATE`, its commit's write to the WAL, and the trips to
//! the connection's thread between them. Under many concurrent runs that queue was what kept a
//! stream's first event waiting. An append that finds the writer free still runs at once; one that
//! finds it busy waits here, and a writer task (`SqlStore::write_groups`) takes every append
//! waiting and commits them in one transaction, with a savepoint for each append that writes more
//! than its event and session rows, so one append's failure (a stale revision, a duplicate event)
//! fails only that append. An append's caller hears back after the commit: its event is stored
//! exactly when it is told so, as before. An append whose caller went away before its group
//! began is left out.

use std::fmt;

use tokio::sync::{mpsc, oneshot};

use crate::error::{Error, Result};

/// The most appends committed in one transaction, so that a group's transaction stays short.
pub(crate) const MAX_GROUP: usize = 256;

/// An append (`A`, the store's description of one) waiting for its group, and where its outcome
/// goes.
pub(crate) struct Waiting<A> {
    pub(crate) append: A,
    pub(crate) done: oneshot::Sender<Result<u64>>,
}

/// The writer task's end of an [`AppendQueue`].
pub(crate) type Waiters<A> = mpsc::UnboundedReceiver<Waiting<A>>;

/// Where appends wait for the writer task (see the module's documentation).
pub(crate) struct AppendQueue<A> {
    waiting: mpsc::UnboundedSender<Waiting<A>>,
}

impl<A> fmt::Debug for AppendQueue<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppendQueue").finish_non_exhaustive()
    }
}

impl<A> AppendQueue<A> {
    /// A queue, and the end the writer task takes its appends from.
    pub(crate) fn new() -> (Self, Waiters<A>) {
        let (waiting, waiters) = mpsc::unbounded_channel();
        (Self { waiting }, waiters)
    }

    /// Appends in the next group; returns the session's new revision once the group committed.
    /// `what` names the append in an error.
    pub(crate) async fn append(&self, what: &str, append: A) -> Result<u64> {
        let stopped = || Error::storage(what, "the session store's writer has stopped");
        let (done, outcome) = oneshot::channel();
        self.waiting
            .send(Waiting { append, done })
            .map_err(|_| stopped())?;
        outcome.await.map_err(|_| stopped())?
    }
}
