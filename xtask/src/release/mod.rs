//! `cargo xtask release <version> [--dry-run] [--publish]`: prepares a release of every library
//! crate of the workspace, and, on the release's tag, publishes it.
//!
//! Preparing (the default) checks that the tree is clean, that the version is greater than the
//! workspace's, that CHANGELOG.md has a section for it and that every crate's metadata is complete;
//! then it bumps the workspace's version and the internal requirements, dates the CHANGELOG
//! section, runs `cargo xtask ci`, packages every published crate (`cargo package --offline`, so
//! that the crates are checked as crates.io will build them), runs `cargo-semver-checks` against
//! the previous release when there is one, and prints the order in which the crates go to
//! crates.io. With `--dry-run` it writes nothing: the checks, ci and the packaging run on the tree
//! as it is.
//!
//! Publishing (`--publish`, what the release workflow runs on a `v<version>` tag) expects the
//! tree to be that release already (the workspace at `<version>`, the tag on `HEAD`), runs the
//! same checks, ci, packaging and semver-checks, and then `cargo publish`es each crate in order;
//! with `--dry-run` it stops before publishing. `--skip-checks` leaves out the slow steps (ci,
//! packaging, semver-checks) for a run that follows one that passed them on the same commit, as
//! the workflow's publish job follows its check job; the fast checks still run, and `cargo
//! publish` still builds every crate from its package.
// The release reports its progress on stdout, like every xtask command.
#![allow(clippy::print_stdout)]

pub mod bump;
pub mod changelog;
pub mod git;
pub mod metadata;
pub mod order;
pub mod semver_checks;
pub mod workspace;

use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, bail};
use semver::Version;

use crate::ci;
use crate::tools::cargo;
use changelog::{CHANGELOG, SectionError};
use workspace::Workspace;

/// What `cargo xtask release` does, from its command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The version to release.
    pub version: Version,
    /// Write nothing and publish nothing.
    pub dry_run: bool,
    /// Publish the release the tree already is, instead of preparing one.
    pub publish: bool,
    /// The slow steps to run; the command line runs them all, tests turn them off.
    pub steps: Steps,
}

/// The slow steps of a release, each of which can be left out (by tests, which check the rest on
/// a copy of the repository).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Steps {
    /// `cargo xtask ci`.
    pub ci: bool,
    /// `cargo package` of every published crate.
    pub package: bool,
    /// `cargo-semver-checks` against the previous release.
    pub semver: bool,
}

impl Steps {
    /// Every step: what the command line runs.
    pub const ALL: Self = Self {
        ci: true,
        package: true,
        semver: true,
    };

    /// No slow step: the checks, the bump and the publish order alone.
    pub const NONE: Self = Self {
        ci: false,
        package: false,
        semver: false,
    };
}

/// The command line's usage text for `release`.
pub const USAGE: &str = "\
  release <version> [--dry-run] [--publish] [--skip-checks]
            check a clean tree, a CHANGELOG.md section for <version> and every crate's metadata,
            bump the workspace to <version>, run ci, cargo package every published crate, run
            cargo-semver-checks against the previous v<version> tag, and print the publish order;
            --dry-run writes nothing; --publish (on the release's tag, as the release workflow
            runs it) publishes the tree that is already <version> to crates.io, in that order;
            --skip-checks leaves out ci, cargo package and semver-checks (after a run that passed
            them on the same commit)
";

impl Options {
    /// The options of `cargo xtask release <args>`.
    pub fn parse(args: &[&str]) -> anyhow::Result<Self> {
        let mut version = None;
        let mut dry_run = false;
        let mut publish = false;
        let mut steps = Steps::ALL;
        for arg in args {
            match *arg {
                "--dry-run" => dry_run = true,
                "--publish" => publish = true,
                "--skip-checks" => steps = Steps::NONE,
                flag if flag.starts_with('-') => bail!("unknown release option {flag}\n\n{USAGE}"),
                text if version.is_none() => {
                    let text = text.strip_prefix('v').unwrap_or(text);
                    version = Some(Version::parse(text).with_context(|| {
                        format!("{text:?} is not a semantic version such as 0.2.0")
                    })?);
                }
                extra => bail!("unexpected argument {extra:?}\n\n{USAGE}"),
            }
        }
        let Some(version) = version else {
            bail!("which version? `cargo xtask release <version> [--dry-run]`\n\n{USAGE}");
        };
        Ok(Self {
            version,
            dry_run,
            publish,
            steps,
        })
    }
}

/// Why the semver step did not run when the run leaves it out.
pub const LEFT_OUT: &str = "left out of this run (--skip-checks)";

/// What a release did, for the caller (and the tests) to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The crates in the order they go to crates.io.
    pub publish_order: Vec<String>,
    /// The bump's changes, as `what: before -> after` lines (none when publishing).
    pub bump: Vec<String>,
    /// Why `cargo-semver-checks` did not run, if it did not.
    pub semver_skipped: Option<String>,
}

/// Runs `cargo xtask release` on the workspace at `root`.
pub fn run(root: &Path, options: &Options) -> anyhow::Result<Outcome> {
    let version = &options.version;
    let mode = match (options.publish, options.dry_run) {
        (false, false) => "preparing",
        (false, true) => "preparing (dry run: nothing is written)",
        (true, false) => "publishing",
        (true, true) => "checking the publication (dry run: nothing is published)",
    };
    println!("release {version}: {mode}");

    let manifest_path = root.join("Cargo.toml");
    let manifest = std::fs::read_to_string(&manifest_path)
        .with_context(|| format!("cannot read {}", manifest_path.display()))?;
    let current = bump::workspace_version(&manifest)?;
    check_version(version, &current, options.publish)?;
    git::require_clean(root)?;
    if options.publish {
        git::require_tag_at_head(root, version)?;
    }
    let changelog_path = root.join(CHANGELOG);
    let changelog = std::fs::read_to_string(&changelog_path).with_context(|| {
        format!("cannot read {CHANGELOG}: a release needs its section there (Keep a Changelog)")
    })?;
    let section = changelog::section(&changelog, version).map_err(|err| match err {
        SectionError::Missing => anyhow::anyhow!(
            "{CHANGELOG} has no section for {version}: add `## [{version}]` below \
             `## [Unreleased]`, saying what the release holds"
        ),
        other => anyhow::anyhow!("{CHANGELOG} {other} ({version})"),
    })?;
    println!(
        "ok: the tree is clean, and {CHANGELOG} has `{}`",
        section.heading
    );

    let workspace = Workspace::load(root)?;
    let problems = metadata::check(root, &workspace, &current);
    if !problems.is_empty() {
        let list: Vec<String> = problems.iter().map(|p| format!("  {p}")).collect();
        bail!(
            "the crates' metadata is incomplete ({} problems):\n{}",
            problems.len(),
            list.join("\n")
        );
    }
    let order: Vec<String> = order::publish_order(&workspace)?
        .iter()
        .map(|package| package.name.clone())
        .collect();
    println!("ok: the metadata of all {} published crates", order.len());

    let bump = if options.publish {
        Vec::new()
    } else {
        bump_versions(root, &workspace, &manifest, &changelog, options)?
    };
    if options.steps.ci {
        println!("\nrelease: cargo xtask ci");
        ci::run(root)?;
    }
    if options.steps.package {
        package(root, &order)?;
    }
    let semver_skipped = if options.steps.semver {
        semver_checks::run(root, version)?
    } else {
        Some(LEFT_OUT.to_owned())
    };
    println!("\nthe crates go to crates.io in this order:");
    for (index, name) in order.iter().enumerate() {
        println!("  {:>2}. {name}", index + 1);
    }
    if options.publish && !options.dry_run {
        publish(root, &order)?;
    } else if !options.publish && !options.dry_run {
        println!(
            "\nnext: review and commit the release (`git commit -am \"release {version}\"`), tag \
             it (`git tag v{version}`) and push the tag: the release workflow publishes it"
        );
    }
    Ok(Outcome {
        publish_order: order,
        bump,
        semver_skipped,
    })
}

/// Refuses a version that cannot be released from a workspace at `current`: preparing needs a
/// greater one, publishing the one the workspace already has.
pub fn check_version(version: &Version, current: &Version, publish: bool) -> anyhow::Result<()> {
    if publish && version != current {
        bail!(
            "cannot publish {version}: the workspace is at {current} (Cargo.toml's \
             workspace.package.version); publish runs on the commit that `cargo xtask release \
             {version}` prepared and `v{version}` tags"
        );
    }
    if !publish && version <= current {
        bail!(
            "{version} is not greater than the current version {current} (Cargo.toml's \
             workspace.package.version): a release needs a higher version"
        );
    }
    Ok(())
}

/// Plans the bump, prints it, and (unless dry) writes it with the dated CHANGELOG section and the
/// lockfile's new versions. Returns the planned changes.
fn bump_versions(
    root: &Path,
    workspace: &Workspace,
    manifest: &str,
    changelog_text: &str,
    options: &Options,
) -> anyhow::Result<Vec<String>> {
    let version = &options.version;
    let published: Vec<&Path> = workspace
        .publishable()
        .map(|package| package.dir.as_path())
        .collect();
    let changes = bump::plan(manifest, &published, version)?;
    let lines: Vec<String> = changes
        .iter()
        .map(|change| format!("{}: {} -> {}", change.what, change.before, change.after))
        .collect();
    let verb = if options.dry_run {
        "would bump"
    } else {
        "bumping"
    };
    println!("\n{verb} Cargo.toml:");
    for line in &lines {
        println!("  {line}");
    }
    if options.dry_run {
        println!("(dry run: the checks below run on the tree as it is)");
        return Ok(lines);
    }
    std::fs::write(root.join("Cargo.toml"), bump::apply(manifest, &changes))
        .context("cannot write Cargo.toml")?;
    let section = changelog::section(changelog_text, version)
        .map_err(|err| anyhow::anyhow!("{CHANGELOG} {err}"))?;
    let today = git::today()?;
    std::fs::write(
        root.join(CHANGELOG),
        changelog::with_date(changelog_text, &section, version, &today),
    )
    .with_context(|| format!("cannot write {CHANGELOG}"))?;
    // The lockfile records the workspace's own versions too; `-w` touches nothing else.
    run_cargo(root, &["update", "--workspace", "--offline"])
        .context("could not record the new versions in Cargo.lock")?;
    Ok(lines)
}

/// `cargo package` of the published crates `order` names, offline: cargo packages crates that
/// depend on each other together, resolving them in a local registry of the crates being
/// packaged, and verifies each by building it from its `.crate` file.
pub fn package(root: &Path, order: &[String]) -> anyhow::Result<()> {
    println!(
        "\nrelease: cargo package of {} crates (offline)",
        order.len()
    );
    let mut args = vec!["package", "--offline"];
    for name in order {
        args.extend(["-p", name.as_str()]);
    }
    run_cargo(root, &args).context("cargo package failed")
}

/// `cargo publish` of each crate in order; cargo waits until crates.io serves one before the next.
fn publish(root: &Path, order: &[String]) -> anyhow::Result<()> {
    for (index, name) in order.iter().enumerate() {
        println!(
            "\nrelease: publishing {name} ({}/{})",
            index + 1,
            order.len()
        );
        run_cargo(root, &["publish", "-p", name])
            .with_context(|| format!("cargo publish -p {name} failed"))?;
    }
    println!("\nrelease: all {} crates are published", order.len());
    Ok(())
}

/// Runs cargo with `args` in `root`, failing unless it succeeds.
fn run_cargo(root: &Path, args: &[&str]) -> anyhow::Result<()> {
    let status = Command::new(cargo())
        .args(args)
        .current_dir(root)
        .status()
        .context("could not start cargo")?;
    if !status.success() {
        bail!("`cargo {}` exited with {status}", args.join(" "));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    #[test]
    fn the_command_line_takes_a_version_and_flags_in_any_order() {
        let options = Options::parse(&["--dry-run", "v0.2.0"]).unwrap();
        assert_eq!(options.version, v("0.2.0"));
        assert!(options.dry_run && !options.publish);
        assert_eq!(options.steps, Steps::ALL);
        let options = Options::parse(&["0.2.0", "--publish", "--skip-checks"]).unwrap();
        assert!(options.publish && !options.dry_run);
        assert_eq!(options.steps, Steps::NONE);
        let err = Options::parse(&["0.2"]).unwrap_err().to_string();
        assert_eq!(err, "\"0.2\" is not a semantic version such as 0.2.0");
        assert!(Options::parse(&["--dry-run"]).is_err());
        assert!(Options::parse(&["0.2.0", "--force"]).is_err());
    }

    #[test]
    fn preparing_needs_a_greater_version_and_publishing_the_current_one() {
        let current = v("0.2.0");
        assert!(check_version(&v("0.2.1"), &current, false).is_ok());
        assert!(check_version(&v("0.3.0-rc.1"), &current, false).is_ok());
        let err = check_version(&v("0.2.0"), &current, false)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("0.2.0 is not greater than the current version 0.2.0"));
        assert!(check_version(&v("0.2.0-rc.1"), &current, false).is_err());
        assert!(check_version(&v("0.2.0"), &current, true).is_ok());
        let err = check_version(&v("0.3.0"), &current, true)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("cannot publish 0.3.0: the workspace is at 0.2.0"));
    }
}
