//! Locating the shared folder of fixtures that lives beside the repository, never inside it.

use std::path::{Path, PathBuf};

/// The environment variable that overrides where the shared folder is.
pub const SHARED_DIR_ENV: &str = "ADK_SHARED_DIR";

/// The shared folder: `$ADK_SHARED_DIR` when set, else `shared/` beside the repository's root.
///
/// # Panics
///
/// When the folder does not exist, with a message that says where it looked and how to point
/// elsewhere: a test that needs fixtures must fail loudly, not pass on nothing.
pub fn shared_dir() -> PathBuf {
    let dir = match std::env::var_os(SHARED_DIR_ENV) {
        Some(dir) => PathBuf::from(dir),
        None => workspace_root()
            .parent()
            .map(|parent| parent.join("shared"))
            .unwrap_or_else(|| PathBuf::from("shared")),
    };
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
