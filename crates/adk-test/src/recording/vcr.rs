//! VCR.py YAML cassettes: the plain form (simonw/llm, bodies as strings, `!!binary` gzip bodies) and
//! pydantic-ai's variant (bodies rewritten as `parsed_body` YAML).

use std::io::Read as _;

use base64::Engine as _;
use serde_yaml::Value as Yaml;

use super::{Exchange, is_framing_header, split_url};

/// Parses a whole cassette.
pub(super) fn parse(text: &str) -> Result<Vec<Exchange>, String> {
    let cassette: Yaml = serde_yaml::from_str(text).map_err(|error| error.to_string())?;
    let interactions = cassette
        .get("interactions")
        .and_then(Yaml::as_sequence)
        .ok_or("`interactions` is not a list")?;
    interactions.iter().map(interaction).collect()
}

fn interaction(interaction: &Yaml) -> Result<Exchange, String> {
    let request = interaction
        .get("request")
        .ok_or("an interaction has no request")?;
    let response = interaction
        .get("response")
        .ok_or("an interaction has no response")?;
    let method = request
        .get("method")
        .and_then(Yaml::as_str)
        .ok_or("request has no method")?
        .to_uppercase();
    let (path, query) = split_url(
        request
            .get("uri")
            .and_then(Yaml::as_str)
            .ok_or("request has no uri")?,
    );
    let request_body = body(request)?;

    let status = response
        .get("status")
        .and_then(|status| status.get("code"))
        .and_then(Yaml::as_u64)
        .and_then(|code| u16::try_from(code).ok())
        .ok_or("response has no status code")?;
    let headers = headers(response.get("headers"));
    let gzipped = headers.iter().any(|(name, value)| {
        name.eq_ignore_ascii_case("content-encoding") && value.contains("gzip")
    });
    let mut response_body = body(response)?;
    if gzipped {
        // serde_yaml resolves `!!binary` to its base64 text, so a gzipped body arrives as base64.
        if !response_body.starts_with(&[0x1f, 0x8b]) {
            response_body = decode_base64(&String::from_utf8_lossy(&response_body))?;
        }
        let mut decoded = Vec::new();
        flate2::read::GzDecoder::new(response_body.as_slice())
            .read_to_end(&mut decoded)
            .map_err(|error| format!("response body is not gzip: {error}"))?;
        response_body = decoded;
    }
    Ok(Exchange {
        method,
        path,
        query,
        request_body,
        status,
        response_headers: headers
            .into_iter()
            .filter(|(name, _)| !is_framing_header(name))
            .collect(),
        response_body,
    })
}

/// The body of a request or response: `parsed_body` serialized as JSON, `body` as a string,
/// `body.string` as a string or `!!binary` base64.
fn body(message: &Yaml) -> Result<Vec<u8>, String> {
    if let Some(parsed) = message.get("parsed_body") {
        let json = serde_json::to_value(parsed).map_err(|error| error.to_string())?;
        return serde_json::to_vec(&json).map_err(|error| error.to_string());
    }
    let body = match message.get("body") {
        None | Some(Yaml::Null) => return Ok(Vec::new()),
        Some(Yaml::Mapping(map)) => map.get("string").cloned().unwrap_or(Yaml::Null),
        Some(other) => other.clone(),
    };
    scalar_bytes(&body)
}

fn scalar_bytes(value: &Yaml) -> Result<Vec<u8>, String> {
    match value {
        Yaml::Null => Ok(Vec::new()),
        Yaml::String(text) => Ok(text.clone().into_bytes()),
        Yaml::Tagged(tagged) if tagged.tag == "binary" => decode_base64(
            tagged
                .value
                .as_str()
                .ok_or("a !!binary value is not a string")?,
        ),
        other => Err(format!("unexpected body value {other:?}")),
    }
}

fn decode_base64(text: &str) -> Result<Vec<u8>, String> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact)
        .map_err(|error| format!("a !!binary value is not base64: {error}"))
}

/// Headers as name/value pairs; VCR stores each as a list of values.
fn headers(headers: Option<&Yaml>) -> Vec<(String, String)> {
    let Some(Yaml::Mapping(map)) = headers else {
        return Vec::new();
    };
    map.iter()
        .filter_map(|(name, values)| {
            let name = name.as_str()?.to_owned();
            let value = match values {
                Yaml::Sequence(values) => values
                    .iter()
                    .filter_map(Yaml::as_str)
                    .collect::<Vec<_>>()
                    .join(", "),
                Yaml::String(value) => value.clone(),
                _ => return None,
            };
            Some((name, value))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsed_bodies_become_json_and_binary_gzip_is_decoded() {
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gzip, b"{\"ok\":true}").unwrap();
        let encoded = base64::engine::general_purpose::STANDARD.encode(gzip.finish().unwrap());
        let text = format!(
            "interactions:\n- request:\n    method: POST\n    uri: https://h/v1/chat?x=1\n    parsed_body:\n      model: m\n      n: 1\n  response:\n    headers:\n      Content-Encoding: [gzip]\n      Content-Length: ['9']\n    status: {{code: 200, message: OK}}\n    body:\n      string: !!binary |\n        {encoded}\nversion: 1\n"
        );
        let exchanges = parse(&text).unwrap();
        let exchange = &exchanges[0];
        assert_eq!(
            exchange.request_json().unwrap(),
            serde_json::json!({"model": "m", "n": 1})
        );
        assert_eq!(exchange.query, "x=1");
        assert_eq!(exchange.response_body, b"{\"ok\":true}");
        assert!(
            exchange.response_headers.is_empty(),
            "{:?}",
            exchange.response_headers
        );
    }
}
