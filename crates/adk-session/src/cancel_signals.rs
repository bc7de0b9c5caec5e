//! [`CancelBoard`]: the cancel requests of each session, announced in the process to the runs
//! that subscribed to them (`SessionService::cancel_signals`), so that a run learns of a request
//! when it is made instead of polling the store. Every session store keeps one; the PostgreSQL
//! store also feeds it the requests other processes announce (`postgres::listener`).

use std::collections::HashMap;
use std::sync::Arc;

use adk_core::{CancelSignals, SessionKey};
use futures::StreamExt as _;
use parking_lot::Mutex;
use tokio::sync::watch;

/// The subscribers to each session's cancel requests in this process.
#[derive(Debug, Default)]
pub(crate) struct CancelBoard {
    /// One channel per session someone listens to; its value counts the requests, so a receiver
    /// sees that something changed since it last looked.
    sessions: Mutex<HashMap<SessionKey, watch::Sender<u64>>>,
}

impl CancelBoard {
    /// A stream that yields once for every request to cancel an invocation of `key` announced
    /// after this call.
    pub(crate) fn subscribe(self: &Arc<Self>, key: &SessionKey) -> CancelSignals {
        let receiver = self
            .sessions
            .lock()
            .entry(key.clone())
            .or_insert_with(|| watch::channel(0).0)
            .subscribe();
        let subscription = Subscription {
            board: self.clone(),
            key: key.clone(),
            receiver,
        };
        futures::stream::unfold(subscription, |mut subscription| async move {
            // The sender lives as long as a subscription of its session does.
            subscription.receiver.changed().await.ok()?;
            Some(((), subscription))
        })
        .boxed()
    }

    /// Tells the subscribers of `key` that someone asked to cancel one of its invocations.
    pub(crate) fn announce(&self, key: &SessionKey) {
        if let Some(sender) = self.sessions.lock().get(key) {
            sender.send_modify(|requests| *requests += 1);
        }
    }

    /// Tells every subscriber to look again: requests may have been missed (a lost connection
    /// to the database that carries other processes' announcements).
    #[cfg(feature = "postgres")]
    pub(crate) fn announce_all(&self) {
        for sender in self.sessions.lock().values() {
            sender.send_modify(|requests| *requests += 1);
        }
    }
}

/// One subscriber's receiver; the session's channel goes when its last subscriber does.
struct Subscription {
    board: Arc<CancelBoard>,
    key: SessionKey,
    receiver: watch::Receiver<u64>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut sessions = self.board.sessions.lock();
        // This subscription's own receiver is still counted while it drops.
        if sessions
            .get(&self.key)
            .is_some_and(|sender| sender.receiver_count() <= 1)
        {
            sessions.remove(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_subscriber_hears_the_requests_of_its_session_only() {
        let board = Arc::new(CancelBoard::default());
        let key = SessionKey::new("app", "ada", "s");
        let mut signals = board.subscribe(&key);
        board.announce(&SessionKey::new("app", "ada", "other"));
        board.announce(&key);
        assert_eq!(signals.next().await, Some(()));
        assert!(
            futures::FutureExt::now_or_never(signals.next()).is_none(),
            "the other session's request is not heard"
        );
        #[cfg(feature = "postgres")]
        {
            board.announce_all();
            assert_eq!(signals.next().await, Some(()));
        }
        drop(signals);
        assert!(
            board.sessions.lock().is_empty(),
            "the channel goes with its last subscriber"
        );
    }

    #[tokio::test]
    async fn two_subscribers_of_a_session_both_hear_a_request() {
        let board = Arc::new(CancelBoard::default());
        let key = SessionKey::new("app", "ada", "s");
        let mut first = board.subscribe(&key);
        let mut second = board.subscribe(&key);
        board.announce(&key);
        assert_eq!(first.next().await, Some(()));
        assert_eq!(second.next().await, Some(()));
        drop(first);
        assert_eq!(
            board.sessions.lock().len(),
            1,
            "kept for the other subscriber"
        );
        board.announce(&key);
        assert_eq!(second.next().await, Some(()));
    }
}
