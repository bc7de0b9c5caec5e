//! Locating the shared folder of fixtures that lives beside the repository, never inside it.

use std::path::{Path, PathBuf};

/// The environment variable that overrides where the shared folder is.
pub const SHARED_DIR_ENV: &str = "ADK_SHARED_DIR";

/// Where the shared folder is looked for: `$ADK_SHARED_DIR` when set, else `shared/` beside the
/// repository's root.
fn shared_dir_path() -> PathBuf {
    match std::env::var_os(SHARED_DIR_ENV) {
        Some(dir) => PathBuf::from(dir),
        None => workspace_root()
            .parent()
            .map(|parent| parent.join("shared"))
            .unwrap_or_else(|| PathBuf::from("shared")),
    }
}

/// Whether the shared folder is there, for a test that needs it to call first and return when it
/// is not: a clone without `shared/` beside it (as on a hosted CI runner) has no recorded traffic,
/// and such a test is then reported skipped (see [`report_skipped`](crate::report_skipped)) with
/// that reason, never counted as passed.
///
/// ```
/// fn a_test_of_recorded_traffic() {
///     if !adk_test::shared_fixtures_present() {
///         return;
///     }
///     let recorded = adk_test::shared_dir().join("fixtures/recorded");
///     # let _ = recorded;
/// }
/// # a_test_of_recorded_traffic();
/// ```
///
/// # Panics
///
/// When `ADK_SHARED_DIR` names a folder that does not exist: a setting that is wrong must fail.
pub fn shared_fixtures_present() -> bool {
    let dir = shared_dir_path();
    if dir.is_dir() {
        return true;
    }
    assert!(
        std::env::var_os(SHARED_DIR_ENV).is_none(),
        "{SHARED_DIR_ENV} names {}, which is not a folder",
        dir.display()
    );
    crate::report_skipped(&format!(
        "the shared fixtures folder (recorded model traffic, captured wire format) is not at {}; \
         set {SHARED_DIR_ENV} to its path",
        dir.display()
    ));
    false
}

/// The shared folder: `$ADK_SHARED_DIR` when set, else `shared/` beside the repository's root.
///
/// # Panics
///
/// When the folder does not exist, with a message that says where it looked and how to point
/// elsewhere: a test that needs fixtures must fail loudly, not pass on nothing (a test that may
/// run where there are none asks [`shared_fixtures_present`] first).
pub fn shared_dir() -> PathBuf {
    let dir = shared_dir_path();
    assert!(
        dir.is_dir(),
        "the shared fixtures folder was not found at {}; set {SHARED_DIR_ENV} to its path",
        dir.display()
    );
    dir
}

/// A file in the shared folder, read as text.
///
/// # Panics
///
/// When the file cannot be read, naming it.
pub fn shared_file(relative: impl AsRef<Path>) -> String {
    let path = shared_dir().join(relative);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read shared fixture {}: {error}", path.display()))
}

/// The directory of the package whose test or benchmark is running: the `CARGO_MANIFEST_DIR`
/// cargo sets when it runs one, else `built_in` (pass `env!("CARGO_MANIFEST_DIR")`).
///
/// Prefer it to `env!("CARGO_MANIFEST_DIR")` alone: cargo reuses a build made in a checkout at
/// another path, and the path compiled into it would point there.
///
/// ```
/// let dir = adk_test::package_dir(env!("CARGO_MANIFEST_DIR"));
/// assert!(dir.join("Cargo.toml").is_file());
/// ```
pub fn package_dir(built_in: &str) -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(|| PathBuf::from(built_in), PathBuf::from)
}

/// The workspace's root: the nearest directory holding `Cargo.lock` above the running package.
fn workspace_root() -> PathBuf {
    let package = package_dir(env!("CARGO_MANIFEST_DIR"));
    package
        .ancestors()
        .find(|dir| dir.join("Cargo.lock").is_file())
        .map_or_else(|| package.clone(), Path::to_path_buf)
}
