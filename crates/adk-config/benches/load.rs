//! Loading agent configs: the three-file LlmAgent tree and the seven-file workflow tree of the
//! tests' fixtures, read, checked, given their (scripted) models and built, and the same files
//! only parsed as untyped YAML, for the floor that serde_yaml sets.
//!
//! Run with `cargo bench -p adk-config --bench load`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use adk_config::{AgentLoader, ModelResolver, ModelSpec};
use adk_core::{Llm, Result};
use adk_test::ScriptedModel;
use async_trait::async_trait;

fn main() {
    divan::main();
}

/// Serves every model name with one scripted model, so that only loading is measured.
struct AnyModel(Arc<dyn Llm>);

#[async_trait]
impl ModelResolver for AnyModel {
    async fn resolve(&self, _model: &ModelSpec) -> Result<Arc<dyn Llm>> {
        Ok(self.0.clone())
    }

    fn default_model(&self) -> ModelSpec {
        ModelSpec::Local
    }
}

/// The arguments of `get_weather`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct City {
    /// The city.
    city: String,
}

async fn get_weather(args: City) -> std::result::Result<String, String> {
    Ok(args.city)
}

struct Setup {
    runtime: tokio::runtime::Runtime,
    loader: AgentLoader,
}

static SETUP: LazyLock<Setup> = LazyLock::new(|| Setup {
    runtime: tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime"),
    loader: AgentLoader::new()
        .function_tool(adk_tool::FunctionTool::new(
            "get_weather",
            "Returns the weather in a city.",
            get_weather,
        ))
        .model_resolver(AnyModel(Arc::new(ScriptedModel::new("scripted")))),
});

fn fixture(path: &str) -> PathBuf {
    adk_test::package_dir(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path)
}

fn load(path: &Path) {
    let agent = SETUP
        .runtime
        .block_on(SETUP.loader.load(path))
        .expect("the fixture loads");
    divan::black_box(agent);
}

#[divan::bench]
fn llm_agent_tree_3_files(bencher: divan::Bencher<'_, '_>) {
    let path = fixture("keys/llm_agent");
    bencher.bench(|| load(&path));
}

#[divan::bench]
fn workflow_tree_7_files(bencher: divan::Bencher<'_, '_>) {
    let path = fixture("keys/workflows");
    bencher.bench(|| load(&path));
}

#[divan::bench]
fn untyped_yaml_of_the_7_files(bencher: divan::Bencher<'_, '_>) {
    let texts: Vec<String> = [
        "root_agent.yaml",
        "writer.yaml",
        "reviews/review_loop.yaml",
        "reviews/reviewer.yaml",
        "translations.yaml",
        "english.yaml",
        "french.yaml",
    ]
    .iter()
    .map(|file| std::fs::read_to_string(fixture("keys/workflows").join(file)).unwrap())
    .collect();
    bencher.bench(|| {
        for text in &texts {
            divan::black_box(serde_yaml::from_str::<serde_yaml::Value>(text).unwrap());
        }
    });
}
