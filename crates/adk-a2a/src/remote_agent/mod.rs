//! [`RemoteA2aAgent`]: an agent of the local tree whose work is done by a remote A2A agent.

mod cancel;
mod request;
mod response;

use std::sync::Arc;

use adk_core::{Agent, EventStream, InvocationContext};
use futures::StreamExt as _;
use tokio::sync::OnceCell;

use crate::client::{A2aClient, ClientConfig};
use crate::error::A2aError;
use crate::types::{AgentCard, MessageSendParams, SendMessageResult, StreamEvent};

pub use response::REMOTE_TASK_FAILED;

/// The metadata key of an event that records the remote task it came from.
pub const TASK_ID_METADATA_KEY: &str = "a2a:task_id";

/// The metadata key of an event that records the remote conversation (A2A context) it belongs
/// to; the next message to the remote agent continues it.
pub const CONTEXT_ID_METADATA_KEY: &str = "a2a:context_id";

/// The metadata key of an event that records the remote task's state when the event was made.
pub const TASK_STATE_METADATA_KEY: &str = "a2a:task_state";

/// An agent that sends the conversation to a remote A2A agent and streams its answer back.
///
/// Use it as a sub-agent (the model transfers to it by name) or, wrapped in
/// [`AgentTool`](adk_flow::AgentTool), as a tool. Each run sends one message: the user's turn
/// and what other agents said since the remote agent last spoke (other agents' turns as
/// "For context" text), or — when the user answers a call the remote agent made (an
/// `input-required` task: a confirmation, a question) — the function responses, in that task.
///
/// The remote events become events authored by this agent: progress (`working` updates) as
/// thoughts, the answer as the final response, a pause as a long-running function call the user
/// answers through the usual confirmation flow. Each event records the remote task and context
/// in its `customMetadata` (`a2a:task_id`, `a2a:context_id`), so the next run continues the
/// remote conversation.
///
/// The client configuration's credentials go only to the origin of the card URL (or of the given
/// card's URL); a remote agent's calls of ADK's protocol functions (`adk_request_confirmation`,
/// `adk_request_credential`) become questions in words unless
/// [`allow_remote_prompts`](RemoteA2aAgentBuilder::allow_remote_prompts) lets it raise this
/// process's own prompts.
///
/// A remote agent that dies mid-stream ends the run with an [`A2aError::StreamEnded`] (as the
/// source of an [`adk_core::Error`]); the events that came before it are kept. Dropping the run
/// while the remote task runs cancels it with `tasks/cancel`.
///
/// ```
/// use adk_a2a::RemoteA2aAgent;
///
/// let remote = RemoteA2aAgent::builder("weather_agent")
///     .description("Answers questions about the weather.")
///     .card_url("http://127.0.0.1:8001")
///     .build()
///     .unwrap();
/// assert_eq!(adk_core::Agent::name(&remote), "weather_agent");
/// ```
pub struct RemoteA2aAgent {
    name: String,
    description: String,
    source: CardSource,
    config: ClientConfig,
    allow_prompts: bool,
    resolved: OnceCell<(AgentCard, A2aClient)>,
}

/// Where the remote agent's card comes from.
enum CardSource {
    Url(String),
    Card(Box<AgentCard>),
}

impl RemoteA2aAgent {
    /// Starts building a remote agent named `name` (an identifier: models transfer by name).
    pub fn builder(name: impl Into<String>) -> RemoteA2aAgentBuilder {
        RemoteA2aAgentBuilder {
            name: name.into(),
            description: None,
            card_url: None,
            card: None,
            config: ClientConfig::default(),
            allow_prompts: false,
        }
    }

    /// The remote agent's card and a client of it, fetched and checked on first use.
    async fn resolved(&self) -> Result<&(AgentCard, A2aClient), A2aError> {
        self.resolved
            .get_or_try_init(|| async {
                match &self.source {
                    CardSource::Card(card) => {
                        let client = A2aClient::from_card(card, self.config.clone())?;
                        Ok(((**card).clone(), client))
                    }
                    CardSource::Url(url) => {
                        let card = A2aClient::resolve_card(url, &self.config).await?;
                        // The credentials go where the user pointed, not where the card says.
                        let client =
                            A2aClient::from_resolved_card(&card, url, self.config.clone())?;
                        Ok((card, client))
                    }
                }
            })
            .await
    }

    /// The run: resolve the card, send the message, turn what comes back into events.
    fn run_remote(self: Arc<Self>, ctx: InvocationContext) -> EventStream {
        Box::pin(async_stream::try_stream! {
            let (card, client) = self.resolved().await.map_err(adk_core::Error::from)?;
            let Some(message) = request::message_for(&ctx, &self.name) else {
                tracing::warn!(agent = %self.name, "nothing new to send to the remote agent");
                return;
            };
            let params = MessageSendParams::new(message);
            let mut converter = response::Converter::new(&ctx, self.allow_prompts);
            if card.capabilities.streaming == Some(true) {
                let mut events = client
                    .send_message_streaming(params)
                    .await
                    .map_err(adk_core::Error::from)?;
                let mut guard = cancel::CancelOnDrop::new(client.clone());
                while let Some(item) = events.next().await {
                    let item = item.map_err(adk_core::Error::from)?;
                    guard.observe(&item);
                    if let Some(event) = converter.stream_event(&item) {
                        yield event;
                    }
                }
                guard.disarm();
            } else {
                let result = client.send_message(params).await.map_err(adk_core::Error::from)?;
                let item = match result {
                    SendMessageResult::Task(task) => StreamEvent::Task(task),
                    SendMessageResult::Message(message) => StreamEvent::Message(message),
                };
                if let Some(event) = converter.stream_event(&item) {
                    yield event;
                }
            }
        })
    }
}

impl Agent for RemoteA2aAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn run(self: Arc<Self>, ctx: InvocationContext) -> EventStream {
        let ctx = ctx.with_agent(self.clone());
        adk_telemetry::trace_agent(ctx.clone(), self.run_remote(ctx))
    }
}

impl std::fmt::Debug for RemoteA2aAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let source = match &self.source {
            CardSource::Url(url) => url.as_str(),
            CardSource::Card(card) => card.url.as_str(),
        };
        f.debug_struct("RemoteA2aAgent")
            .field("name", &self.name)
            .field("card", &source)
            .finish_non_exhaustive()
    }
}

/// Builds a [`RemoteA2aAgent`]; made by [`RemoteA2aAgent::builder`].
#[must_use]
pub struct RemoteA2aAgentBuilder {
    name: String,
    description: Option<String>,
    card_url: Option<String>,
    card: Option<AgentCard>,
    config: ClientConfig,
    allow_prompts: bool,
}

impl RemoteA2aAgentBuilder {
    /// Lets the remote agent raise this process's own confirmation and credential prompts (its
    /// calls of `adk_request_confirmation`, `adk_request_credential`). Off by default: such a call
    /// becomes a question in words, so that a remote agent cannot ask for a confirmation or for
    /// credentials in this agent's name.
    pub fn allow_remote_prompts(mut self, allowed: bool) -> Self {
        self.allow_prompts = allowed;
        self
    }

    /// What the agent does, shown to models that may transfer to it; by default the card's
    /// description when the card is given, else empty.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Fetches the card from `url` on first use: the card itself when it ends in `.json`, else
    /// `<url>/.well-known/agent-card.json`.
    pub fn card_url(mut self, url: impl Into<String>) -> Self {
        self.card_url = Some(url.into());
        self
    }

    /// Uses `card` as it is.
    pub fn card(mut self, card: AgentCard) -> Self {
        self.card = Some(card);
        self
    }

    /// How to talk to the remote agent: timeouts, retries, size limit, authentication.
    pub fn client_config(mut self, config: ClientConfig) -> Self {
        self.config = config;
        self
    }

    /// Builds the agent; fails when the name is not an identifier, when neither or both of a card
    /// and a card URL were given, or when the given card names no URL or another protocol
    /// version.
    pub fn build(self) -> Result<RemoteA2aAgent, A2aError> {
        check_name(&self.name)?;
        let (source, card_description) = match (self.card_url, self.card) {
            (Some(url), None) => (CardSource::Url(url), None),
            (None, Some(card)) => {
                A2aClient::check_card(&card, "the card given to RemoteA2aAgentBuilder::card")?;
                let description = card.description.clone();
                (CardSource::Card(Box::new(card)), Some(description))
            }
            (None, None) => {
                return Err(A2aError::Config(format!(
                    "remote agent '{}' needs a card or a card URL (RemoteA2aAgentBuilder::card or ::card_url)",
                    self.name
                )));
            }
            (Some(_), Some(_)) => {
                return Err(A2aError::Config(format!(
                    "remote agent '{}' was given both a card and a card URL; give one",
                    self.name
                )));
            }
        };
        Ok(RemoteA2aAgent {
            description: self.description.or(card_description).unwrap_or_default(),
            name: self.name,
            source,
            config: self.config,
            allow_prompts: self.allow_prompts,
            resolved: OnceCell::new(),
        })
    }
}

/// Agent names are identifiers, as models transfer to agents by name.
fn check_name(name: &str) -> Result<(), A2aError> {
    let mut chars = name.chars();
    let starts_well = chars
        .next()
        .is_some_and(|first| first.is_alphabetic() || first == '_');
    if !starts_well || !chars.all(|c| c.is_alphanumeric() || c == '_') || name == "user" {
        return Err(A2aError::Config(format!(
            "agent name '{name}' is not an identifier (letters, digits and '_', not starting with a digit, not 'user')"
        )));
    }
    Ok(())
}
