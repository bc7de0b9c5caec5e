//! Gemini on Vertex AI: the regional and global endpoints
//! (`https://{location}-aiplatform.googleapis.com/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent`,
//! `aiplatform.googleapis.com` for `global`), chosen and configured as Google's SDKs do from
//! `GOOGLE_GENAI_USE_VERTEXAI`, `GOOGLE_CLOUD_PROJECT` and `GOOGLE_CLOUD_LOCATION`, each call
//! carrying an access token from [`GoogleCredentials`].

use std::sync::Arc;

use reqwest::header::{HeaderMap, HeaderValue};
use secrecy::{ExposeSecret as _, SecretString};

use super::credentials::GoogleCredentials;
use super::{Endpoints, GeminiBuilder, GeminiModel, Inner};
use crate::error::{Error, ErrorKind};
use crate::http::Transport;

/// The location when neither the builder nor `GOOGLE_CLOUD_LOCATION` names one, as Google's SDKs
/// choose.
const DEFAULT_LOCATION: &str = "global";

/// What the builder was told about Vertex AI.
#[derive(Debug, Default)]
pub(super) struct VertexSettings {
    /// Set by [`GeminiBuilder::vertex`]: the project and location.
    explicit: Option<(String, String)>,
    credentials: Option<GoogleCredentials>,
}

/// Reads one environment variable: the process's, or a test's.
type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

impl VertexSettings {
    /// Whether the model goes to Vertex AI: when the builder says so, or when
    /// `GOOGLE_GENAI_USE_VERTEXAI` is `true` or `1` and no API key was given to the builder.
    pub(super) fn chosen(&self, explicit_key: bool, env: Env<'_>) -> bool {
        self.explicit.is_some() || (!explicit_key && use_vertex(env))
    }
}

/// `GOOGLE_GENAI_USE_VERTEXAI` read as Google's SDKs read it: `true` (any case) or `1`.
pub(crate) fn use_vertex(env: Env<'_>) -> bool {
    env("GOOGLE_GENAI_USE_VERTEXAI")
        .is_some_and(|value| value.eq_ignore_ascii_case("true") || value == "1")
}

/// The process's variable `name`, trimmed, when it is set and not empty.
pub(super) fn process_env(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|value| value.trim().to_owned())
        .filter(|value| !value.is_empty())
}

impl GeminiBuilder {
    /// Sends the calls to Vertex AI in `project` at `location` (`us-central1`, `europe-west4`,
    /// or `global`), with Application Default Credentials unless
    /// [`credentials`](Self::credentials) gives others.
    ///
    /// Without it, `build` still goes to Vertex AI when `GOOGLE_GENAI_USE_VERTEXAI` is `true` and
    /// no API key was given to the builder, reading the project from `GOOGLE_CLOUD_PROJECT` (else
    /// the credentials' own project) and the location from `GOOGLE_CLOUD_LOCATION` (else
    /// `global`), as Google's SDKs do.
    pub fn vertex(mut self, project: impl Into<String>, location: impl Into<String>) -> Self {
        self.vertex.explicit = Some((project.into(), location.into()));
        self
    }

    /// Sets the credentials of Vertex AI calls (default: Application Default Credentials,
    /// [`GoogleCredentials::from_env`]).
    pub fn credentials(mut self, credentials: GoogleCredentials) -> Self {
        self.vertex.credentials = Some(credentials);
        self
    }

    pub(super) fn build_vertex(mut self, env: Env<'_>) -> Result<GeminiModel, Error> {
        let credentials = match self.vertex.credentials.take() {
            Some(credentials) => credentials,
            None => GoogleCredentials::from_env()?,
        };
        let (project, location) = match self.vertex.explicit.take() {
            Some(explicit) => explicit,
            None => {
                let project = env("GOOGLE_CLOUD_PROJECT")
                    .or_else(|| credentials.project().map(str::to_owned))
                    .ok_or_else(|| {
                        Error::config(
                            "Vertex AI needs a project: set GOOGLE_CLOUD_PROJECT, or call `.vertex(project, location)` on the builder",
                        )
                    })?;
                let location =
                    env("GOOGLE_CLOUD_LOCATION").unwrap_or_else(|| DEFAULT_LOCATION.to_owned());
                (project, location)
            }
        };
        // The default base URL is the Gemini API's; on Vertex AI it is the location's host,
        // unless the builder named another (a proxy, a test server).
        let root = if self.base_url == super::DEFAULT_BASE_URL {
            let host = if location == DEFAULT_LOCATION {
                "aiplatform.googleapis.com".to_owned()
            } else {
                format!("{location}-aiplatform.googleapis.com")
            };
            format!("https://{host}/v1")
        } else {
            self.base_url.clone()
        };
        let parent = format!("{root}/projects/{project}/locations/{location}");
        let base_url = format!("{parent}/publishers/google");
        let endpoints = Endpoints::new(&base_url, &self.model)?;
        let transport = Transport::new(self.http.clone(), &endpoints.unary)?;
        let headers = HeaderMap::new();
        let model_path =
            format!("projects/{project}/locations/{location}/publishers/google/models/");
        let mut cache = self.context_cache_for(&transport, &headers, &parent, &root, model_path)?;
        if let Some(cache) = &mut cache {
            cache.set_credentials(credentials.clone());
        }
        Ok(GeminiModel {
            inner: Arc::new(Inner {
                transport,
                model: self.model,
                base_url,
                endpoints,
                headers,
                vertex: Some(credentials),
                cache,
            }),
        })
    }
}

/// Posts one Vertex AI call with a token; a 401 makes the cached token go, and the call is sent
/// once more with a new one; a second 401 is an [`ErrorKind::Auth`] error.
pub(super) async fn post(
    transport: &Transport,
    credentials: &GoogleCredentials,
    headers: &HeaderMap,
    url: &reqwest::Url,
    body: bytes::Bytes,
) -> Result<reqwest::Response, Error> {
    let token = credentials.token(transport.client()).await?;
    match transport
        .post(url, &with_token(headers, &token)?, body.clone())
        .await
    {
        Err(error) if error.status() == Some(401) => {
            credentials.invalidate(&token).await;
            let fresh = credentials.token(transport.client()).await?;
            transport
                .post(url, &with_token(headers, &fresh)?, body)
                .await
                .map_err(|error| {
                    if error.status() != Some(401) {
                        return error;
                    }
                    let message = format!(
                        "Vertex AI refused a freshly fetched access token ({error}); check that the credentials' account may use Vertex AI in this project"
                    );
                    let body = error.body().map(str::to_owned);
                    let refused = Error::new(ErrorKind::Auth, message)
                        .with_provider_status(error.provider_status().map(str::to_owned));
                    match body {
                        Some(body) => refused.with_body(body),
                        None => refused,
                    }
                })
        }
        other => other,
    }
}

pub(super) fn with_token(headers: &HeaderMap, token: &SecretString) -> Result<HeaderMap, Error> {
    let mut headers = headers.clone();
    let mut value =
        HeaderValue::from_str(&format!("Bearer {}", token.expose_secret())).map_err(|_| {
            Error::new(
                ErrorKind::Auth,
                "the access token is not a valid header value",
            )
        })?;
    value.set_sensitive(true);
    headers.insert(reqwest::header::AUTHORIZATION, value);
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn credentials() -> GoogleCredentials {
        GoogleCredentials::from_json(
            r#"{"type":"authorized_user","client_id":"id","client_secret":"s","refresh_token":"r","quota_project_id":"from-key"}"#,
        )
        .unwrap()
    }

    fn vars(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        }
    }

    fn unary(model: &GeminiModel) -> String {
        model.inner.endpoints.unary.to_string()
    }

    #[test]
    fn regional_and_global_endpoints() {
        let regional = GeminiModel::builder("gemini-2.5-flash")
            .vertex("p", "us-central1")
            .credentials(credentials())
            .build()
            .unwrap();
        assert_eq!(
            unary(&regional),
            "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent"
        );
        assert_eq!(
            regional.inner.endpoints.stream.as_str(),
            "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        );
        let global = GeminiModel::builder("gemini-2.5-flash")
            .vertex("p", "global")
            .credentials(credentials())
            .build()
            .unwrap();
        assert!(
            unary(&global)
                .starts_with("https://aiplatform.googleapis.com/v1/projects/p/locations/global/"),
            "{}",
            unary(&global)
        );
    }

    #[test]
    fn the_environment_chooses_vertex_as_googles_sdks_do() {
        let on = vars(&[
            ("GOOGLE_GENAI_USE_VERTEXAI", "True"),
            ("GOOGLE_CLOUD_PROJECT", "env-project"),
            ("GOOGLE_CLOUD_LOCATION", "europe-west4"),
        ]);
        let settings = VertexSettings::default();
        assert!(settings.chosen(false, &on));
        assert!(
            !settings.chosen(true, &on),
            "an API key given to the builder wins"
        );
        assert!(!settings.chosen(false, &vars(&[("GOOGLE_GENAI_USE_VERTEXAI", "no")])));
        assert!(settings.chosen(false, &vars(&[("GOOGLE_GENAI_USE_VERTEXAI", "1")])));

        let model = GeminiModel::builder("m")
            .credentials(credentials())
            .build_vertex(&on)
            .unwrap();
        assert!(unary(&model).starts_with(
            "https://europe-west4-aiplatform.googleapis.com/v1/projects/env-project/locations/europe-west4/"
        ));
        // Without GOOGLE_CLOUD_PROJECT the credentials' project is used, and the location is
        // `global`.
        let model = GeminiModel::builder("m")
            .credentials(credentials())
            .build_vertex(&vars(&[("GOOGLE_GENAI_USE_VERTEXAI", "true")]))
            .unwrap();
        assert!(
            unary(&model).contains("/projects/from-key/locations/global/"),
            "{}",
            unary(&model)
        );
        let no_project = GoogleCredentials::metadata_server("http://127.0.0.1:1");
        let error = GeminiModel::builder("m")
            .credentials(no_project)
            .build_vertex(&vars(&[]))
            .unwrap_err();
        assert!(
            error.to_string().contains("GOOGLE_CLOUD_PROJECT"),
            "{error}"
        );
    }
}
