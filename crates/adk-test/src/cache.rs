//! Installing test dependencies once into the user's cache: the directory, and an install that
//! runs under an exclusive file lock and is skipped once a marker file says it is done.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

/// The cache directory `$<env>` when that variable is set, else `$HOME/.cache/adk-rs/<name>`.
///
/// # Panics
///
/// When neither `env` nor `HOME` is set, naming `env`.
pub fn cache_dir(env: &str, name: &str) -> PathBuf {
    if let Some(dir) = std::env::var_os(env) {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME")
        .unwrap_or_else(|| panic!("HOME is not set; set {env} to where {name} may be installed"));
    Path::new(&home).join(".cache/adk-rs").join(name)
}

/// Runs `install` in `dir` unless an earlier run already installed what `marker` describes (the
/// pinned versions, say): parallel test binaries wait for each other on a file lock, and a marker
/// file records the install once it succeeded.
///
/// # Panics
///
/// When `dir` cannot be created or locked, or the marker cannot be written.
pub fn install_once(dir: &Path, marker: &str, install: impl FnOnce(&Path)) {
    fs::create_dir_all(dir)
        .unwrap_or_else(|error| panic!("cannot create {}: {error}", dir.display()));
    let lock = File::create(dir.join(".install.lock")).unwrap_or_else(|error| {
        panic!(
            "cannot create the install lock in {}: {error}",
            dir.display()
        )
    });
    lock.lock()
        .unwrap_or_else(|error| panic!("cannot lock {}: {error}", dir.display()));
    let marker_file = dir.join(".installed");
    if fs::read_to_string(&marker_file).is_ok_and(|found| found == marker) {
        return;
    }
    install(dir);
    fs::write(&marker_file, marker).unwrap_or_else(|error| {
        panic!(
            "cannot write the marker file {}: {error}",
            marker_file.display()
        )
    });
}
