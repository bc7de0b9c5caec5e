//! The retrieval corpus and tool on real files and artifacts with a deterministic embedder:
//! citations whose spans hold the passage's bytes, re-indexing of changed, new and deleted files
//! and after a change of model, fused ranking, failures that store nothing, and session artifacts
//! seen by their session alone.
#![cfg(feature = "retrieval")]

mod support;

use std::sync::Arc;

use adk_core::{ErrorKind, Part, SessionKey};
use adk_test::ConceptEmbedder;
use adk_tool::Tool;
use adk_tool::retrieval::{
    Corpus, Glob, Indexed, Ranking, RetrievalError, RetrievalTool, SearchOptions,
};
use serde_json::{Value, json};
use support::{InMemoryArtifacts, Setup, TestToolContext};

const HIKING: &str = "# Hiking\n\nPlan each day before you leave.\n\n## Alps\n\n\
                      Snow stays on the peaks until July, and the summit trail opens in June.\n\n\
                      ## Gear\n\nWear trainers with a firm sole.\n";
const PETS: &str = "# Pets\n\nA puppy needs a walk twice a day and a quiet corner to sleep.\n";

/// A directory with two Markdown documents, a text file outside the glob and a binary file.
fn docs() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("guides")).unwrap();
    std::fs::create_dir_all(dir.path().join(".hidden")).unwrap();
    std::fs::write(dir.path().join("guides/hiking.md"), HIKING).unwrap();
    std::fs::write(dir.path().join("pets.md"), PETS).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "Bought running shoes.").unwrap();
    std::fs::write(dir.path().join(".hidden/secret.md"), "A dog.").unwrap();
    std::fs::write(dir.path().join("logo.md"), [0xff, 0xfe, 0x00, 0x41]).unwrap();
    dir
}

fn source(dir: &tempfile::TempDir, relative: &str) -> String {
    format!("{}/{relative}", dir.path().display())
}

#[tokio::test]
async fn passages_cite_their_file_and_span_exactly() {
    let dir = docs();
    let embedder = Arc::new(ConceptEmbedder::new("concepts-v1"));
    let corpus = Corpus::new(embedder.clone());
    let report = corpus.add_dir(dir.path(), "**/*.md").await.unwrap();
    assert_eq!(
        report.added,
        [source(&dir, "guides/hiking.md"), source(&dir, "pets.md")]
    );
    assert_eq!(report.skipped.len(), 1, "{report:?}");
    assert_eq!(report.skipped[0].0, source(&dir, "logo.md"));
    assert!(report.skipped[0].1.contains("not UTF-8 text"), "{report:?}");
    // Every chunk of both documents went to the embedder in one batch.
    assert_eq!(embedder.calls(), 1);

    let passages = corpus
        .search("mountain weather", SearchOptions::new().top_k(2))
        .await
        .unwrap();
    let best = &passages[0];
    assert_eq!(best.source, source(&dir, "guides/hiking.md"));
    assert_eq!(best.section.as_deref(), Some("Hiking > Alps"));
    assert_eq!(&HIKING[best.span.start..best.span.end], best.text);
    assert!(best.text.contains("summit trail"), "{best:?}");
    assert_eq!((best.span.start_line, best.span.end_line), (5, 7));
    assert!(best.score > passages[1].score);
}

#[tokio::test]
async fn changed_new_and_deleted_files_are_reindexed_and_unchanged_ones_are_not() {
    let dir = docs();
    let embedder = Arc::new(ConceptEmbedder::new("concepts-v1"));
    let corpus = Corpus::new(embedder.clone());
    corpus.add_dir(dir.path(), "**/*.md").await.unwrap();
    let embedded = embedder.texts();

    let report = corpus.refresh().await.unwrap();
    assert_eq!((report.unchanged, embedder.texts()), (2, embedded));

    std::fs::write(
        dir.path().join("pets.md"),
        "# Pets\n\nA canine likes cold snow.\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("shop.md"), "We sold sneakers.").unwrap();
    std::fs::remove_file(dir.path().join("guides/hiking.md")).unwrap();
    let report = corpus.refresh().await.unwrap();
    assert_eq!(report.updated, [source(&dir, "pets.md")]);
    assert_eq!(report.added, [source(&dir, "shop.md")]);
    assert_eq!(report.removed, [source(&dir, "guides/hiking.md")]);
    // Only the changed and the new document were embedded: one chunk each.
    assert_eq!(embedder.texts(), embedded + 2);
    let passages = corpus
        .search("mountain", SearchOptions::new())
        .await
        .unwrap();
    assert!(passages.iter().all(|p| !p.source.ends_with("hiking.md")));
    assert!(passages.iter().any(|p| p.text.contains("canine")));

    // A file given by name is watched too; rewriting it with the same content embeds nothing.
    let notes = dir.path().join("notes.txt");
    assert_eq!(
        corpus.add_file(&notes).await.unwrap(),
        Indexed::Added { chunks: 1 }
    );
    let before = embedder.texts();
    std::fs::write(&notes, "Bought running shoes.").unwrap();
    let report = corpus.refresh().await.unwrap();
    assert!(report.updated.is_empty(), "{report:?}");
    assert_eq!(embedder.texts(), before);
    assert!(corpus.remove(&source(&dir, "notes.txt")).await);
    assert!(!corpus.sources().contains(&source(&dir, "notes.txt")));
}

#[tokio::test]
async fn a_new_model_embeds_the_corpus_again_before_comparing_vectors() {
    let first = Arc::new(ConceptEmbedder::new("concepts-v1"));
    let corpus = Corpus::new(first.clone());
    corpus.add_text("hiking.md", HIKING).await.unwrap();
    corpus.add_text("pets.md", PETS).await.unwrap();
    assert_eq!(
        corpus.add_text("pets.md", PETS).await.unwrap(),
        Indexed::Unchanged
    );

    let second = Arc::new(ConceptEmbedder::new("concepts-v2"));
    corpus.set_embedder(second.clone());
    assert_eq!(corpus.model(), "concepts-v2");
    let passages = corpus.search("puppy", SearchOptions::new()).await.unwrap();
    assert_eq!(passages[0].source, "pets.md");
    // The documents' chunks were embedded again by the new model, then the query.
    assert_eq!(second.texts(), corpus.chunks() + 1);
    corpus.search("puppy", SearchOptions::new()).await.unwrap();
    assert_eq!(second.texts(), corpus.chunks() + 2);
    // Same content, another model: indexing it again embeds it again.
    corpus.set_embedder(first.clone());
    assert_eq!(
        corpus.add_text("pets.md", PETS).await.unwrap(),
        Indexed::Updated { chunks: 1 }
    );
}

#[tokio::test]
async fn fusion_finds_an_exact_name_the_embedder_blurs() {
    let corpus = Corpus::new(ConceptEmbedder::new("concepts-v1"));
    for (source, text) in [
        ("errors.md", "Error QX-4471 means the upload is late."),
        ("weather.md", "Cold weather and snow in the forecast."),
        ("peaks.md", "Freezing temperature and snowy peaks."),
    ] {
        corpus.add_text(source, text).await.unwrap();
    }
    let query = "QX-4471 weather";
    let sources = |passages: Vec<adk_tool::retrieval::Passage>| -> Vec<String> {
        passages.into_iter().map(|p| p.source).collect()
    };
    let vector = corpus
        .search(
            query,
            SearchOptions::new().top_k(2).ranking(Ranking::Vector),
        )
        .await
        .unwrap();
    assert_eq!(sources(vector), ["weather.md", "peaks.md"]);
    let fused = corpus
        .search(query, SearchOptions::new().top_k(2))
        .await
        .unwrap();
    assert_eq!(sources(fused), ["weather.md", "errors.md"]);
    let strict = corpus
        .search("puppy", SearchOptions::new().min_score(0.99))
        .await
        .unwrap();
    assert!(strict.is_empty(), "{strict:?}");
}

#[tokio::test]
async fn a_failing_embedder_is_a_typed_error_and_stores_nothing() {
    let dir = docs();
    let embedder = Arc::new(ConceptEmbedder::new("concepts-v1"));
    embedder.fail(true);
    let corpus = Corpus::new(embedder.clone());
    let error = corpus.add_dir(dir.path(), "**/*.md").await.unwrap_err();
    assert!(
        matches!(&error, RetrievalError::Embedding { model, .. } if model == "concepts-v1"),
        "{error:?}"
    );
    assert!(error.to_string().contains("told to fail"), "{error}");
    assert!(corpus.is_empty());
    let core = adk_core::Error::from(error);
    assert_eq!(core.kind(), ErrorKind::Model);
    assert!(core.downcast_source::<RetrievalError>().is_some());

    // A file by name that is not text, and a bad glob, are errors of their own.
    embedder.fail(false);
    let error = corpus
        .add_file(dir.path().join("logo.md"))
        .await
        .unwrap_err();
    assert!(matches!(error, RetrievalError::NotText { .. }), "{error:?}");
    let error = corpus.add_dir(dir.path(), "*.{md").await.unwrap_err();
    assert!(
        matches!(error, RetrievalError::InvalidGlob { .. }),
        "{error:?}"
    );
    let error = corpus
        .add_file(dir.path().join("missing.md"))
        .await
        .unwrap_err();
    assert!(matches!(error, RetrievalError::Read { .. }), "{error:?}");
}

#[tokio::test]
async fn the_tool_answers_passages_with_citations_and_says_when_there_are_none() {
    let corpus = Arc::new(Corpus::new(ConceptEmbedder::new("concepts-v1")));
    let tool = RetrievalTool::builder(corpus.clone()).max_top_k(3).build();
    assert_eq!(tool.name(), "search_documents");
    let declaration = serde_json::to_value(tool.declaration().unwrap()).unwrap();
    assert_eq!(declaration["parameters"]["required"], json!(["query"]));
    assert!(declaration["parameters"]["properties"]["top_k"].is_object());

    let empty = tool
        .run(
            TestToolContext::plain(),
            json!({"query": "mountain weather"}),
        )
        .await
        .unwrap();
    assert_eq!(empty["passages"], json!([]));
    assert!(
        empty["message"]
            .as_str()
            .unwrap()
            .contains("No documents are indexed")
    );

    corpus.add_text("hiking.md", HIKING).await.unwrap();
    corpus.add_text("pets.md", PETS).await.unwrap();
    let found = tool
        .run(
            TestToolContext::plain(),
            json!({"query": "mountain weather", "top_k": 50}),
        )
        .await
        .unwrap();
    let passages = found["passages"].as_array().unwrap();
    // The model asked for 50; the tool allows 3.
    assert_eq!(passages.len(), 3);
    let best = &passages[0];
    assert_eq!(best["source"], "hiking.md");
    assert_eq!(best["section"], "Hiking > Alps");
    let (start, end) = (
        best["span"]["start"].as_u64().unwrap() as usize,
        best["span"]["end"].as_u64().unwrap() as usize,
    );
    assert_eq!(best["text"], HIKING[start..end]);
    assert_eq!(best["span"]["start_line"], 5);
    assert!(best["score"].as_f64().unwrap() > 0.5, "{best}");
    assert!(found.get("message").is_none());

    let invalid = tool
        .run(TestToolContext::plain(), json!({"query": ""}))
        .await
        .unwrap_err();
    assert_eq!(invalid.kind(), ErrorKind::InvalidInput, "{invalid}");
    let blank = tool
        .run(TestToolContext::plain(), json!({"query": "  "}))
        .await
        .unwrap();
    assert_eq!(blank["passages"], json!([]));
    assert!(
        blank["message"]
            .as_str()
            .unwrap()
            .contains("query is empty")
    );
}

#[tokio::test]
async fn the_tool_tells_the_model_to_cite() {
    let corpus = Corpus::new(ConceptEmbedder::new("concepts-v1"));
    let tool = RetrievalTool::builder(corpus).name("search_manual").build();
    let mut request = adk_core::LlmRequest::default();
    tool.process_request(&TestToolContext::plain(), &mut request)
        .await
        .unwrap();
    let instruction = request.system_instruction.unwrap_or_default();
    assert!(
        instruction.contains("returned by `search_manual`, cite its source and lines"),
        "{instruction}"
    );
}

#[tokio::test]
async fn an_embedder_failure_reaches_the_model_as_an_error() {
    let embedder = Arc::new(ConceptEmbedder::new("concepts-v1"));
    let corpus = Corpus::new(embedder.clone());
    corpus.add_text("pets.md", PETS).await.unwrap();
    embedder.fail(true);
    let tool = RetrievalTool::new(corpus);
    let error = tool
        .run(TestToolContext::plain(), json!({"query": "puppy"}))
        .await
        .unwrap_err();
    assert!(
        error
            .message()
            .contains("embedding model `concepts-v1` failed"),
        "{error}"
    );
}

#[tokio::test]
async fn session_artifacts_are_searched_by_their_session_alone() {
    let corpus = Arc::new(Corpus::new(ConceptEmbedder::new("concepts-v1")));
    let corpus_for_shared = corpus.clone();
    corpus_for_shared.add_text("pets.md", PETS).await.unwrap();
    let tool = RetrievalTool::builder(corpus.clone())
        .session_artifacts(Glob::new("*.{md,txt}").unwrap())
        .build();
    let uploads = InMemoryArtifacts::with(&[
        (
            "trip.md",
            Part::inline_data("text/markdown", b"The summit is snowy in May.".to_vec()),
        ),
        ("photo.md", Part::inline_data("image/png", vec![0x89, 0x50])),
        ("user:todo.txt", Part::text("Buy new trainers.")),
    ]);
    let mine = Setup::default()
        .session("app", "alice", "s1")
        .artifacts(uploads)
        .build();
    let found = tool
        .run(mine, json!({"query": "mountain weather", "top_k": 1}))
        .await
        .unwrap();
    assert_eq!(found["passages"][0]["source"], "trip.md", "{found}");
    assert_eq!(found["passages"][0]["text"], "The summit is snowy in May.");

    // Another user's session sees the shared documents, never Alice's uploads.
    let theirs = Setup::default()
        .session("app", "bob", "s2")
        .artifacts(InMemoryArtifacts::with(&[]))
        .build();
    let found = tool
        .run(theirs, json!({"query": "mountain weather snowy summit"}))
        .await
        .unwrap();
    let sources: Vec<&Value> = found["passages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["source"])
        .collect();
    assert_eq!(sources, [&json!("pets.md")], "{found}");
    // Through the corpus's own search, which sees shared documents only.
    let shared = corpus.search("summit", SearchOptions::new()).await.unwrap();
    assert!(shared.iter().all(|p| p.source == "pets.md"));
}

#[tokio::test]
async fn an_artifact_can_be_indexed_for_every_search() {
    let corpus = Corpus::new(ConceptEmbedder::new("concepts-v1"));
    let artifacts = InMemoryArtifacts::with(&[
        ("guide.md", Part::text(HIKING)),
        ("logo.png", Part::inline_data("image/png", vec![1, 2])),
    ]);
    let session = SessionKey::new("app", "user-1", "session-1");
    let indexed = corpus
        .add_artifact(artifacts.as_ref(), &session, "guide.md")
        .await
        .unwrap();
    assert!(
        matches!(indexed, Indexed::Added { chunks } if chunks >= 3),
        "{indexed:?}"
    );
    let error = corpus
        .add_artifact(artifacts.as_ref(), &session, "logo.png")
        .await
        .unwrap_err();
    assert!(matches!(error, RetrievalError::NotText { .. }), "{error:?}");
    let error = corpus
        .add_artifact(artifacts.as_ref(), &session, "none.md")
        .await
        .unwrap_err();
    assert!(
        matches!(error, RetrievalError::NoSuchArtifact { .. }),
        "{error:?}"
    );
    let passages = corpus
        .search("footwear", SearchOptions::new())
        .await
        .unwrap();
    assert_eq!(passages[0].source, "guide.md");
    assert_eq!(passages[0].section.as_deref(), Some("Hiking > Gear"));
}
