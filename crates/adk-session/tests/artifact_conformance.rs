//! The artifact conformance suite, run against every backend: in memory, filesystem, and
//! `object_store` with its local-filesystem and in-memory stores. Includes the path-traversal
//! attacks every backend must refuse.

use std::collections::BTreeSet;
use std::sync::Arc;

use adk_core::{ArtifactService, ErrorKind, Part, SessionKey};
use adk_session::{FileArtifactService, InMemoryArtifactService, ObjectStoreArtifactService};
use serde_json::{Map, Value, json};

/// An artifact service on fresh storage, with the directory it may write under (if any).
struct Fixture {
    service: Arc<dyn ArtifactService>,
    /// The parent of the backend's root: nothing may appear here but the root itself.
    sandbox: Option<tempfile::TempDir>,
}

impl Fixture {
    /// The service, borrowed.
    fn borrowed(&self) -> &dyn ArtifactService {
        self.service.as_ref()
    }

    /// The service's `Arc`, for tests that hand it to spawned tasks.
    fn shared(&self) -> &Arc<dyn ArtifactService> {
        &self.service
    }
}

fn in_memory() -> Fixture {
    Fixture {
        service: Arc::new(InMemoryArtifactService::new()),
        sandbox: None,
    }
}

fn filesystem() -> Fixture {
    let sandbox = tempfile::tempdir().unwrap();
    Fixture {
        service: Arc::new(FileArtifactService::new(sandbox.path().join("root"))),
        sandbox: Some(sandbox),
    }
}

fn object_store_local() -> Fixture {
    let sandbox = tempfile::tempdir().unwrap();
    let root = sandbox.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let store = object_store::local::LocalFileSystem::new_with_prefix(&root).unwrap();
    Fixture {
        service: Arc::new(ObjectStoreArtifactService::new(Arc::new(store))),
        sandbox: Some(sandbox),
    }
}

fn object_store_memory() -> Fixture {
    Fixture {
        service: Arc::new(ObjectStoreArtifactService::new(Arc::new(
            object_store::memory::InMemory::new(),
        ))),
        sandbox: None,
    }
}

macro_rules! artifact_conformance {
    ($($backend:ident),*) => {
        $(
            mod $backend {
                artifact_conformance!(@tests $backend; borrowed;
                    save_load_and_versions,
                    user_names_are_shared_by_the_users_sessions_only,
                    delete_removes_every_version,
                    traversal_and_bad_names_are_rejected,
                    large_and_unicode_artifacts_round_trip,
                );
                // These spawn tasks, so they take the service's `Arc`.
                artifact_conformance!(@tests $backend; shared;
                    concurrent_saves_get_distinct_versions,
                );
            }
        )*
    };
    (@tests $backend:ident; $access:ident; $($test:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $test() {
                let fixture = crate::$backend();
                crate::$test(fixture.$access()).await;
                crate::check_sandbox(&fixture);
            }
        )*
    };
}

artifact_conformance!(
    in_memory,
    filesystem,
    object_store_local,
    object_store_memory
);

/// Nothing was written beside the backend's root.
fn check_sandbox(fixture: &Fixture) {
    if let Some(sandbox) = &fixture.sandbox {
        let names: Vec<String> = std::fs::read_dir(sandbox.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names.iter().all(|name| name == "root"),
            "escaped the root: {names:?}"
        );
    }
}

fn key(user: &str, session: &str) -> SessionKey {
    SessionKey::new("app", user, session)
}

fn metadata(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

async fn save(service: &dyn ArtifactService, session: &SessionKey, name: &str, part: Part) -> u64 {
    service
        .save_artifact(session, name, part, Map::new())
        .await
        .unwrap()
}

async fn save_load_and_versions(service: &dyn ArtifactService) {
    let s = key("ada", "s1");
    let image = Part::inline_data("image/png", vec![0x89, b'P', b'N', b'G', 0, 255]);
    let v0 = service
        .save_artifact(
            &s,
            "chart.png",
            image.clone(),
            metadata(json!({"source": "tool", "n": 1})),
        )
        .await
        .unwrap();
    let v1 = save(service, &s, "chart.png", Part::text("a chart")).await;
    assert_eq!((v0, v1), (0, 1));

    assert_eq!(
        service.load_artifact(&s, "chart.png", None).await.unwrap(),
        Some(Part::text("a chart"))
    );
    assert_eq!(
        service
            .load_artifact(&s, "chart.png", Some(0))
            .await
            .unwrap(),
        Some(image)
    );
    assert_eq!(
        service
            .load_artifact(&s, "chart.png", Some(7))
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        service
            .load_artifact(&s, "missing.txt", None)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        service.list_versions(&s, "chart.png").await.unwrap(),
        [0, 1]
    );
    assert!(
        service
            .list_versions(&s, "missing.txt")
            .await
            .unwrap()
            .is_empty()
    );

    let first = service
        .artifact_version(&s, "chart.png", Some(0))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first.version, 0);
    assert_eq!(first.mime_type.as_deref(), Some("image/png"));
    assert_eq!(
        Value::Object(first.custom_metadata),
        json!({"source": "tool", "n": 1})
    );
    assert!(first.create_time > 1.0e9);
    let latest = service
        .artifact_version(&s, "chart.png", None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(latest.version, 1);
    assert_eq!(latest.mime_type.as_deref(), Some("text/plain"));
    assert!(latest.create_time >= first.create_time);
    assert!(
        service
            .artifact_version(&s, "missing.txt", None)
            .await
            .unwrap()
            .is_none()
    );
}

async fn user_names_are_shared_by_the_users_sessions_only(service: &dyn ArtifactService) {
    let s1 = key("ada", "s1");
    let s2 = key("ada", "s2");
    let bob = key("bob", "s1");
    save(
        service,
        &s1,
        "user:avatar.png",
        Part::inline_data("image/png", vec![1]),
    )
    .await;
    save(service, &s1, "notes.txt", Part::text("s1 only")).await;
    save(service, &s2, "b.txt", Part::text("s2 only")).await;

    let other_app = SessionKey::new("other", "ada", "s1");
    for (session, keys) in [
        (&s1, &["notes.txt", "user:avatar.png"][..]),
        (&s2, &["b.txt", "user:avatar.png"]),
        (&bob, &[]),
        (&other_app, &[]),
    ] {
        assert_eq!(
            service.list_artifact_keys(session).await.unwrap(),
            keys,
            "{session:?} sees its own and its user's"
        );
    }
    for (session, name, visible) in [
        (&s2, "user:avatar.png", true),
        (&s2, "notes.txt", false),
        (&bob, "user:avatar.png", false),
        (&bob, "notes.txt", false),
    ] {
        let loaded = service.load_artifact(session, name, None).await.unwrap();
        assert_eq!(loaded.is_some(), visible, "{name} from {session:?}");
    }
    // A second save from another session is the next version of the shared file.
    assert_eq!(
        save(service, &s2, "user:avatar.png", Part::text("v1")).await,
        1
    );
}

async fn delete_removes_every_version(service: &dyn ArtifactService) {
    let s = key("ada", "s1");
    save(service, &s, "a.txt", Part::text("0")).await;
    save(service, &s, "a.txt", Part::text("1")).await;
    save(service, &s, "keep.txt", Part::text("k")).await;
    service.delete_artifact(&s, "a.txt").await.unwrap();
    for version in [None, Some(0), Some(1)] {
        let loaded = service.load_artifact(&s, "a.txt", version).await.unwrap();
        assert!(loaded.is_none(), "version {version:?} is gone");
    }
    assert!(service.list_versions(&s, "a.txt").await.unwrap().is_empty());
    assert_eq!(service.list_artifact_keys(&s).await.unwrap(), ["keep.txt"]);
    service
        .delete_artifact(&s, "a.txt")
        .await
        .expect("deleting a missing artifact is fine");
    assert_eq!(save(service, &s, "a.txt", Part::text("again")).await, 0);
}

/// Names that must never reach storage.
const BAD_NAMES: &[&str] = &[
    "",
    ".",
    "..",
    "../secret.txt",
    "../../bob/sessions/s1/secret.txt",
    "sub/file.txt",
    "sub\\file.txt",
    "/etc/passwd",
    "C:\\Windows\\win.ini",
    "..%2f..%2fbob%2fsecret.txt",
    "..%2F..%2Fbob",
    "%2e%2e",
    "a%5cb",
    "a%00b",
    "nul\0byte",
    "new\nline",
    "user:",
    "user:..",
    "user:../bob/user/avatar.png",
    "user:/etc/passwd",
];

async fn traversal_and_bad_names_are_rejected(service: &dyn ArtifactService) {
    let ada = key("ada", "s1");
    let bob = key("bob", "s1");
    save(service, &bob, "secret.txt", Part::text("bob's secret")).await;
    save(service, &bob, "user:avatar.png", Part::text("bob's avatar")).await;

    for name in BAD_NAMES {
        let rejected = |result: adk_core::Result<()>| {
            let error = result.expect_err(name);
            assert_eq!(error.kind(), ErrorKind::Artifact, "{name:?}: {error}");
            assert_eq!(
                error
                    .downcast_source::<adk_session::Error>()
                    .map(adk_session::Error::kind),
                Some(adk_session::ErrorKind::InvalidName),
                "{name:?}"
            );
        };
        rejected(
            service
                .save_artifact(&ada, name, Part::text("x"), Map::new())
                .await
                .map(drop),
        );
        rejected(service.load_artifact(&ada, name, None).await.map(drop));
        rejected(service.delete_artifact(&ada, name).await);
        rejected(service.list_versions(&ada, name).await.map(drop));
        rejected(service.artifact_version(&ada, name, None).await.map(drop));
    }
    for bad in [
        SessionKey::new("app", "bob/../ada", "s1"),
        SessionKey::new("app", "..", "s1"),
        SessionKey::new("..", "bob", "s1"),
        SessionKey::new("app", "ada", "../../bob/sessions/s1"),
        SessionKey::new("app", "ada", "s1%2F..%2F..%2Fbob"),
        SessionKey::new("app", "", "s1"),
        SessionKey::new("/abs", "ada", "s1"),
    ] {
        let error = service
            .list_artifact_keys(&bad)
            .await
            .expect_err("a bad id");
        assert_eq!(error.kind(), ErrorKind::Artifact, "{bad:?}");
        let error = service
            .load_artifact(&bad, "secret.txt", None)
            .await
            .expect_err("a bad id");
        assert_eq!(error.kind(), ErrorKind::Artifact, "{bad:?}");
    }
    // Bob's artifacts are untouched and unreachable from ada's session.
    assert!(service.list_artifact_keys(&ada).await.unwrap().is_empty());
    assert_eq!(
        service
            .load_artifact(&bob, "secret.txt", None)
            .await
            .unwrap(),
        Some(Part::text("bob's secret"))
    );
    assert_eq!(
        service
            .list_versions(&bob, "user:avatar.png")
            .await
            .unwrap(),
        [0]
    );
}

/// Writers saving one artifact at once, as spawned tasks on the multi-thread runtime released
/// together: every save gets a version of its own, and storage holds exactly the saved ones.
async fn concurrent_saves_get_distinct_versions(service: &Arc<dyn ArtifactService>) {
    const WRITERS: usize = 4;
    const SAVES: usize = 6;
    let s = key("ada", "s1");
    let start = Arc::new(tokio::sync::Barrier::new(WRITERS));
    let writers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let (service, s, start) = (service.clone(), s.clone(), start.clone());
            tokio::spawn(async move {
                start.wait().await;
                let mut outcomes = Vec::new();
                for n in 0..SAVES {
                    let text = format!("{writer}-{n}");
                    let saved = service
                        .save_artifact(&s, "log.txt", Part::text(text.clone()), Map::new())
                        .await;
                    outcomes.push((text, saved));
                }
                outcomes
            })
        })
        .collect();
    let mut saved = Vec::new();
    for writer in writers {
        for (text, outcome) in writer.await.expect("the writer task") {
            let version = outcome.unwrap_or_else(|error| panic!("saving {text}: {error}"));
            saved.push((version, text));
        }
    }
    assert_eq!(saved.len(), WRITERS * SAVES, "every attempt succeeded");
    let versions: BTreeSet<u64> = saved.iter().map(|(version, _)| *version).collect();
    assert_eq!(
        versions,
        (0..(WRITERS * SAVES) as u64).collect(),
        "one version per save"
    );
    assert_eq!(
        service.list_versions(&s, "log.txt").await.unwrap(),
        (0..(WRITERS * SAVES) as u64).collect::<Vec<_>>(),
        "storage holds exactly the saved versions"
    );
    for (version, text) in saved {
        assert_eq!(
            service
                .load_artifact(&s, "log.txt", Some(version))
                .await
                .unwrap(),
            Some(Part::text(text)),
            "version {version} holds what its save wrote"
        );
    }
}

async fn large_and_unicode_artifacts_round_trip(service: &dyn ArtifactService) {
    let s = SessionKey::new("应用", "użytkownik", "séance-🎉");
    let bytes: Vec<u8> = (0..(5u32 << 20)).map(|n| (n % 253) as u8).collect();
    let big = Part::inline_data("application/octet-stream", bytes);
    for name in [
        "données 2026 ✓.bin",
        "user:報告書.pdf",
        "100%.txt",
        ".hidden",
        "a..b",
    ] {
        save(service, &s, name, big.clone()).await;
        assert_eq!(
            service
                .load_artifact(&s, name, None)
                .await
                .unwrap()
                .as_ref(),
            Some(&big),
            "{name}"
        );
    }
    assert_eq!(
        service.list_artifact_keys(&s).await.unwrap(),
        [
            ".hidden",
            "100%.txt",
            "a..b",
            "données 2026 ✓.bin",
            "user:報告書.pdf"
        ]
    );
}

/// Where each service keeps a version on disk, as it always has: `FileArtifactService` names
/// files exactly as the names given, `ObjectStoreArtifactService` as `object_store` path parts
/// (percent-encoded where object stores advise against a character, and beyond ASCII). A version written by hand
/// in that layout (as the file service before `object_store` wrote it) reads back.
#[tokio::test]
async fn files_are_named_as_they_always_were() {
    let s = key("ada", "s1");
    for (service, session_version, user_version) in [
        (
            "file",
            "app/ada/sessions/s1/100% [draft] #1.txt/0",
            "app/ada/user/報告書.pdf/0",
        ),
        (
            "object_store",
            "app/ada/sessions/s1/100%25 %5Bdraft%5D %231.txt/0",
            "app/ada/user/%E5%A0%B1%E5%91%8A%E6%9B%B8.pdf/0",
        ),
    ] {
        let sandbox = tempfile::tempdir().unwrap();
        let root = sandbox.path().join("root");
        let artifacts: Arc<dyn ArtifactService> = if service == "file" {
            Arc::new(FileArtifactService::new(&root))
        } else {
            std::fs::create_dir(&root).unwrap();
            let store = object_store::local::LocalFileSystem::new_with_prefix(&root).unwrap();
            Arc::new(ObjectStoreArtifactService::new(Arc::new(store)))
        };
        save(
            artifacts.as_ref(),
            &s,
            "100% [draft] #1.txt",
            Part::text("x"),
        )
        .await;
        save(artifacts.as_ref(), &s, "user:報告書.pdf", Part::text("y")).await;
        for version in [session_version, user_version] {
            for file in ["data", "meta.json"] {
                let path = root.join(version).join(file);
                assert!(path.is_file(), "{service}: {}", path.display());
            }
        }
    }

    // A version as the file service wrote it before, read by the one on `object_store`.
    let sandbox = tempfile::tempdir().unwrap();
    let version = sandbox.path().join("app/ada/sessions/s1/old notes.txt/0");
    std::fs::create_dir_all(&version).unwrap();
    std::fs::write(version.join("data"), b"").unwrap();
    std::fs::write(
        version.join("meta.json"),
        r#"{"version":0,"mimeType":"text/plain","customMetadata":{"from":"before"},"createTime":1700000000.5,"part":{"text":"kept"}}"#,
    )
    .unwrap();
    let artifacts = FileArtifactService::new(sandbox.path());
    assert_eq!(
        artifacts
            .load_artifact(&s, "old notes.txt", None)
            .await
            .unwrap(),
        Some(Part::text("kept"))
    );
    assert_eq!(
        artifacts.list_artifact_keys(&s).await.unwrap(),
        ["old notes.txt"]
    );
    let info = artifacts
        .artifact_version(&s, "old notes.txt", Some(0))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        Value::Object(info.custom_metadata),
        json!({"from": "before"})
    );
    assert_eq!(
        info.canonical_uri,
        Some(format!(
            "file://{}",
            std::fs::canonicalize(&version)
                .unwrap()
                .join("data")
                .display()
        ))
    );
}

#[tokio::test]
async fn in_memory_versions_are_named_as_adk_python_names_them() {
    let service = InMemoryArtifactService::new();
    let s = key("ada", "s1");
    save(&service, &s, "notes.txt", Part::text("one")).await;
    save(&service, &s, "user:profile.txt", Part::text("two")).await;
    let uri = |name: &'static str| {
        let service = &service;
        let s = &s;
        async move {
            service
                .artifact_version(s, name, None)
                .await
                .unwrap()
                .unwrap()
                .canonical_uri
        }
    };
    assert_eq!(
        uri("notes.txt").await.as_deref(),
        Some("memory://apps/app/users/ada/sessions/s1/artifacts/notes.txt/versions/0")
    );
    assert_eq!(
        uri("user:profile.txt").await.as_deref(),
        Some("memory://apps/app/users/ada/artifacts/user:profile.txt/versions/0")
    );
}
