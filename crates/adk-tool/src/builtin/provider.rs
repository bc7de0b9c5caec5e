//! Gemini's provider-side tools: [`google_search`], [`url_context`] and [`code_execution`]. The
//! model's provider runs them; the tool only asks for them in the request.

use adk_core::{BuiltinTool, Error, ErrorKind, FunctionDeclaration, LlmRequest, Result};
use async_trait::async_trait;
use serde_json::Value;

use crate::tool::ProviderSide;
use crate::{Tool, ToolContext, ToolEffect};

/// A tool the model's provider runs (Gemini's Google Search, URL context or code execution).
///
/// It declares no function: its request hook adds the provider's tool to the request, and only
/// for a Gemini model, since no other provider knows these tools. The flow keeps it apart from
/// function declarations where Gemini requires that (see [`ProviderSide`]); what the provider sends back about its sources (Google Search's
/// grounding metadata) stays on the model's events.
///
/// ```
/// use adk_tool::{Tool, builtin};
///
/// let search = builtin::google_search();
/// assert_eq!(search.name(), "google_search");
/// assert!(search.declaration().is_none());
/// // Beside other tools, the flow runs it through an agent of its own.
/// let wrapped = builtin::google_search().bypass_multi_tools_limit(true);
/// assert!(wrapped.provider_side().unwrap().wrap_beside_other_tools);
/// ```
#[derive(Debug, Clone)]
pub struct ProviderTool {
    tool: BuiltinTool,
    name: &'static str,
    wrap_beside_other_tools: bool,
}

/// Gemini's Google Search grounding: the model searches the web and cites what it found.
pub fn google_search() -> ProviderTool {
    ProviderTool::new(BuiltinTool::GoogleSearch, "google_search")
}

/// Gemini's URL context: the model reads the pages whose URLs the conversation names.
pub fn url_context() -> ProviderTool {
    ProviderTool::new(BuiltinTool::UrlContext, "url_context")
}

/// Gemini's code execution: the model writes Python and the provider runs it, answering with
/// `executableCode` and `codeExecutionResult` parts.
pub fn code_execution() -> ProviderTool {
    ProviderTool::new(BuiltinTool::CodeExecution, "code_execution")
}

impl ProviderTool {
    fn new(tool: BuiltinTool, name: &'static str) -> Self {
        Self {
            tool,
            name,
            wrap_beside_other_tools: false,
        }
    }

    /// Lets Google Search sit beside other tools: the flow then runs it through an agent of its
    /// own, on the same model, offered as a tool, and puts that agent's grounding metadata on the
    /// answer that uses it, as ADK does. Only Google Search is wrapped; for the other built-in
    /// tools the flag changes nothing.
    pub fn bypass_multi_tools_limit(mut self, bypass: bool) -> Self {
        self.wrap_beside_other_tools = bypass;
        self
    }

    /// The provider-side tool this one asks for.
    pub fn builtin(&self) -> BuiltinTool {
        self.tool
    }
}

/// The model's name without a resource path or provider prefix (`models/gemini-2.5-flash`,
/// `projects/p/locations/l/publishers/google/models/gemini-2.5-pro`, `gemini/gemini-3-pro`).
fn bare_model_name(model: &str) -> &str {
    model.rsplit('/').next().unwrap_or(model)
}

/// Whether `model` names a Gemini model.
fn is_gemini(model: &str) -> bool {
    bare_model_name(model).starts_with("gemini-")
}

/// Whether `model` takes a built-in tool in the same request as function declarations: Gemini 3
/// and later do; earlier Gemini models answer `400 Tool use with function calling is unsupported`,
/// and other models have no built-in tools at all.
///
/// ```
/// use adk_tool::builtin::mixes_with_functions;
///
/// assert!(mixes_with_functions("gemini-3-flash-preview"));
/// assert!(mixes_with_functions("models/gemini-3.1-pro"));
/// assert!(!mixes_with_functions("gemini-2.5-flash"));
/// assert!(!mixes_with_functions("gpt-4o"));
/// ```
pub fn mixes_with_functions(model: &str) -> bool {
    let Some(rest) = bare_model_name(model).strip_prefix("gemini-") else {
        return false;
    };
    let version = rest.split('-').next().unwrap_or_default();
    let major = version.split('.').next().unwrap_or_default();
    major.parse::<u32>().is_ok_and(|major| major >= 3)
}

#[async_trait]
impl Tool for ProviderTool {
    fn name(&self) -> &str {
        self.name
    }

    fn effect(&self) -> ToolEffect {
        // It never runs here: the model's provider runs it.
        ToolEffect::ReadOnly
    }

    fn description(&self) -> &str {
        self.name
    }

    fn declaration(&self) -> Option<FunctionDeclaration> {
        None
    }

    fn provider_side(&self) -> Option<ProviderSide> {
        Some(ProviderSide {
            tool: self.tool,
            wrap_beside_other_tools: self.wrap_beside_other_tools,
        })
    }

    async fn process_request(&self, _ctx: &ToolContext, request: &mut LlmRequest) -> Result<()> {
        if !is_gemini(&request.model) {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "the built-in tool `{}` runs on Gemini models only, and `{}` is not one; \
                     use a `gemini-...` model or remove the tool",
                    self.name, request.model
                ),
            ));
        }
        if !request.builtin_tools.contains(&self.tool) {
            request.builtin_tools.push(self.tool);
        }
        Ok(())
    }

    async fn run(&self, _ctx: ToolContext, _args: Value) -> Result<Value> {
        // The model's provider runs this tool; a function call of this name is a model that
        // confused it with a declared function.
        Err(Error::new(
            ErrorKind::Tool,
            format!(
                "`{}` is run by the model's provider, not called as a function",
                self.name
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_names_with_and_without_paths() {
        assert!(is_gemini("gemini-2.5-flash"));
        assert!(is_gemini("models/gemini-3-flash-preview"));
        assert!(is_gemini(
            "projects/p/locations/us/publishers/google/models/gemini-2.5-pro"
        ));
        assert!(!is_gemini("gpt-4o"));
        assert!(!is_gemini("claude-gemini-lookalike"));
        assert!(is_gemini("gemini/gemini-2.5-flash"));
    }

    #[test]
    fn only_gemini_3_and_later_mix_built_ins_with_functions() {
        assert!(mixes_with_functions("gemini-3-pro-preview"));
        assert!(mixes_with_functions("gemini-10.0"));
        assert!(!mixes_with_functions("gemini-2.5-pro"));
        assert!(!mixes_with_functions("gemini-exp-1206"));
        assert!(!mixes_with_functions("gemini-"));
    }
}
