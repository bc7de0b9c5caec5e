//! Fetching llama.cpp's source: the pinned `llama-cpp-python` sdist from PyPI, checked by its
//! hash and unpacked only inside its folder.

use std::path::Path;

use super::Setup;
use super::pip::pip_error;
use crate::commands;
use crate::error::{Error, Result};
use crate::pins;
use crate::process::{self, create_dir, first_existing};
use crate::progress::{ProgressEvent, Step};

impl Setup<'_> {
    /// Downloads the sdist unless it is there.
    pub(super) async fn download_source(&mut self) -> Result<()> {
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

    /// Unpacks the sdist unless llama.cpp's `CMakeLists.txt` is there.
    pub(super) async fn unpack_source(&mut self) -> Result<()> {
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
}

/// Removes the directory `dir` if it exists.
async fn remove_dir_if_present(dir: &Path) -> Result<()> {
    match tokio::fs::remove_dir_all(dir).await {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(Error::io("remove", dir, err)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::setup::host::program_runs;

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
    pub(super) async fn unpack(
        python: &str,
        archive: &Path,
        target: &Path,
        sha256: &str,
    ) -> (bool, String) {
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
    pub(super) async fn review_10_the_sdist_is_checked_by_hash_and_unpacked_only_inside_its_folder()
    {
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
}
