//! Tests of `cargo xtask release` and of the crates' metadata: the metadata check and the publish
//! order on the real workspace, and whole releases (the checks and the bump; not ci or
//! semver-checks, which are slow and run in the release itself) on a copy of the repository in a
//! temporary directory, committed to a fresh git repository there. The packaging step runs for
//! real on the core crate of a bumped copy: packaged and built from its `.crate` file, offline.

use std::fs;
use std::path::Path;
use std::process::Command;

use semver::Version;
use tempfile::TempDir;
use xtask::release::metadata::{self, NOT_PUBLISHED};
use xtask::release::workspace::Workspace;
use xtask::release::{self, Options, Steps, bump, changelog, order};
use xtask::workspace_root;

/// Runs git in `dir`, panicking with its output when it fails.
fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args([
            "-c",
            "user.name=release test",
            "-c",
            "user.email=release@test.invalid",
        ])
        .args(["-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("git prints UTF-8")
}

/// A copy of the files git tracks in the real repository, as they are on disk (uncommitted edits
/// included), committed to a new repository with one commit.
struct Copy {
    dir: TempDir,
}

impl Copy {
    fn new() -> Self {
        let root = workspace_root();
        let dir = TempDir::new().expect("a temporary directory");
        let tracked = git(
            &root,
            &[
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
            ],
        );
        for path in tracked.split('\0').filter(|path| !path.is_empty()) {
            let from = root.join(path);
            // A file deleted but not yet committed is listed and absent: leave it out.
            if !from.is_file() {
                continue;
            }
            let to = dir.path().join(path);
            fs::create_dir_all(to.parent().expect("a file has a parent")).expect("mkdir");
            fs::copy(&from, &to).expect("copy a tracked file");
        }
        git(dir.path(), &["init", "--quiet", "--initial-branch=main"]);
        git(dir.path(), &["add", "--all"]);
        git(
            dir.path(),
            &["commit", "--quiet", "--message", "the repository"],
        );
        Self { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn read(&self, path: &str) -> String {
        fs::read_to_string(self.path().join(path)).expect("read a file of the copy")
    }

    fn write(&self, path: &str, text: &str) {
        let path = self.path().join(path);
        fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        fs::write(path, text).expect("write a file of the copy");
    }

    fn commit(&self, message: &str) {
        git(self.path(), &["add", "--all"]);
        git(self.path(), &["commit", "--quiet", "--message", message]);
    }

    fn current_version(&self) -> Version {
        bump::workspace_version(&self.read("Cargo.toml")).expect("the workspace's version")
    }

    /// Adds a CHANGELOG section for `version` below `## [Unreleased]` and commits it, unless
    /// there is one already.
    fn add_changelog_section(&self, version: &Version) {
        if changelog::section(&self.read(changelog::CHANGELOG), version).is_ok() {
            return;
        }
        let text = self.read(changelog::CHANGELOG).replacen(
            "## [Unreleased]\n",
            &format!("## [Unreleased]\n\n## [{version}]\n\n### Changed\n\n- A test release.\n"),
            1,
        );
        self.write(changelog::CHANGELOG, &text);
        self.commit("a changelog section");
    }

    /// A version above the current one that CHANGELOG.md has no section for.
    fn version_without_a_section(&self) -> Version {
        let text = self.read(changelog::CHANGELOG);
        let mut version = next_minor(&self.current_version());
        while changelog::section(&text, &version).is_ok() {
            version = next_minor(&version);
        }
        version
    }

    fn release(&self, version: &Version, dry_run: bool) -> anyhow::Result<release::Outcome> {
        release::run(
            self.path(),
            &Options {
                version: version.clone(),
                dry_run,
                publish: false,
                steps: Steps::NONE,
            },
        )
    }
}

/// The next minor version after `version`: one no release has a CHANGELOG section for yet.
fn next_minor(version: &Version) -> Version {
    Version::new(version.major, version.minor + 1, 0)
}

#[test]
fn every_crate_of_the_workspace_has_complete_metadata() {
    let root = workspace_root();
    let workspace = Workspace::load(&root).unwrap();
    let manifest = fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let version = bump::workspace_version(&manifest).unwrap();
    let problems: Vec<String> = metadata::check(&root, &workspace, &version)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(problems, Vec::<String>::new());
}

#[test]
fn every_crate_under_crates_is_published_unless_listed_as_not() {
    let root = workspace_root();
    let workspace = Workspace::load(&root).unwrap();
    let under_crates: Vec<&str> = fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|dir| dir.join("Cargo.toml").is_file())
        .map(|dir| {
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            workspace
                .packages
                .iter()
                .find(|package| package.dir == Path::new("crates").join(&name))
                .map(|package| package.name.as_str())
                .unwrap_or_else(|| panic!("crates/{name} is not a workspace member"))
        })
        .collect();
    assert!(under_crates.len() >= 14, "{under_crates:?}");
    for name in under_crates {
        let package = workspace.package(name).unwrap();
        let listed = NOT_PUBLISHED
            .iter()
            .any(|(unpublished, _)| *unpublished == name);
        assert_eq!(package.publish, !listed, "{name}");
    }
    for package in &workspace.packages {
        if !package.dir.starts_with("crates") {
            assert!(!package.publish, "{} is outside crates/", package.name);
        }
    }
}

#[test]
fn a_new_crate_without_metadata_fails_the_check() {
    let copy = Copy::new();
    copy.write(
        "crates/adk-new/Cargo.toml",
        "[package]\nname = \"adk-new\"\nversion.workspace = true\nedition.workspace = true\n\
         license.workspace = true\npublish.workspace = true\n",
    );
    copy.write("crates/adk-new/src/lib.rs", "//! A new crate.\n");
    let workspace = Workspace::load(copy.path()).unwrap();
    let problems: Vec<String> = metadata::check(copy.path(), &workspace, &copy.current_version())
        .iter()
        .filter(|problem| problem.package == "adk-new")
        .map(|problem| problem.message.clone())
        .collect();
    for expected in [
        "no `description`",
        "no `repository`",
        "no `rust-version`",
        "no `readme = \"README.md\"`",
        "cannot read README.md",
        "has 0 keywords",
        "has 0 categories",
        "no [package.metadata.docs.rs]",
        "the first line of crates/adk-new/src/lib.rs must be",
        "crates/adk-new/src/lib.rs lacks `#![cfg_attr(docsrs, feature(doc_cfg))]`",
    ] {
        assert!(
            problems.iter().any(|problem| problem.starts_with(expected)),
            "no problem starts with {expected:?} in {problems:#?}"
        );
    }
    // The release refuses to go on, naming the crate.
    copy.commit("a new crate");
    let next = next_minor(&copy.current_version());
    copy.add_changelog_section(&next);
    let err = format!("{:#}", copy.release(&next, true).unwrap_err());
    assert!(
        err.starts_with("the crates' metadata is incomplete"),
        "{err}"
    );
    assert!(err.contains("\n  adk-new: no `description`"), "{err}");
}

#[test]
fn the_publish_order_starts_at_the_core_and_ends_with_the_facade() {
    let workspace = Workspace::load(&workspace_root()).unwrap();
    let order: Vec<&str> = order::publish_order(&workspace)
        .unwrap()
        .iter()
        .map(|package| package.name.as_str())
        .collect();
    assert_eq!(order.first(), Some(&"adk-core"));
    assert_eq!(order.last(), Some(&"adk"));
    assert!(!order.contains(&"adk-test") && !order.contains(&"adk-cli"));
    assert_eq!(order.len(), workspace.publishable().count());
    // Every crate comes after each workspace crate it names with a version.
    for (index, name) in order.iter().enumerate() {
        let package = workspace.package(name).unwrap();
        for dependency in &package.dependencies {
            if dependency.stripped_when_published() || dependency.name == *name {
                continue;
            }
            if let Some(position) = order.iter().position(|other| *other == dependency.name) {
                assert!(position < index, "{name} needs {}", dependency.name);
            }
        }
    }
}

#[test]
fn a_release_bumps_every_version_and_dates_its_changelog_section() {
    let copy = Copy::new();
    let current = copy.current_version();
    let next = next_minor(&current);
    copy.add_changelog_section(&next);

    let outcome = copy.release(&next, false).unwrap();

    assert_eq!(copy.current_version(), next);
    let workspace = Workspace::load(copy.path()).unwrap();
    for package in &workspace.packages {
        assert_eq!(package.version, next, "{}", package.name);
    }
    // The internal requirements moved with the version, so the metadata check still passes.
    assert_eq!(metadata::check(copy.path(), &workspace, &next), Vec::new());
    let manifest = copy.read("Cargo.toml");
    assert!(!manifest.contains(&format!("\"={current}\"")), "{manifest}");
    assert_eq!(
        outcome.bump.len(),
        1 + workspace.publishable().count(),
        "{:#?}",
        outcome.bump
    );
    let changelog_text = copy.read(changelog::CHANGELOG);
    let section = changelog::section(&changelog_text, &next).unwrap();
    let date = section.date.expect("the section is dated");
    assert_eq!(date, xtask::release::git::today().unwrap());
    // The lockfile records the new versions.
    assert!(
        copy.read("Cargo.lock")
            .contains(&format!("name = \"adk-core\"\nversion = \"{next}\"")),
    );
    assert_eq!(
        outcome.publish_order.first().map(String::as_str),
        Some("adk-core")
    );
    assert_eq!(outcome.semver_skipped.as_deref(), Some(release::LEFT_OUT));

    // The bumped tree, once committed, is not released again at the same version.
    copy.commit("the release");
    let err = copy.release(&next, true).unwrap_err().to_string();
    assert!(err.starts_with(&format!(
        "{next} is not greater than the current version {next}"
    )));

    // Its core crate packages for real: `cargo package --offline`, which builds the crate from
    // its `.crate` file as crates.io would.
    release::package(copy.path(), &["adk-core".to_owned()]).unwrap();
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| copy.path().join("target"), std::path::PathBuf::from);
    let packaged = target
        .join("package")
        .join(format!("adk-core-{next}.crate"));
    assert!(packaged.is_file(), "{} was written", packaged.display());
}

#[test]
fn a_dry_run_changes_nothing() {
    let copy = Copy::new();
    let next = next_minor(&copy.current_version());
    copy.add_changelog_section(&next);
    let manifest = copy.read("Cargo.toml");

    let outcome = copy.release(&next, true).unwrap();

    assert_eq!(copy.read("Cargo.toml"), manifest);
    assert_eq!(git(copy.path(), &["status", "--porcelain"]), "");
    assert!(outcome.bump[0].starts_with("workspace.package.version: "));
    assert!(outcome.bump[0].ends_with(&format!(" -> {next}")));
}

#[test]
fn a_dirty_tree_is_refused() {
    let copy = Copy::new();
    let next = next_minor(&copy.current_version());
    copy.add_changelog_section(&next);
    copy.write("notes.txt", "not committed\n");
    let manifest = copy.read("Cargo.toml");

    let err = copy.release(&next, false).unwrap_err().to_string();

    assert!(
        err.starts_with("the tree is not clean (1 changed or untracked paths)"),
        "{err}"
    );
    assert!(err.ends_with("\n  ?? notes.txt"), "{err}");
    assert_eq!(copy.read("Cargo.toml"), manifest);
}

#[test]
fn a_version_not_greater_than_the_current_one_is_refused() {
    let copy = Copy::new();
    let current = copy.current_version();
    for version in [current.clone(), Version::new(0, 0, 1)] {
        let err = copy.release(&version, false).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "{version} is not greater than the current version {current} (Cargo.toml's \
                 workspace.package.version): a release needs a higher version"
            )
        );
    }
}

#[test]
fn a_version_without_a_changelog_section_is_refused() {
    let copy = Copy::new();
    let next = copy.version_without_a_section();
    let manifest = copy.read("Cargo.toml");

    let err = copy.release(&next, false).unwrap_err().to_string();

    assert_eq!(
        err,
        format!(
            "CHANGELOG.md has no section for {next}: add `## [{next}]` below `## [Unreleased]`, \
             saying what the release holds"
        )
    );
    assert_eq!(copy.read("Cargo.toml"), manifest);
}

#[test]
fn publishing_needs_the_release_tag_on_head() {
    let copy = Copy::new();
    let current = copy.current_version();
    let options = |dry_run| Options {
        version: current.clone(),
        dry_run,
        publish: true,
        steps: Steps::NONE,
    };
    // Give the current version a section, as its release would have.
    copy.add_changelog_section(&current);
    let err = release::run(copy.path(), &options(true))
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        format!("HEAD does not carry the tag v{current}: publishing publishes the commit it tags")
    );
    git(copy.path(), &["tag", &format!("v{current}")]);
    let outcome = release::run(copy.path(), &options(true)).unwrap();
    assert!(outcome.bump.is_empty());
    assert_eq!(
        outcome.publish_order.last().map(String::as_str),
        Some("adk")
    );
}
