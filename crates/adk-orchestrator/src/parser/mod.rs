//! Reading an analyzer's answer as tasks: the [`TaskParser`] contract, the [`XmlTaskParser`] that
//! reads dspy-go's XML plan format, its [`XmlNormalizer`], and [`XmlError`] with dspy-go's codes.
//!
//! The format, as the analyzer is asked to write it:
//!
//! ```xml
//! <tasks>
//!   <task id="t1" type="research" processor="weather" priority="1">
//!     <description>Look up the weather in Paris.</description>
//!     <dependencies></dependencies>
//!     <metadata><item key="city">Paris</item></metadata>
//!   </task>
//!   <task id="t2" type="write" processor="writer" priority="2">
//!     <description>Write the note.</description>
//!     <dependencies><dep>t1</dep></dependencies>
//!   </task>
//! </tasks>
//! ```
//!
//! `id`, `type`, `processor` and `priority` may also be child elements, and `<dependencies>` may
//! list ids as text separated by commas.

mod error;
mod normalize;

use std::collections::HashSet;

use quick_xml::XmlVersion;
use quick_xml::events::{BytesStart, Event};

pub use error::{XmlError, XmlErrorCode};
pub use normalize::XmlNormalizer;

use crate::Task;

/// Turns an analyzer's answer into tasks.
pub trait TaskParser: Send + Sync {
    /// The tasks `analyzer_output` describes, or why it describes none.
    fn parse(&self, analyzer_output: &str) -> Result<Vec<Task>, XmlError>;
}

/// Reads the XML plan format (`<tasks>` holding one `<task>` per step), after
/// [normalising](XmlNormalizer) what the model wrote.
///
/// ```
/// use adk_orchestrator::{TaskParser as _, XmlTaskParser};
///
/// let tasks = XmlTaskParser::default()
///     .parse(r#"<tasks><task id="a" type="fetch" processor="web"/>
///               <task id="b" type="sum" processor="math"><dependencies>a</dependencies></task></tasks>"#)
///     .unwrap();
/// assert_eq!(tasks[1].dependencies, ["a"]);
/// ```
#[derive(Debug, Clone)]
pub struct XmlTaskParser {
    /// The fields every task must have, besides its id: any of `type`, `processor` and
    /// `description` (dspy-go's `RequiredFields`; by default `type` and `processor`).
    pub required_fields: Vec<String>,
    normalize: bool,
}

impl Default for XmlTaskParser {
    fn default() -> Self {
        Self {
            required_fields: vec!["type".to_owned(), "processor".to_owned()],
            normalize: true,
        }
    }
}

impl XmlTaskParser {
    /// A parser that normalises its input and requires `type` and `processor`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the fields every task must have besides its id.
    pub fn with_required_fields<I, S>(mut self, fields: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.required_fields = fields.into_iter().map(Into::into).collect();
        self
    }

    /// Turns the repair of the XML on or off (on by default). Off, the tasks section is still cut
    /// out of the answer, but any XML mistake in it is an [`XmlErrorCode::InvalidXml`] error.
    pub fn with_normalization(mut self, normalize: bool) -> Self {
        self.normalize = normalize;
        self
    }
}

impl TaskParser for XmlTaskParser {
    fn parse(&self, analyzer_output: &str) -> Result<Vec<Task>, XmlError> {
        let normalizer = XmlNormalizer::new();
        let xml = if self.normalize {
            normalizer.normalize(analyzer_output)?
        } else {
            normalizer.tasks_section(analyzer_output)?.into_owned()
        };
        let tasks = read_tasks(&xml)?;
        self.validate(&tasks)?;
        Ok(tasks)
    }
}

impl XmlTaskParser {
    fn validate(&self, tasks: &[Task]) -> Result<(), XmlError> {
        if tasks.is_empty() {
            return Err(XmlError::new(
                XmlErrorCode::MalformedTasks,
                "the plan holds no tasks; list at least one <task> inside <tasks>",
            ));
        }
        let mut ids = HashSet::with_capacity(tasks.len());
        for (index, task) in tasks.iter().enumerate() {
            let missing = |field: &str| {
                XmlError::new(
                    XmlErrorCode::MalformedTasks,
                    format!(
                        "task {} ('{}') has no {field}; give every task an id, a type and a processor",
                        index + 1,
                        task.id
                    ),
                )
                .with_detail("task", task.id.as_str())
                .with_detail("field", field)
            };
            if task.id.is_empty() {
                return Err(missing("id"));
            }
            for field in &self.required_fields {
                let empty = match field.as_str() {
                    "type" => task.task_type.is_empty(),
                    "processor" => task.processor_type.is_empty(),
                    "description" => task.description.is_empty(),
                    _ => false,
                };
                if empty {
                    return Err(missing(field));
                }
            }
            if !ids.insert(task.id.as_str()) {
                return Err(XmlError::new(
                    XmlErrorCode::MalformedTasks,
                    format!(
                        "two tasks have the id '{}'; give each task its own id",
                        task.id
                    ),
                )
                .with_detail("task", task.id.as_str()));
            }
        }
        Ok(())
    }
}

/// A field of a task that may be an attribute or a child element.
#[derive(Clone, Copy)]
enum Field {
    Id,
    Type,
    Processor,
    Priority,
}

impl Field {
    fn of(name: &str) -> Option<Self> {
        match element(name) {
            Some("id") => Some(Self::Id),
            Some("type") => Some(Self::Type),
            Some("processor") => Some(Self::Processor),
            Some("priority") => Some(Self::Priority),
            _ => None,
        }
    }
}

/// The elements of the plan format.
const ELEMENTS: [&str; 11] = [
    "task",
    "description",
    "dependencies",
    "dep",
    "metadata",
    "item",
    "id",
    "type",
    "processor",
    "priority",
    "tasks",
];

/// The known name `name` is, in any case, without allocating: the normaliser lower-cases names,
/// but a parser without normalisation sees them as the model wrote them.
fn element(name: &str) -> Option<&'static str> {
    ELEMENTS
        .iter()
        .find(|known| known.eq_ignore_ascii_case(name))
        .copied()
}

/// The task being read and the text collected for the element being read.
#[derive(Default)]
struct Reading {
    task: Option<Task>,
    priority: Option<String>,
    text: String,
    item_key: Option<String>,
}

/// Reads every `<task>` of well-formed XML.
fn read_tasks(xml: &str) -> Result<Vec<Task>, XmlError> {
    let mut reader = quick_xml::Reader::from_str(xml);
    reader.config_mut().trim_text(false);
    let mut tasks = Vec::new();
    let mut reading = Reading::default();
    loop {
        let event = reader.read_event().map_err(|error| {
            XmlError::new(
                XmlErrorCode::InvalidXml,
                format!("the tasks section is not well-formed XML: {error}"),
            )
            .with_detail("position", reader.error_position())
        })?;
        let invalid = |error: &dyn std::fmt::Display| {
            XmlError::new(
                XmlErrorCode::InvalidXml,
                format!("the tasks section is not well-formed XML: {error}"),
            )
            .with_detail("position", reader.buffer_position())
        };
        match event {
            Event::Start(start) => reading.start(&start, false, &mut tasks)?,
            Event::Empty(start) => reading.start(&start, true, &mut tasks)?,
            Event::End(end) => reading.end(element(end.name().as_ref()), &mut tasks)?,
            Event::Text(text) => reading
                .text
                .push_str(&text.xml_content(XmlVersion::Implicit1_0)),
            Event::CData(data) => reading.text.push_str(&data.into_inner()),
            Event::GeneralRef(reference) => {
                let resolved = match reference.resolve_char_ref().map_err(|e| invalid(&e))? {
                    Some(character) => character,
                    None => {
                        let name = reference.into_inner();
                        let replacement = quick_xml::escape::resolve_predefined_entity(&name)
                            .ok_or_else(|| invalid(&format!("unknown entity &{name};")))?;
                        reading.text.push_str(replacement);
                        continue;
                    }
                };
                reading.text.push(resolved);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(tasks)
}

impl Reading {
    fn start(
        &mut self,
        start: &BytesStart<'_>,
        empty: bool,
        tasks: &mut Vec<Task>,
    ) -> Result<(), XmlError> {
        match element(start.name().as_ref()) {
            Some("task") => {
                let mut task = Task::default();
                for attribute in start.attributes() {
                    let attribute = attribute.map_err(invalid_attribute)?;
                    let key = attribute.key.as_ref();
                    let value = attribute
                        .normalized_value(XmlVersion::Implicit1_0)
                        .map_err(invalid_attribute)?
                        .trim()
                        .to_owned();
                    match Field::of(key) {
                        Some(Field::Priority) => self.priority = Some(value),
                        Some(field) => set_field(&mut task, field, value),
                        None => {}
                    }
                }
                self.task = Some(task);
                self.text.clear();
                if empty {
                    self.finish_task(tasks)?;
                }
            }
            Some("item") => {
                let mut key = None;
                for attribute in start.attributes() {
                    let attribute = attribute.map_err(invalid_attribute)?;
                    let name = attribute.key.as_ref();
                    if name.eq_ignore_ascii_case("key") || name.eq_ignore_ascii_case("name") {
                        key = Some(
                            attribute
                                .normalized_value(XmlVersion::Implicit1_0)
                                .map_err(invalid_attribute)?
                                .into_owned(),
                        );
                    }
                }
                if empty {
                    if let (Some(task), Some(key)) = (self.task.as_mut(), key) {
                        task.metadata.insert(key, String::new());
                    }
                } else {
                    self.item_key = key;
                    self.text.clear();
                }
            }
            Some("dep") => {
                // Text written directly in <dependencies> before this <dep> lists ids too.
                self.take_dependency_text();
            }
            Some("description" | "dependencies" | "id" | "type" | "processor" | "priority") => {
                self.text.clear();
            }
            _ => {}
        }
        Ok(())
    }

    fn end(&mut self, name: Option<&str>, tasks: &mut Vec<Task>) -> Result<(), XmlError> {
        let text = self.text.trim();
        match name {
            Some("task") => return self.finish_task(tasks),
            Some("description") => {
                if let Some(task) = self.task.as_mut() {
                    task.description = text.to_owned();
                }
            }
            Some("dep") => {
                if let Some(task) = self.task.as_mut()
                    && !text.is_empty()
                {
                    task.dependencies.push(text.to_owned());
                }
            }
            Some("dependencies") => self.take_dependency_text(),
            Some("item") => {
                if let (Some(task), Some(key)) = (self.task.as_mut(), self.item_key.take()) {
                    task.metadata.insert(key, text.to_owned());
                }
            }
            Some("priority") => {
                if self.task.is_some() && self.priority.is_none() {
                    self.priority = Some(text.to_owned());
                }
            }
            other => {
                let field = other.and_then(Field::of);
                if let (Some(task), Some(field)) = (self.task.as_mut(), field) {
                    let value = text.to_owned();
                    if field_value(task, field).is_empty() {
                        set_field(task, field, value);
                    }
                }
                return Ok(());
            }
        }
        self.text.clear();
        Ok(())
    }

    /// Takes the ids written as text in `<dependencies>`, separated by commas or white space.
    fn take_dependency_text(&mut self) {
        if let Some(task) = self.task.as_mut() {
            task.dependencies.extend(
                self.text
                    .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
                    .filter(|id| !id.is_empty())
                    .map(str::to_owned),
            );
        }
        self.text.clear();
    }

    fn finish_task(&mut self, tasks: &mut Vec<Task>) -> Result<(), XmlError> {
        let Some(mut task) = self.task.take() else {
            return Ok(());
        };
        self.text.clear();
        if let Some(priority) = self.priority.take().filter(|p| !p.is_empty()) {
            task.priority = priority.parse().map_err(|_| {
                XmlError::new(
                    XmlErrorCode::MalformedTasks,
                    format!(
                        "task '{}' has the priority '{priority}', which is not a whole number",
                        task.id
                    ),
                )
                .with_detail("task", task.id.as_str())
                .with_detail("field", "priority")
            })?;
        }
        let mut seen = HashSet::new();
        task.dependencies.retain(|id| seen.insert(id.clone()));
        tasks.push(task);
        Ok(())
    }
}

/// An attribute that could not be read.
fn invalid_attribute(error: impl std::fmt::Display) -> XmlError {
    XmlError::new(
        XmlErrorCode::InvalidXml,
        format!("a task's attribute is not well-formed XML: {error}"),
    )
}

fn set_field(task: &mut Task, field: Field, value: String) {
    match field {
        Field::Id => task.id = value,
        Field::Type => task.task_type = value,
        Field::Processor => task.processor_type = value,
        Field::Priority => {}
    }
}

fn field_value(task: &Task, field: Field) -> &str {
    match field {
        Field::Id => &task.id,
        Field::Type => &task.task_type,
        Field::Processor => &task.processor_type,
        Field::Priority => "",
    }
}
