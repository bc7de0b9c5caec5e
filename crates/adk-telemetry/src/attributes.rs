//! The span names and attribute keys adk-rs records: OpenTelemetry GenAI semantic conventions
//! (`gen_ai.*`, `error.type`) and ADK's own `gcp.vertex.agent.*` keys, spelled as ADK Python and
//! ADK Go spell them so that the same dashboards read both.

/// The span around one run of the runner: every agent, model call and tool of the invocation.
pub const INVOCATION_SPAN: &str = "invocation";
/// The prefix of an agent's span, exported as `invoke_agent {agent name}`.
pub const INVOKE_AGENT_SPAN: &str = "invoke_agent";
/// The span of one step of an `LlmAgent`: its model call and the tools the answer calls.
pub const CALL_LLM_SPAN: &str = "call_llm";
/// The prefix of the model call's span, exported as `generate_content {model}`.
pub const GENERATE_CONTENT_SPAN: &str = "generate_content";
/// The prefix of a tool call's span, exported as `execute_tool {tool name}`.
pub const EXECUTE_TOOL_SPAN: &str = "execute_tool";
/// The span around the calls of one model response when there are several, run in parallel.
pub const MERGED_TOOLS_SPAN: &str = "execute_tool (merged)";

/// What the span does: `invoke_agent`, `generate_content` or `execute_tool`.
pub const GEN_AI_OPERATION_NAME: &str = "gen_ai.operation.name";
/// The agent's name.
pub const GEN_AI_AGENT_NAME: &str = "gen_ai.agent.name";
/// The agent's description.
pub const GEN_AI_AGENT_DESCRIPTION: &str = "gen_ai.agent.description";
/// The conversation: the session id.
pub const GEN_AI_CONVERSATION_ID: &str = "gen_ai.conversation.id";
/// The model the request names.
pub const GEN_AI_REQUEST_MODEL: &str = "gen_ai.request.model";
/// The request's nucleus-sampling probability, when set.
pub const GEN_AI_REQUEST_TOP_P: &str = "gen_ai.request.top_p";
/// The request's output-token limit, when set.
pub const GEN_AI_REQUEST_MAX_TOKENS: &str = "gen_ai.request.max_tokens";
/// The model version that answered, when the provider says.
pub const GEN_AI_RESPONSE_MODEL: &str = "gen_ai.response.model";
/// Why the model stopped, lower case (`stop`, `max_tokens`, `safety`, ...).
pub const GEN_AI_RESPONSE_FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
/// Prompt tokens of the call.
pub const GEN_AI_USAGE_INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
/// Candidate (answer) tokens of the call.
pub const GEN_AI_USAGE_OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
/// Prompt tokens the provider read from its cache (Gemini's cached content, Anthropic's cache
/// reads, OpenAI's cached tokens).
pub const GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: &str = "gen_ai.usage.cache_read.input_tokens";
/// The tool's name.
pub const GEN_AI_TOOL_NAME: &str = "gen_ai.tool.name";
/// The tool's description.
pub const GEN_AI_TOOL_DESCRIPTION: &str = "gen_ai.tool.description";
/// The id of the function call the tool answers.
pub const GEN_AI_TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
/// Whether a token count is `input` or `output` (metrics only).
pub const GEN_AI_TOKEN_TYPE: &str = "gen_ai.token.type";
/// What kind of failure ended the operation: the [`adk_core::ErrorKind`] name.
pub const ERROR_TYPE: &str = "error.type";

/// The user the invocation runs for (OpenTelemetry's `user.id`), on the invocation's span: a
/// debug view shows a caller only its own user's traces.
pub const USER_ID: &str = "user.id";

/// The invocation's id (`e-<uuid>`).
pub const ADK_INVOCATION_ID: &str = "gcp.vertex.agent.invocation_id";
/// The session's id.
pub const ADK_SESSION_ID: &str = "gcp.vertex.agent.session_id";
/// The id of the event the operation produced.
pub const ADK_EVENT_ID: &str = "gcp.vertex.agent.event_id";
/// The model request as JSON, inline bytes left out; recorded only when content capture is on.
pub const ADK_LLM_REQUEST: &str = "gcp.vertex.agent.llm_request";
/// The model response as JSON; recorded only when content capture is on.
pub const ADK_LLM_RESPONSE: &str = "gcp.vertex.agent.llm_response";
/// The tool call's arguments as JSON; recorded only when content capture is on.
pub const ADK_TOOL_CALL_ARGS: &str = "gcp.vertex.agent.tool_call_args";
/// The tool's result as JSON; recorded only when content capture is on.
pub const ADK_TOOL_RESPONSE: &str = "gcp.vertex.agent.tool_response";

/// The `gen_ai.operation.name` of an agent's span.
pub const OPERATION_INVOKE_AGENT: &str = "invoke_agent";
/// The `gen_ai.operation.name` of a model call's span.
pub const OPERATION_GENERATE_CONTENT: &str = "generate_content";
/// The `gen_ai.operation.name` of a tool call's span.
pub const OPERATION_EXECUTE_TOOL: &str = "execute_tool";
/// The tool name and description of the merged span, as ADK records them.
pub const MERGED_TOOLS_NAME: &str = "(merged tools)";
