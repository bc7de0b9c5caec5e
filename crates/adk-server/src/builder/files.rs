//! The files of a YAML app as the Builder tab sees them: names from requests checked into plain
//! relative paths of `.yaml`/`.yml` files, the draft the tab edits (`tmp/<app>/` inside the app's
//! folder, as ADK Python keeps it), the staging copy a save is checked in, and atomic writes
//! (a temporary file beside the target, then a rename) that a failed rebuild undoes.
//!
//! Everything here touches the file system and runs on tokio's blocking threads.

use std::collections::BTreeMap;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The file the Builder tab opens first.
pub(crate) const ROOT_FILE: &str = "root_agent.yaml";

/// The folder inside an app that holds its draft (and a save's staging copy).
const DRAFT_FOLDER: &str = "tmp";

/// What went wrong with the files of a request.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FileError {
    /// A name the request gave is not a plain relative path of a YAML file.
    #[error("{0}")]
    Refused(String),
    /// The file system failed.
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

fn io_error<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> FileError + 'a {
    move |source| FileError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// The files of a config, by their path relative to the app's folder (`/`-separated).
pub(crate) type Files = BTreeMap<String, Vec<u8>>;

/// The relative path an uploaded file's name names: `<app>/` in front is dropped, as adk-web
/// names its uploads so.
pub(crate) fn upload_path(app: &str, filename: &str) -> Result<String, FileError> {
    let normal = filename.replace('\\', "/");
    let relative = normal
        .strip_prefix(&format!("{app}/"))
        .unwrap_or(&normal)
        .to_owned();
    relative_path(&relative)
}

/// Checks `path` is a plain relative path of a `.yaml` or `.yml` file, inside the folder it is
/// joined to: not empty, not absolute, no `..`, `.` or empty parts, no control characters.
pub(crate) fn relative_path(path: &str) -> Result<String, FileError> {
    let path = path.replace('\\', "/");
    let path = path.trim_start_matches("./");
    let refuse = |why: &str| Err(FileError::Refused(format!("file path {path:?} {why}")));
    if path.is_empty() {
        return refuse("is empty");
    }
    if path.starts_with('/') || Path::new(path).is_absolute() {
        return refuse("is absolute; give a path inside the app's folder");
    }
    if path.chars().any(char::is_control) {
        return refuse("contains a control character");
    }
    if path
        .split('/')
        .any(|part| part.is_empty() || part == "." || part == "..")
    {
        return refuse("leaves the app's folder or has an empty part; give a plain relative path");
    }
    let yaml = Path::new(path)
        .extension()
        .is_some_and(|extension| extension == "yaml" || extension == "yml");
    if !yaml {
        return refuse("is not a .yaml or .yml file; the builder edits agent configs only");
    }
    if path.split('/').next() == Some(DRAFT_FOLDER) {
        return refuse("is inside the builder's draft folder");
    }
    Ok(path.to_owned())
}

/// `root` joined with the checked relative path `relative`, refused when any part of it that
/// exists is a link: a link inside an app's folder could lead a read or a write out of it.
fn inside(root: &Path, relative: &str) -> Result<PathBuf, FileError> {
    let mut path = root.to_path_buf();
    for part in Path::new(relative).components() {
        let Component::Normal(part) = part else {
            return Err(FileError::Refused(format!(
                "file path {relative:?} is not a plain relative path"
            )));
        };
        path.push(part);
        match std::fs::symlink_metadata(&path) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                return Err(FileError::Refused(format!(
                    "{relative:?} goes through a link; the builder follows none"
                )));
            }
            _ => {}
        }
    }
    Ok(path)
}

/// The draft folder of app `app` in `dir`.
fn draft_dir(dir: &Path, app: &str) -> PathBuf {
    dir.join(DRAFT_FOLDER).join(app)
}

/// Whether app `app` in `dir` has a draft with its root agent file.
pub(crate) fn has_draft_root(dir: &Path, app: &str) -> bool {
    draft_dir(dir, app).join(ROOT_FILE).is_file()
}

/// The content of `relative` in the app's folder, or in its draft with `draft` (made from the
/// app's files first when there is none); `None` when there is no such file.
pub(crate) fn read(
    dir: &Path,
    app: &str,
    relative: &str,
    draft: bool,
) -> Result<Option<Vec<u8>>, FileError> {
    let root = if draft {
        let draft = draft_dir(dir, app);
        if !draft.is_dir() {
            write_files(&draft, &yaml_files(dir)?)?;
        }
        draft
    } else {
        dir.to_path_buf()
    };
    let path = inside(&root, relative)?;
    match std::fs::read(&path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) if error.kind() == io::ErrorKind::IsADirectory => Ok(None),
        Err(error) => Err(io_error("read", &path)(error)),
    }
}

/// Every YAML file under `dir` (its draft folder, hidden folders and links left out).
pub(crate) fn yaml_files(dir: &Path) -> Result<Files, FileError> {
    let mut files = Files::new();
    collect(dir, "", &mut files)?;
    Ok(files)
}

fn collect(dir: &Path, prefix: &str, files: &mut Files) -> Result<(), FileError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(io_error("list", dir)(error)),
    };
    for entry in entries {
        let entry = entry.map_err(io_error("list", dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry.file_type().map_err(io_error("list", dir))?;
        let relative = format!("{prefix}{name}");
        if name.starts_with('.') || kind.is_symlink() || (prefix.is_empty() && name == DRAFT_FOLDER)
        {
            continue;
        }
        if kind.is_dir() {
            collect(&entry.path(), &format!("{relative}/"), files)?;
        } else if kind.is_file() && relative_path(&relative).is_ok() {
            let bytes = std::fs::read(entry.path()).map_err(io_error("read", &entry.path()))?;
            files.insert(relative, bytes);
        }
    }
    Ok(())
}

/// Writes `files` into the draft of app `app`, made from the app's files first when there is
/// none.
pub(crate) fn write_draft(dir: &Path, app: &str, files: &Files) -> Result<(), FileError> {
    let draft = draft_dir(dir, app);
    if !draft.is_dir() {
        write_files(&draft, &yaml_files(dir)?)?;
    }
    write_files(&draft, files)
}

/// The config a save of `uploads` leaves: the app's YAML files, its draft's over them, the
/// uploads over both.
pub(crate) fn saved_config(dir: &Path, app: &str, uploads: Files) -> Result<Files, FileError> {
    let mut config = yaml_files(dir)?;
    config.extend(yaml_files(&draft_dir(dir, app))?);
    config.extend(uploads);
    Ok(config)
}

/// Removes the draft of app `app` (and the draft folder when nothing else is in it).
pub(crate) fn remove_draft(dir: &Path, app: &str) -> Result<(), FileError> {
    let draft = draft_dir(dir, app);
    match std::fs::remove_dir_all(&draft) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::NotFound => {}
        Err(error) => return Err(io_error("remove", &draft)(error)),
    }
    // Another app's draft may share the folder; then it stays.
    let _ = std::fs::remove_dir(dir.join(DRAFT_FOLDER));
    Ok(())
}

/// A copy of a config in a fresh folder inside the app's draft folder, to be checked before
/// anything of the app changes; [`Staging::remove`] deletes it.
pub(crate) struct Staging {
    root: PathBuf,
}

impl Staging {
    /// Writes `config` into a new staging folder of the app in `dir`.
    pub(crate) fn new(dir: &Path, config: &Files) -> Result<Self, FileError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            ".check-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let root = dir.join(DRAFT_FOLDER).join(name);
        write_files(&root, config)?;
        let root = root.canonicalize().map_err(io_error("open", &root))?;
        Ok(Self { root })
    }

    /// The staging folder (canonical, so the loader's file names start with it).
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Deletes the staging folder.
    pub(crate) fn remove(self) -> Result<(), FileError> {
        std::fs::remove_dir_all(&self.root).map_err(io_error("remove", &self.root))?;
        let _ = std::fs::remove_dir(self.root.parent().unwrap_or(&self.root));
        Ok(())
    }
}

/// What a file held before a save wrote it: its bytes, or `None` when the save created it.
pub(crate) type Previous = Vec<(String, Option<Vec<u8>>)>;

/// Writes the files of `config` that differ from what `dir` holds, each atomically, and returns
/// what they held before, for [`restore`]. A failure part way restores what was written.
pub(crate) fn save(dir: &Path, config: &Files) -> Result<Previous, FileError> {
    let mut previous = Previous::new();
    for (relative, bytes) in config {
        let path = inside(dir, relative)?;
        let before = match std::fs::read(&path) {
            Ok(before) => Some(before),
            Err(error) if error.kind() == io::ErrorKind::NotFound => None,
            Err(error) => return Err(io_error("read", &path)(error)),
        };
        if before.as_ref() == Some(bytes) {
            continue;
        }
        if let Err(error) = write_atomic(dir, relative, bytes) {
            // What this save wrote so far goes back; its own failure is the one reported.
            let _ = restore(dir, previous);
            return Err(error);
        }
        previous.push((relative.clone(), before));
    }
    Ok(previous)
}

/// Puts back what [`save`] overwrote, and removes what it created.
pub(crate) fn restore(dir: &Path, previous: Previous) -> Result<(), FileError> {
    for (relative, before) in previous {
        match before {
            Some(bytes) => write_atomic(dir, &relative, &bytes)?,
            None => {
                let path = inside(dir, &relative)?;
                std::fs::remove_file(&path).map_err(io_error("remove", &path))?;
            }
        }
    }
    Ok(())
}

fn write_files(root: &Path, files: &Files) -> Result<(), FileError> {
    std::fs::create_dir_all(root).map_err(io_error("create", root))?;
    for (relative, bytes) in files {
        write_atomic(root, relative, bytes)?;
    }
    Ok(())
}

/// Writes `bytes` to `relative` under `root` through a temporary file beside it and a rename, so
/// a reader (the next run's loader) sees the old file or the new one, never half of one.
fn write_atomic(root: &Path, relative: &str, bytes: &[u8]) -> Result<(), FileError> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let path = inside(root, relative)?;
    let parent = path.parent().unwrap_or(root);
    std::fs::create_dir_all(parent).map_err(io_error("create", parent))?;
    let file_name = path
        .file_name()
        .map_or_else(String::new, |name| name.to_string_lossy().into_owned());
    let temporary = parent.join(format!(
        ".{file_name}.{}-{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let written = std::fs::write(&temporary, bytes)
        .and_then(|()| std::fs::File::open(&temporary)?.sync_all())
        .and_then(|()| std::fs::rename(&temporary, &path));
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(io_error("write", &path)(error));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_leave_the_folder_or_are_not_yaml_are_refused() {
        for bad in [
            "",
            "/etc/passwd.yaml",
            "../other/root_agent.yaml",
            "sub/../../x.yaml",
            "sub//x.yaml",
            "agent.py",
            "root_agent.yaml.bak",
            "tmp/app/root_agent.yaml",
            "a\u{0}.yaml",
        ] {
            assert!(
                matches!(relative_path(bad), Err(FileError::Refused(_))),
                "{bad:?}"
            );
        }
        assert_eq!(relative_path("./sub/helper.yml").unwrap(), "sub/helper.yml");
        assert_eq!(
            upload_path("weather", "weather/root_agent.yaml").unwrap(),
            "root_agent.yaml"
        );
        assert_eq!(
            upload_path("weather", "weather\\sub.yaml").unwrap(),
            "sub.yaml"
        );
        assert!(upload_path("weather", "weather/../x.yaml").is_err());
    }

    #[test]
    fn a_link_inside_the_folder_is_not_followed() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.yaml"), "name: secret").unwrap();
        let app = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), app.path().join("link")).unwrap();
        let error = read(app.path(), "app", "link/secret.yaml", false).unwrap_err();
        assert!(error.to_string().contains("link"), "{error}");
        let files = Files::from([("link/secret.yaml".to_owned(), b"name: x".to_vec())]);
        assert!(save(app.path(), &files).is_err());
        assert_eq!(
            std::fs::read_to_string(outside.path().join("secret.yaml")).unwrap(),
            "name: secret"
        );
    }

    #[test]
    fn a_save_writes_what_changed_and_a_restore_undoes_it() {
        let app = tempfile::tempdir().unwrap();
        std::fs::write(app.path().join("root_agent.yaml"), "name: a").unwrap();
        std::fs::write(app.path().join("same.yaml"), "name: same").unwrap();
        let config = Files::from([
            ("root_agent.yaml".to_owned(), b"name: b".to_vec()),
            ("same.yaml".to_owned(), b"name: same".to_vec()),
            ("sub/new.yaml".to_owned(), b"name: new".to_vec()),
        ]);
        let previous = save(app.path(), &config).unwrap();
        assert_eq!(previous.len(), 2, "{previous:?}");
        assert_eq!(yaml_files(app.path()).unwrap(), config);
        restore(app.path(), previous).unwrap();
        let files = yaml_files(app.path()).unwrap();
        assert_eq!(files["root_agent.yaml"], b"name: a");
        assert!(!files.contains_key("sub/new.yaml"));
        // No temporary file is left behind.
        let names: Vec<String> = std::fs::read_dir(app.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names.iter().all(|name| !name.ends_with(".tmp")),
            "{names:?}"
        );
    }

    #[test]
    fn the_draft_starts_as_the_apps_files_and_goes_away() {
        let app = tempfile::tempdir().unwrap();
        std::fs::write(app.path().join("root_agent.yaml"), "name: a").unwrap();
        std::fs::write(app.path().join("agent.py"), "code").unwrap();
        assert_eq!(
            read(app.path(), "w", "root_agent.yaml", true).unwrap(),
            Some(b"name: a".to_vec())
        );
        write_draft(
            app.path(),
            "w",
            &Files::from([("root_agent.yaml".to_owned(), b"name: draft".to_vec())]),
        )
        .unwrap();
        assert_eq!(
            read(app.path(), "w", "root_agent.yaml", true).unwrap(),
            Some(b"name: draft".to_vec())
        );
        // The app's own files are left alone until the save.
        assert_eq!(
            read(app.path(), "w", "root_agent.yaml", false).unwrap(),
            Some(b"name: a".to_vec())
        );
        assert!(!app.path().join("tmp/w/agent.py").exists());
        let saved = saved_config(app.path(), "w", Files::new()).unwrap();
        assert_eq!(saved["root_agent.yaml"], b"name: draft");
        remove_draft(app.path(), "w").unwrap();
        assert!(!app.path().join("tmp").exists());
        assert_eq!(read(app.path(), "w", "missing.yaml", false).unwrap(), None);
    }
}
