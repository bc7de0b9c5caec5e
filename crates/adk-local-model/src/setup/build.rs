//! Building `llama-server`: CMake and Ninja from PyPI, then llama.cpp configured and compiled
//! (niced, its progress read from Ninja's output), the binary moved into place whole.

use std::path::{Path, PathBuf};

use super::Setup;
use crate::commands::{self, CpuFeatures};
use crate::error::{Error, NEEDED_MB, Result, says_disk_full};
use crate::pins;
use crate::process::{self, create_dir, first_existing};
use crate::progress::{ProgressEvent, Step};

impl Setup<'_> {
    /// Installs CMake and Ninja unless they are there; returns their executables.
    pub(super) async fn install_build_tools(&mut self) -> Result<(PathBuf, PathBuf)> {
        let layout = self.layout.clone();
        let found = || async {
            let cmake = first_existing(&layout.cmake_candidates()).await?;
            let ninja = first_existing(&layout.ninja_candidates()).await?;
            Some((cmake, ninja))
        };
        if let Some(tools) = found().await {
            let reason = format!("already in {}", self.layout.tools().display());
            self.progress.report(&ProgressEvent::Skipped {
                step: Step::InstallBuildTools,
                reason,
            });
            return Ok(tools);
        }
        let what = format!(
            "install cmake {} and ninja {}",
            pins::CMAKE_VERSION,
            pins::NINJA_VERSION
        );
        let started = self.start(Step::InstallBuildTools, &what);
        let requirements = self.requirements("tools.txt", &pins::build_tools()).await?;
        self.pip(
            &what,
            &commands::pip_install_wheels(&requirements, &self.layout.tools()),
            "pip-tools.log",
        )
        .await?;
        let tools = found().await.ok_or_else(|| Error::PipFailed {
            what: what.clone(),
            status: "success".into(),
            tail: format!(
                "no cmake or ninja executable under {}",
                self.layout.tools().display()
            ),
            log: self.layout.logs().join("pip-tools.log"),
        })?;
        self.finish(Step::InstallBuildTools, started);
        Ok(tools)
    }

    /// Configures and compiles `llama-server`, then moves it into `bin/`.
    pub(super) async fn build(&mut self, cmake: &Path, ninja: &Path) -> Result<()> {
        let layout = &self.layout;
        let build_dir = layout.build();
        let log = layout.build_log();
        tokio::fs::write(&log, b"")
            .await
            .map_err(|err| Error::io("write log", &log, err))?;
        let jobs = self
            .config
            .build_jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, usize::from));
        let detail = format!("compile llama.cpp with {jobs} jobs (about 15 min on 2 cores)");
        let started = self.start(Step::Build, &detail);
        let niceness = self.config.build_niceness;
        let source = layout.llama_cpp_source();
        let configure =
            commands::cmake_configure(&source, &build_dir, ninja, CpuFeatures::detect());
        let status = process::run_streamed(
            process::niced(cmake, &configure, niceness),
            "cmake",
            &log,
            |_| {},
        )
        .await?;
        if !status.success() {
            return Err(build_error("configure", &status.to_string(), &log, &build_dir).await);
        }
        let progress = self.progress;
        let build = commands::cmake_build(&build_dir, jobs);
        let status = process::run_streamed(
            process::niced(cmake, &build, niceness),
            "cmake",
            &log,
            |line| {
                if let Some((done, total)) = crate::progress::ninja_progress(line) {
                    progress.report(&ProgressEvent::Advanced {
                        step: Step::Build,
                        done,
                        total,
                    });
                }
            },
        )
        .await?;
        if !status.success() {
            return Err(build_error("build", &status.to_string(), &log, &build_dir).await);
        }
        let built = commands::built_server(&build_dir);
        let binary = layout.server_binary();
        let bin_dir = binary.parent().unwrap_or(layout.dir()).to_path_buf();
        create_dir(&bin_dir).await?;
        // Copy then rename, so a present binary is always a whole one.
        let partial = bin_dir.join(".llama-server.partial");
        tokio::fs::copy(&built, &partial)
            .await
            .map_err(|err| Error::io("copy", &built, err))?;
        tokio::fs::rename(&partial, &binary)
            .await
            .map_err(|err| Error::io("move", &partial, err))?;
        self.finish(Step::Build, started);
        Ok(())
    }
}

/// The error for a failed configure or build: a full disk, or [`Error::BuildFailed`].
async fn build_error(stage: &'static str, status: &str, log: &Path, build_dir: &Path) -> Error {
    let tail = process::tail_of_file(log).await;
    if says_disk_full(&tail) {
        let dir = build_dir.to_path_buf();
        return Error::NoDiskSpace {
            dir,
            available_mb: 0,
            needed_mb: NEEDED_MB,
        };
    }
    Error::BuildFailed {
        stage,
        status: status.to_owned(),
        log: log.to_path_buf(),
        tail,
        build_dir: build_dir.to_path_buf(),
    }
}
