//! The files of a corpus: walking a directory for the paths a glob matches, the names files are
//! cited by, and the size and time that tell whether a file may have changed.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::{Glob, RetrievalError};

/// A file's size and modification time.
pub(crate) async fn stamp_of(path: &Path) -> Result<(u64, SystemTime), RetrievalError> {
    let metadata = tokio::fs::metadata(path)
        .await
        .map_err(|error| read_error(path, error))?;
    let modified = metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    Ok((metadata.len(), modified))
}

pub(crate) fn read_error(path: &Path, source: std::io::Error) -> RetrievalError {
    RetrievalError::Read {
        path: path.to_path_buf(),
        source,
    }
}

/// The source name of a file: its path as given, with `/` between components on every system.
pub(crate) fn source_name(path: &Path) -> String {
    path.components()
        .map(|part| part.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
        .replace("//", "/")
}

/// The files under `directory` whose relative path `glob` matches, sorted; hidden entries left
/// out, symbolic links to directories not followed.
pub(crate) async fn walk(directory: &Path, glob: &Glob) -> Result<Vec<PathBuf>, RetrievalError> {
    let mut found = Vec::new();
    let mut pending = vec![(directory.to_path_buf(), String::new())];
    while let Some((dir, relative)) = pending.pop() {
        let mut entries = tokio::fs::read_dir(&dir)
            .await
            .map_err(|error| read_error(&dir, error))?;
        while let Some(entry) = entries
            .next_entry()
            .await
            .map_err(|error| read_error(&dir, error))?
        {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let path = entry.path();
            let relative = if relative.is_empty() {
                name
            } else {
                format!("{relative}/{name}")
            };
            let kind = entry
                .file_type()
                .await
                .map_err(|error| read_error(&path, error))?;
            if kind.is_dir() {
                pending.push((path, relative));
            } else if (kind.is_file() || kind.is_symlink()) && glob.matches(&relative) {
                // A link is indexed when it leads to a file; one to a directory is not walked.
                if kind.is_file() || tokio::fs::metadata(&path).await.is_ok_and(|m| m.is_file()) {
                    found.push(path);
                }
            }
        }
    }
    found.sort();
    Ok(found)
}
