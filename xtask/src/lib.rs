//! The library half of xtask, the build system of adk-rs: the `ci` pipeline and the installs it
//! prepares in the background, the `tidy` checks, `codegen`, the `cargo deny` step and `release`.
//!
//! `main.rs` is a thin command-line front end over this library; keeping the logic here lets the
//! tidy checks run as ordinary tests, both on the real workspace and on small fake ones.

pub mod ci;
pub mod codegen;
pub mod deny;
pub mod feature_sets;
pub mod prepare;
pub mod release;
pub mod test_run;
pub mod tidy;
pub mod tools;

use std::path::{Path, PathBuf};

/// The root of the adk-rs workspace: the parent of the directory that holds xtask's `Cargo.toml`.
///
/// `cargo run` and `cargo test` set `CARGO_MANIFEST_DIR` for the process they start, so the root
/// is that of the checkout being run even when a shared `CARGO_TARGET_DIR` holds a binary built
/// from another checkout; the value baked in at compile time is only the fallback.
pub fn workspace_root() -> PathBuf {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    manifest_dir
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}
