//! The analyzer: the model call that breaks the user's request into tasks. [`AnalyzerConfig`]
//! holds its prompt; this module builds the instruction and reads the reasoning out of its answer.

use std::fmt::Write as _;

use adk_core::{Content, GenerateContentConfig};

/// What the analyzer is told when no base instruction is given.
pub const DEFAULT_BASE_INSTRUCTION: &str = "You plan work. Break the user's request into a few \
small tasks that together answer it. Each task is done by one of the processors listed below. \
A task that needs the result of another task depends on it; tasks that need nothing from each \
other run at the same time.";

/// How the analyzer is told to write its plan when no format instructions are given.
pub const DEFAULT_FORMAT_INSTRUCTIONS: &str = r#"Answer with the plan in this XML form and nothing else:
<tasks>
  <task id="t1" type="lookup" processor="PROCESSOR_NAME" priority="1">
    <description>One sentence saying what this task does.</description>
    <dependencies></dependencies>
    <metadata><item key="KEY">VALUE</item></metadata>
  </task>
  <task id="t2" type="write" processor="PROCESSOR_NAME" priority="2">
    <description>One sentence saying what this task does.</description>
    <dependencies><dep>t1</dep></dependencies>
  </task>
</tasks>"#;

/// The analyzer's prompt (dspy-go's `AnalyzerConfig`) and how often it is asked.
///
/// The instruction the model gets is the base instruction, the format instructions, the
/// considerations as a list, and the registered processors with their descriptions.
///
/// ```
/// use adk_orchestrator::AnalyzerConfig;
///
/// let config = AnalyzerConfig::default()
///     .with_base_instruction("Plan a trip.")
///     .with_consideration("Look up the weather before writing.");
/// assert_eq!(config.max_attempts, 3);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AnalyzerConfig {
    /// What the analyzer does.
    pub base_instruction: String,
    /// How it writes its plan.
    pub format_instructions: String,
    /// Extra points to consider.
    pub considerations: Vec<String>,
    /// Demonstrations, as `(request, plan)` pairs: each is shown to the model as an earlier
    /// request and its answer before the real request (dspy-go's demos). Small models follow a
    /// demonstrated plan far more reliably than a described one.
    pub examples: Vec<(String, String)>,
    /// Sampling settings of its model calls.
    pub generate_config: GenerateContentConfig,
    /// How many times it is asked before the run fails: an answer that is not a usable plan, or
    /// a failed model call, is followed by another attempt, which is told what was wrong.
    pub max_attempts: u32,
}

impl Default for AnalyzerConfig {
    fn default() -> Self {
        Self {
            base_instruction: DEFAULT_BASE_INSTRUCTION.to_owned(),
            format_instructions: DEFAULT_FORMAT_INSTRUCTIONS.to_owned(),
            considerations: vec![
                "Use only the processors listed below, by their exact names.".to_owned(),
                "Keep the plan short: as few tasks as the request needs.".to_owned(),
                "Among tasks that are ready together, a lower priority number runs first."
                    .to_owned(),
            ],
            examples: Vec::new(),
            generate_config: GenerateContentConfig::default(),
            max_attempts: 3,
        }
    }
}

impl AnalyzerConfig {
    /// Sets what the analyzer does.
    pub fn with_base_instruction(mut self, instruction: impl Into<String>) -> Self {
        self.base_instruction = instruction.into();
        self
    }

    /// Sets how it writes its plan.
    pub fn with_format_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.format_instructions = instructions.into();
        self
    }

    /// Adds a point to consider.
    pub fn with_consideration(mut self, consideration: impl Into<String>) -> Self {
        self.considerations.push(consideration.into());
        self
    }

    /// Adds a demonstration: `request` and the `plan` (the XML answer) it should get.
    pub fn with_example(mut self, request: impl Into<String>, plan: impl Into<String>) -> Self {
        self.examples.push((request.into(), plan.into()));
        self
    }

    /// Sets the sampling settings of its model calls.
    pub fn with_generate_config(mut self, config: GenerateContentConfig) -> Self {
        self.generate_config = config;
        self
    }

    /// Sets how many times it is asked (at least once).
    pub fn with_max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// The instruction the model gets, listing `processors` (name and description).
    pub(crate) fn instruction<'a>(
        &self,
        processors: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> String {
        let mut instruction = self.base_instruction.clone();
        if !self.format_instructions.is_empty() {
            instruction.push_str("\n\n");
            instruction.push_str(&self.format_instructions);
        }
        if !self.considerations.is_empty() {
            instruction.push_str("\n\nConsider:");
            for consideration in &self.considerations {
                let _ = write!(instruction, "\n- {consideration}");
            }
        }
        instruction.push_str("\n\nProcessors:");
        for (name, description) in processors {
            let _ = write!(instruction, "\n- {name}: {description}");
        }
        instruction
    }
}

impl AnalyzerConfig {
    /// The conversation the analyzer gets for `request`: the demonstrations, then the request.
    pub(crate) fn contents(&self, request: &str) -> Vec<Content> {
        let mut contents = Vec::with_capacity(self.examples.len() * 2 + 1);
        for (example, plan) in &self.examples {
            contents.push(Content::user(request_prompt(example)));
            contents.push(Content::model(plan.clone()));
        }
        contents.push(Content::user(request_prompt(request)));
        contents
    }
}

/// How a request is put to the analyzer.
fn request_prompt(request: &str) -> String {
    format!("Plan this request:\n{request}")
}

/// The analyzer's reasoning: what it wrote outside the tasks section, without code fences and
/// `<analysis>` tags.
pub(crate) fn analysis_text(output: &str) -> String {
    let lower = output.to_ascii_lowercase();
    let start = lower.find("<tasks").unwrap_or(output.len());
    let end = lower
        .rfind("</tasks>")
        .filter(|end| *end >= start)
        .map_or(output.len(), |end| end + "</tasks>".len());
    let outside = format!("{} {}", &output[..start], &output[end..]);
    outside
        .replace("```xml", " ")
        .replace("```", " ")
        .replace("<analysis>", " ")
        .replace("</analysis>", " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}
