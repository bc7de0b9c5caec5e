//! One skill folder: its `SKILL.md` (YAML front matter with the name and description, then the
//! instructions), read and checked with the line of each problem, and the files beside it.

use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value};

use super::SkillError;

/// The longest skill name, as the Agent Skills format allows.
const MAX_NAME_CHARS: usize = 64;

/// The longest description, as the Agent Skills format allows.
const MAX_DESCRIPTION_CHARS: usize = 1024;

/// The folders of a skill whose files the model may read.
pub(crate) const RESOURCE_FOLDERS: [&str; 3] = ["references", "assets", "scripts"];

/// A skill read from its folder.
#[derive(Debug, Clone)]
pub struct Skill {
    name: String,
    description: String,
    instructions: String,
    front_matter: Map<String, Value>,
    dir: PathBuf,
}

impl Skill {
    /// The skill's name (kebab-case, the name of its folder).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the skill does and when to use it, as the model reads it in the list.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The body of `SKILL.md`, which the model reads when it loads the skill.
    pub fn instructions(&self) -> &str {
        &self.instructions
    }

    /// Every key of the front matter (`name`, `description`, `license`, `metadata`, ...).
    pub fn front_matter(&self) -> &Map<String, Value> {
        &self.front_matter
    }

    /// The skill's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Reads the skill in `dir` (its `SKILL.md`, or `skill.md`).
    pub(crate) async fn read(dir: &Path) -> Result<Self, SkillError> {
        let mut file = dir.join("SKILL.md");
        if !tokio::fs::try_exists(&file).await.unwrap_or(false) {
            file = dir.join("skill.md");
        }
        let text = tokio::fs::read_to_string(&file)
            .await
            .map_err(|error| SkillError::new(&file, None, format!("cannot be read: {error}")))?;
        let folder = dir
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or_default();
        let (front_matter, instructions) = parse(&text, &file)?;
        let text_of = |key: &str| -> Result<String, SkillError> {
            match front_matter.get(key) {
                Some(Value::String(text)) => Ok(text.clone()),
                _ => Err(SkillError::new(
                    &file,
                    Some(key_line(&text, key)),
                    format!("the front matter needs `{key}` as a string"),
                )),
            }
        };
        let name = text_of("name")?;
        let description = text_of("description")?;
        if !is_kebab_case(&name) || name.chars().count() > MAX_NAME_CHARS {
            return Err(SkillError::new(
                &file,
                Some(key_line(&text, "name")),
                format!(
                    "`name` must be lowercase kebab-case (a-z, 0-9 and single hyphens), at most \
                     {MAX_NAME_CHARS} characters; it is {name:?}"
                ),
            ));
        }
        if name != folder {
            return Err(SkillError::new(
                &file,
                Some(key_line(&text, "name")),
                format!(
                    "`name` is {name:?}, and the skill's folder is named {folder:?}; they must match"
                ),
            ));
        }
        let description_chars = description.chars().count();
        if description.trim().is_empty() || description_chars > MAX_DESCRIPTION_CHARS {
            return Err(SkillError::new(
                &file,
                Some(key_line(&text, "description")),
                format!(
                    "`description` must say what the skill does in 1 to {MAX_DESCRIPTION_CHARS} \
                     characters; it has {description_chars}"
                ),
            ));
        }
        Ok(Self {
            name,
            description,
            instructions,
            front_matter,
            dir: dir.to_owned(),
        })
    }

    /// The file at `relative` in one of the skill's resource folders; `None` for a path that is
    /// absolute, climbs out (`..`) or is outside those folders.
    pub(crate) fn resource_path(&self, relative: &str) -> Option<PathBuf> {
        let relative = Path::new(relative);
        let mut components = relative.components();
        let Some(Component::Normal(first)) = components.next() else {
            return None;
        };
        if !RESOURCE_FOLDERS.iter().any(|folder| first == *folder) {
            return None;
        }
        let rest_is_plain = components.all(|component| matches!(component, Component::Normal(_)));
        rest_is_plain.then(|| self.dir.join(relative))
    }
}

/// Splits `SKILL.md` into its front matter, read as YAML, and its body.
fn parse(text: &str, file: &Path) -> Result<(Map<String, Value>, String), SkillError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return Err(SkillError::new(
            file,
            Some(1),
            "must start with YAML front matter: a line `---`, the name and description, and \
             another `---`"
                .to_owned(),
        ));
    };
    let close = rest
        .match_indices("\n---")
        .find(|(at, _)| {
            let after = &rest[at + 4..];
            after.is_empty() || after.starts_with('\n') || after.starts_with("\r\n")
        })
        .map(|(at, _)| at);
    let Some(close) = close else {
        return Err(SkillError::new(
            file,
            Some(1),
            "the front matter opened here is never closed with a line `---`".to_owned(),
        ));
    };
    // An empty first line stands for the opening `---`, so that the lines the YAML parser names
    // (in the location and inside its message) are the file's.
    let yaml = format!("\n{}", &rest[..=close]);
    let body = rest[close + 4..].trim().to_owned();
    let front_matter: Value = serde_yaml::from_str(&yaml).map_err(|error| {
        let line = error.location().map(|at| at.line());
        SkillError::new(
            file,
            line,
            format!("the front matter is not valid YAML: {error}"),
        )
    })?;
    match front_matter {
        Value::Object(map) => Ok((map, body)),
        _ => Err(SkillError::new(
            file,
            Some(2),
            "the front matter must be a mapping of keys (`name: ...`, `description: ...`)"
                .to_owned(),
        )),
    }
}

/// The line of the front matter that sets `key`, or the opening line when none does.
fn key_line(text: &str, key: &str) -> usize {
    let prefix = format!("{key}:");
    text.lines()
        .position(|line| line.starts_with(&prefix))
        .map_or(1, |index| index + 1)
}

fn is_kebab_case(name: &str) -> bool {
    !name.is_empty()
        && name.split('-').all(|word| {
            !word.is_empty()
                && word
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_and_body_split() {
        let (front, body) = parse(
            "---\nname: pdf-forms\ndescription: Fills PDF forms.\n---\n\n# Steps\nDo it.\n",
            Path::new("SKILL.md"),
        )
        .unwrap();
        assert_eq!(front["name"], "pdf-forms");
        assert_eq!(body, "# Steps\nDo it.");
    }

    #[test]
    fn yaml_errors_name_the_line_of_the_file() {
        let error = parse(
            "---\nname: a\ndescription: [unclosed\n---\nbody\n",
            Path::new("SKILL.md"),
        )
        .unwrap_err();
        assert!(error.line().is_some_and(|line| line >= 3), "{error}");
        let unclosed = parse("---\nname: a\n", Path::new("SKILL.md")).unwrap_err();
        assert!(unclosed.to_string().contains("never closed"), "{unclosed}");
    }

    #[test]
    fn names_are_kebab_case() {
        assert!(is_kebab_case("pdf-forms-2"));
        assert!(!is_kebab_case("pdf--forms"));
        assert!(!is_kebab_case("-pdf"));
        assert!(!is_kebab_case("Pdf"));
        assert!(!is_kebab_case("pdf_forms"));
    }
}
