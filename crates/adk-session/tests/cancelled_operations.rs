//! A session operation dropped mid-way (a client that went away, a cancelled run) leaves the
//! PostgreSQL pool usable: the next write on the same connection succeeds. sqlx 0.9 hands back a
//! connection whose `BEGIN` was sent but not answered still inside that transaction, so a write
//! after a read dropped in its `BEGIN` ran in the read's read-only transaction and failed.

use adk_core::{CreateSessionRequest, GetSessionRequest, SessionKey, SessionService as _};
use adk_session::PostgresSessionService;
use futures::FutureExt as _;

#[tokio::test]
async fn an_operation_dropped_at_any_point_leaves_the_pool_usable() {
    let Some(url) = adk_test::postgres_url() else {
        return;
    };
    // One connection, so that every operation reuses the one a dropped operation gave back.
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect(&url)
        .await
        .unwrap();
    let service = PostgresSessionService::from_pool(pool).await.unwrap();
    let run = std::process::id();
    let created = |n: usize| {
        CreateSessionRequest::new("cancelled", format!("u{run}"))
            .with_session_id(format!("s{n}-{run}"))
    };
    service.create_session(created(0)).await.unwrap();
    let read = || {
        service.get_session(GetSessionRequest::new(SessionKey::new(
            "cancelled",
            format!("u{run}"),
            format!("s0-{run}"),
        )))
    };
    // Drop a read, then a write, after each number of polls, so that some drops land while the
    // database has not yet answered their `BEGIN`; after each, a write must succeed.
    let mut dropped_pending = 0;
    for polls in 1..=40 {
        for write in [false, true] {
            let mut operation = if write {
                service
                    .create_session(created(polls * 2 + usize::from(write)))
                    .map(|created| created.map(|_| ()))
                    .boxed()
            } else {
                read().map(|read| read.map(|_| ())).boxed()
            };
            let mut pending = false;
            for _ in 0..polls {
                pending = futures::poll!(&mut operation).is_pending();
                if !pending {
                    break;
                }
                // Lets the runtime read the database's answers between polls.
                tokio::task::yield_now().await;
            }
            drop(operation);
            dropped_pending += usize::from(pending);
            service
                .create_session(created(1000 + polls * 2 + usize::from(write)))
                .await
                .unwrap_or_else(|error| {
                    panic!(
                        "a write after a dropped {} fails: {error}",
                        if write { "write" } else { "read" }
                    )
                });
            assert!(read().await.unwrap().is_some());
        }
    }
    assert!(dropped_pending > 0, "no operation was dropped mid-way");
}
