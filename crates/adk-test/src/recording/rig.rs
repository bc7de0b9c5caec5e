//! rig's httpmock-style cassettes: one `when`/`then` YAML document per exchange.

use base64::Engine as _;
use serde::Deserialize;

use super::{Exchange, is_framing_header};

#[derive(Deserialize)]
struct Interaction {
    when: Request,
    then: Response,
}

#[derive(Deserialize)]
struct Request {
    path: String,
    method: String,
    #[serde(default)]
    query_param: Vec<NameValue>,
    body: Option<String>,
    #[serde(default)]
    body_encoding: Encoding,
}

#[derive(Deserialize)]
struct Response {
    status: u16,
    #[serde(default)]
    header: Vec<NameValue>,
    body: Option<String>,
    #[serde(default)]
    body_encoding: Encoding,
}

#[derive(Deserialize)]
struct NameValue {
    name: String,
    value: String,
}

#[derive(Deserialize, Default, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Encoding {
    #[default]
    Utf8,
    Base64,
}

impl Encoding {
    fn decode(self, body: Option<String>) -> Result<Vec<u8>, String> {
        let body = body.unwrap_or_default();
        match self {
            Self::Utf8 => Ok(body.into_bytes()),
            Self::Base64 => base64::engine::general_purpose::STANDARD
                .decode(body.trim())
                .map_err(|error| format!("base64 body: {error}")),
        }
    }
}

/// Parses every document of a cassette.
pub(super) fn parse(text: &str) -> Result<Vec<Exchange>, String> {
    serde_yaml::Deserializer::from_str(text)
        .map(|document| {
            let interaction =
                Interaction::deserialize(document).map_err(|error| error.to_string())?;
            let query = interaction
                .when
                .query_param
                .iter()
                .map(|param| format!("{}={}", param.name, param.value))
                .collect::<Vec<_>>()
                .join("&");
            Ok(Exchange {
                method: interaction.when.method.to_uppercase(),
                path: interaction.when.path,
                query,
                request_body: interaction
                    .when
                    .body_encoding
                    .decode(interaction.when.body)?,
                status: interaction.then.status,
                response_headers: interaction
                    .then
                    .header
                    .into_iter()
                    .filter(|header| !is_framing_header(&header.name))
                    .map(|header| (header.name, header.value))
                    .collect(),
                response_body: interaction
                    .then
                    .body_encoding
                    .decode(interaction.then.body)?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_become_exchanges_in_order_with_crlf_kept() {
        let text = "when:\n  path: /v1/a\n  method: POST\n  query_param:\n  - {name: alt, value: sse}\n  body: '{}'\nthen:\n  status: 200\n  body: \"data: {}\\r\\n\\r\\n\"\n---\nwhen:\n  path: /v1/b\n  method: GET\nthen:\n  status: 404\n";
        let exchanges = parse(text).unwrap();
        assert_eq!(exchanges.len(), 2);
        assert_eq!(exchanges[0].query, "alt=sse");
        assert_eq!(exchanges[0].response_body, b"data: {}\r\n\r\n");
        assert_eq!(
            (exchanges[1].path.as_str(), exchanges[1].status),
            ("/v1/b", 404)
        );
    }
}
