//! The session conformance suite, run against every backend: in memory, SQLite on a temporary
//! file, and PostgreSQL at `$ADK_POSTGRES_URL` (each test in its own schema).

mod conformance;

mod in_memory {
    crate::conformance::session_conformance!(crate::conformance::fixtures::in_memory);
}

mod sqlite {
    crate::conformance::session_conformance!(crate::conformance::fixtures::sqlite);
}

mod postgres {
    crate::conformance::session_conformance!(crate::conformance::fixtures::postgres);
}

/// Storage that cannot be reached or goes away: a clear error of the service's kind, and nothing
/// half-written.
mod storage_failures {
    use adk_core::{
        Content, CreateSessionRequest, ErrorKind, Event, GetSessionRequest, InvocationId,
        SessionService,
    };
    use adk_session::{PostgresSessionService, SqliteSessionService};

    use crate::conformance::fixtures::{drop_schema, fresh_schema};

    #[tokio::test]
    async fn sqlite_in_a_missing_directory_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let error = SqliteSessionService::open(dir.path().join("no/such/dir/sessions.db"))
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Session);
        assert!(
            error.message().starts_with("opening the SQLite database"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn unreachable_postgres_is_a_clear_error() {
        // Port 9 (discard) is closed on loopback: the connection is refused at once.
        let error = PostgresSessionService::connect("postgres://adk:adk@127.0.0.1:9/adk")
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Session);
        assert!(
            error
                .message()
                .starts_with("connecting to PostgreSQL failed"),
            "{error}"
        );
    }

    /// Every server connection of the service is killed before each append: each append either fails
    /// with a `Session` error or succeeds, and afterwards storage holds exactly the successful ones.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_connections_killed_between_appends_lose_nothing() {
        // Only this test's connections are killed: they carry their own application name. Its
        // tables live in a schema of its own, dropped at the end.
        let Some((admin, options, name)) = fresh_schema("adk_failures").await else {
            return;
        };
        let service = PostgresSessionService::connect_with(options.application_name(&name))
            .await
            .unwrap();
        let app = name.clone();
        let mut session = service
            .create_session(CreateSessionRequest::new(&app, "ada"))
            .await
            .unwrap();
        let mut stored = Vec::new();
        for n in 0..10 {
            sqlx::query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE application_name = $1",
            )
            .bind(&name)
            .execute(&admin)
            .await
            .unwrap();
            let event = Event::new(InvocationId::from("e-1"), "agent")
                .with_content(Content::model(n.to_string()));
            match service.append_event(&mut session, event).await {
                Ok(event) => stored.push(event.text().unwrap()),
                Err(error) => {
                    assert_eq!(error.kind(), ErrorKind::Session, "{error}");
                    // The failed append's session copy is unchanged; reload to go on.
                    session = service
                        .get_session(GetSessionRequest::new(session.key()))
                        .await
                        .unwrap()
                        .unwrap();
                }
            }
        }
        let loaded = service
            .get_session(GetSessionRequest::new(session.key()))
            .await
            .unwrap()
            .unwrap();
        let texts: Vec<String> = loaded.events.iter().map(|e| e.text().unwrap()).collect();
        assert_eq!(texts, stored);
        service.close().await;
        drop_schema(admin, &name).await;
    }

    /// A cancel request made through one replica is signalled to a run listening on another,
    /// and still after the listening connection was killed: its subscribers are told to look
    /// again once it listens on a new one.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_cancel_requests_reach_another_replica() {
        use futures::StreamExt as _;

        let guard = std::time::Duration::from_secs(30);
        let Some((admin, options, name)) = fresh_schema("adk_cancel_signals").await else {
            return;
        };
        let asking = PostgresSessionService::connect_with(options.clone())
            .await
            .unwrap();
        let listening_name = format!("{name}_listening");
        let listening =
            PostgresSessionService::connect_with(options.application_name(&listening_name))
                .await
                .unwrap();
        let key = asking
            .create_session(CreateSessionRequest::new(&name, "ada"))
            .await
            .unwrap()
            .key();
        let mut signals = listening.cancel_signals(&key).await.unwrap().unwrap();

        let first = InvocationId::from("e-1");
        assert!(asking.request_cancel(&key, &first).await.unwrap());
        tokio::time::timeout(guard, signals.next())
            .await
            .expect("the other replica hears the request")
            .unwrap();
        assert!(listening.cancel_requested(&key, &first).await.unwrap());

        // Every connection of the listening replica is killed, its listening one included.
        sqlx::query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
        )
        .bind(&listening_name)
        .execute(&admin)
        .await
        .unwrap();
        let second = InvocationId::from("e-2");
        assert!(asking.request_cancel(&key, &second).await.unwrap());
        tokio::time::timeout(guard, signals.next())
            .await
            .expect("a request made while the listener reconnects is not lost")
            .unwrap();
        assert!(listening.cancel_requested(&key, &second).await.unwrap());

        asking.close().await;
        listening.close().await;
        drop_schema(admin, &name).await;
    }
}
