//! What agents need made before they are built and that takes waiting: OpenAPI documents read
//! and their toolsets checked, skill folders read, local code executors' sandboxes checked. Each
//! is made once per load, however many agents name it, and its problem is reported with the file
//! that names it.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use adk_flow::{BuiltInCodeExecutor, CodeExecutor, SandboxedCodeExecutor, UnsafeLocalCodeExecutor};
use adk_tool::Toolset;
use adk_tool::openapi::{OpenApiSpec, OpenApiToolset};
use adk_tool::skills::SkillToolset;

use crate::error::{ConfigError, ConfigErrorKind};
use crate::read::{AgentConfig, ReadAgent};
use crate::schema::code_executor::{CodeExecutorRef, ExecutorKind};
use crate::schema::tools::ToolRef;
use crate::schema::toolsets::{OpenApiRef, OpenApiSource, SkillsRef};

/// The toolsets and code executors of a load, ready, by what the configs say.
#[derive(Default)]
pub(crate) struct Prepared {
    openapi: HashMap<OpenApiRef, Arc<dyn Toolset>>,
    skills: HashMap<SkillsRef, Arc<dyn Toolset>>,
    executors: HashMap<CodeExecutorRef, Arc<dyn CodeExecutor>>,
}

impl Prepared {
    /// Makes everything `trees` name ready.
    pub(crate) async fn new(trees: &[&ReadAgent]) -> Result<Self, ConfigError> {
        let mut prepared = Self::default();
        let mut pending = trees.to_vec();
        while let Some(agent) = pending.pop() {
            pending.extend(agent.sub_agents.iter());
            if let AgentConfig::Llm(config) = &agent.config {
                for tool in config.tools.iter().flat_map(|tools| &tools.0) {
                    prepared.make_toolset(&agent.file, tool).await?;
                }
                if let Some(executor) = &config.code_executor {
                    prepared.make_executor(&agent.file, executor).await?;
                }
            }
        }
        Ok(prepared)
    }

    /// The OpenAPI toolset `reference` names.
    pub(crate) fn openapi(&self, reference: &OpenApiRef) -> Option<Arc<dyn Toolset>> {
        self.openapi.get(reference).cloned()
    }

    /// The skill toolset `reference` names.
    pub(crate) fn skills(&self, reference: &SkillsRef) -> Option<Arc<dyn Toolset>> {
        self.skills.get(reference).cloned()
    }

    /// The code executor `reference` names.
    pub(crate) fn executor(&self, reference: &CodeExecutorRef) -> Option<Arc<dyn CodeExecutor>> {
        self.executors.get(reference).cloned()
    }

    async fn make_toolset(&mut self, file: &Path, tool: &ToolRef) -> Result<(), ConfigError> {
        match tool {
            ToolRef::OpenApi(reference) if !self.openapi.contains_key(reference) => {
                let toolset = openapi_toolset(reference)
                    .await
                    .map_err(|message| ConfigError::new(ConfigErrorKind::Invalid, file, message))?;
                self.openapi.insert(reference.clone(), Arc::new(toolset));
            }
            ToolRef::Skills(reference) if !self.skills.contains_key(reference) => {
                let toolset = SkillToolset::from_dir(&reference.real)
                    .await
                    .map_err(|error| {
                        ConfigError::new(
                            ConfigErrorKind::Invalid,
                            file,
                            format!(
                                "the SkillToolset's folder {}: {error}",
                                reference.shown.display()
                            ),
                        )
                    })?;
                self.skills.insert(reference.clone(), Arc::new(toolset));
            }
            _ => {}
        }
        Ok(())
    }

    async fn make_executor(
        &mut self,
        file: &Path,
        reference: &CodeExecutorRef,
    ) -> Result<(), ConfigError> {
        if self.executors.contains_key(reference) {
            return Ok(());
        }
        let timeout = reference.timeout.unwrap_or(Duration::from_secs(30));
        let memory = reference.memory_limit_mb.unwrap_or(512) * 1024 * 1024;
        let built: Result<Arc<dyn CodeExecutor>, adk_flow::CodeExecutorError> = match reference.kind
        {
            ExecutorKind::BuiltIn => Ok(Arc::new(BuiltInCodeExecutor)),
            ExecutorKind::Sandboxed => SandboxedCodeExecutor::builder()
                .timeout(timeout)
                .memory_limit(memory)
                .build()
                .await
                .map(|executor| Arc::new(executor) as Arc<dyn CodeExecutor>),
            ExecutorKind::UnsafeLocal => UnsafeLocalCodeExecutor::builder()
                .timeout(timeout)
                .memory_limit(memory)
                .build()
                .await
                .map(|executor| Arc::new(executor) as Arc<dyn CodeExecutor>),
        };
        let executor = built.map_err(|error| {
            ConfigError::new(
                ConfigErrorKind::Invalid,
                file,
                format!("the {}: {error}", reference.kind.name()),
            )
            .with_source(error)
        })?;
        self.executors.insert(reference.clone(), executor);
        Ok(())
    }
}

/// Reads the document and builds the toolset, so that its problems are found now.
async fn openapi_toolset(reference: &OpenApiRef) -> Result<OpenApiToolset, String> {
    let (spec, shown) = match &reference.source {
        OpenApiSource::File { real, shown } => (
            OpenApiSpec::from_file(real).await,
            format!("the OpenAPI document {}", shown.display()),
        ),
        OpenApiSource::Text(text) => (
            OpenApiSpec::parse(text),
            "the OpenAPI document in `spec_str`".to_owned(),
        ),
    };
    let spec = spec.map_err(|error| format!("{shown}: {error}"))?;
    let mut builder = OpenApiToolset::builder(spec);
    if let Some(filter) = &reference.tool_filter {
        builder = builder.operations(filter.iter().map(String::as_str));
    }
    if let Some(url) = &reference.base_url {
        builder = builder.base_url(url);
    }
    builder.build().map_err(|error| format!("{shown}: {error}"))
}
