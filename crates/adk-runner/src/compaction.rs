//! Events compaction, as ADK Python's `EventsCompactionConfig` does it: after an invocation, the
//! runner may summarize a range of the session's events into one compaction event
//! (`actions.compaction` with the range's start and end timestamps and the summary), which the
//! `contents` processor then sends instead of the events it covers.
//!
//! Two triggers, either or both:
//!
//! - **Sliding window** (`compaction_interval`, `overlap_size`): once `compaction_interval`
//!   invocations have ended since the last compaction, their events are summarized together with
//!   the `overlap_size` invocations before them, so consecutive summaries overlap.
//! - **Token threshold** (`token_threshold`, `event_retention_size`): when the latest prompt the
//!   model saw (its reported prompt token count, else about four characters a token of the
//!   history) reaches `token_threshold`, everything since the last compaction but the newest
//!   `event_retention_size` events is summarized, the previous summary included, so the new one
//!   supersedes it. It is checked first; when it compacts, the window does not.
//!
//! Rewound invocations are never summarized, and a window stops before a function call whose
//! response it does not hold.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use adk_core::{
    Clock, Content, Error, ErrorKind, Event, EventActions, EventCompaction, FunctionCallId, IdGen,
    InvocationContext, InvocationId, Llm, LlmRequest, PartData, Result, Role, SessionService,
};
use adk_flow::internal::ContextCompactor;
use async_trait::async_trait;
use futures::StreamExt as _;

use crate::persist::persist_event;

/// Turns a range of events into the content that stands for them.
///
/// [`LlmSummarizer`] asks a model; a test or an app with its own idea of a summary implements
/// this.
///
/// ```
/// use adk_core::{Content, Event, Result};
/// use adk_runner::Summarizer;
///
/// /// Keeps the number of events, nothing else.
/// struct Counting;
///
/// #[async_trait::async_trait]
/// impl Summarizer for Counting {
///     async fn summarize(&self, events: &[&Event]) -> Result<Option<Content>> {
///         Ok(Some(Content::model(format!("{} events happened.", events.len()))))
///     }
/// }
/// ```
#[async_trait]
pub trait Summarizer: Send + Sync {
    /// The summary of `events` (in session order, never empty), or `None` to compact nothing this
    /// time.
    async fn summarize(&self, events: &[&Event]) -> Result<Option<Content>>;
}

/// The prompt [`LlmSummarizer`] uses by default; `{conversation_history}` is replaced by the
/// events, one line each.
pub const DEFAULT_SUMMARY_PROMPT: &str = "Below is the history of a conversation between a user \
and an AI agent; it may begin with the summary of an earlier part. Write a short summary that \
replaces it: first the language the user writes in (as \"Language: ...\"), then what the user \
asked for, the facts the agent learned and the decisions it made, the names of the tools it \
called, and what is still open.\n\n{conversation_history}";

/// How much of a tool call's arguments or a tool's response goes into the summary prompt: a large
/// result must not make the summary request as long as the history it shortens.
const MAX_TOOL_TEXT: usize = 2000;

/// A [`Summarizer`] that asks a model, with [`DEFAULT_SUMMARY_PROMPT`] or a prompt of your own.
#[derive(Clone)]
pub struct LlmSummarizer {
    llm: Arc<dyn Llm>,
    prompt: String,
}

impl LlmSummarizer {
    /// A summarizer that asks `llm` with the default prompt.
    pub fn new(llm: impl adk_core::IntoLlm) -> Self {
        let llm = llm.into_llm();
        Self {
            llm,
            prompt: DEFAULT_SUMMARY_PROMPT.to_owned(),
        }
    }

    /// Uses `template` as the prompt; its `{conversation_history}` is replaced by the events.
    pub fn prompt(mut self, template: impl Into<String>) -> Self {
        self.prompt = template.into();
        self
    }

    /// The prompt for `events`: each text, thought (except a summary's), call and response on a
    /// line of its own, calls and responses cut at a bounded length.
    pub fn render(&self, events: &[&Event]) -> String {
        let mut lines = Vec::new();
        for event in events {
            let Some(content) = shown_content(event) else {
                continue;
            };
            let summary = event.actions.compaction.is_some();
            for part in &content.parts {
                match &part.data {
                    // A summary's thoughts are left out: the next summary restates the summary,
                    // not how it was reached.
                    PartData::Text(_) if part.thought && summary => {}
                    PartData::Text(text) if part.thought => {
                        lines.push(format!("{} (thought): {text}", event.author));
                    }
                    PartData::Text(text) => lines.push(format!("{}: {text}", event.author)),
                    PartData::FunctionCall(call) => lines.push(format!(
                        "{} called tool: {}({})",
                        event.author,
                        call.name,
                        cut(&serde_json::Value::Object(call.args.clone()).to_string())
                    )),
                    PartData::FunctionResponse(response) => lines.push(format!(
                        "Tool response from {}: {}",
                        response.name,
                        cut(&serde_json::Value::Object(response.response.clone()).to_string())
                    )),
                    _ => {}
                }
            }
        }
        self.prompt
            .replace("{conversation_history}", &lines.join("\n"))
    }
}

impl fmt::Debug for LlmSummarizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmSummarizer")
            .field("llm", &self.llm.name())
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl Summarizer for LlmSummarizer {
    async fn summarize(&self, events: &[&Event]) -> Result<Option<Content>> {
        let request = LlmRequest::new(self.llm.name(), vec![Content::user(self.render(events))]);
        let mut responses = self.llm.generate(request, adk_core::StreamingMode::None);
        while let Some(response) = responses.next().await {
            if let Some(content) = response?.content {
                return Ok(Some(content));
            }
        }
        Ok(None)
    }
}

/// `text`, cut at [`MAX_TOOL_TEXT`] characters with a note of how much was left out.
fn cut(text: &str) -> String {
    match text.char_indices().nth(MAX_TOOL_TEXT) {
        Some((end, _)) => format!(
            "{}... [{} more characters]",
            &text[..end],
            text[end..].chars().count()
        ),
        None => text.to_owned(),
    }
}

/// When and how the runner compacts a session's events (ADK Python's `EventsCompactionConfig`).
///
/// ```
/// use std::sync::Arc;
/// use adk_core::{Content, Event, Result};
/// use adk_runner::{CompactionConfig, Summarizer};
///
/// struct Counting;
///
/// #[async_trait::async_trait]
/// impl Summarizer for Counting {
///     async fn summarize(&self, events: &[&Event]) -> Result<Option<Content>> {
///         Ok(Some(Content::model(format!("{} events happened.", events.len()))))
///     }
/// }
///
/// // Every 3 invocations, summarize them with the one before; and compact whenever a prompt
/// // reaches 100,000 tokens, keeping the newest 20 events as they are.
/// let config = CompactionConfig::new(Arc::new(Counting))
///     .sliding_window(3, 1)
///     .token_threshold(100_000, 20);
/// # let _ = config;
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct CompactionConfig {
    /// Invocations ended since the last compaction that trigger the next one.
    pub compaction_interval: Option<usize>,
    /// Invocations before the new ones that the window summarizes again.
    pub overlap_size: Option<usize>,
    /// The prompt size, in tokens, that triggers a compaction.
    pub token_threshold: Option<u32>,
    /// Newest events a token-threshold compaction keeps as they are.
    pub event_retention_size: Option<usize>,
    /// What writes the summaries.
    pub summarizer: Arc<dyn Summarizer>,
}

impl CompactionConfig {
    /// A config with `summarizer` and no trigger yet: add [`sliding_window`](Self::sliding_window)
    /// or [`token_threshold`](Self::token_threshold) (the runner refuses a config without one).
    pub fn new(summarizer: impl IntoSummarizer) -> Self {
        let summarizer = summarizer.into_summarizer();
        Self {
            compaction_interval: None,
            overlap_size: None,
            token_threshold: None,
            event_retention_size: None,
            summarizer,
        }
    }

    /// Compacts once `interval` invocations ended since the last compaction, summarizing them with
    /// the `overlap` invocations before them.
    pub fn sliding_window(mut self, interval: usize, overlap: usize) -> Self {
        self.compaction_interval = Some(interval);
        self.overlap_size = Some(overlap);
        self
    }

    /// Compacts when a prompt reaches `threshold` tokens, keeping the newest `retention` events.
    pub fn token_threshold(mut self, threshold: u32, retention: usize) -> Self {
        self.token_threshold = Some(threshold);
        self.event_retention_size = Some(retention);
        self
    }

    /// Checks the config as the runner's builder does.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`] when no trigger is set, when only one value of a trigger's pair is
    /// set, or when the interval or the threshold is zero.
    pub fn check(&self) -> Result<()> {
        let invalid = |message: &str| Err(Error::new(ErrorKind::Config, message.to_owned()));
        if self.compaction_interval.is_some() != self.overlap_size.is_some() {
            return invalid("compaction_interval and overlap_size must be set together");
        }
        if self.token_threshold.is_some() != self.event_retention_size.is_some() {
            return invalid("token_threshold and event_retention_size must be set together");
        }
        if self.compaction_interval.is_none() && self.token_threshold.is_none() {
            return invalid(
                "events compaction needs a trigger: CompactionConfig::sliding_window or CompactionConfig::token_threshold",
            );
        }
        if self.compaction_interval == Some(0) || self.token_threshold == Some(0) {
            return invalid("compaction_interval and token_threshold must be above 0");
        }
        Ok(())
    }

    /// The events a compaction of `events` (a session's, in order) would summarize now, copied,
    /// or `None` when no trigger is reached. A token-threshold window begins with the previous
    /// compaction event, whose summary the new one takes over.
    pub fn window(&self, events: &[Event]) -> Option<Vec<Event>> {
        let live = adk_flow::without_rewound(events);
        let window = self
            .token_threshold_window(&live)
            .filter(|window| !window.is_empty())
            .or_else(|| self.sliding_window_range(&live))
            .filter(|window| !window.is_empty())?;
        Some(window.into_iter().cloned().collect())
    }

    /// The events an overflow compaction summarizes (a request of invocation `current` was longer
    /// than the model's context window), copied: every event since the last compaction that came
    /// before `current` began, the previous summary first; `None` when there is none. The
    /// invocation's own events stay, so the model still sees the message it answers.
    pub fn overflow_window(&self, events: &[Event], current: &InvocationId) -> Option<Vec<Event>> {
        let live = adk_flow::without_rewound(events);
        let (latest, candidates) = since_last_compaction(&live);
        let split = candidates
            .iter()
            .position(|event| &event.invocation_id == current)
            .unwrap_or(candidates.len());
        let window = after_summary(latest, self_contained(&candidates[..split]));
        (!window.is_empty()).then(|| window.into_iter().cloned().collect())
    }

    /// The compaction event that summarizes `window` (from [`window`](Self::window)), or `None`
    /// when the summarizer has nothing to say. Its id, invocation id and timestamp are the
    /// caller's to set; its author is `user`, as ADK Python writes it.
    ///
    /// # Errors
    ///
    /// What the summarizer returns.
    pub async fn summarize(&self, window: &[Event]) -> Result<Option<Event>> {
        let (Some(first), Some(last)) = (window.first(), window.last()) else {
            return Ok(None);
        };
        let events: Vec<&Event> = window.iter().collect();
        let Some(mut summary) = self.summarizer.summarize(&events).await? else {
            return Ok(None);
        };
        summary.role = Some(Role::Model);
        let start = first
            .actions
            .compaction
            .as_ref()
            .map_or(first.timestamp, |compaction| compaction.start_timestamp);
        let mut actions = EventActions::default();
        actions.compaction = Some(EventCompaction {
            start_timestamp: start,
            end_timestamp: last.timestamp,
            compacted_content: summary,
        });
        Ok(Some(
            Event::new(InvocationId::from(""), adk_core::USER_AUTHOR).with_actions(actions),
        ))
    }

    /// The events a token-threshold compaction summarizes, the previous summary first (as a model
    /// turn at its start), when the threshold is reached.
    fn token_threshold_window<'e>(&self, live: &[&'e Event]) -> Option<Vec<&'e Event>> {
        let (threshold, retention) = (self.token_threshold?, self.event_retention_size?);
        if prompt_tokens(live) < u64::from(threshold) {
            return None;
        }
        let (latest, candidates) = since_last_compaction(live);
        if candidates.len() <= retention {
            return None;
        }
        let mut split = candidates.len() - retention;
        // A response stays with its call: the retained part must not begin with a response.
        while split > 0 && candidates[split].function_responses().next().is_some() {
            split -= 1;
        }
        Some(after_summary(latest, self_contained(&candidates[..split])))
    }

    /// The events a sliding-window compaction summarizes, when enough invocations ended since the
    /// last compaction.
    fn sliding_window_range<'e>(&self, live: &[&'e Event]) -> Option<Vec<&'e Event>> {
        let (interval, overlap) = (self.compaction_interval?, self.overlap_size?);
        let compacted_until = latest_compaction(live).map_or(f64::NEG_INFINITY, |(_, end)| end);
        // Each invocation's latest timestamp, invocations in the order they began.
        let mut order: Vec<&InvocationId> = Vec::new();
        let mut latest: HashMap<&InvocationId, f64> = HashMap::new();
        for event in live
            .iter()
            .filter(|event| event.actions.compaction.is_none())
        {
            let entry = latest.entry(&event.invocation_id).or_insert_with(|| {
                order.push(&event.invocation_id);
                event.timestamp
            });
            *entry = entry.max(event.timestamp);
        }
        let first_new = order.iter().position(|id| latest[id] > compacted_until)?;
        let new = order[first_new..]
            .iter()
            .filter(|id| latest[*id] > compacted_until)
            .count();
        if new < interval {
            return None;
        }
        let start_invocation = order[first_new.saturating_sub(overlap)];
        let end_invocation = order[order.len() - 1];
        let start = live
            .iter()
            .position(|event| &event.invocation_id == start_invocation)?;
        let end = live
            .iter()
            .rposition(|event| &event.invocation_id == end_invocation)?;
        let window: Vec<&Event> = live[start..=end]
            .iter()
            .copied()
            .filter(|event| event.actions.compaction.is_none())
            .collect();
        Some(self_contained(&window))
    }
}

/// The runner's answer to a request that overflowed the model's context window: an overflow
/// compaction of the invocation's session, stored now (see
/// [`adk_flow::ContextCompactor`]).
pub(crate) struct OverflowCompactor {
    pub(crate) config: CompactionConfig,
    pub(crate) sessions: Arc<dyn SessionService>,
    pub(crate) ids: Arc<dyn IdGen>,
    pub(crate) clock: Arc<dyn Clock>,
}

#[async_trait]
impl ContextCompactor for OverflowCompactor {
    async fn compact_now(&self, ctx: &InvocationContext) -> Result<bool> {
        // The window is copied under the session lock, which is not held while the summary is
        // written.
        let Some(window) = ctx.with_session(|session| {
            self.config
                .overflow_window(&session.events, ctx.invocation_id())
        }) else {
            return Ok(false);
        };
        let Some(mut event) = self.config.summarize(&window).await? else {
            return Ok(false);
        };
        event.id = self.ids.event_id();
        event.invocation_id = self.ids.invocation_id();
        event.timestamp = self.clock.now();
        persist_event(&self.sessions, ctx, &event).await?;
        Ok(true)
    }
}

impl fmt::Debug for CompactionConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompactionConfig")
            .field("compaction_interval", &self.compaction_interval)
            .field("overlap_size", &self.overlap_size)
            .field("token_threshold", &self.token_threshold)
            .field("event_retention_size", &self.event_retention_size)
            .finish_non_exhaustive()
    }
}

/// The latest compaction event of `live`, and the end of its range.
fn latest_compaction<'e>(live: &[&'e Event]) -> Option<(&'e Event, f64)> {
    live.iter().rev().find_map(|event| {
        let compaction = event.actions.compaction.as_ref()?;
        Some((*event, compaction.end_timestamp))
    })
}

/// The latest compaction event of `live` with the end of its range, and the events it does not
/// cover (compaction events left out), in order.
fn since_last_compaction<'e>(live: &[&'e Event]) -> (Option<(&'e Event, f64)>, Vec<&'e Event>) {
    let latest = latest_compaction(live);
    let compacted_until = latest.map_or(f64::NEG_INFINITY, |(_, end)| end);
    let candidates = live
        .iter()
        .copied()
        .filter(|event| event.actions.compaction.is_none() && event.timestamp > compacted_until)
        .collect();
    (latest, candidates)
}

/// `window` with the previous summary in front, when there is one and the window is not empty:
/// the new summary takes the old one over.
fn after_summary<'e>(
    latest: Option<(&'e Event, f64)>,
    mut window: Vec<&'e Event>,
) -> Vec<&'e Event> {
    if let Some((summary, _)) = latest
        && !window.is_empty()
    {
        window.insert(0, summary);
    }
    window
}

/// The longest prefix of `window` in which every function call is answered: a summary must not
/// hide a call whose response the model will still see, or one still waiting for its answer.
fn self_contained<'e>(window: &[&'e Event]) -> Vec<&'e Event> {
    let answered: HashSet<&FunctionCallId> = window
        .iter()
        .flat_map(|event| event.function_responses())
        .filter_map(|response| response.id.as_ref())
        .collect();
    let end = window
        .iter()
        .position(|event| {
            event
                .function_calls()
                .any(|call| call.id.as_ref().is_some_and(|id| !answered.contains(id)))
        })
        .unwrap_or(window.len());
    window[..end].to_vec()
}

/// The size of the latest prompt: the prompt token count the model last reported since the last
/// compaction, else about four characters a token of the history.
fn prompt_tokens(live: &[&Event]) -> u64 {
    for event in live.iter().rev() {
        if event.actions.compaction.is_some() {
            break;
        }
        if let Some(count) = event
            .response
            .usage_metadata
            .as_ref()
            .and_then(|usage| usage.prompt_token_count)
        {
            return u64::from(count);
        }
    }
    history_chars(live) / 4
}

/// The characters of the history the model is shown: summaries in place of what they cover.
fn history_chars(live: &[&Event]) -> u64 {
    let compacted_until = latest_compaction(live).map_or(f64::NEG_INFINITY, |(_, end)| end);
    live.iter()
        .filter_map(|event| match &event.actions.compaction {
            Some(compaction) => Some(&compaction.compacted_content),
            None if event.timestamp > compacted_until => event.content(),
            None => None,
        })
        .flat_map(|content| content.parts.iter())
        .map(|part| match &part.data {
            PartData::Text(text) => text.len() as u64,
            PartData::FunctionCall(call) => serde_json::Value::Object(call.args.clone())
                .to_string()
                .len() as u64,
            PartData::FunctionResponse(response) => {
                serde_json::Value::Object(response.response.clone())
                    .to_string()
                    .len() as u64
            }
            _ => 0,
        })
        .sum()
}

/// What `event` shows the model: a compaction's summary, or its content.
fn shown_content(event: &Event) -> Option<&Content> {
    match &event.actions.compaction {
        Some(compaction) => Some(&compaction.compacted_content),
        None => event.content(),
    }
}

adk_core::__into_shared!(
    /// A [`Summarizer`] as a builder takes it: the summarizer itself, an `Arc` of it, or an
    /// `Arc<dyn Summarizer>`.
    IntoSummarizer,
    into_summarizer,
    Summarizer,
    "`{Self}` is not a summarizer"
);
