//! Getting the adk-web dev UI: its built files ship inside ADK Python's `google-adk` wheel on
//! PyPI. [`fetch`] downloads that wheel once with pip (pinned version, checked sha256), unpacks
//! only the UI's directory into the user cache, adds its icon fonts from npm (see
//! `fonts.rs`), and returns where it is. Nothing of it is part of this repository.

mod fonts;

use std::path::{Path, PathBuf};

use tokio::process::Command;

use crate::error::ServerError;

/// The `google-adk` release whose dev UI is served.
pub const ADK_WEB_VERSION: &str = "2.13.0";

/// The sha256 of `google_adk-2.13.0-py3-none-any.whl`; pip refuses a download that differs.
pub const ADK_WEB_WHEEL_SHA256: &str =
    "bec4c4ee0aa3e63a2243c23365c5aef666ea539bc48c78dfbbf004dbddfc5f00";

/// Overrides where the dev UI is kept (a directory holding `index.html`, or where to put it).
pub const DEV_UI_DIR_ENV: &str = "ADK_DEV_UI_DIR";

/// The wheel's directory that holds the UI.
const WHEEL_UI_PREFIX: &str = "google/adk/cli/browser/";

/// Unpacks the UI's files from the wheel (argv: wheel, prefix, target). Every member must stay
/// inside the target: absolute names, `..` and links are refused.
const UNPACK_SCRIPT: &str = r#"
import os, stat, sys, zipfile
wheel, prefix, target = sys.argv[1], sys.argv[2], os.path.realpath(sys.argv[3])
count = 0
with zipfile.ZipFile(wheel) as archive:
    for member in archive.infolist():
        if not member.filename.startswith(prefix) or member.is_dir():
            continue
        relative = member.filename[len(prefix):]
        if stat.S_ISLNK(member.external_attr >> 16):
            sys.exit(f"refusing link {member.filename}")
        path = os.path.realpath(os.path.join(target, relative))
        if os.path.isabs(relative) or not path.startswith(target + os.sep):
            sys.exit(f"refusing path outside the target: {member.filename}")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with archive.open(member) as source, open(path, "wb") as out:
            out.write(source.read())
        count += 1
if count == 0:
    sys.exit(f"no files under {prefix} in {wheel}")
"#;

/// Where the dev UI is kept: `$ADK_DEV_UI_DIR`, else `adk-rs/dev-ui/google-adk-<version>` in the
/// user cache directory (`$XDG_CACHE_HOME`, else `$HOME/.cache`); `None` when neither is known.
pub fn default_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(DEV_UI_DIR_ENV).filter(|dir| !dir.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|dir| Path::new(dir).is_absolute())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(
        cache
            .join("adk-rs")
            .join("dev-ui")
            .join(format!("google-adk-{ADK_WEB_VERSION}")),
    )
}

/// Makes sure the dev UI is in `dir` (see [`default_dir`]) and returns `dir`. The first call
/// downloads the pinned `google-adk` wheel with pip and unpacks the UI, then adds the icon fonts
/// and the Google Sans text font the UI would otherwise load from Google Fonts (pinned npm packages, fetched with `npm pack`,
/// into `dir/fonts/`, with the page pointed at them); later calls find them there. Concurrent
/// callers (processes too) wait for one download through a lock file. Without npm the UI is
/// served all the same, with a warning that its icons need the internet.
pub async fn fetch(dir: &Path) -> Result<PathBuf, ServerError> {
    let python = download_ui(dir).await?;
    if let Err(error) = fonts::install(dir, python.as_deref()).await {
        tracing::warn!(
            %error,
            "the dev UI's fonts are not installed: without the internet its icons show as words"
        );
    }
    Ok(dir.to_owned())
}

/// Downloads and unpacks the UI into `dir` unless it is there; returns the Python it used.
async fn download_ui(dir: &Path) -> Result<Option<String>, ServerError> {
    if dir.join("index.html").is_file() {
        return Ok(None);
    }
    let parent = dir.parent().unwrap_or(Path::new("."));
    tokio::fs::create_dir_all(parent)
        .await
        .map_err(|source| io_error(parent, source))?;
    let _lock = lock(&parent.join(".dev-ui.lock")).await?;
    if dir.join("index.html").is_file() {
        return Ok(None);
    }
    let python = find_python().await?;
    let staging = tempdir_in(parent).await?;
    let download = staging.join("wheel");
    let requirements = staging.join("requirements.txt");
    tokio::fs::write(
        &requirements,
        format!("google-adk=={ADK_WEB_VERSION} --hash=sha256:{ADK_WEB_WHEEL_SHA256}\n"),
    )
    .await
    .map_err(|source| io_error(&requirements, source))?;
    tracing::info!(
        version = ADK_WEB_VERSION,
        "downloading the adk-web dev UI (google-adk wheel) with pip"
    );
    run(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--only-binary=:all:",
                "--require-hashes",
                "--disable-pip-version-check",
                "-q",
                "-d",
            ])
            .arg(&download)
            .arg("-r")
            .arg(&requirements),
        "pip could not download the google-adk wheel",
    )
    .await?;
    let wheel = find_wheel(&download).await?;
    let unpacked = staging.join("ui");
    run(
        Command::new(&python)
            .args(["-c", UNPACK_SCRIPT])
            .arg(&wheel)
            .arg(WHEEL_UI_PREFIX)
            .arg(&unpacked),
        "the dev UI could not be unpacked from the wheel",
    )
    .await?;
    if tokio::fs::metadata(dir).await.is_ok() {
        tokio::fs::remove_dir_all(dir)
            .await
            .map_err(|source| io_error(dir, source))?;
    }
    tokio::fs::rename(&unpacked, dir)
        .await
        .map_err(|source| io_error(dir, source))?;
    let _ = tokio::fs::remove_dir_all(&staging).await;
    Ok(Some(python))
}

pub(crate) fn io_error(path: &Path, source: std::io::Error) -> ServerError {
    ServerError::DevUiIo {
        path: path.to_owned(),
        source,
    }
}

/// Holds an exclusive lock on `path` until dropped (waiting on a blocking thread).
pub(crate) async fn lock(path: &Path) -> Result<std::fs::File, ServerError> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|source| io_error(path, source))?;
    let path = path.to_owned();
    tokio::task::spawn_blocking(move || file.lock().map(|()| file))
        .await
        .map_err(|error| ServerError::DevUi {
            message: format!("waiting for the download lock failed: {error}"),
        })?
        .map_err(|source| io_error(&path, source))
}

/// A fresh directory under `parent` for one download.
async fn tempdir_in(parent: &Path) -> Result<PathBuf, ServerError> {
    let dir = parent.join(format!(".dev-ui-download-{}", std::process::id()));
    if tokio::fs::metadata(&dir).await.is_ok() {
        tokio::fs::remove_dir_all(&dir)
            .await
            .map_err(|source| io_error(&dir, source))?;
    }
    tokio::fs::create_dir_all(&dir)
        .await
        .map_err(|source| io_error(&dir, source))?;
    Ok(dir)
}

/// The first of `python3` and `python` that has pip.
pub(crate) async fn find_python() -> Result<String, ServerError> {
    for python in ["python3", "python"] {
        let status = Command::new(python)
            .args(["-m", "pip", "--version"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .await;
        if status.is_ok_and(|status| status.success()) {
            return Ok(python.to_owned());
        }
    }
    Err(ServerError::DevUi {
        message: format!(
            "pip is needed once to download the dev UI (the google-adk {ADK_WEB_VERSION} wheel from PyPI), \
             and neither `python3 -m pip` nor `python -m pip` works; install Python's pip \
             (e.g. `apt-get install python3-pip`), or unpack the wheel's google/adk/cli/browser \
             directory yourself and point {DEV_UI_DIR_ENV} at it, or serve without the UI (--no-ui)"
        ),
    })
}

/// Runs `command`; a failure is a [`ServerError::DevUi`] with `what` and the tail of its output.
pub(crate) async fn run(command: &mut Command, what: &str) -> Result<(), ServerError> {
    let output = command.output().await.map_err(|error| ServerError::DevUi {
        message: format!("{what}: {error}"),
    })?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    Err(ServerError::DevUi {
        message: format!("{what} ({}): {}", output.status, tail.join(" | ")),
    })
}

/// The one `.whl` file pip put in `dir`.
async fn find_wheel(dir: &Path) -> Result<PathBuf, ServerError> {
    let mut entries = tokio::fs::read_dir(dir)
        .await
        .map_err(|source| io_error(dir, source))?;
    while let Some(entry) = entries
        .next_entry()
        .await
        .map_err(|source| io_error(dir, source))?
    {
        if entry.path().extension().is_some_and(|ext| ext == "whl") {
            return Ok(entry.path());
        }
    }
    Err(ServerError::DevUi {
        message: format!(
            "pip reported success but left no wheel in {}",
            dir.display()
        ),
    })
}
