//! Running pip: the Python that has it, the requirements file of each download, and what a
//! failed run becomes.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::Setup;
use crate::env::PYTHON_ENV;
use crate::error::{Error, NEEDED_MB, Result, says_disk_full};
use crate::process::{self, TAIL_LINES, create_dir, tail};

impl Setup<'_> {
    /// Writes the requirements file `name` with `text` (the pins of one download) and returns its
    /// path.
    pub(super) async fn requirements(&self, name: &str, text: &str) -> Result<PathBuf> {
        let dir = self.layout.requirements();
        create_dir(&dir).await?;
        let path = dir.join(name);
        tokio::fs::write(&path, text)
            .await
            .map_err(|err| Error::io("write", &path, err))?;
        Ok(path)
    }

    /// Runs pip with `args`, logging to `logs/<log_name>`.
    pub(super) async fn pip(
        &mut self,
        what: &str,
        args: &[OsString],
        log_name: &str,
    ) -> Result<()> {
        let python = self.python().await?;
        let log = self.layout.logs().join(log_name);
        let (status, output) =
            process::run_captured(process::command(&python, args), "pip", &log).await?;
        if status.success() {
            Ok(())
        } else {
            Err(pip_error(
                what,
                &status.to_string(),
                &output,
                log,
                self.layout.dir(),
            ))
        }
    }

    /// The Python interpreter that has pip: the configured one, `ADK_LOCAL_MODEL_PYTHON`,
    /// `python3` or `python`, the first whose `-m pip --version` works.
    pub(super) async fn python(&mut self) -> Result<OsString> {
        if let Some(python) = &self.python {
            return Ok(python.clone());
        }
        let candidates: Vec<OsString> = match &self.config.python {
            Some(python) => vec![python.into()],
            None => std::env::var_os(PYTHON_ENV)
                .filter(|value| !value.is_empty())
                .map_or_else(
                    || vec!["python3".into(), "python".into()],
                    |python| vec![python],
                ),
        };
        for candidate in &candidates {
            if process::runs(candidate, &["-m", "pip", "--version"]).await {
                self.python = Some(candidate.clone());
                return Ok(candidate.clone());
            }
        }
        let tried = candidates
            .iter()
            .map(|c| c.to_string_lossy())
            .collect::<Vec<_>>()
            .join(", ");
        Err(Error::PipMissing { tried })
    }
}

/// The error for a failed pip or Python run: a full disk, or [`Error::PipFailed`].
pub(super) fn pip_error(what: &str, status: &str, output: &str, log: PathBuf, dir: &Path) -> Error {
    if says_disk_full(output) {
        return Error::NoDiskSpace {
            dir: dir.to_path_buf(),
            available_mb: 0,
            needed_mb: NEEDED_MB,
        };
    }
    Error::PipFailed {
        what: what.to_owned(),
        status: status.to_owned(),
        tail: tail(output, TAIL_LINES),
        log,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::LocalModelConfig;
    use crate::progress::NoProgress;

    #[tokio::test]
    pub(super) async fn a_python_without_pip_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = LocalModelConfig::in_dir(dir.path());
        config.python = Some(dir.path().join("no-such-python"));
        let mut setup = Setup {
            config: &config,
            layout: config.layout(),
            progress: &NoProgress,
            python: None,
        };
        let err = setup.python().await.unwrap_err();
        assert!(err.to_string().starts_with("pip is missing"), "{err}");
        assert!(err.to_string().contains("no-such-python"), "{err}");
    }
}
