//! [`A2aClient`]: JSON-RPC over HTTP to one remote agent, and its [`ClientConfig`].

mod config;
mod sse;
mod transport;

use futures::stream::BoxStream;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use config::{ClientConfig, DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT};

use crate::AGENT_CARD_PATH;
use crate::error::{A2aError, json_problem};
use crate::types::{
    AgentCard, JsonRpcRequest, JsonRpcResponse, MessageSendParams, SendMessageResult, StreamEvent,
    Task, TaskIdParams, TaskQueryParams, methods,
};

/// A client of one remote A2A agent: sends messages, streams tasks, gets and cancels them.
///
/// The configured bearer token and headers go only to the origin the client was configured with
/// (the URL given to [`new`](Self::new), the card URL given to
/// [`from_resolved_card`](Self::from_resolved_card)), never to another origin a card names;
/// redirects are not followed; errors show URLs without user information and query, and quote
/// nothing the peer sent.
///
/// Cheap to clone; clones share one connection pool.
///
/// ```no_run
/// # async fn call() -> Result<(), adk_a2a::A2aError> {
/// use adk_a2a::types::{Message, MessageSendParams, Part, Role};
/// use adk_a2a::{A2aClient, ClientConfig};
///
/// let config = ClientConfig::default().bearer_token("s3cret");
/// let card = A2aClient::resolve_card("http://127.0.0.1:8001", &config).await?;
/// let client = A2aClient::from_card(&card, config)?;
/// let message = Message::new(Role::User, vec![Part::text("What is the weather in Paris?")]);
/// let result = client.send_message(MessageSendParams::new(message)).await?;
/// # let _ = result;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct A2aClient {
    url: String,
    /// `url` as errors show it.
    shown: String,
    transport: transport::Transport,
}

impl A2aClient {
    /// A client sending JSON-RPC requests to `url`, with the config's credentials.
    pub fn new(url: impl Into<String>, config: ClientConfig) -> Result<Self, A2aError> {
        let url = url.into();
        let transport = transport::Transport::new(config, &url)?;
        Ok(Self {
            shown: transport::shown(&url),
            url,
            transport,
        })
    }

    /// A client of the agent `card` describes, after checking the card
    /// ([`check_card`](Self::check_card)); the card is trusted as given, so its URL gets the
    /// config's credentials.
    pub fn from_card(card: &AgentCard, config: ClientConfig) -> Result<Self, A2aError> {
        Self::check_card(card, "the given card")?;
        Self::new(card.url.clone(), config)
    }

    /// A client of the agent `card` describes, where the card was fetched from `card_url` (by
    /// [`resolve_card`](Self::resolve_card)): the config's credentials go to `card_url`'s origin
    /// only, so a card naming another origin for its endpoint gets no credentials there.
    pub fn from_resolved_card(
        card: &AgentCard,
        card_url: &str,
        config: ClientConfig,
    ) -> Result<Self, A2aError> {
        Self::check_card(card, card_url)?;
        let transport = transport::Transport::new(config, card_url)?;
        Ok(Self {
            url: card.url.clone(),
            shown: transport::shown(&card.url),
            transport,
        })
    }

    /// Fetches the agent card at `url`: the card itself when `url` ends in `.json`, else the
    /// card published under it at `/.well-known/agent-card.json`. The card is checked
    /// ([`check_card`](Self::check_card)).
    pub async fn resolve_card(url: &str, config: &ClientConfig) -> Result<AgentCard, A2aError> {
        let card_url = if url.ends_with(".json") {
            url.to_owned()
        } else {
            format!("{}{AGENT_CARD_PATH}", url.trim_end_matches('/'))
        };
        let transport = transport::Transport::new(config.clone(), &card_url)?;
        let body = transport.get(&card_url).await?;
        let card: AgentCard =
            serde_json::from_slice(&body).map_err(|error| A2aError::InvalidResponse {
                url: transport::shown(&card_url),
                message: format!("not an agent card: {}", json_problem(&error)),
            })?;
        Self::check_card(&card, &transport::shown(&card_url))?;
        Ok(card)
    }

    /// Checks that `card` (which came from `from`) can be used: it names a URL and speaks A2A
    /// 0.3.
    pub fn check_card(card: &AgentCard, from: &str) -> Result<(), A2aError> {
        if card.url.trim().is_empty() {
            return Err(A2aError::CardWithoutUrl {
                name: card.name.clone(),
                from: from.to_owned(),
            });
        }
        let mut version = card.protocol_version.split('.');
        if (version.next(), version.next()) != (Some("0"), Some("3")) {
            return Err(A2aError::UnsupportedProtocolVersion {
                name: card.name.clone(),
                version: card.protocol_version.clone(),
            });
        }
        Ok(())
    }

    /// The URL requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// `message/send`: sends a message and waits for the task (or a message) it gives.
    pub async fn send_message(
        &self,
        params: MessageSendParams,
    ) -> Result<SendMessageResult, A2aError> {
        self.call(
            methods::SEND,
            serde_json::to_value(params).map_err(self.invalid())?,
        )
        .await
    }

    /// `message/stream`: sends a message and streams the task's events as they come. The stream
    /// ends after the event that ends the task's stream (a final status, say); if the connection
    /// ends before it, the last item is [`A2aError::StreamEnded`].
    pub async fn send_message_streaming(
        &self,
        params: MessageSendParams,
    ) -> Result<BoxStream<'static, Result<StreamEvent, A2aError>>, A2aError> {
        let request = JsonRpcRequest::new(
            methods::STREAM,
            serde_json::to_value(params).map_err(self.invalid())?,
        );
        let response = self.transport.post_stream(&self.url, &request).await?;
        Ok(sse::events(
            response,
            self.shown.clone(),
            self.transport.config().clone(),
        ))
    }

    /// `tasks/get`.
    pub async fn get_task(&self, params: TaskQueryParams) -> Result<Task, A2aError> {
        self.call(
            methods::GET_TASK,
            serde_json::to_value(params).map_err(self.invalid())?,
        )
        .await
    }

    /// `tasks/cancel`.
    pub async fn cancel_task(&self, params: TaskIdParams) -> Result<Task, A2aError> {
        self.call(
            methods::CANCEL_TASK,
            serde_json::to_value(params).map_err(self.invalid())?,
        )
        .await
    }

    async fn call<T: DeserializeOwned>(&self, method: &str, params: Value) -> Result<T, A2aError> {
        let request = JsonRpcRequest::new(method, params);
        let body = self.transport.post(&self.url, &request).await?;
        let response: JsonRpcResponse = serde_json::from_slice(&body).map_err(self.invalid())?;
        result_of(response, &self.shown)
    }

    fn invalid(&self) -> impl Fn(serde_json::Error) -> A2aError + '_ {
        |error| A2aError::InvalidResponse {
            url: self.shown.clone(),
            message: json_problem(&error),
        }
    }
}

/// The result of a JSON-RPC response as a `T`, or its error.
pub(crate) fn result_of<T: DeserializeOwned>(
    response: JsonRpcResponse,
    url: &str,
) -> Result<T, A2aError> {
    if let Some(error) = response.error {
        return Err(A2aError::Remote { error });
    }
    let result = response.result.ok_or_else(|| A2aError::InvalidResponse {
        url: url.to_owned(),
        message: "a JSON-RPC response with neither `result` nor `error`".to_owned(),
    })?;
    serde_json::from_value(result).map_err(|error| A2aError::InvalidResponse {
        url: url.to_owned(),
        message: json_problem(&error),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cards_without_a_url_or_of_another_version_are_refused() {
        let mut card = AgentCard::new("remote", "", "");
        let error = A2aClient::check_card(&card, "http://x/card.json").unwrap_err();
        assert!(matches!(error, A2aError::CardWithoutUrl { ref name, .. } if name == "remote"));
        card.url = "http://x/".to_owned();
        card.protocol_version = "1.0".to_owned();
        let error = A2aClient::check_card(&card, "http://x/card.json").unwrap_err();
        assert!(error.to_string().contains("\"1.0\""), "{error}");
        card.protocol_version = "0.3.1".to_owned();
        assert!(A2aClient::check_card(&card, "x").is_ok());
    }
}
