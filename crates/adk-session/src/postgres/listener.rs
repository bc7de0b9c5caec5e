//! Cancel requests across replicas: a request is announced with `NOTIFY` on the channel
//! [`CHANNEL`], naming its session, and every process sharing the database hears it on a
//! connection of its own that `LISTEN`s there, and hands it to the runs of that session which
//! subscribed (`CancelBoard`).
//!
//! A notification sent while the listening connection is down is lost, so when the connection
//! comes back every subscriber is told to read the store again; nothing is missed that way.

use std::sync::Arc;
use std::time::Duration;

use adk_core::SessionKey;
use sqlx::postgres::{PgListener, PgPoolOptions};
use sqlx::{Pool, Postgres};
use tokio::sync::oneshot;

use crate::cancel_signals::CancelBoard;
use crate::error::{Error, Result};

/// The channel cancel requests are announced on.
const CHANNEL: &str = "adk_cancel_requests";

/// How long the listener waits before connecting again after the database refused it.
const RECONNECT_PAUSE: Duration = Duration::from_secs(1);

/// Announces that someone asked to cancel an invocation of session `key`.
pub(super) async fn announce(pool: &Pool<Postgres>, key: &SessionKey) -> Result<()> {
    let payload = serde_json::to_string(&[&key.app_name, &key.user_id, key.session_id.as_str()])
        .map_err(|error| Error::storage("announcing a cancel request", error))?;
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(CHANNEL)
        .bind(payload)
        .execute(pool)
        .await
        .map(drop)
        .map_err(|error| Error::storage("announcing a cancel request", error))
}

/// The session a notification's payload names.
fn session_of(payload: &str) -> Option<SessionKey> {
    let [app, user, session]: [String; 3] = serde_json::from_str(payload).ok()?;
    Some(SessionKey::new(app, user, session))
}

/// The listening connection's task; it stops when this is dropped (with its store) or when the
/// store's pool closes.
#[derive(Debug)]
pub(crate) struct CancelListener {
    _stop: oneshot::Sender<()>,
}

impl CancelListener {
    /// Connects a listening connection (its own, beside `pool`'s, with the same settings), and
    /// hands what it hears to `board` until stopped.
    pub(super) async fn start(pool: &Pool<Postgres>, board: Arc<CancelBoard>) -> Result<Self> {
        // A pool of one connection, which the listener reconnects through when it drops.
        let own = PgPoolOptions::new()
            .max_connections(1)
            .max_lifetime(None)
            .idle_timeout(None)
            .connect_lazy_with((*pool.connect_options()).clone());
        let listener = listen(&own)
            .await
            .map_err(|error| Error::storage("listening for cancel requests", error))?;
        let (stop, stopped) = oneshot::channel();
        let closed = pool.close_event();
        tokio::spawn(async move {
            tokio::select! {
                () = hear(own, listener, board) => {}
                _ = stopped => {}
                () = closed => {}
            }
        });
        Ok(Self { _stop: stop })
    }
}

/// A connection of `pool` listening on [`CHANNEL`].
async fn listen(pool: &Pool<Postgres>) -> sqlx::Result<PgListener> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener.listen(CHANNEL).await?;
    Ok(listener)
}

/// Hands every notification to `board`. What is sent while the connection is down is lost, so
/// once it listens again every subscriber is told to read the store.
async fn hear(pool: Pool<Postgres>, mut listener: PgListener, board: Arc<CancelBoard>) {
    loop {
        match listener.try_recv().await {
            Ok(Some(notification)) => match session_of(notification.payload()) {
                Some(key) => board.announce(&key),
                None => tracing::warn!(
                    payload = notification.payload(),
                    "a cancel announcement names no session"
                ),
            },
            // The connection was lost and the listener listens again on a new one.
            Ok(None) => board.announce_all(),
            Err(error) => {
                tracing::warn!(%error, "the connection listening for cancel requests failed");
                drop(listener);
                listener = loop {
                    tokio::time::sleep(RECONNECT_PAUSE).await;
                    match listen(&pool).await {
                        Ok(listener) => break listener,
                        Err(error) => {
                            tracing::warn!(%error, "cannot listen for cancel requests; trying again");
                        }
                    }
                };
                board.announce_all();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payload_names_its_session() {
        let key = SessionKey::new("app \"1\"", "ada", "s/1");
        let payload =
            serde_json::to_string(&[&key.app_name, &key.user_id, key.session_id.as_str()]).unwrap();
        assert_eq!(session_of(&payload), Some(key));
        assert_eq!(session_of("[\"two\", \"parts\"]"), None);
        assert_eq!(session_of("not json"), None);
    }
}
