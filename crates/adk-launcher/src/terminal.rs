//! The interactive session of `run`: reads messages line by line, streams the agent's answers,
//! shows tool calls and results, and asks the user to confirm the calls tools want confirmed.
//!
//! Everything shown comes from the model or from tools, so it passes [`printable`] first: a
//! terminal escape sequence in it could write the clipboard (OSC 52), move the cursor over the
//! confirmation prompt, or retitle the window.

use std::io::{IsTerminal as _, Write as _};
use std::sync::Arc;
use std::time::Duration;

use adk_core::{
    Content, Event, FunctionCallId, FunctionResponse, PartData, RunConfig, SessionService,
    StreamingMode,
};
use adk_runner::{RunRequest, Runner};
use adk_tool::Tool;
use futures::StreamExt as _;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, BufReader, Lines, Stdin};

use crate::apps::{self, App};
use crate::args::RunArgs;
use crate::error::{Context as _, LaunchError, LaunchErrorKind};
use crate::store;

/// The function the flow calls to ask the user to confirm a tool call.
const REQUEST_CONFIRMATION: &str = "adk_request_confirmation";

/// Results longer than this are cut in the transcript.
const SHOWN_RESULT_CHARS: usize = 300;

/// Runs `run`: an interactive session with one of `apps`.
pub(crate) async fn run(
    apps: &[App],
    function_tools: &[Arc<dyn Tool>],
    args: RunArgs,
) -> Result<(), LaunchError> {
    // Listen for Ctrl-C and SIGTERM before anything starts, the local model's server included.
    let stop = stop_signal()?;
    let app = apps::choose(apps, args.agent.as_deref())?;
    let built = apps::build(
        std::slice::from_ref(&app),
        &args.model,
        function_tools,
        true,
    )
    .await?;
    let services = store::open(&args.services).await?;
    let (app_name, agent) = built.apps[0].clone();
    let runner = services.runner(&app_name, agent, true, false, built.overflow_summarizer())?;
    let session_id = choose_session(&args, services.sessions.as_ref(), &app_name).await?;
    println!(
        "adk: {app_name} on {}, {}, session {session_id}",
        built.model_name(),
        services.description
    );
    println!("Type a message and press Enter; an empty line or Ctrl-D ends the session.");

    let config = built.run_config().with_streaming_mode(if args.no_stream {
        StreamingMode::None
    } else {
        StreamingMode::Sse
    });
    let mut session = Session {
        runner,
        user_id: args.user.clone(),
        session_id,
        config,
        input: BufReader::new(tokio::io::stdin()).lines(),
        interactive: std::io::stdout().is_terminal(),
    };
    let outcome = tokio::select! {
        outcome = session.converse() => outcome,
        () = stop => {
            // Ctrl-C or SIGTERM: the local model's server must not outlive the command line, and
            // dropping its handle kills it. Exit at once after that: the thread blocked reading
            // the terminal would keep the runtime from shutting down.
            drop(session);
            drop(built);
            println!();
            std::process::exit(STOPPED_BY_SIGNAL);
        }
    };
    session
        .runner
        .close()
        .await
        .context(LaunchErrorKind::Run, || {
            "cannot close the runner".to_owned()
        })?;
    outcome
}

/// The exit code after Ctrl-C or SIGTERM, as shells report a process ended by a signal.
const STOPPED_BY_SIGNAL: i32 = 130;

/// A future that ends at Ctrl-C or SIGTERM, listening from the moment it is made (a signal that
/// comes before it is first polled is not lost, nor does it kill the process unhandled).
fn stop_signal() -> Result<impl std::future::Future<Output = ()>, LaunchError> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut terminate = signal(SignalKind::terminate()).context(LaunchErrorKind::Io, || {
            "cannot listen for SIGTERM".to_owned()
        })?;
        let mut interrupt = signal(SignalKind::interrupt()).context(LaunchErrorKind::Io, || {
            "cannot listen for Ctrl-C".to_owned()
        })?;
        Ok(async move {
            tokio::select! {
                _ = terminate.recv() => {}
                _ = interrupt.recv() => {}
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}

/// The session to continue, or a new id.
async fn choose_session(
    args: &RunArgs,
    sessions: &dyn SessionService,
    app_name: &str,
) -> Result<String, LaunchError> {
    if let Some(id) = &args.session {
        return Ok(id.clone());
    }
    if args.resume {
        let mut existing = sessions
            .list_sessions(app_name, &args.user)
            .await
            .context(LaunchErrorKind::Storage, || {
                format!("cannot list the sessions of {app_name}")
            })?;
        existing.sort_by(|a, b| a.last_update_time.total_cmp(&b.last_update_time));
        return existing
            .pop()
            .map(|session| session.id.into_string())
            .ok_or_else(|| {
                LaunchError::new(
                    LaunchErrorKind::Usage,
                    format!(
                        "user '{}' has no session of {app_name} to resume",
                        args.user
                    ),
                )
            });
    }
    Ok(uuid::Uuid::new_v4().to_string())
}

/// One terminal conversation.
struct Session {
    runner: Runner,
    user_id: String,
    session_id: String,
    config: RunConfig,
    input: Lines<BufReader<Stdin>>,
    interactive: bool,
}

impl Session {
    async fn converse(&mut self) -> Result<(), LaunchError> {
        loop {
            let Some(line) = self.read_line("you> ").await? else {
                return Ok(());
            };
            if line.is_empty() {
                return Ok(());
            }
            let mut request = self.request().message(Content::user(line));
            loop {
                let confirmations = self.turn(request).await;
                if confirmations.is_empty() {
                    break;
                }
                let answers = self.confirm(confirmations).await?;
                request = self.request().function_responses(answers);
            }
        }
    }

    fn request(&self) -> RunRequest {
        RunRequest::new(self.user_id.clone(), self.session_id.clone())
            .run_config(self.config.clone())
    }

    /// Runs one request to its end, printing as events come; returns the confirmations asked for.
    ///
    /// A turn that fails (the model refused the request, a tool's hook failed, the store went
    /// away) is reported and asks for nothing: the session keeps what the turn stored, and the
    /// conversation goes on with the next message.
    async fn turn(&mut self, request: RunRequest) -> Vec<Confirmation> {
        let spinner = self.spinner();
        let mut transcript = Transcript::default();
        let mut events = Box::pin(self.runner.run_request(request));
        while let Some(event) = events.next().await {
            if let Some(spinner) = &spinner {
                spinner.finish_and_clear();
            }
            match event {
                Ok(event) => transcript.show(&event),
                Err(error) => {
                    transcript.end_line();
                    let failure =
                        LaunchError::with_source(LaunchErrorKind::Run, "the agent failed", error);
                    eprintln!(
                        "adk: {}; the session is kept, so send the next message",
                        printable(&failure.one_line())
                    );
                    return Vec::new();
                }
            }
        }
        transcript.end_line();
        transcript.confirmations
    }

    /// Asks about each confirmation and returns the user's answers.
    async fn confirm(
        &mut self,
        confirmations: Vec<Confirmation>,
    ) -> Result<Vec<FunctionResponse>, LaunchError> {
        let mut answers = Vec::with_capacity(confirmations.len());
        for confirmation in confirmations {
            println!("  ? {}", confirmation.hint);
            println!("    {}", confirmation.call);
            let answer = self
                .read_line("  confirm? [y/N] ")
                .await?
                .unwrap_or_default();
            let confirmed = matches!(answer.to_lowercase().as_str(), "y" | "yes");
            let response =
                FunctionResponse::new(REQUEST_CONFIRMATION, json!({"confirmed": confirmed}))
                    .with_id(confirmation.request_id);
            answers.push(response);
        }
        Ok(answers)
    }

    async fn read_line(&mut self, prompt: &str) -> Result<Option<String>, LaunchError> {
        print!("{prompt}");
        std::io::stdout().flush().context(LaunchErrorKind::Io, || {
            "cannot write to the terminal".to_owned()
        })?;
        let line = self
            .input
            .next_line()
            .await
            .context(LaunchErrorKind::Io, || {
                "cannot read the terminal".to_owned()
            })?;
        Ok(line.map(|line| line.trim().to_owned()))
    }

    /// A spinner while the agent works, on a terminal only.
    fn spinner(&self) -> Option<ProgressBar> {
        if !self.interactive {
            return None;
        }
        let spinner = ProgressBar::new_spinner().with_message("thinking");
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg}") {
            spinner.set_style(style);
        }
        spinner.enable_steady_tick(Duration::from_millis(100));
        Some(spinner)
    }
}

/// A call a tool wants the user to confirm.
struct Confirmation {
    request_id: FunctionCallId,
    hint: String,
    call: String,
}

/// Prints events as they come: streamed text as it grows, the rest line by line.
#[derive(Default)]
struct Transcript {
    /// The author whose streamed text the current line holds.
    streaming: Option<String>,
    confirmations: Vec<Confirmation>,
}

impl Transcript {
    fn show(&mut self, event: &Event) {
        let author = event.author.as_str();
        let Some(content) = event.content() else {
            return;
        };
        if event.is_partial() {
            if let Some(text) = content.text() {
                if self.streaming.as_deref() != Some(author) {
                    self.end_line();
                    print!("{author}> ");
                    self.streaming = Some(author.to_owned());
                }
                print!("{}", printable(&text));
                let _ = std::io::stdout().flush();
            }
            return;
        }
        let streamed = self.streaming.as_deref() == Some(author);
        self.end_line();
        for part in content.parts.iter().filter(|part| !part.thought) {
            match &part.data {
                PartData::Text(text) if !streamed && !text.trim().is_empty() => {
                    println!("{author}> {}", printable(text.trim_end()));
                }
                PartData::FunctionCall(call) if call.name == REQUEST_CONFIRMATION => {
                    self.confirmations.extend(confirmation(call));
                }
                PartData::FunctionCall(call) if call.name == "transfer_to_agent" => {
                    let target = call
                        .args
                        .get("agent_name")
                        .and_then(Value::as_str)
                        .unwrap_or("?");
                    println!("  => {author} hands over to {}", printable(target));
                }
                PartData::FunctionCall(call) => {
                    println!(
                        "  -> {author} calls {}({})",
                        printable(&call.name),
                        printable(&Value::Object(call.args.clone()).to_string())
                    );
                }
                PartData::FunctionResponse(response) if response.name != "transfer_to_agent" => {
                    let result = Value::Object(response.response.clone()).to_string();
                    println!(
                        "  <- {}: {}",
                        printable(&response.name),
                        printable(&shorten(&result))
                    );
                }
                _ => {}
            }
        }
    }

    /// Ends a line of streamed text.
    fn end_line(&mut self) {
        if self.streaming.take().is_some() {
            println!();
        }
    }
}

fn confirmation(call: &adk_core::FunctionCall) -> Option<Confirmation> {
    let request_id = call.id.clone()?;
    let hint = call
        .args
        .get("toolConfirmation")
        .and_then(|confirmation| confirmation.get("hint"))
        .and_then(Value::as_str)
        .unwrap_or("A tool asks for your confirmation.");
    let hint = printable(hint);
    let original = call.args.get("originalFunctionCall");
    let name = original
        .and_then(|call| call.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("?");
    let args = original
        .and_then(|call| call.get("args"))
        .cloned()
        .unwrap_or(Value::Null);
    Some(Confirmation {
        request_id,
        hint,
        call: printable(&format!("{name}({args})")),
    })
}

/// `text` without terminal control: escape sequences (CSI such as cursor moves and screen
/// clears, OSC such as clipboard writes and window titles, and the rest) are dropped whole, and
/// every other control character but line feed and tab is dropped, C1 controls included.
pub(crate) fn printable(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape_sequence(&mut chars),
            // The 8-bit forms of CSI and OSC.
            '\u{9b}' => skip_until(&mut chars, |c| ('\u{40}'..='\u{7e}').contains(&c)),
            '\u{9d}' => skip_until(&mut chars, |c| c == '\u{7}' || c == '\u{9c}'),
            '\n' | '\t' => shown.push(c),
            c if c.is_control() => {}
            c => shown.push(c),
        }
    }
    shown
}

/// Skips the rest of an escape sequence whose `ESC` was just read.
fn skip_escape_sequence(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.next() {
        // CSI: parameters, then one final character.
        Some('[') => skip_until(chars, |c| ('\u{40}'..='\u{7e}').contains(&c)),
        // OSC, DCS, SOS, PM, APC: a string ended by BEL or ST (`ESC \`).
        Some(']' | 'P' | 'X' | '^' | '_') => {
            while let Some(c) = chars.next() {
                if c == '\u{7}' || c == '\u{9c}' {
                    break;
                }
                if c == '\u{1b}' {
                    chars.next_if_eq(&'\\');
                    break;
                }
            }
        }
        // Any other escape is one more character (or a lone ESC at the end).
        _ => {}
    }
}

/// Skips characters up to and including the first one for which `end` holds.
fn skip_until(chars: &mut impl Iterator<Item = char>, end: impl Fn(char) -> bool) {
    for c in chars.by_ref() {
        if end(c) {
            break;
        }
    }
}

fn shorten(text: &str) -> String {
    match text.char_indices().nth(SHOWN_RESULT_CHARS) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_control_is_stripped_and_text_kept() {
        let hostile = "Hi\u{1b}]52;c;ZXZpbA==\u{7} there\u{1b}[2J\u{1b}[10;1H,\u{1b}]0;title\u{1b}\\ \
                       friend\u{9b}31m!\u{1b}7\r\u{8}\nnext\tline\u{1b}";
        assert_eq!(printable(hostile), "Hi there, friend!\nnext\tline");
        assert_eq!(printable("plain ünïcode ✓"), "plain ünïcode ✓");
    }
}
