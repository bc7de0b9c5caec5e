//! Artifact service benchmarks: saving a version, loading the latest of ten, listing a session's
//! artifacts, and listing an artifact's versions, for the in-memory, filesystem and
//! `object_store` (local directory and in-memory) services.
//!
//! Run with `cargo bench -p adk-session --bench artifacts`; numbers go in `docs/sessions.md`.

mod support;

use std::sync::Arc;

use adk_core::{ArtifactService, Part, SessionKey};
use adk_session::{FileArtifactService, InMemoryArtifactService, ObjectStoreArtifactService};
use divan::Bencher;
use serde_json::Map;

use support::RUNTIME;

/// Artifacts in the session of the listing benchmark.
const NAMES: usize = 20;
/// Versions of each artifact.
const VERSIONS: usize = 10;

fn main() {
    divan::main();
}

/// A fresh service of `backend`, with the directory it writes under (if any).
fn open(backend: &str) -> (Arc<dyn ArtifactService>, Option<tempfile::TempDir>) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let service: Arc<dyn ArtifactService> = match backend {
        "memory" => Arc::new(InMemoryArtifactService::new()),
        "file" => Arc::new(FileArtifactService::new(dir.path().join("root"))),
        "object_store_local" => {
            let store = object_store::local::LocalFileSystem::new_with_prefix(dir.path())
                .expect("a local store");
            Arc::new(ObjectStoreArtifactService::new(Arc::new(store)))
        }
        _ => Arc::new(ObjectStoreArtifactService::new(Arc::new(
            object_store::memory::InMemory::new(),
        ))),
    };
    (service, Some(dir))
}

fn session() -> SessionKey {
    SessionKey::new("bench", "ada", "s1")
}

/// A 4 KiB image.
fn image() -> Part {
    Part::inline_data("image/png", vec![7u8; 4096])
}

/// A session holding [`NAMES`] artifacts of [`VERSIONS`] versions each.
fn filled(backend: &str) -> (Arc<dyn ArtifactService>, Option<tempfile::TempDir>) {
    let (service, dir) = open(backend);
    RUNTIME.block_on(async {
        for name in 0..NAMES {
            for _ in 0..VERSIONS {
                service
                    .save_artifact(
                        &session(),
                        &format!("chart-{name}.png"),
                        image(),
                        Map::new(),
                    )
                    .await
                    .expect("save");
            }
        }
    });
    (service, dir)
}

const BACKENDS: [&str; 4] = [
    "memory",
    "file",
    "object_store_local",
    "object_store_memory",
];

/// Saves a new version of one artifact per iteration.
#[divan::bench(args = BACKENDS, max_time = 3)]
fn save(bencher: Bencher<'_, '_>, backend: &str) {
    let (service, _dir) = open(backend);
    let mut n = 0;
    bencher.bench_local(|| {
        n += 1;
        RUNTIME
            .block_on(service.save_artifact(
                &session(),
                &format!("chart-{}.png", n % NAMES),
                image(),
                Map::new(),
            ))
            .expect("save");
    });
}

/// Loads the latest of an artifact's ten versions.
#[divan::bench(args = BACKENDS, max_time = 3)]
fn load_latest(bencher: Bencher<'_, '_>, backend: &str) {
    let (service, _dir) = filled(backend);
    bencher.bench_local(|| {
        RUNTIME
            .block_on(service.load_artifact(&session(), "chart-3.png", None))
            .expect("load")
            .expect("exists")
    });
}

/// Lists the names of a session's twenty artifacts.
#[divan::bench(args = BACKENDS, max_time = 3)]
fn list_keys(bencher: Bencher<'_, '_>, backend: &str) {
    let (service, _dir) = filled(backend);
    bencher.bench_local(|| {
        let keys = RUNTIME
            .block_on(service.list_artifact_keys(&session()))
            .expect("list");
        assert_eq!(keys.len(), NAMES);
    });
}

/// Lists the ten versions of an artifact.
#[divan::bench(args = BACKENDS, max_time = 3)]
fn list_versions(bencher: Bencher<'_, '_>, backend: &str) {
    let (service, _dir) = filled(backend);
    bencher.bench_local(|| {
        let versions = RUNTIME
            .block_on(service.list_versions(&session(), "chart-3.png"))
            .expect("list");
        assert_eq!(versions.len(), VERSIONS);
    });
}
