//! Filling `{...}` placeholders of an instruction from the session (ADK's `inject_session_state`).
//!
//! `{name}` is state `name` (a missing one is an error), `{name?}` is state `name` or nothing,
//! `{app:name}`, `{user:name}` and `{temp:name}` are scoped state, `{artifact.file}` is the text of
//! artifact `file`. Anything else in braces (JSON examples, say) is left as it is. Substituted
//! values are never templated again.

use adk_core::{Error, ErrorKind, InvocationContext, PartData, Result, StateScope};
use serde_json::Value;

/// The instruction with its placeholders filled in.
pub(crate) async fn inject_session_state(
    template: &str,
    ctx: &InvocationContext,
) -> Result<String> {
    let mut output = String::with_capacity(template.len());
    let mut rest = template;
    while let Some((before, placeholder, after)) = next_placeholder(rest) {
        output.push_str(before);
        output.push_str(&substitute(placeholder, ctx).await?);
        rest = after;
    }
    output.push_str(rest);
    Ok(output)
}

/// Splits `text` at its next `{...}` run (braces may be doubled): the text before, the whole
/// placeholder with its braces, and the text after.
fn next_placeholder(text: &str) -> Option<(&str, &str, &str)> {
    let mut search_from = 0;
    loop {
        let start = search_from + text[search_from..].find('{')?;
        let inner_start = start + text[start..].find(|c| c != '{')?;
        let inner_len = text[inner_start..].find(['{', '}'])?;
        let close = inner_start + inner_len;
        if text[close..].starts_with('{') {
            search_from = close;
            continue;
        }
        let end = close
            + text[close..]
                .find(|c| c != '}')
                .unwrap_or(text.len() - close);
        return Some((&text[..start], &text[start..end], &text[end..]));
    }
}

/// The text that replaces `placeholder` (braces included).
async fn substitute(placeholder: &str, ctx: &InvocationContext) -> Result<String> {
    let name = placeholder.trim_matches(|c| c == '{' || c == '}').trim();
    let (name, optional) = match name.strip_suffix('?') {
        Some(name) => (name, true),
        None => (name, false),
    };
    if let Some(file) = name.strip_prefix("artifact.") {
        return artifact_text(file, optional, ctx).await;
    }
    if !is_state_name(name) {
        return Ok(placeholder.to_owned());
    }
    let value = ctx.with_session(|session| session.state.get(name).cloned());
    match value {
        Some(Value::String(text)) => Ok(text),
        Some(value) => Ok(value.to_string()),
        None if optional => Ok(String::new()),
        None => Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "the instruction of agent '{}' uses state variable `{name}`, which is not set; \
                 set it, or write `{{{name}?}}` to make it optional",
                ctx.agent_name()
            ),
        )),
    }
}

/// Whether `name` is a state key: an identifier, optionally after an `app:`, `user:` or `temp:`
/// prefix.
fn is_state_name(name: &str) -> bool {
    let scope = StateScope::of(name);
    is_identifier(scope.strip(name))
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_alphabetic() || first == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

async fn artifact_text(file: &str, optional: bool, ctx: &InvocationContext) -> Result<String> {
    let service = ctx.artifact_service().ok_or_else(|| {
        Error::new(
            ErrorKind::Config,
            format!(
                "the instruction uses artifact `{file}`, but no artifact service is configured"
            ),
        )
    })?;
    let part = service.load_artifact(ctx.session_key(), file, None).await?;
    match part {
        Some(part) => Ok(match &part.data {
            PartData::Text(text) => text.clone(),
            _ => serde_json::to_string(&part)?,
        }),
        None if optional => Ok(String::new()),
        None => Err(Error::new(
            ErrorKind::NotFound,
            format!("the instruction uses artifact `{file}`, which does not exist"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use adk_core::{Agent, ArtifactService as _, EventStream, Part, Services, Session, SessionKey};
    use adk_session::InMemoryArtifactService;
    use serde_json::{Map, json};

    use super::*;

    struct Quiet;

    impl Agent for Quiet {
        fn name(&self) -> &str {
            "quiet"
        }
        fn description(&self) -> &str {
            ""
        }
        fn run(self: Arc<Self>, _: InvocationContext) -> EventStream {
            Box::pin(futures::stream::empty())
        }
    }

    async fn context_with_artifact() -> InvocationContext {
        let key = SessionKey::new("app", "user", "session");
        let artifacts = Arc::new(InMemoryArtifactService::new());
        artifacts
            .save_artifact(&key, "notes.txt", Part::text("Buy milk."), Map::new())
            .await
            .unwrap();
        let mut session = Session::new(key);
        session.state.insert("name".into(), json!("Ada"));
        let mut services = Services::default();
        services.artifact_service = Some(artifacts);
        InvocationContext::builder(Quiet, session)
            .services(services)
            .build()
            .unwrap()
    }

    #[tokio::test]
    async fn artifacts_and_state_fill_the_template() {
        let ctx = context_with_artifact().await;
        let text = inject_session_state(
            "{name}'s notes: {artifact.notes.txt} {artifact.gone.txt?}",
            &ctx,
        )
        .await
        .unwrap();
        assert_eq!(text, "Ada's notes: Buy milk. ");
        let error = inject_session_state("{artifact.gone.txt}", &ctx)
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::NotFound);
        assert!(error.message().contains("`gone.txt`"), "{error}");
    }

    #[test]
    fn finds_placeholders_with_single_and_double_braces() {
        assert_eq!(next_placeholder("a {x} b"), Some(("a ", "{x}", " b")));
        assert_eq!(next_placeholder("{{x}}!"), Some(("", "{{x}}", "!")));
        assert_eq!(next_placeholder("{ {x} }"), Some(("{ ", "{x}", " }")));
        assert_eq!(next_placeholder("no braces"), None);
        assert_eq!(next_placeholder("open { only"), None);
    }

    #[test]
    fn state_names_are_identifiers_with_optional_scope() {
        assert!(is_state_name("user_name"));
        assert!(is_state_name("app:theme"));
        assert!(is_state_name("temp:x1"));
        assert!(!is_state_name("not a name"));
        assert!(!is_state_name("\"key\": 1"));
        assert!(!is_state_name("1st"));
    }
}
