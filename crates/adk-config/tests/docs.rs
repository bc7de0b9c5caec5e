//! The configs the documentation shows are configs the loader takes: the first YAML block of
//! `docs/agent-config.md`, of the README and of the crate docs (the crate's README) loads and
//! answers.

mod support;

use adk_config::AgentLoader;
use adk_test::ScriptedModel;
use support::{ScriptedResolver, run, runner};

/// The first block fenced as `yaml` in the file at `path`, relative to the repository root.
fn first_yaml_block(path: &str) -> String {
    let file = adk_test::package_dir(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path);
    let text = std::fs::read_to_string(&file)
        .unwrap_or_else(|error| panic!("{}: {error}", file.display()));
    let lines: Vec<&str> = text
        .lines()
        .map(|line| line.trim_start_matches("//! "))
        .collect();
    let start = lines
        .iter()
        .position(|line| line.trim_end() == "```yaml")
        .unwrap_or_else(|| panic!("{path} has no yaml block"))
        + 1;
    let end = start
        + lines[start..]
            .iter()
            .position(|line| line.trim_end() == "```")
            .unwrap_or_else(|| panic!("{path}: the yaml block does not end"));
    lines[start..end].join("\n") + "\n"
}

#[tokio::test]
async fn the_documented_agents_load_and_answer() {
    for path in [
        "docs/agent-config.md",
        "README.md",
        "crates/adk-config/README.md",
    ] {
        let yaml = first_yaml_block(path);
        assert!(yaml.lines().count() <= 6, "{path}: {yaml}");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("root_agent.yaml"), &yaml).unwrap();
        let model = ScriptedModel::new("gemini-2.5-flash").then_text("Hello.");
        let root = AgentLoader::new()
            .model_resolver(ScriptedResolver::new().serve("gemini-2.5-flash", model))
            .load(dir.path())
            .await
            .unwrap_or_else(|error| panic!("{path}: {error}"));
        let outcome = run(&runner(root), "Hi.").await;
        assert_eq!(outcome.render(), "assistant: \"Hello.\"\n", "{path}");
    }
}
