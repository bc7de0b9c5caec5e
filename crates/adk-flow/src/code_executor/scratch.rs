//! The scratch directory of one run: made empty before it, read for the files the code wrote
//! after it, and removed. Directory work runs on the blocking pool, never on an async thread.

use std::path::{Path, PathBuf};

use adk_core::Blob;
use tempfile::TempDir;

use super::{CodeExecutorError, ExecutionLimits};

/// How deep the scratch directory is searched for files.
const MAX_DEPTH: usize = 8;

/// A run's empty directory, removed when dropped.
#[derive(Debug)]
pub(super) struct Scratch {
    dir: Option<TempDir>,
}

/// The files found after a run, and those left out with why.
#[derive(Debug, Default)]
pub(super) struct Files {
    pub(super) returned: Vec<Blob>,
    pub(super) left_out: Vec<String>,
}

impl Scratch {
    /// A new empty directory under `root` (the system's temporary directory when `None`).
    pub(super) async fn new(root: Option<PathBuf>) -> Result<Self, CodeExecutorError> {
        let dir = blocking(move || {
            let mut builder = tempfile::Builder::new();
            builder.prefix("adk-code-");
            match root {
                Some(root) => builder.tempdir_in(root),
                None => builder.tempdir(),
            }
        })
        .await
        .map_err(CodeExecutorError::Scratch)?;
        Ok(Self { dir: Some(dir) })
    }

    /// The directory's path.
    pub(super) fn path(&self) -> &Path {
        self.dir.as_ref().map_or(Path::new(""), TempDir::path)
    }

    /// Reads the regular files the run left (symbolic links are not followed, so the code cannot
    /// point one outside), in path order, within the limits.
    pub(super) async fn files(&self, limits: &ExecutionLimits) -> Result<Files, CodeExecutorError> {
        let root = self.path().to_path_buf();
        let limits = limits.clone();
        blocking(move || {
            let mut found = Vec::new();
            walk(&root, &root, 0, &mut found)?;
            found.sort();
            let mut files = Files::default();
            for (name, path, size) in found {
                if size > limits.max_file_bytes {
                    files.left_out.push(format!(
                        "{name} (larger than {} bytes)",
                        limits.max_file_bytes
                    ));
                } else if files.returned.len() >= limits.max_files {
                    files.left_out.push(format!(
                        "{name} (over the limit of {} files)",
                        limits.max_files
                    ));
                } else {
                    let data = std::fs::read(&path)?;
                    let mut blob = Blob::new(mime_type(&name), data);
                    blob.display_name = Some(name);
                    files.returned.push(blob);
                }
            }
            Ok(files)
        })
        .await
        .map_err(CodeExecutorError::Scratch)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(dir) = self.dir.take() {
            // Removing a tree may take a while; do it off the async threads when a runtime is
            // there, and here otherwise (a test dropping it after its runtime ended).
            match tokio::runtime::Handle::try_current() {
                Ok(handle) => drop(handle.spawn_blocking(move || drop(dir))),
                Err(_) => drop(dir),
            }
        }
    }
}

fn walk(
    root: &Path,
    dir: &Path,
    depth: usize,
    found: &mut Vec<(String, PathBuf, u64)>,
) -> std::io::Result<()> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let path = entry.path();
        if kind.is_dir() {
            walk(root, &path, depth + 1, found)?;
        } else if kind.is_file() {
            let name = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned();
            found.push((name, path.clone(), entry.metadata()?.len()));
        }
    }
    Ok(())
}

/// The MIME type the model is told, from the file's extension.
fn mime_type(name: &str) -> &'static str {
    let extension = Path::new(name)
        .extension()
        .and_then(|extension| extension.to_str())
        .map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("txt" | "log" | "py") => "text/plain",
        Some("csv") => "text/csv",
        Some("md") => "text/markdown",
        Some("html" | "htm") => "text/html",
        Some("json") => "application/json",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("pdf") => "application/pdf",
        _ => "application/octet-stream",
    }
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> std::io::Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(std::io::Error::other)?
}
