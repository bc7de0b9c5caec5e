//! Child processes awaited with tokio: finding programs, capturing output into logs, tails.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

use crate::error::{Error, Result};

/// How many lines of a log an error message quotes.
pub(crate) const TAIL_LINES: usize = 25;

/// The last `lines` lines of `text`.
pub(crate) fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The last [`TAIL_LINES`] lines of the file at `path`, or a note that it cannot be read.
pub(crate) async fn tail_of_file(path: &Path) -> String {
    match tokio::fs::read(path).await {
        Ok(bytes) => tail(&String::from_utf8_lossy(&bytes), TAIL_LINES),
        Err(err) => format!("(cannot read {}: {err})", path.display()),
    }
}

/// A command for `program` with `args`, standard input closed.
pub(crate) fn command(program: impl AsRef<OsStr>, args: &[OsString]) -> Command {
    let mut command = Command::new(program);
    command.args(args).stdin(Stdio::null()).kill_on_drop(true);
    command
}

/// `command` run under `nice -n niceness` where that exists (Unix), else `command` itself.
pub(crate) fn niced(program: &Path, args: &[OsString], niceness: Option<i32>) -> Command {
    match niceness {
        Some(niceness) if cfg!(unix) => {
            let mut nice_args: Vec<OsString> =
                vec!["-n".into(), niceness.to_string().into(), program.into()];
            nice_args.extend(args.iter().cloned());
            command("nice", &nice_args)
        }
        _ => command(program, args),
    }
}

/// Whether `program --version` runs and succeeds.
pub(crate) async fn runs(program: &OsStr, version_args: &[&str]) -> bool {
    let args: Vec<OsString> = version_args.iter().map(OsString::from).collect();
    let mut command = command(program, &args);
    command.stdout(Stdio::null()).stderr(Stdio::null());
    matches!(command.status().await, Ok(status) if status.success())
}

/// The first existing file among `candidates`.
pub(crate) async fn first_existing(candidates: &[PathBuf]) -> Option<PathBuf> {
    for candidate in candidates {
        if tokio::fs::metadata(candidate)
            .await
            .is_ok_and(|meta| meta.is_file())
        {
            return Some(candidate.clone());
        }
    }
    None
}

/// Creates the directory `dir` and its parents.
pub(crate) async fn create_dir(dir: &Path) -> Result<()> {
    tokio::fs::create_dir_all(dir)
        .await
        .map_err(|err| Error::io("create directory", dir, err))
}

/// The exit status as a person reads it, e.g. `exit status: 1`.
pub(crate) fn status_text(status: ExitStatus) -> String {
    status.to_string()
}

/// Runs `command` to its end, writes its standard output and error to `log`, and returns the
/// status and the combined output.
pub(crate) async fn run_captured(
    mut command: Command,
    program: &str,
    log: &Path,
) -> Result<(ExitStatus, String)> {
    let output = command.output().await.map_err(|source| Error::Spawn {
        program: program.to_owned(),
        source,
    })?;
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    if let Some(parent) = log.parent() {
        create_dir(parent).await?;
    }
    tokio::fs::write(log, &text)
        .await
        .map_err(|err| Error::io("write log", log, err))?;
    Ok((output.status, text))
}

/// Runs `command`, appending its standard output and error to `log` and calling `on_line` for
/// each line of standard output as it arrives; returns the exit status.
pub(crate) async fn run_streamed(
    mut command: Command,
    program: &str,
    log: &Path,
    mut on_line: impl FnMut(&str),
) -> Result<ExitStatus> {
    let mut file = tokio::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .await
        .map_err(|err| Error::io("open log", log, err))?;
    let stderr = file
        .try_clone()
        .await
        .map_err(|err| Error::io("open log", log, err))?;
    command
        .stdout(Stdio::piped())
        .stderr(stderr.into_std().await);
    let mut child = command.spawn().map_err(|source| Error::Spawn {
        program: program.to_owned(),
        source,
    })?;
    if let Some(stdout) = child.stdout.take() {
        let mut lines = BufReader::new(stdout).lines();
        while let Some(line) = lines
            .next_line()
            .await
            .map_err(|err| Error::io("read output of", program, err))?
        {
            on_line(&line);
            file.write_all(line.as_bytes())
                .await
                .map_err(|err| Error::io("write log", log, err))?;
            file.write_all(b"\n")
                .await
                .map_err(|err| Error::io("write log", log, err))?;
        }
    }
    file.flush()
        .await
        .map_err(|err| Error::io("write log", log, err))?;
    child
        .wait()
        .await
        .map_err(|err| Error::io("wait for", program, err))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_lines() {
        assert_eq!(tail("a\nb\nc\n", 2), "b\nc");
        assert_eq!(tail("a", 5), "a");
        assert_eq!(tail("", 5), "");
    }

    #[cfg(unix)]
    #[test]
    fn nice_wraps_the_command() {
        let args = [OsString::from("--build"), OsString::from("/b")];
        let niced = niced(Path::new("/t/cmake"), &args, Some(15));
        let std = niced.as_std();
        assert_eq!(std.get_program(), "nice");
        let got: Vec<_> = std.get_args().collect();
        assert_eq!(got, ["-n", "15", "/t/cmake", "--build", "/b"]);
        let plain = super::niced(Path::new("/t/cmake"), &args, None);
        assert_eq!(plain.as_std().get_program(), "/t/cmake");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn output_lands_in_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("logs").join("x.log");
        let args: Vec<OsString> = vec!["-c".into(), "echo out; echo err >&2; exit 3".into()];
        let (status, text) = run_captured(command("sh", &args), "sh", &log)
            .await
            .unwrap();
        assert_eq!(status.code(), Some(3));
        assert!(text.contains("out") && text.contains("err"), "{text}");
        assert_eq!(tokio::fs::read_to_string(&log).await.unwrap(), text);

        let streamed = dir.path().join("s.log");
        let args: Vec<OsString> = vec![
            "-c".into(),
            "echo '[1/2] a'; echo oops >&2; echo '[2/2] b'".into(),
        ];
        let mut seen = Vec::new();
        let status = run_streamed(command("sh", &args), "sh", &streamed, |line| {
            seen.push(line.to_owned());
        })
        .await
        .unwrap();
        assert!(status.success());
        assert_eq!(seen, ["[1/2] a", "[2/2] b"]);
        let logged = tokio::fs::read_to_string(&streamed).await.unwrap();
        assert!(
            logged.contains("oops") && logged.contains("[2/2] b"),
            "{logged}"
        );

        let missing = run_captured(command("/nonexistent/prog", &[]), "prog", &log).await;
        assert!(matches!(missing, Err(Error::Spawn { .. })));
    }
}
