//! An agent on a scripted model with the retrieval tool over a real folder of documents: the model
//! is told to cite, searches, and the next request carries the passages with their sources and
//! spans, which the answer cites.

mod support;

use std::sync::Arc;

use adk_test::{AgentRun, ConceptEmbedder, ScriptedModel};
use adk_tool::retrieval::{Corpus, RetrievalTool};
use serde_json::{Value, json};
use support::agent;

const HIKING: &str = "# Hiking\n\nPlan each day before you leave.\n\n## Alps\n\n\
                      Snow stays on the peaks until July, and the summit trail opens in June.\n";

#[tokio::test]
async fn the_models_next_request_carries_the_passages_and_their_citations() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("guides")).unwrap();
    std::fs::write(dir.path().join("guides/hiking.md"), HIKING).unwrap();
    std::fs::write(
        dir.path().join("pets.md"),
        "# Pets\n\nA puppy needs a walk twice a day.\n",
    )
    .unwrap();
    let corpus = Corpus::new(ConceptEmbedder::new("concepts-v1"));
    corpus.add_dir(dir.path(), "**/*.md").await.unwrap();
    let hiking = format!("{}/guides/hiking.md", dir.path().display());

    let answer = format!("The summit trail opens in June ({hiking}, lines 5-7).");
    let model = ScriptedModel::new("gemini-2.5-flash")
        .then_call(
            "search_documents",
            json!({"query": "mountain weather", "top_k": 1}),
        )
        .then_text(&answer);
    let guide = agent("guide", &model)
        .instruction("Answer from the documents.")
        .tool(RetrievalTool::new(corpus))
        .build()
        .unwrap();
    let run = AgentRun::new(Arc::new(guide), "When can I reach the summit?").await;
    assert!(run.error.is_none(), "{:?}", run.error);

    let requests = model.requests();
    let instruction = requests[0]
        .system_instruction
        .as_deref()
        .unwrap_or_default();
    assert!(
        instruction.contains("cite its source and lines"),
        "{instruction}"
    );
    let declared: Vec<&str> = requests[0]
        .tools
        .iter()
        .map(|declaration| declaration.name.as_str())
        .collect();
    assert_eq!(declared, ["search_documents"]);

    // The tool's answer, as the session keeps it and as the model's next request carries it.
    let response = run
        .session
        .events
        .iter()
        .flat_map(|event| event.function_responses().cloned().collect::<Vec<_>>())
        .map(|response| Value::Object(response.response))
        .next()
        .unwrap();
    let passage = &response["passages"][0];
    assert_eq!(passage["source"], hiking.as_str());
    assert_eq!(passage["section"], "Hiking > Alps");
    let (start, end) = (HIKING.find("## Alps").unwrap(), HIKING.trim_end().len());
    assert_eq!(
        passage["span"],
        json!({"start": start, "end": end, "start_line": 5, "end_line": 7})
    );
    assert_eq!(passage["text"], HIKING[start..end]);
    let history = serde_json::to_string(&requests[1].contents).unwrap();
    assert!(history.contains(&hiking), "{history}");
    assert!(history.contains("summit trail opens in June"), "{history}");
    assert!(history.contains("\"start_line\":5"), "{history}");
    assert_eq!(run.session.events.last().unwrap().text(), Some(answer));
}
