//! Every recording in the shared folder is replayed by exactly one test: the names the test
//! sources mention are compared with the folder's listing.

use std::collections::BTreeSet;

use crate::common;

/// The folders of recordings, each replayed by the test source of the same adapter.
const FOLDERS: [(&str, &str); 4] = [
    ("gemini", "gemini.rs"),
    ("openai", "openai.rs"),
    ("anthropic", "anthropic.rs"),
    ("openai-responses", "openai_responses.rs"),
];

/// Recording names (`gemini/...`, `anthropic/...`) quoted in the replay test sources.
fn names_used_by_tests() -> Vec<String> {
    let sources = adk_test::package_dir(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("replay");
    let mut names = Vec::new();
    for (folder, file) in FOLDERS {
        let text = std::fs::read_to_string(sources.join(file)).unwrap();
        for quoted in text.split('"').skip(1).step_by(2) {
            let is_recording = quoted.starts_with(&format!("{folder}/"))
                && (quoted.ends_with(".httprr") || quoted.ends_with(".yaml"));
            if is_recording {
                names.push(quoted.to_owned());
            }
        }
    }
    names
}

#[test]
fn every_recording_is_replayed_by_exactly_one_test() {
    if !adk_test::shared_fixtures_present() {
        return;
    }
    let mut on_disk = BTreeSet::new();
    for (folder, _) in FOLDERS {
        let dir = common::recorded_dir().join(folder);
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|error| panic!("cannot list {}: {error}", dir.display()));
        for entry in entries {
            on_disk.insert(format!(
                "{folder}/{}",
                entry.unwrap().file_name().to_string_lossy()
            ));
        }
    }
    let used = names_used_by_tests();
    let used_set: BTreeSet<_> = used.iter().cloned().collect();
    assert_eq!(
        used.len(),
        used_set.len(),
        "a recording is used by more than one test"
    );
    let unused: Vec<_> = on_disk.difference(&used_set).collect();
    let missing: Vec<_> = used_set.difference(&on_disk).collect();
    assert!(unused.is_empty(), "recordings no test replays: {unused:?}");
    assert!(
        missing.is_empty(),
        "tests name recordings that do not exist: {missing:?}"
    );
    assert_eq!(
        on_disk.len(),
        78,
        "the shared folder holds 24 Gemini, 22 Chat Completions, 16 Anthropic and 16 Responses \
         recordings"
    );
}
