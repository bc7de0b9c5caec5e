//! [`OAuth2Auth`]: a valid access token for a tool's call, from the credential service, a
//! refresh, the user's answer to a sign-in request, or the client credentials grant.

use std::fmt;
use std::sync::Arc;

use adk_core::{CredentialKey, CredentialService, Error, ErrorKind, Result, StoredCredential};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::token::{self, GrantError, Tokens};
use super::{OAuth2Config, pkce};
use crate::ToolContext;

/// What [`OAuth2Auth::access_token`] answers.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Access {
    /// A valid access token: send it as `Authorization: Bearer <token>`.
    Token(AccessToken),
    /// The user was asked to sign in (the call's event carries the request); the tool should
    /// answer without acting. Its call runs again once the user answered.
    Requested,
}

/// An access token. `Debug` shows no token.
#[derive(Clone, PartialEq, Eq)]
pub struct AccessToken(String);

impl AccessToken {
    /// The token itself.
    pub fn secret(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AccessToken([REDACTED])")
    }
}

/// How a tool gets its access tokens: for a user, through the authorization code grant with PKCE
/// (the user signs in once, the tokens are kept in the credential service under
/// `credential_key` and refreshed); or for the app itself, through the client credentials grant
/// (kept in memory until they near their expiry).
///
/// ```no_run
/// use adk_tool::ToolContext;
/// use adk_tool::oauth2::{Access, OAuth2Auth, OAuth2Config};
/// use serde_json::{Value, json};
///
/// /// The body of a tool that reads the user's inbox.
/// async fn read_inbox(mail: &OAuth2Auth, ctx: &ToolContext) -> adk_core::Result<Value> {
///     match mail.access_token(ctx).await? {
///         Access::Token(token) => Ok(json!({"token_length": token.secret().len()})),
///         _ => Ok(json!({"status": "waiting for the user to sign in"})),
///     }
/// }
///
/// let config = OAuth2Config::builder("mail-client", "https://auth.example.com/token")
///     .authorization_url("https://auth.example.com/authorize")
///     .scopes(["mail.read"])
///     .build()?;
/// let mail = OAuth2Auth::authorization_code("mail", config);
/// # let _ = read_inbox;
/// # Ok::<(), adk_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct OAuth2Auth {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: OAuth2Config,
    grant: Grant,
}

#[derive(Debug)]
enum Grant {
    AuthorizationCode {
        credential_key: String,
    },
    ClientCredentials {
        cached: tokio::sync::Mutex<Option<Tokens>>,
    },
}

/// What the credential service keeps under a credential key: the tokens, and the verifier and
/// `state` of a sign-in in progress.
#[derive(Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stored {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tokens: Option<Tokens>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pending: Option<Pending>,
}

/// A sign-in in progress.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Pending {
    state: String,
    code_verifier: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    redirect_uri: Option<String>,
}

/// The code and state of the user's answer.
struct Answer {
    code: String,
    state: Option<String>,
    redirect_uri: Option<String>,
}

impl OAuth2Auth {
    /// Tokens of each user, kept in the credential service under `credential_key`, got by
    /// signing the user in (the config needs an authorization URL).
    pub fn authorization_code(credential_key: impl Into<String>, config: OAuth2Config) -> Self {
        Self::with(
            config,
            Grant::AuthorizationCode {
                credential_key: credential_key.into(),
            },
        )
    }

    /// Tokens of the app itself (service to service), got with the client's id and secret.
    pub fn client_credentials(config: OAuth2Config) -> Self {
        Self::with(
            config,
            Grant::ClientCredentials {
                cached: tokio::sync::Mutex::new(None),
            },
        )
    }

    fn with(config: OAuth2Config, grant: Grant) -> Self {
        Self {
            inner: Arc::new(Inner { config, grant }),
        }
    }

    /// A valid access token for the call of `ctx`, or [`Access::Requested`] when the user must
    /// sign in first (then the call's event asks for it).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`] without a credential service (authorization code grant) or an
    /// authorization URL; [`ErrorKind::Credential`] when the token endpoint cannot be reached or
    /// refuses for another reason than an invalid grant, or the user refused to sign in;
    /// the credential service's errors.
    pub async fn access_token(&self, ctx: &ToolContext) -> Result<Access> {
        let now = ctx.invocation().clock().now();
        match &self.inner.grant {
            Grant::ClientCredentials { cached } => {
                let mut cached = cached.lock().await;
                if let Some(tokens) = cached.as_ref()
                    && tokens.fresh_at(now, self.inner.config.refresh_margin)
                {
                    return Ok(Access::Token(AccessToken(tokens.access_token.clone())));
                }
                let scope = self.inner.config.scopes.join(" ");
                let mut grant = vec![("grant_type", "client_credentials")];
                if !scope.is_empty() {
                    grant.push(("scope", scope.as_str()));
                }
                let tokens = token::request(&self.inner.config, &grant, now)
                    .await
                    .map_err(GrantError::into_error)?;
                let access = AccessToken(tokens.access_token.clone());
                *cached = Some(tokens);
                Ok(Access::Token(access))
            }
            Grant::AuthorizationCode { credential_key } => {
                self.user_token(ctx, credential_key, now).await
            }
        }
    }

    async fn user_token(&self, ctx: &ToolContext, name: &str, now: f64) -> Result<Access> {
        let service = ctx.invocation().credential_service().ok_or_else(|| {
            Error::new(
                ErrorKind::Config,
                format!(
                    "the OAuth2 credential `{name}` needs a credential service to keep the \
                     user's tokens in; give the runner one (`Runner::builder(..)\
                     .credential_service(..)`)"
                ),
            )
        })?;
        let session = ctx.session_key();
        let key = CredentialKey::new(&session.app_name, &session.user_id, name);
        let mut stored = load(service.as_ref(), &key).await?;
        let config = &self.inner.config;

        // The user's answer to this credential's request, which the flow put in `temp:` state.
        if let Some(pending) = stored.pending.take()
            && let Some(answer) = ctx.state(&format!("temp:{name}"))
        {
            match read_answer(&answer)? {
                Some(answer) if answer.state.as_deref() == Some(pending.state.as_str()) => {
                    let redirect_uri = answer.redirect_uri.or(pending.redirect_uri);
                    let mut grant = vec![
                        ("grant_type", "authorization_code"),
                        ("code", answer.code.as_str()),
                        ("code_verifier", pending.code_verifier.as_str()),
                    ];
                    if let Some(uri) = &redirect_uri {
                        grant.push(("redirect_uri", uri.as_str()));
                    }
                    let tokens = token::request(config, &grant, now)
                        .await
                        .map_err(GrantError::into_error)?;
                    let access = AccessToken(tokens.access_token.clone());
                    save(
                        service.as_ref(),
                        &key,
                        Stored {
                            tokens: Some(tokens),
                            pending: None,
                        },
                    )
                    .await?;
                    tracing::debug!(credential = %key, "the user signed in; tokens stored");
                    return Ok(Access::Token(access));
                }
                _ => {
                    // An answer to an older request, or one forged: the sign-in stays pending.
                    tracing::warn!(
                        credential = %key,
                        "an OAuth2 answer does not match the sign-in in progress; asking again"
                    );
                }
            }
        }

        if let Some(tokens) = stored.tokens.take() {
            if tokens.fresh_at(now, config.refresh_margin) {
                return Ok(Access::Token(AccessToken(tokens.access_token)));
            }
            if let Some(refresh_token) = &tokens.refresh_token {
                let grant = [
                    ("grant_type", "refresh_token"),
                    ("refresh_token", refresh_token.as_str()),
                ];
                match token::request(config, &grant, now).await {
                    Ok(mut fresh) => {
                        // A server may keep the refresh token and answer none (RFC 6749 6).
                        if fresh.refresh_token.is_none() {
                            fresh.refresh_token = tokens.refresh_token.clone();
                        }
                        let access = AccessToken(fresh.access_token.clone());
                        save(
                            service.as_ref(),
                            &key,
                            Stored {
                                tokens: Some(fresh),
                                pending: None,
                            },
                        )
                        .await?;
                        tracing::debug!(credential = %key, "the access token was refreshed");
                        return Ok(Access::Token(access));
                    }
                    Err(GrantError::InvalidGrant(error)) => {
                        tracing::info!(
                            credential = %key,
                            %error,
                            "the refresh token was refused; asking the user to sign in again"
                        );
                    }
                    Err(GrantError::Failed(error)) => return Err(error),
                }
            }
        }
        self.request_sign_in(ctx, service.as_ref(), &key).await
    }

    /// Asks the user to sign in: a fresh verifier and state are stored, the call's event gets
    /// the `AuthConfig` the client opens.
    async fn request_sign_in(
        &self,
        ctx: &ToolContext,
        service: &dyn CredentialService,
        key: &CredentialKey,
    ) -> Result<Access> {
        let config = &self.inner.config;
        let call_id = ctx.function_call_id().cloned().ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidInput,
                format!("credential {key} can be asked for only during a function call"),
            )
        })?;
        let mut auth_uri = config.authorization_url.clone().ok_or_else(|| {
            Error::new(
                ErrorKind::Config,
                format!(
                    "the OAuth2 credential `{}` signs users in, which needs an authorization \
                     URL (`OAuth2ConfigBuilder::authorization_url`)",
                    key.name
                ),
            )
        })?;
        let verifier = pkce::verifier();
        let state = pkce::state();
        let scope = config.scopes.join(" ");
        {
            let mut query = auth_uri.query_pairs_mut();
            query
                .append_pair("response_type", "code")
                .append_pair("client_id", &config.client_id);
            if let Some(uri) = &config.redirect_uri {
                query.append_pair("redirect_uri", uri);
            }
            if !scope.is_empty() {
                query.append_pair("scope", &scope);
            }
            query
                .append_pair("state", &state)
                .append_pair("code_challenge", &pkce::challenge(&verifier))
                .append_pair("code_challenge_method", pkce::CHALLENGE_METHOD);
        }
        let pending = Pending {
            state: state.clone(),
            code_verifier: verifier,
            redirect_uri: config.redirect_uri.clone(),
        };
        save(
            service,
            key,
            Stored {
                tokens: None,
                pending: Some(pending),
            },
        )
        .await?;
        let scopes: serde_json::Map<String, Value> = config
            .scopes
            .iter()
            .map(|scope| (scope.clone(), Value::String(String::new())))
            .collect();
        let mut oauth2 =
            json!({"clientId": config.client_id, "authUri": auth_uri.as_str(), "state": state});
        if let Some(uri) = &config.redirect_uri {
            oauth2["redirectUri"] = json!(uri);
        }
        // ADK's `AuthConfig`, as adk-web reads it: no secret, verifier or token in it.
        let auth_config = json!({
            "authScheme": {
                "type": "oauth2",
                "flows": {"authorizationCode": {
                    "authorizationUrl": config.authorization_url.as_ref().map(|url| url.as_str()),
                    "tokenUrl": config.shown_token_url(),
                    "scopes": scopes,
                }},
            },
            "rawAuthCredential": {"authType": "oauth2", "oauth2": {"clientId": config.client_id}},
            "exchangedAuthCredential": {"authType": "oauth2", "oauth2": oauth2},
            "credentialKey": key.name,
        });
        ctx.update_actions(|actions| actions.requested_auth_configs.insert(call_id, auth_config));
        tracing::debug!(credential = %key, "asking the user to sign in");
        Ok(Access::Requested)
    }
}

async fn load(service: &dyn CredentialService, key: &CredentialKey) -> Result<Stored> {
    let Some(stored) = service.load(key).await? else {
        return Ok(Stored::default());
    };
    serde_json::from_value(stored.into_value()).map_err(|error| {
        Error::new(
            ErrorKind::Credential,
            format!("credential {key} is not an OAuth2 credential this version reads: {error}"),
        )
    })
}

async fn save(service: &dyn CredentialService, key: &CredentialKey, stored: Stored) -> Result<()> {
    let value = serde_json::to_value(stored)
        .map_err(|error| Error::new(ErrorKind::Serialization, error.to_string()))?;
    service.save(key, StoredCredential::new(value)).await
}

/// The code, state and redirect URI of the client's answer: the `exchangedAuthCredential` (or
/// the whole `AuthConfig`) with `oauth2.authResponseUri`, or `oauth2.authCode` and
/// `oauth2.state`. `None` when it holds no code.
///
/// # Errors
///
/// [`ErrorKind::Credential`] when the server's redirect says the user refused (`error=`).
fn read_answer(answer: &Value) -> Result<Option<Answer>> {
    let oauth2 = answer
        .get("oauth2")
        .or_else(|| answer.pointer("/exchangedAuthCredential/oauth2"));
    let Some(oauth2) = oauth2 else {
        return Ok(None);
    };
    let text = |key: &str| oauth2.get(key).and_then(Value::as_str).map(str::to_owned);
    let redirect_uri = text("redirectUri");
    if let Some(uri) = text("authResponseUri") {
        let Ok(url) = reqwest::Url::parse(&uri) else {
            return Ok(None);
        };
        let param = |name: &str| {
            url.query_pairs()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.into_owned())
        };
        if let Some(error) = param("error") {
            let error: String = error.chars().take(64).collect();
            return Err(Error::new(
                ErrorKind::Credential,
                format!("the user was not signed in: the authorization server answered `{error}`"),
            ));
        }
        return Ok(param("code").map(|code| Answer {
            code,
            state: param("state"),
            redirect_uri,
        }));
    }
    Ok(text("authCode").map(|code| Answer {
        code,
        state: text("state"),
        redirect_uri,
    }))
}
