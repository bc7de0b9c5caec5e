//! Every recording in the shared folder parses, with the number of exchanges and the statuses that
//! its entry in PROVENANCE.md states, and JSON request bodies.

use std::collections::BTreeMap;

/// `file name -> statuses`, from the `### `name`` headings and `reqs: n; status: a, b` lines.
fn provenance() -> BTreeMap<String, Vec<u16>> {
    let text = adk_test::shared_file("fixtures/recorded/PROVENANCE.md");
    let mut entries = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(name) = line
            .strip_prefix("### `")
            .and_then(|rest| rest.strip_suffix('`'))
        {
            current = Some(name.to_owned());
        } else if let (Some(name), Some(status)) = (&current, line.split("; status: ").nth(1)) {
            let statuses = status
                .split(", ")
                .map(|code| code.trim().parse().unwrap())
                .collect();
            entries.insert(name.clone(), statuses);
            current = None;
        }
    }
    entries
}

#[test]
fn every_recording_parses_as_its_provenance_says() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let expected = provenance();
    let root = adk_test::shared_dir().join("fixtures/recorded");
    let mut seen = 0;
    for folder in ["gemini", "openai", "anthropic", "openai-responses"] {
        for entry in std::fs::read_dir(root.join(folder)).unwrap() {
            let path = entry.unwrap().path();
            let name = format!("{folder}/{}", path.file_name().unwrap().to_string_lossy());
            let exchanges =
                adk_test::load_recording(&path).unwrap_or_else(|error| panic!("{error}"));
            let statuses: Vec<u16> = exchanges.iter().map(|exchange| exchange.status).collect();
            assert_eq!(Some(&statuses), expected.get(&name), "{name}");
            for exchange in &exchanges {
                assert_eq!(exchange.method, "POST", "{name}");
                assert!(
                    exchange.request_json().is_some(),
                    "{name}: request body is JSON"
                );
                assert!(!exchange.response_body.is_empty(), "{name}: response body");
                let is_stream = exchange.path.ends_with(":streamGenerateContent")
                    || exchange.request_json().unwrap()["stream"] == true;
                if exchange.status == 200 && is_stream {
                    assert!(!exchange.sse_data().is_empty(), "{name}: SSE events");
                } else {
                    assert!(exchange.response_json().is_some(), "{name}: JSON response");
                }
            }
            seen += 1;
        }
    }
    assert_eq!(seen, expected.len(), "PROVENANCE.md lists every recording");
}
