//! What the machine must have before a build starts: room on the disk and C and C++ compilers.

use std::ffi::OsString;
use std::path::Path;

use crate::error::{Error, Result};
use crate::process;

/// Fails with [`Error::NoDiskSpace`] when `df` says `dir` has less than `needed_mb` free; passes
/// when `df` is missing or unreadable (a full disk is still caught when a write fails).
pub(super) async fn check_disk(dir: &Path, needed_mb: u64) -> Result<()> {
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
pub(super) async fn check_compilers() -> Result<()> {
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
pub(super) async fn program_runs(program: &str) -> bool {
    process::runs(std::ffi::OsStr::new(program), &["--version"]).await
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
