//! Per-session locks: the process-local ones, and PostgreSQL advisory locks shared by two
//! "replicas" (two pools on one database) — one holder at a time per session, a waiter served
//! when the holder lets go, other sessions never blocked, and a dead holder's lock released.

use std::time::Duration;

use adk_core::SessionKey;
use adk_session::{LocalSessionLocks, LockError, PostgresSettings, SessionLocks};
use adk_test::postgres_url;

/// A wait long enough never to run out on a loaded machine: it only turns a hang into a failure.
const PATIENCE: Duration = Duration::from_secs(120);

/// A session key no other test run uses, since advisory locks are shared by the whole database.
fn fresh_key(name: &str) -> SessionKey {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    SessionKey::new("locks", format!("{}-{nanos}", std::process::id()), name)
}

/// `URL` with `application_name` set, so that a test can find its own connections.
fn named(url: &str, name: &str) -> String {
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}application_name={name}")
}

#[tokio::test]
async fn local_locks_serialise_one_session_and_leave_others_free() {
    let locks = LocalSessionLocks::new(PATIENCE);
    let key = fresh_key("s1");
    let held = locks.lock(&key).await.unwrap();
    // Another session is not held up by this one.
    let other = locks.lock(&fresh_key("s2")).await.unwrap();
    drop(other);
    let waiter = tokio::spawn({
        let locks = std::sync::Arc::new(locks);
        let key = key.clone();
        let shared = locks.clone();
        async move {
            let lease = shared.lock(&key).await;
            (lease.is_ok(), shared)
        }
    });
    // The waiter cannot finish while the lease is held: yield until it is surely parked on it.
    for _ in 0..100 {
        tokio::task::yield_now().await;
    }
    assert!(!waiter.is_finished());
    drop(held);
    let (granted, locks) = waiter.await.unwrap();
    assert!(granted);
    // Nobody holds or waits any more: the map forgot every session.
    assert_eq!(locks.sessions_in_use(), 0);
}

#[tokio::test]
async fn a_local_lock_held_past_the_wait_is_busy() {
    let locks = LocalSessionLocks::new(Duration::from_millis(20));
    let key = fresh_key("busy");
    let _held = locks.lock(&key).await.unwrap();
    let error = locks.lock(&key).await.unwrap_err();
    assert!(matches!(error, LockError::Busy { .. }), "{error:?}");
    assert!(error.to_string().contains("is busy"), "{error}");
    locks.check_ready().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_locks_are_shared_by_replicas() {
    let Some(url) = postgres_url() else {
        return;
    };
    let settings = PostgresSettings::new(&url);
    let one = settings
        .connect_locks(2, Duration::from_millis(50))
        .await
        .unwrap();
    let two = settings.connect_locks(2, PATIENCE).await.unwrap();
    let impatient = settings
        .connect_locks(2, Duration::from_millis(50))
        .await
        .unwrap();
    one.check_ready().await.unwrap();
    let key = fresh_key("shared");

    let held = one.lock(&key).await.unwrap();
    let error = impatient.lock(&key).await.unwrap_err();
    assert!(matches!(error, LockError::Busy { .. }), "{error:?}");
    // Another session is free at another replica.
    drop(two.lock(&fresh_key("other")).await.unwrap());

    // A patient waiter at the other replica is served once the holder lets go: it is seen waiting
    // in pg_locks first, then granted.
    let admin = sqlx::PgPool::connect(&url).await.unwrap();
    let waiter = tokio::spawn({
        let (two, key) = (two.clone(), key.clone());
        async move { two.lock(&key).await.map(|_lease| ()) }
    });
    tokio::time::timeout(PATIENCE, async {
        loop {
            let waiting: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
            )
            .fetch_one(&admin)
            .await
            .unwrap();
            if waiting > 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the waiter shows up in pg_locks");
    assert!(!waiter.is_finished());
    drop(held);
    tokio::time::timeout(PATIENCE, waiter)
        .await
        .expect("the waiter is served")
        .unwrap()
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_replicas_locks_are_released() {
    let Some(url) = postgres_url() else {
        return;
    };
    let name = format!("adk_lock_holder_{}", std::process::id());
    let holder = PostgresSettings::new(named(&url, &name))
        .connect_locks(1, PATIENCE)
        .await
        .unwrap();
    let other = PostgresSettings::new(&url)
        .connect_locks(1, PATIENCE)
        .await
        .unwrap();
    let key = fresh_key("orphan");
    let held = holder.lock(&key).await.unwrap();
    // The holder's connection dies as it does when its replica is killed.
    let admin = sqlx::PgPool::connect(&url).await.unwrap();
    sqlx::query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
    )
    .bind(&name)
    .execute(&admin)
    .await
    .unwrap();
    let _taken = tokio::time::timeout(PATIENCE, other.lock(&key))
        .await
        .expect("the lock of a dead connection is released")
        .unwrap();
    drop(held);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_lock_pool_is_saturated_and_an_unreachable_one_unavailable() {
    let Some(url) = postgres_url() else {
        return;
    };
    let locks = PostgresSettings::new(&url)
        .acquire_timeout(Duration::from_secs(1))
        .connect_locks(1, PATIENCE)
        .await
        .unwrap();
    // One lock plus the readiness connection fill the pool of two.
    let first = locks.lock(&fresh_key("a")).await.unwrap();
    let second = locks.lock(&fresh_key("b")).await.unwrap();
    let error = locks.lock(&fresh_key("c")).await.unwrap_err();
    assert!(matches!(error, LockError::Saturated { .. }), "{error:?}");
    // Closing waits for the connections in use: let go of the locks first.
    drop((first, second));
    locks.close().await;
    let error = locks.check_ready().await.unwrap_err();
    assert!(matches!(error, LockError::Unavailable { .. }), "{error:?}");
}
