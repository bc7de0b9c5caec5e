//! Agent skills, as ADK reads them: folders each holding a `SKILL.md` (YAML front matter with a
//! `name` and a `description`, then instructions) and optional `references/`, `assets/` and
//! `scripts/`. [`SkillToolset`] lists the skills in the system instruction and gives the model
//! `list_skills`, `load_skill` (the instructions, on demand) and `load_skill_resource` (one file
//! of a skill's folders, read as text).
//!
//! Scripts are offered to read, not to run: running what a skill ships needs a sandboxed code
//! executor.
//!
//! ```no_run
//! # async fn example() -> Result<(), adk_tool::skills::SkillError> {
//! use adk_tool::skills::SkillToolset;
//!
//! let skills = SkillToolset::from_dir("skills").await?;
//! // agent.toolset(Arc::new(skills))
//! # Ok(()) }
//! ```

mod skill;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use adk_core::{FunctionDeclaration, LlmRequest, ReadonlyContext, Result};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

pub use skill::Skill;

use crate::{FunctionTool, Tool, ToolContext, ToolEffect, Toolset};

/// The largest resource file read for the model; larger ones are refused, naming the limit.
const MAX_RESOURCE_BYTES: u64 = 256 * 1024;

/// A skill folder or `SKILL.md` that cannot be used, with the file and, when the problem is on
/// one line, the line.
#[derive(Debug, thiserror::Error)]
#[error("{}{}: {message}", .file.display(), .line.map(|l| format!(", line {l}")).unwrap_or_default())]
pub struct SkillError {
    file: PathBuf,
    line: Option<usize>,
    message: String,
}

impl SkillError {
    fn new(file: &Path, line: Option<usize>, message: String) -> Self {
        Self {
            file: file.to_owned(),
            line,
            message,
        }
    }

    /// The file the problem is in.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// The line of the problem (counting from 1), when it is on one line.
    pub fn line(&self) -> Option<usize> {
        self.line
    }
}

impl From<SkillError> for adk_core::Error {
    fn from(error: SkillError) -> Self {
        adk_core::Error::new(adk_core::ErrorKind::Config, error.to_string()).with_source(error)
    }
}

/// The skills of a folder as tools: the list in the system instruction, `list_skills`,
/// `load_skill` and `load_skill_resource`.
#[derive(Clone)]
pub struct SkillToolset {
    skills: Arc<[Skill]>,
    tools: Vec<Arc<dyn Tool>>,
}

impl fmt::Debug for SkillToolset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.skills.iter().map(Skill::name).collect();
        f.debug_struct("SkillToolset")
            .field("skills", &names)
            .finish()
    }
}

impl SkillToolset {
    /// Reads every skill in the sub-folders of `dir` (each with a `SKILL.md`; other folders are
    /// passed over), in name order. Fails on the first malformed skill, naming its file and line.
    pub async fn from_dir(dir: impl AsRef<Path>) -> std::result::Result<Self, SkillError> {
        let dir = dir.as_ref();
        let unreadable =
            |error: std::io::Error| SkillError::new(dir, None, format!("cannot be read: {error}"));
        let mut entries = tokio::fs::read_dir(dir).await.map_err(unreadable)?;
        let mut folders = Vec::new();
        while let Some(entry) = entries.next_entry().await.map_err(unreadable)? {
            let path = entry.path();
            let has_skill = tokio::fs::try_exists(path.join("SKILL.md"))
                .await
                .unwrap_or(false)
                || tokio::fs::try_exists(path.join("skill.md"))
                    .await
                    .unwrap_or(false);
            if has_skill {
                folders.push(path);
            }
        }
        folders.sort();
        let mut skills = Vec::with_capacity(folders.len());
        for folder in folders {
            skills.push(Skill::read(&folder).await?);
        }
        Ok(Self::new(skills))
    }

    /// A toolset of skills already read.
    pub fn new(skills: Vec<Skill>) -> Self {
        let skills: Arc<[Skill]> = skills.into();
        let tools: Vec<Arc<dyn Tool>> = vec![
            Arc::new(ListSkills {
                skills: skills.clone(),
            }),
            Arc::new(load_skill(skills.clone())),
            Arc::new(load_skill_resource(skills.clone())),
        ];
        Self { skills, tools }
    }

    /// The skills, in name order.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }
}

#[async_trait]
impl Toolset for SkillToolset {
    fn name(&self) -> &str {
        "skills"
    }

    async fn tools(&self, _ctx: &ReadonlyContext) -> Result<Vec<Arc<dyn Tool>>> {
        Ok(self.tools.clone())
    }
}

/// The skills as ADK lists them to the model.
fn skills_xml(skills: &[Skill]) -> String {
    let mut xml = String::from("<available_skills>\n");
    for skill in skills {
        xml.push_str("<skill>\n<name>\n");
        xml.push_str(&escape_xml(skill.name()));
        xml.push_str("\n</name>\n<description>\n");
        xml.push_str(&escape_xml(skill.description()));
        xml.push_str("\n</description>\n</skill>\n");
    }
    xml.push_str("</available_skills>");
    xml
}

fn escape_xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#x27;")
}

/// How the model is told to use skills; it follows ADK's guidance, in our words.
const SKILL_INSTRUCTION: &str = "You have skills: folders of instructions and files for \
particular tasks, listed below. When a skill fits the user's request, call `load_skill` with its \
`skill_name` and read its instructions before you go on, then follow them in order. \
`load_skill_resource` reads one file of a skill (`references/...`, `assets/...` or \
`scripts/...`); use it only for files the skill names, not for the user's documents. If it \
answers with an error, do not guess other paths: tell the user. Loading a skill does not end \
your turn: carry on with what its instructions ask.";

/// `list_skills`: lists the skills, and puts the list in every request's system instruction.
struct ListSkills {
    skills: Arc<[Skill]>,
}

#[async_trait]
impl Tool for ListSkills {
    fn name(&self) -> &str {
        "list_skills"
    }

    fn effect(&self) -> ToolEffect {
        // It only reads.
        ToolEffect::ReadOnly
    }

    fn description(&self) -> &str {
        "Lists all available skills with their names and descriptions."
    }

    fn declaration(&self) -> Option<FunctionDeclaration> {
        Some(FunctionDeclaration::new(self.name(), self.description()))
    }

    async fn process_request(&self, _ctx: &ToolContext, request: &mut LlmRequest) -> Result<()> {
        request.append_instructions([format!(
            "{SKILL_INSTRUCTION}\n\n{}",
            skills_xml(&self.skills)
        )]);
        if let Some(declaration) = self.declaration() {
            request.append_tools([declaration]);
        }
        Ok(())
    }

    async fn run(&self, _ctx: ToolContext, _args: Value) -> Result<Value> {
        Ok(Value::String(skills_xml(&self.skills)))
    }
}

/// The arguments of `load_skill`.
#[derive(Deserialize, JsonSchema)]
struct LoadSkillArgs {
    /// The name of the skill to load.
    skill_name: String,
}

/// The arguments of `load_skill_resource`.
#[derive(Deserialize, JsonSchema)]
struct LoadResourceArgs {
    /// The name of the skill.
    skill_name: String,
    /// The path of the file in the skill's folder, such as `references/guide.md`,
    /// `assets/template.txt` or `scripts/setup.sh`.
    file_path: String,
}

fn find<'a>(skills: &'a [Skill], name: &str) -> std::result::Result<&'a Skill, String> {
    skills
        .iter()
        .find(|skill| skill.name() == name)
        .ok_or_else(|| {
            let names: Vec<&str> = skills.iter().map(Skill::name).collect();
            format!(
                "there is no skill '{name}'; the skills are: {}",
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    names.join(", ")
                }
            )
        })
}

fn load_skill(skills: Arc<[Skill]>) -> FunctionTool {
    FunctionTool::new(
        "load_skill",
        "Loads the SKILL.md instructions for a given skill.",
        move |args: LoadSkillArgs| {
            let skills = skills.clone();
            async move {
                let skill = find(&skills, &args.skill_name)?;
                Ok::<_, String>(json!({
                    "skill_name": skill.name(),
                    "instructions": skill.instructions(),
                    "frontmatter": skill.front_matter(),
                }))
            }
        },
    )
}

fn load_skill_resource(skills: Arc<[Skill]>) -> FunctionTool {
    FunctionTool::new(
        "load_skill_resource",
        "Loads a resource file (from references/, assets/, or scripts/) from within a skill.",
        move |args: LoadResourceArgs| {
            let skills = skills.clone();
            async move {
                let skill = find(&skills, &args.skill_name)?;
                let path = skill.resource_path(&args.file_path).ok_or_else(|| {
                    format!(
                        "'{}' is not a file of the skill: give a relative path inside its \
                         references/, assets/ or scripts/ folder",
                        args.file_path
                    )
                })?;
                read_resource(&path, &args.file_path).await.map(|content| {
                    json!({
                        "skill_name": skill.name(),
                        "file_path": args.file_path,
                        "content": content,
                    })
                })
            }
        },
    )
}

/// A resource's text; a missing, oversized or binary file is an error the model reads.
async fn read_resource(path: &Path, shown: &str) -> std::result::Result<String, String> {
    let metadata = tokio::fs::metadata(path)
        .await
        .map_err(|_| format!("the skill has no file '{shown}'"))?;
    if !metadata.is_file() {
        return Err(format!("'{shown}' is not a file"));
    }
    if metadata.len() > MAX_RESOURCE_BYTES {
        return Err(format!(
            "'{shown}' has {} bytes, more than the {MAX_RESOURCE_BYTES} read for the model",
            metadata.len()
        ));
    }
    let bytes = tokio::fs::read(path)
        .await
        .map_err(|error| format!("'{shown}' cannot be read: {error}"))?;
    String::from_utf8(bytes).map_err(|_| format!("'{shown}' is not text and cannot be shown"))
}
