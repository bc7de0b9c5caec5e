//! `load_artifacts`: lets a model read the session's artifacts.

use adk_core::{Content, FunctionDeclaration, LlmRequest, Part, PartData, Result, Role};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{FunctionTool, Tool, ToolContext, ToolEffect};

/// The tool's name, also the name of the function response it looks for.
const NAME: &str = "load_artifacts";

/// What the tool answers; the artifacts themselves reach the model through the next request.
const STATUS: &str = "The artifacts' contents are in the next message only. To see them again \
                      later, call load_artifacts again.";

/// The prefix of artifacts shared by all sessions of a user.
const USER_PREFIX: &str = "user:";

/// The default of [`LoadArtifactsTool::max_artifact_bytes`]: 8 MiB.
pub const DEFAULT_MAX_ARTIFACT_BYTES: usize = 8 * 1024 * 1024;

/// The arguments of `load_artifacts`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct LoadArtifactsArgs {
    /// The names of the artifacts to load.
    #[serde(default)]
    pub artifact_names: Vec<String>,
}

/// The `load_artifacts` tool, as ADK's.
///
/// Before each model call it lists the session's artifacts in the system instruction. When the
/// model calls it with `artifact_names`, it answers with those names, and the next request carries
/// each artifact's content in a user message (for that request only, not in the session). An
/// artifact not found in the session is looked up among the user's `user:` artifacts. Inline data
/// a model cannot read inline becomes text (text-like types) or a short placeholder (binary).
///
/// An artifact larger than [`max_artifact_bytes`](Self::max_artifact_bytes) (users upload files,
/// so their size is not the app's to choose) is not put into the request: the model reads a note
/// naming its size and the limit instead.
///
/// ```
/// use adk_tool::Tool;
/// use adk_tool::builtin::LoadArtifactsTool;
///
/// let tool = LoadArtifactsTool::new().max_artifact_bytes(1024 * 1024);
/// assert_eq!(tool.name(), "load_artifacts");
/// ```
pub struct LoadArtifactsTool {
    inner: FunctionTool,
    max_artifact_bytes: usize,
}

impl LoadArtifactsTool {
    /// The tool.
    pub fn new() -> Self {
        Self {
            inner: FunctionTool::new(
                NAME,
                "Loads artifacts into the conversation for this request.\n\nNOTE: call it \
                 whenever you need the content of artifacts (files the user uploaded, for \
                 example).",
                load_artifacts,
            ),
            max_artifact_bytes: DEFAULT_MAX_ARTIFACT_BYTES,
        }
    }

    /// The largest artifact put into a request, in bytes (default
    /// [`DEFAULT_MAX_ARTIFACT_BYTES`]).
    pub fn max_artifact_bytes(mut self, bytes: usize) -> Self {
        self.max_artifact_bytes = bytes;
        self
    }
}

impl Default for LoadArtifactsTool {
    fn default() -> Self {
        Self::new()
    }
}

async fn load_artifacts(args: LoadArtifactsArgs) -> Result<Value, std::convert::Infallible> {
    Ok(json!({ "artifact_names": args.artifact_names, "status": STATUS }))
}

#[async_trait]
impl Tool for LoadArtifactsTool {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn effect(&self) -> ToolEffect {
        // It only reads.
        ToolEffect::ReadOnly
    }

    fn description(&self) -> &str {
        self.inner.description()
    }

    fn declaration(&self) -> Option<FunctionDeclaration> {
        self.inner.declaration()
    }

    async fn process_request(&self, ctx: &ToolContext, request: &mut LlmRequest) -> Result<()> {
        self.inner.process_request(ctx, request).await?;
        let available = ctx.list_artifacts().await?;
        if available.is_empty() {
            return Ok(());
        }
        request.append_instructions([format!(
            "You have these artifacts: {}\n\nWhen the user asks about any of them, call the \
             `load_artifacts` function to load it, every time, even if it was loaded before: do \
             not rely on earlier answers about an artifact.",
            serde_json::to_string(&available)?
        )]);
        for name in requested_artifacts(request) {
            let Some(artifact) = load(ctx, &name).await? else {
                tracing::warn!(artifact = %name, "load_artifacts: artifact not found, skipped");
                continue;
            };
            let size = artifact_size(&artifact);
            let part = if size > self.max_artifact_bytes {
                tracing::warn!(artifact = %name, size, limit = self.max_artifact_bytes, "load_artifacts: artifact over the limit, not loaded");
                Part::text(format!(
                    "[Artifact {name} is {size} bytes, more than the {} bytes that can be loaded \
                     (LoadArtifactsTool::max_artifact_bytes); it was not loaded.]",
                    self.max_artifact_bytes
                ))
            } else {
                readable_part(artifact, &name)
            };
            std::sync::Arc::make_mut(&mut request.contents).push(Content::new(
                Role::User,
                [Part::text(format!("Artifact {name} is:")), part],
            ));
        }
        Ok(())
    }

    async fn run(&self, ctx: ToolContext, args: Value) -> Result<Value> {
        self.inner.run(ctx, args).await
    }
}

impl std::fmt::Debug for LoadArtifactsTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadArtifactsTool").finish()
    }
}

/// The names the model asked for, when the request ends with this tool's function response.
fn requested_artifacts(request: &LlmRequest) -> Vec<String> {
    let Some(response) = request
        .contents
        .last()
        .and_then(|content| content.parts.first())
        .and_then(Part::as_function_response)
        .filter(|response| response.name == NAME)
    else {
        return Vec::new();
    };
    response
        .response
        .get("artifact_names")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Loads `name` from the session, then from the user's shared artifacts.
async fn load(ctx: &ToolContext, name: &str) -> Result<Option<Part>> {
    if let Some(part) = ctx.load_artifact(name, None).await? {
        return Ok(Some(part));
    }
    if name.starts_with(USER_PREFIX) {
        return Ok(None);
    }
    ctx.load_artifact(&format!("{USER_PREFIX}{name}"), None)
        .await
}

/// The size of an artifact's data: its bytes, or its text.
fn artifact_size(artifact: &Part) -> usize {
    match &artifact.data {
        PartData::InlineData(blob) => blob.data.len(),
        PartData::Text(text) => text.len(),
        _ => 0,
    }
}

/// `artifact` as a part a model can read: media and PDF inline, text-like types as text, other
/// bytes as a placeholder that says what they are.
fn readable_part(artifact: Part, name: &str) -> Part {
    let PartData::InlineData(blob) = &artifact.data else {
        return artifact;
    };
    let mime_type = blob
        .mime_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let inline_ok = (["image/", "audio/", "video/"]
        .iter()
        .any(|prefix| mime_type.starts_with(prefix))
        && mime_type != "image/svg+xml")
        || mime_type == "application/pdf";
    if inline_ok {
        return artifact;
    }
    let text_like = mime_type.starts_with("text/")
        || [
            "application/json",
            "application/xml",
            "application/csv",
            "image/svg+xml",
        ]
        .contains(&mime_type.as_str());
    if text_like {
        return Part::text(String::from_utf8_lossy(&blob.data).into_owned());
    }
    let kind = if mime_type.is_empty() {
        "application/octet-stream"
    } else {
        &mime_type
    };
    Part::text(format!(
        "[Binary artifact {name}, type {kind}, {:.1} KB: it cannot be shown inline.]",
        blob.data.len() as f64 / 1024.0
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_made_readable() {
        let image = Part::inline_data("image/png", vec![1, 2, 3]);
        assert_eq!(readable_part(image.clone(), "a.png"), image);
        let csv = Part::inline_data("text/csv; charset=utf-8", b"a,b".to_vec());
        assert_eq!(readable_part(csv, "a.csv").as_text(), Some("a,b"));
        let zip = Part::inline_data("application/zip", vec![0; 2048]);
        assert_eq!(
            readable_part(zip, "a.zip").as_text(),
            Some(
                "[Binary artifact a.zip, type application/zip, 2.0 KB: it cannot be shown inline.]"
            )
        );
    }
}
