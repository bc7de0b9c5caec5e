//! `create NAME`: a new agent project under the current directory, either a Cargo binary built on
//! the launcher (an agent with one tool, its `main.rs`, and a test that runs the agent on a
//! scripted model) or a YAML agent folder that `run` and `web` load without compiling.

use std::path::{Path, PathBuf};

use crate::args::CreateArgs;
use crate::error::{Context as _, LaunchError, LaunchErrorKind};

/// The `adk` facade crate of the checkout this launcher was built in, when it was built in one.
const CHECKOUT_FACADE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../adk");

/// Creates the project `args` describe and says what to do next.
pub(crate) fn create(args: &CreateArgs) -> Result<(), LaunchError> {
    check_name(&args.name)?;
    if let Some(model) = &args.model {
        model
            .parse::<adk_config::ModelSpec>()
            .map_err(|message| LaunchError::new(LaunchErrorKind::Usage, message))?;
    }
    let dir = PathBuf::from(&args.name);
    if dir.exists() {
        return Err(LaunchError::new(
            LaunchErrorKind::Usage,
            format!("{} already exists; choose another name", dir.display()),
        ));
    }
    let files = if args.yaml {
        yaml_files(args)
    } else {
        cargo_files(args, &facade_dependency(args)?)
    };
    for (path, text) in &files {
        write(&dir.join(path), text)?;
    }
    if args.yaml {
        println!(
            "created {0}/root_agent.yaml: `adk run {0}` talks to it, `adk web .` serves it",
            args.name
        );
    } else {
        println!(
            "created the Cargo project {0}: `cd {0} && cargo run -- run` talks to the agent, \
             `cargo run -- web` serves the dev UI, `cargo test` runs its test",
            args.name
        );
    }
    Ok(())
}

/// A project name must be a valid Cargo package name and a plain folder name.
fn check_name(name: &str) -> Result<(), LaunchError> {
    let mut chars = name.chars();
    let valid = chars.next().is_some_and(|first| first.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    if valid {
        Ok(())
    } else {
        Err(LaunchError::new(
            LaunchErrorKind::Usage,
            format!(
                "'{name}' is not a project name: use lowercase letters, digits, '-' and '_', \
                 starting with a letter"
            ),
        ))
    }
}

/// Where the new project finds the `adk` crate (`path = ...` or `version = ...`): `--adk-path`,
/// else this launcher's checkout when it was built in one, else the published version.
fn facade_dependency(args: &CreateArgs) -> Result<String, LaunchError> {
    let path = match &args.adk_path {
        Some(path) => Some(path.clone()),
        None => {
            Some(PathBuf::from(CHECKOUT_FACADE)).filter(|path| path.join("Cargo.toml").is_file())
        }
    };
    match path {
        Some(path) => {
            let path = path.canonicalize().context(LaunchErrorKind::Usage, || {
                format!("cannot find the adk crate at {}", path.display())
            })?;
            Ok(format!("path = {}", toml_string(&path.to_string_lossy())))
        }
        None => Ok(format!("version = \"{}\"", env!("CARGO_PKG_VERSION"))),
    }
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    let escaped = text.replace('\\', "\\\\").replace('"', "\\\"");
    format!("\"{escaped}\"")
}

fn write(path: &Path, text: &str) -> Result<(), LaunchError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).context(LaunchErrorKind::Io, || {
            format!("cannot create the folder {}", parent.display())
        })?;
    }
    std::fs::write(path, text).context(LaunchErrorKind::Io, || {
        format!("cannot write {}", path.display())
    })
}

/// The files of a Cargo project named `args.name`.
fn cargo_files(args: &CreateArgs, adk: &str) -> Vec<(&'static str, String)> {
    let crate_name = args.name.replace('-', "_");
    let fill = |template: &str| {
        template
            .replace("{{name}}", &args.name)
            .replace("{{crate}}", &crate_name)
            .replace("{{adk}}", adk)
    };
    vec![
        ("Cargo.toml", fill(CARGO_TOML)),
        ("src/main.rs", fill(MAIN)),
        ("src/lib.rs", fill(LIB)),
        ("tests/agent.rs", fill(TEST)),
        (".gitignore", "/target\n/.adk\n".to_owned()),
    ]
}

/// The files of a YAML agent folder named `args.name`.
fn yaml_files(args: &CreateArgs) -> Vec<(&'static str, String)> {
    let model = args
        .model
        .as_ref()
        .map(|model| format!("model: {model}\n"))
        .unwrap_or_default();
    vec![(
        "root_agent.yaml",
        YAML.replace("{{name}}", &args.name.replace('-', "_"))
            .replace("{{model}}", &model),
    )]
}

const CARGO_TOML: &str = r#"[package]
name = "{{name}}"
version = "0.1.0"
edition = "2024"
publish = false

# A project of its own, even when created inside another Cargo workspace.
[workspace]

[dependencies]
adk = { {{adk}}, features = ["launcher"] }
serde = { version = "1", features = ["derive"] }
tokio = { version = "1", features = ["macros", "rt-multi-thread"] }

[dev-dependencies]
# The scripted model of `adk::testing`, for the agent's tests.
adk = { {{adk}}, features = ["launcher", "test-util"] }
serde_json = "1"
"#;

const MAIN: &str = r#"//! The {{name}} agent on the adk launcher: `cargo run -- run` talks to it in the terminal,
//! `cargo run -- web` serves it with the dev UI. The model comes from the environment (Gemini, an
//! OpenAI-compatible server, Anthropic), or is a local model that needs no key.

#[tokio::main]
async fn main() -> std::process::ExitCode {
    adk::Launcher::new()
        .app_on_model("{{name}}", {{crate}}::root_agent)
        .run()
        .await
}
"#;

const LIB: &str = r#"//! The {{name}} agent: one `LlmAgent` with one tool.

use adk::core::IntoLlm;
use adk::prelude::*;
use serde::Serialize;

/// What `get_weather` reports.
#[derive(Debug, Serialize)]
pub struct WeatherReport {
    /// The city, as asked.
    pub city: String,
    /// The sky, in a word.
    pub sky: &'static str,
}

/// Returns the sky in a city. (A fixed table of a few cities: replace it with your own tools.)
#[adk::tool]
pub async fn get_weather(
    /// The city to report on, for example "Paris".
    city: String,
) -> Result<WeatherReport, String> {
    let sky = match city.to_lowercase().as_str() {
        "paris" => "sunny",
        "london" => "cloudy",
        "tokyo" => "rainy",
        _ => return Err(format!("no weather data for {city}")),
    };
    Ok(WeatherReport { city, sky })
}

/// The agent on `model`.
pub fn root_agent(model: impl IntoLlm) -> adk::Result<LlmAgent> {
    LlmAgent::builder("{{crate}}")
        .description("Answers questions about the weather in a city.")
        .model(model)
        .instruction("Call get_weather for the city the user asks about, then answer in one sentence.")
        .tool(get_weather)
        .build()
}
"#;

const TEST: &str = r#"//! The agent on a scripted model: it calls `get_weather`, gets the report, and answers.

use adk::prelude::*;
use adk::testing::ScriptedModel;
use serde_json::json;

#[tokio::test]
async fn the_agent_calls_its_tool_then_answers() -> adk::Result<()> {
    let model = ScriptedModel::new("scripted")
        .then_call("get_weather", json!({"city": "Paris"}))
        .then_text("It is sunny in Paris.");
    let runner = Runner::in_memory("{{name}}", {{crate}}::root_agent(model.clone())?)?;
    let answer = runner
        .run("user", "s1", "What is the weather in Paris?")
        .final_text()
        .await?;
    assert_eq!(answer, "It is sunny in Paris.");
    // The second model call was sent the tool's report.
    let sent = json!(model.requests()[1].contents).to_string();
    assert!(sent.contains("\"sky\":\"sunny\""), "{sent}");
    Ok(())
}
"#;

const YAML: &str = r#"# yaml-language-server: $schema=https://raw.githubusercontent.com/adk-rs/adk-rs/main/schemas/agent-config.schema.json
# An agent in YAML: `adk run <this folder>` talks to it, `adk web <the parent folder>` serves it.
name: {{name}}
{{model}}description: A helpful assistant.
instruction: You are a helpful assistant. Answer the user's questions in a few sentences.
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_must_be_package_names() {
        assert!(check_name("weather-bot").is_ok());
        assert!(check_name("bot_2").is_ok());
        for bad in ["", "Bot", "2bot", "../escape", "a/b", "bot!"] {
            let error = check_name(bad).unwrap_err();
            assert_eq!(error.kind(), LaunchErrorKind::Usage, "{bad}");
        }
    }

    #[test]
    fn the_yaml_agent_names_its_model_only_when_given() {
        let args = CreateArgs {
            name: "helper-bot".to_owned(),
            yaml: true,
            model: None,
            adk_path: None,
        };
        let files = yaml_files(&args);
        assert!(
            files[0].1.contains("name: helper_bot\ndescription:"),
            "{}",
            files[0].1
        );
        let args = CreateArgs {
            model: Some("gemini-2.5-flash".to_owned()),
            ..args
        };
        assert!(yaml_files(&args)[0].1.contains("model: gemini-2.5-flash\n"));
    }
}
