//! [`AgentCard`]: what an agent publishes about itself — who it is, where it listens, what it can
//! do and how to authenticate.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Metadata;

/// The transports an agent can be reached over.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum TransportProtocol {
    /// JSON-RPC 2.0 over HTTP, the one every agent offers and the one this crate speaks.
    #[serde(rename = "JSONRPC")]
    JsonRpc,
    /// gRPC.
    #[serde(rename = "GRPC")]
    Grpc,
    /// REST-style HTTP with JSON.
    #[serde(rename = "HTTP+JSON")]
    HttpJson,
}

/// An agent's self-description.
///
/// ```
/// use adk_a2a::types::AgentCard;
///
/// let card = AgentCard::new("weather", "Answers questions about the weather.", "http://127.0.0.1:8001/");
/// let json = serde_json::to_value(&card).unwrap();
/// assert_eq!(json["protocolVersion"], "0.3.0");
/// assert_eq!(json["preferredTransport"], "JSONRPC");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentCard {
    /// The A2A version the agent speaks.
    pub protocol_version: String,
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Where its preferred transport listens.
    pub url: String,
    /// The transport at `url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_transport: Option<TransportProtocol>,
    /// Other transports and where they listen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_interfaces: Option<Vec<AgentInterface>>,
    /// An icon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon_url: Option<String>,
    /// Who provides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// The agent's own version.
    pub version: String,
    /// Its documentation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documentation_url: Option<String>,
    /// What optional features it supports.
    pub capabilities: AgentCapabilities,
    /// The authentication schemes it accepts, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_schemes: Option<BTreeMap<String, SecurityScheme>>,
    /// Which schemes (and scopes) a request must satisfy; any one entry suffices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<Vec<BTreeMap<String, Vec<String>>>>,
    /// The MIME types it accepts by default.
    pub default_input_modes: Vec<String>,
    /// The MIME types it produces by default.
    pub default_output_modes: Vec<String>,
    /// What it can do.
    pub skills: Vec<AgentSkill>,
    /// Whether an authenticated client may fetch a fuller card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_authenticated_extended_card: Option<bool>,
    /// JSON Web Signatures of the card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signatures: Option<Vec<Value>>,
}

impl AgentCard {
    /// The card of an agent `name` listening for JSON-RPC at `url`, with streaming, text in and
    /// out, no skills and version `0.1.0`.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        url: impl Into<String>,
    ) -> Self {
        Self {
            protocol_version: super::PROTOCOL_VERSION.to_owned(),
            name: name.into(),
            description: description.into(),
            url: url.into(),
            preferred_transport: Some(TransportProtocol::JsonRpc),
            additional_interfaces: None,
            icon_url: None,
            provider: None,
            version: "0.1.0".to_owned(),
            documentation_url: None,
            capabilities: AgentCapabilities {
                streaming: Some(true),
                push_notifications: Some(false),
                state_transition_history: Some(false),
                extensions: None,
            },
            security_schemes: None,
            security: None,
            default_input_modes: vec!["text/plain".to_owned()],
            default_output_modes: vec!["text/plain".to_owned()],
            skills: Vec::new(),
            supports_authenticated_extended_card: None,
            signatures: None,
        }
    }
}

/// Optional features an agent supports.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentCapabilities {
    /// `message/stream` (Server-Sent Events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Push notifications to a client's webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notifications: Option<bool>,
    /// A task's history of state changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_transition_history: Option<bool>,
    /// Protocol extensions it supports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<AgentExtension>>,
}

/// A protocol extension an agent supports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AgentExtension {
    /// Its URI.
    pub uri: String,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether a client must understand it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// Its settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Metadata>,
}

/// Who provides an agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AgentProvider {
    /// The organization.
    pub organization: String,
    /// Its website.
    pub url: String,
}

/// Another transport an agent listens on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AgentInterface {
    /// Where.
    pub url: String,
    /// Which transport (`JSONRPC`, `GRPC`, `HTTP+JSON`, or another name).
    pub transport: String,
}

/// One thing an agent can do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentSkill {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Keywords.
    pub tags: Vec<String>,
    /// Example requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub examples: Option<Vec<String>>,
    /// The MIME types it accepts, when not the agent's defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_modes: Option<Vec<String>>,
    /// The MIME types it produces, when not the agent's defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_modes: Option<Vec<String>>,
    /// Which schemes it needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<Vec<BTreeMap<String, Vec<String>>>>,
}

impl AgentSkill {
    /// A skill `id` named `name` that does `description`, with `tags`.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
        tags: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            description: description.into(),
            tags: tags.into_iter().map(Into::into).collect(),
            examples: None,
            input_modes: None,
            output_modes: None,
            security: None,
        }
    }
}

/// How a client authenticates, tagged by `type` as in OpenAPI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum SecurityScheme {
    /// An API key in a header, query parameter or cookie.
    #[serde(rename = "apiKey")]
    ApiKey {
        /// Where the key goes: `header`, `query` or `cookie`.
        #[serde(rename = "in")]
        location: String,
        /// The header, parameter or cookie name.
        name: String,
        /// A description.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    /// HTTP authentication (`bearer`, `basic`).
    #[serde(rename = "http")]
    Http {
        /// The scheme, such as `bearer`.
        scheme: String,
        /// The bearer token's format, such as `JWT`.
        #[serde(
            default,
            rename = "bearerFormat",
            skip_serializing_if = "Option::is_none"
        )]
        bearer_format: Option<String>,
        /// A description.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    /// OAuth 2.0.
    #[serde(rename = "oauth2")]
    OAuth2 {
        /// The flows, as the card gives them.
        flows: Value,
        /// Where the OAuth server's metadata is.
        #[serde(
            default,
            rename = "oauth2MetadataUrl",
            skip_serializing_if = "Option::is_none"
        )]
        oauth2_metadata_url: Option<String>,
        /// A description.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    /// OpenID Connect.
    #[serde(rename = "openIdConnect")]
    OpenIdConnect {
        /// The discovery URL.
        #[serde(rename = "openIdConnectUrl")]
        open_id_connect_url: String,
        /// A description.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    /// Mutual TLS.
    #[serde(rename = "mutualTLS")]
    MutualTls {
        /// A description.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
}
