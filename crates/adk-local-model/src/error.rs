//! The error type: every failure says what went wrong and how to fix it.

use std::path::PathBuf;

use crate::env::{DIR_ENV, PYTHON_ENV};

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while fetching, building or serving the local model.
///
/// Each message names the cause and ends with a fix a person can apply.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No cache directory could be derived from the environment.
    #[error(
        "no cache directory for the local model: neither {DIR_ENV} nor the user's cache directory \
         (XDG_CACHE_HOME, HOME or LOCALAPPDATA) is set; fix: set {DIR_ENV} to a writable directory"
    )]
    NoCacheDir,

    /// No Python interpreter with pip was found.
    #[error(
        "pip is missing: no Python with pip found (tried {tried}); fix: install Python 3 and pip \
         (Debian/Ubuntu: `apt-get install python3-pip`, macOS: `brew install python`) or set \
         {PYTHON_ENV} to a Python that has pip"
    )]
    PipMissing {
        /// The interpreters that were tried, comma separated.
        tried: String,
    },

    /// A pip command failed.
    #[error(
        "pip could not {what} (exit {status}); last lines of its output:\n{tail}\nfix: check that \
         PyPI is reachable (pip's index and proxy settings) and retry; the full output is in {}",
        log.display()
    )]
    PipFailed {
        /// What pip was asked to do, e.g. "download llama-cpp-python 0.3.36".
        what: String,
        /// The exit status, as text.
        status: String,
        /// The last lines of pip's output.
        tail: String,
        /// The file that holds pip's full output.
        log: PathBuf,
    },

    /// Another `llama-cpp-python` version was configured without its hash.
    #[error(
        "llama-cpp-python {version} is not pinned: every download is checked against a SHA-256, \
         and only {pinned}'s is known; fix: set LocalModelConfig::llama_cpp_python_sha256 to the \
         sha256 of llama_cpp_python-{version}.tar.gz as PyPI lists it"
    )]
    UnpinnedVersion {
        /// The configured version.
        version: String,
        /// The version whose hash is pinned.
        pinned: &'static str,
    },

    /// No C or C++ compiler was found, so llama.cpp cannot be built.
    #[error(
        "the compiler is missing: no {language} compiler found (tried {tried}); fix: install one \
         (Debian/Ubuntu: `apt-get install build-essential`, Fedora: `dnf install gcc-c++`, \
         macOS: `xcode-select --install`) or set {env} to its path"
    )]
    CompilerMissing {
        /// "C" or "C++".
        language: &'static str,
        /// The commands that were tried, comma separated.
        tried: String,
        /// The environment variable that names the compiler, `CC` or `CXX`.
        env: &'static str,
    },

    /// The disk holding the cache directory is (nearly) full.
    #[error(
        "no disk space: {} has {available_mb} MB free but the local model needs about \
         {needed_mb} MB; fix: free some space or point {DIR_ENV} at a larger disk",
        dir.display()
    )]
    NoDiskSpace {
        /// The cache directory.
        dir: PathBuf,
        /// Free megabytes, as far as known (0 when a write failed for lack of space).
        available_mb: u64,
        /// Megabytes needed.
        needed_mb: u64,
    },

    /// The port the server was asked to listen on is taken.
    #[error(
        "port {port} on 127.0.0.1 is already in use; fix: stop whatever listens there, or use \
         port 0 to pick a free port"
    )]
    PortInUse {
        /// The port.
        port: u16,
    },

    /// CMake or the compiler failed while building `llama-server`.
    #[error(
        "building llama-server failed during {stage} (exit {status}); last lines of the build log \
         {}:\n{tail}\nfix: read the log; if the sources are damaged, delete {} and run again",
        log.display(),
        build_dir.display()
    )]
    BuildFailed {
        /// "configure" or "build".
        stage: &'static str,
        /// The exit status, as text.
        status: String,
        /// The build log.
        log: PathBuf,
        /// The last lines of the build log.
        tail: String,
        /// The CMake build directory.
        build_dir: PathBuf,
    },

    /// The unpacked sdist has no llama.cpp source where it was expected.
    #[error(
        "the llama-cpp-python sdist has no llama.cpp source at {}; fix: delete {} and run again, \
         or pick another llama-cpp-python version",
        path.display(),
        dir.display()
    )]
    SourceMissing {
        /// Where `CMakeLists.txt` was expected.
        path: PathBuf,
        /// The directory to delete.
        dir: PathBuf,
    },

    /// The model file does not exist.
    #[error(
        "the model file {} does not exist; fix: give the path of a GGUF file, or delete it from \
         the configuration to use the bundled SmolLM2 model",
        path.display()
    )]
    ModelMissing {
        /// The path that was given or expected.
        path: PathBuf,
    },

    /// `llama-server` exited before it answered `/health`.
    #[error(
        "llama-server exited early ({status}) before it became healthy; last lines of its output \
         ({}):\n{tail}\nfix: read the output above; a crash right at start usually means the \
         binary was built for another CPU, so delete {} and run again to rebuild it",
        log.display(),
        binary.display()
    )]
    ServerExited {
        /// The exit status, as text.
        status: String,
        /// The server's log file.
        log: PathBuf,
        /// The last lines of the server's output.
        tail: String,
        /// The server binary.
        binary: PathBuf,
    },

    /// `llama-server` did not answer `/health` in time.
    #[error(
        "llama-server did not become healthy within {seconds} s; last lines of its output ({}):\n\
         {tail}\nfix: raise the health timeout for a large model or a slow disk",
        log.display()
    )]
    HealthTimeout {
        /// The timeout, in seconds.
        seconds: u64,
        /// The server's log file.
        log: PathBuf,
        /// The last lines of the server's output.
        tail: String,
    },

    /// A program could not be started at all.
    #[error("could not run {program}: {source}; fix: check that it is installed and executable")]
    Spawn {
        /// The program.
        program: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// A file system operation failed.
    #[error("could not {action} {}: {source}", path.display())]
    Io {
        /// What was being done, e.g. "create directory".
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// An [`Error::Io`], or an [`Error::NoDiskSpace`] when the disk is full.
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        let path = path.into();
        if source.kind() == std::io::ErrorKind::StorageFull {
            return Self::NoDiskSpace {
                dir: path,
                available_mb: 0,
                needed_mb: NEEDED_MB,
            };
        }
        Self::Io {
            action,
            path,
            source,
        }
    }
}

/// About how many megabytes a full setup takes: the sdist, its unpacked source, the build tree,
/// the tools and the model, with some room to spare.
pub(crate) const NEEDED_MB: u64 = 1_500;

/// Whether a program's output says that the disk is full.
pub(crate) fn says_disk_full(output: &str) -> bool {
    output.contains("No space left on device") || output.contains("ENOSPC")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_say_what_and_how_to_fix() {
        let pip = Error::PipMissing {
            tried: "python3, python".into(),
        }
        .to_string();
        assert!(pip.starts_with("pip is missing"), "{pip}");
        assert!(pip.contains("apt-get install python3-pip"), "{pip}");

        let cc = Error::CompilerMissing {
            language: "C++",
            tried: "c++, g++".into(),
            env: "CXX",
        };
        let cc = cc.to_string();
        assert!(
            cc.contains("no C++ compiler found (tried c++, g++)"),
            "{cc}"
        );
        assert!(
            cc.contains("build-essential") && cc.contains("set CXX"),
            "{cc}"
        );

        let port = Error::PortInUse { port: 8080 }.to_string();
        assert!(
            port.contains("port 8080 on 127.0.0.1 is already in use"),
            "{port}"
        );
        assert!(port.contains("port 0"), "{port}");

        let disk = Error::NoDiskSpace {
            dir: "/c".into(),
            available_mb: 10,
            needed_mb: 1500,
        };
        let disk = disk.to_string();
        assert!(
            disk.contains("/c has 10 MB free") && disk.contains(DIR_ENV),
            "{disk}"
        );

        let build = Error::BuildFailed {
            stage: "build",
            status: "exit status: 1".into(),
            log: "/c/build.log".into(),
            tail: "error: boom".into(),
            build_dir: "/c/build".into(),
        }
        .to_string();
        assert!(build.contains("failed during build"), "{build}");
        assert!(
            build.contains("/c/build.log") && build.contains("error: boom"),
            "{build}"
        );

        let exited = Error::ServerExited {
            status: "signal: 4 (SIGILL)".into(),
            log: "/c/logs/server.log".into(),
            tail: "Illegal instruction".into(),
            binary: "/c/bin/llama-server".into(),
        }
        .to_string();
        assert!(
            exited.contains("exited early (signal: 4 (SIGILL))"),
            "{exited}"
        );
        assert!(
            exited.contains("Illegal instruction") && exited.contains("rebuild"),
            "{exited}"
        );
    }

    #[test]
    fn a_full_disk_becomes_no_disk_space() {
        let full = std::io::Error::from(std::io::ErrorKind::StorageFull);
        assert!(matches!(
            Error::io("write", "/c/x", full),
            Error::NoDiskSpace { .. }
        ));
        let other = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert!(matches!(
            Error::io("write", "/c/x", other),
            Error::Io {
                action: "write",
                ..
            }
        ));
        assert!(says_disk_full(
            "cc1plus: fatal error: No space left on device"
        ));
        assert!(!says_disk_full("all good"));
    }
}
