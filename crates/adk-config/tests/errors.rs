//! Every form of bad config, each a fixture and the exact error it gives: its kind, the file, the
//! line and column, and a message that says what is allowed. A recording resolver shows that no
//! model is asked for when a config is bad.

mod support;

use adk_config::{AgentLoader, ConfigErrorKind};
use expect_test::{Expect, expect};
use support::{ScriptedResolver, fixture, load_error, weather_tool};

/// Loads the fixture `path` with `loader`, which must fail, and compares `kind: error` with
/// `expected`; no model may have been asked for.
async fn check_with(
    loader: AgentLoader,
    resolver: &ScriptedResolver,
    path: &str,
    expected: Expect,
) {
    let error = load_error(&loader, fixture(path)).await;
    expected.assert_eq(&format!("{}: {error}", error.kind()));
    assert_eq!(
        resolver.asked(),
        Vec::<String>::new(),
        "a model was asked for although the config is bad"
    );
}

/// [`check_with`] on a loader with a weather function tool registered.
async fn check(path: &str, expected: Expect) {
    let resolver = ScriptedResolver::new();
    let loader = AgentLoader::new()
        .function_tool(weather_tool())
        .model_resolver(resolver.clone());
    check_with(loader, &resolver, path, expected).await;
}

#[tokio::test]
async fn an_unknown_key_lists_the_keys_of_its_class() {
    check("errors/unknown_key.yaml", expect!["invalid: tests/fixtures/errors/unknown_key.yaml:2:1: unknown key `modle` in an LlmAgent; the keys are `agent_class`, `name`, `description`, `model`, `instruction`, `generate_content_config`, `output_key`, `include_contents`, `disallow_transfer_to_parent`, `disallow_transfer_to_peers`, `sub_agents`, `tools`, `max_repeated_tool_calls` and `code_executor`"]).await;
}

#[tokio::test]
async fn a_key_given_twice_is_refused() {
    check("errors/duplicate_key.yaml", expect!["invalid: tests/fixtures/errors/duplicate_key.yaml:3:1: the key `instruction` appears twice in an LlmAgent"]).await;
}

#[tokio::test]
async fn a_key_of_another_class_is_unknown_here() {
    check("errors/loop_key_on_llm_agent.yaml", expect!["invalid: tests/fixtures/errors/loop_key_on_llm_agent.yaml:3:1: unknown key `max_iterations` in an LlmAgent; the keys are `agent_class`, `name`, `description`, `model`, `instruction`, `generate_content_config`, `output_key`, `include_contents`, `disallow_transfer_to_parent`, `disallow_transfer_to_peers`, `sub_agents`, `tools`, `max_repeated_tool_calls` and `code_executor`"]).await;
    check("errors/workflow_model.yaml", expect!["invalid: tests/fixtures/errors/workflow_model.yaml:3:1: unknown key `model` in a SequentialAgent; the keys are `agent_class`, `name`, `description` and `sub_agents`"]).await;
}

#[tokio::test]
async fn a_value_of_the_wrong_type_names_the_type_expected() {
    check("errors/wrong_type.yaml", expect![[r#"invalid: tests/fixtures/errors/wrong_type.yaml:3:30: disallow_transfer_to_parent: invalid type: string "sometimes", expected a boolean"#]]).await;
    check("errors/nested_wrong_type.yaml", expect![[r#"invalid: tests/fixtures/errors/nested_wrong_type.yaml:3:16: generate_content_config.temperature: invalid type: string "hot", expected f32"#]]).await;
    check("errors/sub_agents_not_a_list.yaml", expect![[r#"invalid: tests/fixtures/errors/sub_agents_not_a_list.yaml:2:13: sub_agents: invalid type: string "helper.yaml", expected a sequence"#]]).await;
    check("errors/not_a_mapping.yaml", expect!["invalid: tests/fixtures/errors/not_a_mapping.yaml:1:1: invalid type: sequence, expected an agent config: a mapping of keys to values, such as `name: my_agent`"]).await;
}

#[tokio::test]
async fn a_missing_file_is_a_read_error() {
    check(
        "errors/absent/root_agent.yaml",
        expect!["read: tests/fixtures/errors/absent/root_agent.yaml: the file does not exist"],
    )
    .await;
    check("errors/missing_sub_agent.yaml", expect!["invalid: tests/fixtures/errors/missing_sub_agent.yaml:4:18: sub_agents[0].config_path: the sub-agent file `helpers/nowhere.yaml` does not exist (looked for tests/fixtures/errors/helpers/nowhere.yaml)"]).await;
}

#[tokio::test]
async fn an_unknown_agent_class_lists_the_classes() {
    check("errors/unknown_agent_class.yaml", expect!["invalid: tests/fixtures/errors/unknown_agent_class.yaml:2:14: agent_class: unknown agent_class `my_package.agents.CustomAgent`; adk-rs builds `LlmAgent`, `SequentialAgent`, `ParallelAgent`, `LoopAgent` and `Workflow` (`LlmAgent` is the default and is also spelled `Agent`; each may also be named by its `google.adk` path)"]).await;
}

#[tokio::test]
async fn an_unknown_tool_lists_the_tools() {
    check("errors/unknown_tool.yaml", expect!["invalid: tests/fixtures/errors/unknown_tool.yaml:5:11: tools[1].name: unknown tool `web_search`; adk-rs knows the built-in tools `exit_loop`, `get_user_choice`, `google_search`, `load_artifacts`, `load_memory`, `preload_memory` and `url_context`; `McpToolset`, `OpenAPIToolset` and `SkillToolset`, which take `args`; and the function tools registered with the loader: `get_weather`"]).await;
}

#[tokio::test]
async fn an_unknown_model_lists_the_forms_of_model_names() {
    check("errors/unknown_model.yaml", expect!["invalid: tests/fixtures/errors/unknown_model.yaml:2:8: model: unknown model `gpt-4o`; the model picks its adapter by name: `gemini-<name>` (Gemini), `vertex_ai/<name>` (Gemini on Vertex AI), `claude-<name>` or `anthropic/<name>` (Anthropic), `openai/<name>` (OpenAI Chat Completions or the OpenAI-compatible server at OPENAI_BASE_URL), `openai/responses/<name>` (OpenAI's Responses API) or `local` (the local model)"]).await;
}

#[tokio::test]
async fn a_sub_agent_cycle_shows_the_cycle() {
    check("errors/cycle", expect!["invalid: tests/fixtures/errors/cycle/planner.yaml:4:18: sub_agents[0].config_path: sub-agent cycle: tests/fixtures/errors/cycle/root_agent.yaml -> tests/fixtures/errors/cycle/planner.yaml -> tests/fixtures/errors/cycle/root_agent.yaml; an agent cannot be its own sub-agent"]).await;
}

#[tokio::test]
async fn keys_that_name_python_code_say_what_to_do_instead() {
    check("errors/callbacks.yaml", expect!["invalid: tests/fixtures/errors/callbacks.yaml:3:1: `before_model_callbacks` cannot be used in adk-rs: it names Python functions, and adk-rs loads no code from YAML; add the callback to the agent in Rust with its builder (LlmAgentBuilder::before_model_callback and the like)"]).await;
    check("errors/model_code.yaml", expect!["invalid: tests/fixtures/errors/model_code.yaml:2:1: `model_code` cannot be used in adk-rs: it names Python code that builds a model; name the model with `model` (`gemini-*`, `claude-*`, `openai/<name>`, `local`, ...), or pass the loader a model resolver that builds it"]).await;
    check("errors/code_sub_agent.yaml", expect!["invalid: tests/fixtures/errors/code_sub_agent.yaml:3:5: sub_agents[0]: `code` cannot be used in adk-rs: it names an agent object in Python code, and adk-rs loads no code from YAML; describe the sub-agent in a YAML file and name it with `config_path`, or build the tree in Rust"]).await;
    check("errors/output_schema.yaml", expect!["invalid: tests/fixtures/errors/output_schema.yaml:3:1: `output_schema` cannot be used in adk-rs: it names a Python class; set the schema in Rust with LlmAgentBuilder::output_schema"]).await;
}

#[tokio::test]
async fn generation_settings_adk_rs_would_drop_are_errors() {
    check("errors/unknown_generate_key.yaml", expect!["invalid: tests/fixtures/errors/unknown_generate_key.yaml:4:3: generate_content_config: unknown key `response_modalities` in generate_content_config; the keys are `temperature`, `top_p`, `top_k`, `max_output_tokens`, `stop_sequences`, `candidate_count`, `seed`, `presence_penalty`, `frequency_penalty`, `response_mime_type`, `thinking_config`, `tool_config` and `safety_settings`"]).await;
    check("errors/system_instruction.yaml", expect!["invalid: tests/fixtures/errors/system_instruction.yaml:3:3: generate_content_config: `system_instruction` cannot be used in adk-rs: the agent's `instruction` is its system instruction; move the text there"]).await;
}

#[tokio::test]
async fn malformed_yaml_is_a_syntax_error() {
    check("errors/syntax.yaml", expect!["syntax: tests/fixtures/errors/syntax.yaml:4:1: found unexpected end of stream, while scanning a quoted scalar at line 2 column 14"]).await;
    check("errors/empty.yaml", expect!["invalid: tests/fixtures/errors/empty.yaml: the file is empty; an agent config needs at least `name`"]).await;
}

#[tokio::test]
async fn agent_names_are_identifiers_unique_in_the_tree() {
    check("errors/missing_name.yaml", expect!["invalid: tests/fixtures/errors/missing_name.yaml:1:1: the key `name` is missing; an LlmAgent needs it"]).await;
    check("errors/bad_name.yaml", expect!["invalid: tests/fixtures/errors/bad_name.yaml:1:7: name: agent name `my-assistant` is not an identifier: use letters, digits and `_`, not starting with a digit (models transfer to agents by name)"]).await;
    check("errors/duplicate_name", expect!["invalid: tests/fixtures/errors/duplicate_name/second.yaml:1:7: name: two agents are named `helper`: this one and the one in tests/fixtures/errors/duplicate_name/first.yaml; agent names must be unique in a tree"]).await;
    check("errors/diamond", expect!["invalid: tests/fixtures/errors/diamond/shared.yaml:1:7: name: two agents are named `shared`: this file is named by two `config_path`s, which makes two agents of it, and agent names must be unique in a tree"]).await;
}

#[tokio::test]
async fn sub_agent_files_stay_in_the_directory_of_the_file_naming_them() {
    check("errors/outside.yaml", expect!["invalid: tests/fixtures/errors/outside.yaml:3:18: sub_agents[0].config_path: the sub-agent file `../keys/llm_agent/historian.yaml` is outside the directory of the file that names it; keep sub-agent files in that directory or below it"]).await;
    check("errors/absolute.yaml", expect!["invalid: tests/fixtures/errors/absolute.yaml:3:5: sub_agents[0]: `config_path` `/etc/helper.yaml` is absolute; name the file relative to the directory of the file that names it"]).await;
}

#[tokio::test]
async fn tools_are_listed_once_and_only_mcp_takes_args() {
    check("errors/duplicate_tool.yaml", expect!["invalid: tests/fixtures/errors/duplicate_tool.yaml:3:3: tools: the tool `load_memory` is listed twice; list each tool once"]).await;
    check("errors/function_tool_args.yaml", expect!["invalid: tests/fixtures/errors/function_tool_args.yaml:3:5: tools[0]: the function tool `get_weather` takes no `args`: it is registered with the loader as it is; only the toolsets take `args`"]).await;
    check("errors/builtin_args.yaml", expect!["invalid: tests/fixtures/errors/builtin_args.yaml:5:7: tools[0].args: the built-in tool `exit_loop` takes no `args`; only the toolsets do"]).await;
    check("errors/mcp_without_args.yaml", expect!["invalid: tests/fixtures/errors/mcp_without_args.yaml:3:5: tools[0]: the McpToolset needs `args` naming its server: `stdio_server_params`, `stdio_connection_params` or `streamable_http_connection_params`"]).await;
}

#[tokio::test]
async fn mcp_args_name_exactly_one_server_adk_rs_can_reach() {
    check("errors/mcp_no_server.yaml", expect!["invalid: tests/fixtures/errors/mcp_no_server.yaml:5:7: tools[0].args: the McpToolset args need exactly one of `stdio_server_params`, `stdio_connection_params` and `streamable_http_connection_params`"]).await;
    check("errors/mcp_two_servers.yaml", expect!["invalid: tests/fixtures/errors/mcp_two_servers.yaml:5:7: tools[0].args: the McpToolset args need exactly one of `stdio_server_params`, `stdio_connection_params` and `streamable_http_connection_params`"]).await;
    check("errors/mcp_sse.yaml", expect!["invalid: tests/fixtures/errors/mcp_sse.yaml:5:7: tools[0].args: `sse_connection_params` cannot be used in adk-rs: adk-rs speaks MCP over stdio or streamable HTTP, not over the older SSE transport; use `streamable_http_connection_params` with the server's streamable HTTP URL"]).await;
    check("errors/mcp_header.yaml", expect!["invalid: tests/fixtures/errors/mcp_header.yaml:6:9: tools[0].args.streamable_http_connection_params: the header `X-Api-Key` cannot be sent: adk-rs sends MCP servers only `Authorization: Bearer <token>`"]).await;
}

#[tokio::test]
async fn a_loader_may_refuse_mcp_servers_started_as_processes() {
    let resolver = ScriptedResolver::new();
    let loader = AgentLoader::new()
        .stdio_mcp_servers(false)
        .model_resolver(resolver.clone());
    check_with(loader, &resolver, "errors/mcp_stdio.yaml", expect!["invalid: tests/fixtures/errors/mcp_stdio.yaml:5:7: tools[0].args: this loader does not start MCP servers as local processes (AgentLoader::stdio_mcp_servers(false)); reach the server with `streamable_http_connection_params` instead"]).await;
}

#[tokio::test]
async fn loop_rounds_are_not_negative() {
    check("errors/negative_iterations.yaml", expect!["invalid: tests/fixtures/errors/negative_iterations.yaml:3:17: max_iterations: -1 is negative; use 0 or more rounds (0 is no limit)"]).await;
}

#[tokio::test]
async fn every_error_has_a_kind_callers_can_branch_on() {
    let loader = AgentLoader::new().model_resolver(ScriptedResolver::new());
    let kinds = [
        ("errors/absent/root_agent.yaml", ConfigErrorKind::Read),
        ("errors/syntax.yaml", ConfigErrorKind::Syntax),
        ("errors/unknown_key.yaml", ConfigErrorKind::Invalid),
    ];
    for (path, kind) in kinds {
        let error = load_error(&loader, fixture(path)).await;
        assert_eq!(error.kind(), kind, "{error}");
        assert_eq!(error.file(), fixture(path));
    }
    let located = load_error(&loader, fixture("errors/unknown_key.yaml")).await;
    assert_eq!(
        located.location(),
        Some(adk_config::Location { line: 2, column: 1 })
    );
    assert!(located.message().starts_with("unknown key `modle`"));
}
