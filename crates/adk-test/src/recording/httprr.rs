//! The httprr format of Go's `golang.org/x/oscar/internal/httprr`: raw HTTP/1.1 request and
//! response bytes behind byte-count headers.

use super::{Exchange, is_framing_header, split_url};

/// The first line of every httprr file.
pub(super) const MAGIC: &[u8] = b"httprr trace v1\n";

/// Parses a whole httprr file.
pub(super) fn parse(bytes: &[u8]) -> Result<Vec<Exchange>, String> {
    let mut rest = &bytes[MAGIC.len()..];
    let mut exchanges = Vec::new();
    while !rest.is_empty() {
        let newline = rest
            .iter()
            .position(|&byte| byte == b'\n')
            .ok_or("a record header line has no newline")?;
        let header = std::str::from_utf8(&rest[..newline]).map_err(|error| error.to_string())?;
        let (n1, n2) = header
            .split_once(' ')
            .and_then(|(a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)))
            .ok_or_else(|| format!("bad record header `{header}`"))?;
        rest = &rest[newline + 1..];
        if rest.len() < n1 + n2 {
            return Err(format!(
                "record of {n1}+{n2} bytes runs past the end of the file"
            ));
        }
        let (request, response) = (&rest[..n1], &rest[n1..n1 + n2]);
        rest = &rest[n1 + n2..];
        exchanges.push(exchange(request, response)?);
    }
    Ok(exchanges)
}

fn exchange(request: &[u8], response: &[u8]) -> Result<Exchange, String> {
    let (request_head, request_body) = split_head(request)?;
    let request_line = request_head.lines().next().unwrap_or_default();
    let mut words = request_line.split(' ');
    let method = words.next().unwrap_or_default().to_owned();
    let (path, query) = split_url(words.next().ok_or("request line has no URL")?);

    let (response_head, response_body) = split_head(response)?;
    let mut lines = response_head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .ok_or("response has no status line")?;
    let response_headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned()))
        .filter(|(name, _)| !is_framing_header(name))
        .collect();
    Ok(Exchange {
        method,
        path,
        query,
        request_body: request_body.to_vec(),
        status,
        response_headers,
        response_body: response_body.to_vec(),
    })
}

/// Splits HTTP bytes at the first blank line into the header block (as text) and the body.
fn split_head(bytes: &[u8]) -> Result<(&str, &[u8]), String> {
    let end = bytes
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .ok_or("HTTP message has no blank line after its headers")?;
    let head = std::str::from_utf8(&bytes[..end]).map_err(|error| error.to_string())?;
    Ok((head, &bytes[end + 4..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_records_by_byte_count_with_multibyte_bodies() {
        let request =
            "POST https://h.example/v1/x?alt=sse HTTP/1.1\r\nHost: h\r\n\r\n{\"a\":\"Ł\"}";
        let response = "HTTP/2.0 200 OK\r\nContent-Length: 3\r\nContent-Type: text/plain\r\n\r\n°C";
        let file = format!(
            "httprr trace v1\n{} {}\n{request}{response}",
            request.len(),
            response.len()
        );
        let exchanges = parse(file.as_bytes()).unwrap();
        assert_eq!(exchanges.len(), 1);
        let exchange = &exchanges[0];
        assert_eq!(
            (exchange.path.as_str(), exchange.query.as_str()),
            ("/v1/x", "alt=sse")
        );
        assert_eq!(exchange.request_body, "{\"a\":\"Ł\"}".as_bytes());
        assert_eq!(exchange.response_body, "°C".as_bytes());
        assert_eq!(
            exchange.response_headers,
            [("Content-Type".to_owned(), "text/plain".to_owned())]
        );
    }

    #[test]
    fn a_length_past_the_end_is_an_error() {
        let error = parse(b"httprr trace v1\n10 10\nshort").unwrap_err();
        assert!(error.contains("past the end"), "{error}");
    }
}
