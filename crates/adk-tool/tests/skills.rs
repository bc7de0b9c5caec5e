//! The skill toolset on real skill folders: listed in the instruction, loaded on demand, their
//! files read and paths outside them refused, and malformed `SKILL.md` files named with the line.
#![cfg(feature = "skills")]

mod support;

use std::path::Path;

use adk_core::LlmRequest;
use adk_tool::skills::SkillToolset;
use adk_tool::{Tool, Toolset};
use serde_json::json;
use support::{Readonly as _, TestToolContext};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A folder with two skills and a folder that is not one.
fn skills_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("release-notes/SKILL.md"),
        "---\nname: release-notes\ndescription: Writes release notes from a list of changes.\n\
         license: Apache-2.0\n---\n\n# Release notes\n\n1. Read `references/style.md`.\n2. Group the changes.\n",
    );
    write(
        &dir.path().join("release-notes/references/style.md"),
        "Use the past tense. One line per change.",
    );
    write(
        &dir.path().join("haiku/SKILL.md"),
        "---\nname: haiku\ndescription: Answers in a haiku <5-7-5>.\n---\nCount syllables.",
    );
    write(&dir.path().join("notes/README.md"), "not a skill");
    write(&dir.path().join("secret.txt"), "outside every skill");
    dir
}

async fn tool(toolset: &SkillToolset, name: &str) -> std::sync::Arc<dyn Tool> {
    let ctx = TestToolContext::plain();
    Toolset::tools(toolset, &ctx.readonly())
        .await
        .unwrap()
        .into_iter()
        .find(|tool| tool.name() == name)
        .unwrap()
}

#[tokio::test]
async fn skills_are_listed_in_the_instruction_and_loaded_on_demand() {
    let dir = skills_dir();
    let toolset = SkillToolset::from_dir(dir.path()).await.unwrap();
    let names: Vec<&str> = toolset.skills().iter().map(|skill| skill.name()).collect();
    assert_eq!(names, ["haiku", "release-notes"]);

    let mut request = LlmRequest::new("gemini-2.5-flash", Vec::new());
    let ctx = TestToolContext::plain();
    for tool in Toolset::tools(&toolset, &ctx.readonly()).await.unwrap() {
        tool.process_request(&ctx, &mut request).await.unwrap();
    }
    let instruction = request.system_instruction.clone().unwrap_or_default();
    assert!(
        instruction.contains("<name>\nrelease-notes\n</name>")
            && instruction.contains("Answers in a haiku &lt;5-7-5&gt;."),
        "{instruction}"
    );
    let declared: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        declared,
        ["list_skills", "load_skill", "load_skill_resource"]
    );

    let loaded = tool(&toolset, "load_skill")
        .await
        .run(ctx.clone(), json!({"skill_name": "release-notes"}))
        .await
        .unwrap();
    assert_eq!(loaded["skill_name"], "release-notes");
    assert!(
        loaded["instructions"]
            .as_str()
            .unwrap()
            .starts_with("# Release notes")
    );
    assert_eq!(loaded["frontmatter"]["license"], "Apache-2.0");

    let style = tool(&toolset, "load_skill_resource")
        .await
        .run(
            ctx.clone(),
            json!({"skill_name": "release-notes", "file_path": "references/style.md"}),
        )
        .await
        .unwrap();
    assert_eq!(style["content"], "Use the past tense. One line per change.");
}

#[tokio::test]
async fn unknown_skills_and_paths_outside_a_skill_are_errors_the_model_reads() {
    let dir = skills_dir();
    let toolset = SkillToolset::from_dir(dir.path()).await.unwrap();
    let ctx = TestToolContext::plain();
    let unknown = tool(&toolset, "load_skill")
        .await
        .run(ctx.clone(), json!({"skill_name": "poems"}))
        .await
        .unwrap_err();
    assert_eq!(
        unknown.message(),
        "there is no skill 'poems'; the skills are: haiku, release-notes"
    );
    let resource = tool(&toolset, "load_skill_resource").await;
    for path in [
        "../secret.txt",
        "references/../../secret.txt",
        "/etc/passwd",
        "SKILL.md",
    ] {
        let error = resource
            .run(
                ctx.clone(),
                json!({"skill_name": "haiku", "file_path": path}),
            )
            .await
            .unwrap_err();
        assert!(
            error.message().contains("is not a file of the skill"),
            "{path}: {}",
            error.message()
        );
    }
    let missing = resource
        .run(
            ctx,
            json!({"skill_name": "haiku", "file_path": "assets/none.txt"}),
        )
        .await
        .unwrap_err();
    assert_eq!(missing.message(), "the skill has no file 'assets/none.txt'");
}

#[tokio::test]
async fn malformed_skill_files_are_named_with_their_line() {
    let cases: [(&str, &str, Option<usize>, &str); 5] = [
        (
            "a",
            "no front matter",
            Some(1),
            "must start with YAML front matter",
        ),
        (
            "b",
            "---\nname: b\ndescription: [open\n---\nx",
            Some(4),
            "flow sequence at line 3 column 14",
        ),
        ("c", "---\nname: c\n---\nx", Some(1), "needs `description`"),
        (
            "d",
            "---\nname: Dee\ndescription: x\n---\nx",
            Some(2),
            "lowercase kebab-case",
        ),
        (
            "e",
            "---\ndescription: x\nname: other\n---\nx",
            Some(3),
            "folder is named \"e\"",
        ),
    ];
    for (folder, text, line, message) in cases {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join(folder).join("SKILL.md"), text);
        let error = SkillToolset::from_dir(dir.path()).await.unwrap_err();
        assert_eq!(error.file(), dir.path().join(folder).join("SKILL.md"));
        assert_eq!(error.line(), line, "{error}");
        assert!(error.to_string().contains(message), "{error}");
        let shown = format!("SKILL.md, line {}", line.unwrap());
        assert!(error.to_string().contains(&shown), "{error}");
    }
}
