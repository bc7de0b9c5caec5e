//! YAML agents that name toolsets and code executors: an OpenAPI document by file with an
//! operation filter, a skill folder, Gemini's built-in tools and a local code executor, loaded
//! and run on a scripted model; and the mistakes in them reported with the file.

mod support;

use std::path::Path;

use adk_config::{AgentLoader, ConfigErrorKind};
use adk_core::{BuiltinTool, Outcome, PartData};
use adk_test::ScriptedModel;
use serde_json::json;
use support::{ScriptedResolver, load_error, load_on_local, run, runner};

/// A small OpenAPI document with two operations.
const PETS: &str = r#"
openapi: 3.0.3
info: {title: Pets, version: "1"}
servers: [{url: "http://127.0.0.1:9"}]
paths:
  /pets:
    get:
      operationId: listPets
      summary: Lists the pets.
      responses: {"200": {description: ok}}
    post:
      operationId: createPet
      summary: Adds a pet.
      requestBody:
        content:
          application/json:
            schema: {type: object, properties: {name: {type: string}}}
      responses: {"201": {description: created}}
"#;

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[tokio::test]
async fn a_yaml_agent_gets_an_openapi_toolset_a_skill_folder_and_a_builtin_tool() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "specs/pets.yaml", PETS);
    write(
        dir.path(),
        "skills/notes/SKILL.md",
        "---\nname: notes\ndescription: Writes notes.\n---\nWrite one line per change.\n",
    );
    write(
        dir.path(),
        "root_agent.yaml",
        "name: helper\n\
         instruction: Help.\n\
         tools:\n\
         \x20 - load_memory\n\
         \x20 - name: OpenAPIToolset\n\
         \x20   args:\n\
         \x20     spec_path: specs/pets.yaml\n\
         \x20     tool_filter: [listPets]\n\
         \x20 - name: SkillToolset\n\
         \x20   args:\n\
         \x20     skills_folder: skills\n",
    );
    let model = ScriptedModel::new("local")
        .then_call("load_skill", json!({"skill_name": "notes"}))
        .then_text("Noted.");
    let root = load_on_local(&model, dir.path()).await;
    let outcome = run(&runner(root), "Take notes.").await;
    assert!(outcome.error.is_none(), "{}", outcome.render());

    let requests = model.requests();
    let declared: Vec<&str> = requests[0].tools.iter().map(|t| t.name.as_str()).collect();
    assert!(declared.contains(&"load_memory"), "{declared:?}");
    assert!(declared.contains(&"list_pets"), "{declared:?}");
    assert!(!declared.contains(&"create_pet"), "{declared:?}");
    assert!(declared.contains(&"load_skill"), "{declared:?}");
    let loaded = outcome
        .events
        .iter()
        .flat_map(|event| event.function_responses().cloned().collect::<Vec<_>>())
        .next()
        .unwrap();
    assert_eq!(
        loaded.response["instructions"],
        "Write one line per change."
    );
}

/// The built-in tools a Gemini agent whose only tool is `tool` asks the model for.
async fn builtin_tools_of(tool: &str) -> Vec<BuiltinTool> {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "root_agent.yaml",
        &format!("name: searcher\nmodel: gemini-2.5-flash\ntools: [{tool}]\n"),
    );
    let model = ScriptedModel::new("gemini-2.5-flash").then_text("Found it.");
    let root = AgentLoader::new()
        .model_resolver(ScriptedResolver::new().serve("gemini-2.5-flash", model.clone()))
        .load(dir.path())
        .await
        .unwrap_or_else(|error| panic!("{error}"));
    let outcome = run(&runner(root), "Search.").await;
    assert!(outcome.error.is_none(), "{}", outcome.render());
    model.requests()[0].builtin_tools.clone()
}

#[tokio::test]
async fn gemini_builtin_tools_are_named_in_yaml() {
    assert_eq!(
        builtin_tools_of("google_search").await,
        [BuiltinTool::GoogleSearch]
    );
    assert_eq!(
        builtin_tools_of("google.adk.tools.url_context").await,
        [BuiltinTool::UrlContext]
    );
}

#[tokio::test]
async fn a_yaml_agent_with_the_sandboxed_executor_runs_the_models_code() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "root_agent.yaml",
        "name: coder\n\
         code_executor:\n\
         \x20 name: SandboxedCodeExecutor\n\
         \x20 args: {timeout_seconds: 10, memory_limit_mb: 256}\n",
    );
    let model = ScriptedModel::new("local")
        .then_text("```python\nprint(2 + 3)\n```")
        .then_text("It is 5.");
    let root = load_on_local(&model, dir.path()).await;
    let outcome = run(&runner(root), "2 + 3?").await;
    assert!(outcome.error.is_none(), "{}", outcome.render());
    let result = outcome
        .events
        .iter()
        .filter_map(|event| event.content())
        .flat_map(|content| &content.parts)
        .find_map(|part| match &part.data {
            PartData::CodeExecutionResult(result) => Some(result.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result:\n{}", outcome.render()));
    assert_eq!(result.outcome, Outcome::OutcomeOk);
    assert_eq!(result.output.as_deref(), Some("5\n"));
}

#[tokio::test]
async fn mistakes_in_toolsets_and_executors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let loader = AgentLoader::new().model_resolver(ScriptedResolver::new());
    let check = async |yaml: &str| {
        write(dir.path(), "root_agent.yaml", yaml);
        load_error(&loader, dir.path()).await.to_string()
    };

    // An executor is never guessed: only the full names are known.
    let error = check("name: a\ncode_executor: LocalCodeExecutor\n").await;
    assert!(
        error.contains("unknown code executor `LocalCodeExecutor`")
            && error.contains("`UnsafeLocalCodeExecutor`"),
        "{error}"
    );
    let error =
        check("name: a\ncode_executor: {name: BuiltInCodeExecutor, args: {timeout_seconds: 1}}\n")
            .await;
    assert!(error.contains("takes no `args`"), "{error}");

    let error = check(
        "name: a\ntools:\n  - name: OpenAPIToolset\n    args: {spec_path: a.yaml, spec_str: x}\n",
    )
    .await;
    assert!(
        error.contains("exactly one of `spec_path` and `spec_str`"),
        "{error}"
    );
    let error =
        check("name: a\ntools:\n  - name: OpenAPIToolset\n    args: {spec_path: missing.yaml}\n")
            .await;
    assert!(
        error.contains("root_agent.yaml") && error.contains("missing.yaml"),
        "{error}"
    );
    let error =
        check("name: a\ntools:\n  - name: SkillToolset\n    args: {skills_folder: none}\n").await;
    assert!(error.contains("the SkillToolset's folder"), "{error}");
    let error = check(
        "name: a\ntools:\n  - name: OpenAPIToolset\n    args: {spec_str: x, auth_scheme: y}\n",
    )
    .await;
    assert!(
        error.contains("credentials are not written in YAML"),
        "{error}"
    );
    let loaded = load_error(&loader, dir.path()).await;
    assert_eq!(loaded.kind(), ConfigErrorKind::Invalid);
}
