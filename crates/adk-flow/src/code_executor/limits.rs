//! `ExecutionLimits`: how long a run may take, how much memory and output it may use, and which
//! of its files come back.

use std::time::Duration;

use super::CodeExecutorError;

/// The limits of one run of model-written code.
///
/// ```
/// use std::time::Duration;
/// use adk_flow::ExecutionLimits;
///
/// let limits = ExecutionLimits::default();
/// assert_eq!(limits.timeout, Duration::from_secs(30));
/// assert_eq!(limits.memory_bytes, 512 * 1024 * 1024);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExecutionLimits {
    /// Wall time; at the limit the run's process group is killed and the outcome is
    /// `OUTCOME_DEADLINE_EXCEEDED`. Default 30 s.
    pub timeout: Duration,
    /// Address space of each process (`RLIMIT_AS`); an allocation past it fails (Python raises
    /// `MemoryError`). Default 512 MiB.
    pub memory_bytes: u64,
    /// Bytes kept of standard output and of standard error each; the rest is read and dropped,
    /// and the output says it was cut. Default 256 KiB.
    pub max_output_bytes: usize,
    /// The largest file the code may write (`RLIMIT_FSIZE`) and so the largest returned.
    /// Default 8 MiB.
    pub max_file_bytes: u64,
    /// How many files of the scratch directory are returned; the output names those left out.
    /// Default 16.
    pub max_files: usize,
}

impl Default for ExecutionLimits {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(30),
            memory_bytes: 512 * 1024 * 1024,
            max_output_bytes: 256 * 1024,
            max_file_bytes: 8 * 1024 * 1024,
            max_files: 16,
        }
    }
}

impl ExecutionLimits {
    /// Refuses limits that cannot be applied.
    pub(super) fn check(&self) -> Result<(), CodeExecutorError> {
        if self.timeout.is_zero() {
            return Err(CodeExecutorError::InvalidLimit(
                "the timeout is zero".into(),
            ));
        }
        if self.memory_bytes == 0 || self.max_file_bytes == 0 {
            return Err(CodeExecutorError::InvalidLimit(
                "the memory and file size limits must be above zero".into(),
            ));
        }
        Ok(())
    }
}

/// The setters both local executors' builders have, over their `limits`, `prlimit` and
/// `scratch_root` fields.
macro_rules! shared_builder_setters {
    () => {
        /// All limits at once.
        pub fn limits(mut self, limits: $crate::ExecutionLimits) -> Self {
            self.limits = limits;
            self
        }

        /// The wall-time limit of a run (default 30 s).
        pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
            self.limits.timeout = timeout;
            self
        }

        /// The address-space limit of each process, in bytes (default 512 MiB).
        pub fn memory_limit(mut self, bytes: u64) -> Self {
            self.limits.memory_bytes = bytes;
            self
        }

        /// Bytes kept of standard output and of standard error each (default 256 KiB).
        pub fn max_output_bytes(mut self, bytes: usize) -> Self {
            self.limits.max_output_bytes = bytes;
            self
        }

        /// The largest file the code may write and get back (default 8 MiB).
        pub fn max_file_bytes(mut self, bytes: u64) -> Self {
            self.limits.max_file_bytes = bytes;
            self
        }

        /// How many written files are returned (default 16).
        pub fn max_files(mut self, count: usize) -> Self {
            self.limits.max_files = count;
            self
        }

        /// The `prlimit` program that applies the memory and file limits (default: on `PATH`).
        pub fn prlimit(mut self, program: impl Into<std::path::PathBuf>) -> Self {
            self.prlimit = Some(program.into());
            self
        }

        /// Where scratch directories are made (default: the system's temporary directory).
        pub fn scratch_root(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
            self.scratch_root = Some(dir.into());
            self
        }
    };
}

pub(super) use shared_builder_setters;
