//! `cargo xtask codegen`: writes the files the repository generates from Rust types, today the
//! JSON Schema of the YAML agent config; `--check` writes nothing and fails when a committed file
//! differs from what the types generate, so a change to the config types cannot land without its
//! schema.
// `run` reports what it wrote to the person at the terminal: that is its job.
#![allow(clippy::print_stdout)]

use std::path::Path;

use anyhow::{Context as _, bail};

/// Where the JSON Schema of the agent config lives, relative to the workspace root.
pub const AGENT_CONFIG_SCHEMA: &str = "schemas/agent-config.schema.json";

/// Whether to write the generated files or only compare them with the committed ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Writes every generated file that differs.
    Write,
    /// Writes nothing; fails when a committed file is missing or differs.
    Check,
}

/// Every generated file: its path relative to the workspace root, and its contents.
pub fn generated() -> anyhow::Result<Vec<(&'static str, String)>> {
    let mut schema = serde_json::to_string_pretty(&adk_config::json_schema())
        .context("cannot write the agent config schema as JSON")?;
    schema.push('\n');
    Ok(vec![(AGENT_CONFIG_SCHEMA, schema)])
}

/// The generated files whose committed copy under `root` is missing or differs.
pub fn stale(root: &Path) -> anyhow::Result<Vec<&'static str>> {
    Ok(generated()?
        .into_iter()
        .filter(|(path, contents)| {
            std::fs::read_to_string(root.join(path)).ok().as_ref() != Some(contents)
        })
        .map(|(path, _)| path)
        .collect())
}

/// Writes or checks the generated files of the workspace at `root`.
pub fn run(root: &Path, mode: Mode) -> anyhow::Result<()> {
    match mode {
        Mode::Check => {
            let stale = stale(root)?;
            if !stale.is_empty() {
                bail!(
                    "generated files are stale: {}; run `cargo xtask codegen` and commit the result",
                    stale.join(", ")
                );
            }
            println!("codegen: every generated file is up to date");
        }
        Mode::Write => {
            for (path, contents) in generated()? {
                let target = root.join(path);
                if std::fs::read_to_string(&target).ok().as_ref() == Some(&contents) {
                    println!("codegen: {path} is up to date");
                    continue;
                }
                if let Some(dir) = target.parent() {
                    std::fs::create_dir_all(dir)
                        .with_context(|| format!("cannot create {}", dir.display()))?;
                }
                std::fs::write(&target, contents)
                    .with_context(|| format!("cannot write {}", target.display()))?;
                println!("codegen: wrote {path}");
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_files_are_fresh() {
        let stale = stale(&crate::workspace_root()).unwrap();
        assert!(
            stale.is_empty(),
            "stale generated files: {stale:?}; run `cargo xtask codegen` and commit the result"
        );
    }

    #[test]
    fn check_fails_on_a_missing_file_and_write_fixes_it() {
        let root = tempfile::tempdir().unwrap();
        let error = run(root.path(), Mode::Check).unwrap_err();
        assert_eq!(
            error.to_string(),
            "generated files are stale: schemas/agent-config.schema.json; run `cargo xtask \
             codegen` and commit the result"
        );
        run(root.path(), Mode::Write).unwrap();
        run(root.path(), Mode::Check).unwrap();
        std::fs::write(root.path().join(AGENT_CONFIG_SCHEMA), "{}\n").unwrap();
        assert!(run(root.path(), Mode::Check).is_err());
    }
}
