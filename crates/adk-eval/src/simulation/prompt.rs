//! The simulated user's prompt: the conversation so far as plain lines, the persona as text, and
//! the prompt itself, adk-eval's or the user's own with its placeholders filled in.

use std::fmt::Write as _;

use adk_core::Event;

use super::STOP_SIGNAL;
use crate::eval_set::{ConversationScenario, UserPersona};

/// The placeholders a custom prompt must name.
const REQUIRED: [&str; 3] = ["stop_signal", "conversation_plan", "conversation_history"];

/// adk-eval's prompt for the simulated user.
const INSTRUCTIONS: &str = "\
You are testing an AI agent by playing its user. Write the user's next message, and nothing else.

Read the agent's last message first: your message answers it. The conversation plan below says \
what you want; it guides you, it is not a script.

- If the agent asked you something, answer with what the plan says, and only that. If the plan \
does not say, tell the agent you do not know; never invent details.
- If the agent did what you asked, ask for the next thing in the plan, skipping anything it has \
already done.
- If the plan says to change what you asked for, change it, in your own words.
- If the agent is wrong or failed, say so and ask it to put it right; ask once more at most.
- When the agent has done everything in the plan, or has failed the same request twice, or says \
it cannot fix a mistake, or hands you over to a human, write {{ stop_signal }} alone to end the \
conversation. Do not end it earlier.
{{ persona }}
# Conversation plan

{{ conversation_plan }}

# Conversation so far

{{ conversation_history }}
";

/// Why a custom prompt cannot be used, if it cannot.
pub(super) fn check_custom(template: &str) -> Result<(), String> {
    let named = placeholders(template);
    let missing: Vec<String> = REQUIRED
        .iter()
        .filter(|name| !named.iter().any(|found| found == *name))
        .map(|name| format!("{{{{ {name} }}}}"))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the user simulator's custom instructions must name {}",
            missing.join(", ")
        ))
    }
}

/// The prompt for the next message: `custom` (checked already) or adk-eval's, filled in.
pub(super) fn render(
    custom: Option<&str>,
    scenario: &ConversationScenario,
    history: &str,
) -> String {
    let persona = scenario
        .user_persona
        .as_ref()
        .map(persona_text)
        .unwrap_or_default();
    fill(custom.unwrap_or(INSTRUCTIONS), |name| match name {
        "stop_signal" => Some(STOP_SIGNAL),
        "conversation_plan" => Some(&scenario.conversation_plan),
        "conversation_history" => Some(history),
        "persona" => Some(&persona),
        _ => None,
    })
}

/// The conversation as `author: text` paragraphs, thoughts left out, tool calls and results
/// included when `with_tools` is set.
pub(super) fn history(events: &[Event], with_tools: bool) -> String {
    let mut lines = Vec::new();
    for event in events {
        let Some(content) = event.content() else {
            continue;
        };
        for part in &content.parts {
            if let Some(text) = part.as_text().filter(|_| !part.thought) {
                lines.push(format!("{}: {text}", event.author));
            } else if let Some(call) = part.as_function_call().filter(|_| with_tools) {
                lines.push(format!(
                    "{} called the tool `{}` with {}",
                    event.author,
                    call.name,
                    serde_json::Value::Object(call.args.clone())
                ));
            } else if let Some(response) = part.as_function_response().filter(|_| with_tools) {
                lines.push(format!(
                    "the tool `{}` returned {}",
                    response.name,
                    serde_json::Value::Object(response.response.clone())
                ));
            }
        }
    }
    lines.join("\n\n")
}

/// The persona as a section of the prompt.
fn persona_text(persona: &UserPersona) -> String {
    let mut text = format!("\n# Who you are\n\n{}\n", persona.description);
    for behavior in &persona.behaviors {
        let _ = write!(text, "\n## {}\n\n{}\n", behavior.name, behavior.description);
        for instruction in &behavior.behavior_instructions {
            let _ = writeln!(text, "- {instruction}");
        }
    }
    text
}

/// The names of the `{{ name }}` placeholders of `template`.
fn placeholders(template: &str) -> Vec<String> {
    let mut names = Vec::new();
    fill(template, |name| {
        names.push(name.to_owned());
        None
    });
    names
}

/// `template` with each `{{ name }}` replaced by `value(name)`; a placeholder without a value is
/// kept as written.
fn fill<'v>(template: &str, mut value: impl FnMut(&str) -> Option<&'v str>) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            return out;
        };
        let name = after[..end].trim();
        match value(name) {
            Some(text) => out.push_str(text),
            None => out.push_str(&rest[start..start + 2 + end + 2]),
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use adk_core::{Content, FunctionCall, InvocationId, Part, Role};
    use serde_json::json;

    use super::*;
    use crate::eval_set::UserBehavior;

    #[test]
    fn placeholders_are_filled_however_they_are_spaced() {
        let scenario = ConversationScenario::new("Hi", "Ask for Paris.");
        let text = render(
            Some(
                "plan={{conversation_plan}} end={{ stop_signal }} h={{  conversation_history }} {{ other }}",
            ),
            &scenario,
            "user: Hi",
        );
        assert_eq!(
            text,
            "plan=Ask for Paris. end=</finished> h=user: Hi {{ other }}"
        );
    }

    #[test]
    fn a_custom_prompt_must_name_the_required_placeholders() {
        assert_eq!(
            check_custom("{{ conversation_plan }} {{ conversation_history }}").unwrap_err(),
            "the user simulator's custom instructions must name {{ stop_signal }}"
        );
        assert!(
            check_custom("{{ stop_signal }}{{ conversation_plan }}{{ conversation_history }}")
                .is_ok()
        );
    }

    #[test]
    fn the_default_prompt_holds_the_plan_the_persona_and_the_history() {
        let scenario = ConversationScenario::new("Hi", "Ask for Paris, then stop.").with_persona(
            UserPersona::new("terse", "You say little.").with_behavior(UserBehavior::new(
                "short",
                "Short replies.",
                ["Use five words or fewer."],
            )),
        );
        let text = render(None, &scenario, "user: Hi\n\nweather: Hello!");
        assert!(text.contains("Ask for Paris, then stop."), "{text}");
        assert!(text.contains("You say little."), "{text}");
        assert!(text.contains("- Use five words or fewer."), "{text}");
        assert!(text.contains("weather: Hello!"), "{text}");
        assert!(text.contains("write </finished> alone"), "{text}");
        assert!(!text.contains("{{"), "{text}");
    }

    #[test]
    fn the_history_leaves_out_thoughts_and_shows_tools_only_when_asked() {
        let invocation = InvocationId::from("e-1");
        let mut thought = Part::text("Let me think.");
        thought.thought = true;
        let events = [
            Event::new(invocation.clone(), "user").with_content(Content::user("Paris?")),
            Event::new(invocation.clone(), "weather").with_content(Content::new(
                Role::Model,
                [
                    thought,
                    Part::function_call(FunctionCall::new("get_weather", json!({"city": "Paris"}))),
                ],
            )),
            Event::new(invocation, "weather").with_content(Content::model("Sunny.")),
        ];
        assert_eq!(history(&events, false), "user: Paris?\n\nweather: Sunny.");
        assert_eq!(
            history(&events, true),
            "user: Paris?\n\nweather called the tool `get_weather` with {\"city\":\"Paris\"}\n\nweather: Sunny."
        );
    }
}
