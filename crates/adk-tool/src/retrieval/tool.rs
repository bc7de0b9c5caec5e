//! [`RetrievalTool`]: lets a model search a [`Corpus`] and cite what it found.

use std::sync::Arc;

use adk_core::{FunctionDeclaration, LlmRequest, Result};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::corpus::Scope;
use super::{Corpus, Glob, Passage, Ranking, RetrievalError, SearchOptions};
use crate::{FunctionTool, Tool, ToolContext, ToolEffect};

/// The default name of the tool.
const DEFAULT_NAME: &str = "search_documents";
/// The default description of the tool.
const DEFAULT_DESCRIPTION: &str = "Searches the indexed documents for the passages that best \
                                   answer the query. Each passage comes with its source and \
                                   lines, to quote and cite.";
/// The most passages a model may ask for by default.
const DEFAULT_MAX_TOP_K: usize = 20;

/// The arguments of a [`RetrievalTool`].
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RetrievalArgs {
    /// What to look for, in the words of a question or of the passage that would answer it.
    #[schemars(length(min = 1))]
    pub query: String,
    /// How many passages to return at most; the tool's default when absent.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub top_k: Option<u32>,
}

/// A tool that searches a [`Corpus`] and answers with passages and their citations, as ADK's
/// retrieval tools do (a `query` in, passages out), with each passage's source and place:
///
/// ```json
/// {"query": "how do I reset my password?",
///  "passages": [{"source": "docs/account.md",
///                "span": {"start": 1204, "end": 1530, "start_line": 41, "end_line": 48},
///                "section": "Account > Passwords", "score": 0.8123,
///                "text": "## Passwords\n\nTo reset your password, ..."}]}
/// ```
///
/// An empty corpus, or a search that finds nothing above the least score, answers with no
/// passages and a `message` that says so, so the model does not invent a citation. By default the
/// tool also tells the model, in the system instruction, to cite the source and lines of what it
/// uses.
///
/// ```
/// # use adk_core::{Embedder, Result};
/// # struct MyEmbedder;
/// # #[async_trait::async_trait]
/// # impl Embedder for MyEmbedder {
/// #     fn model(&self) -> &str { "m" }
/// #     fn dimensions(&self) -> Option<usize> { None }
/// #     async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> { Ok(vec![vec![1.0]; texts.len()]) }
/// # }
/// use std::sync::Arc;
///
/// use adk_tool::Tool;
/// use adk_tool::retrieval::{Corpus, RetrievalTool};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
/// # let docs = tempfile::tempdir()?;
/// # std::fs::write(docs.path().join("faq.md"), "# FAQ\n\nOpen the settings.")?;
/// let corpus = Arc::new(Corpus::new(MyEmbedder));
/// corpus.add_dir(docs.path(), "**/*.md").await?;
/// let tool = RetrievalTool::builder(corpus)
///     .name("search_manual")
///     .description("Searches the product manual.")
///     .top_k(4)
///     .build();
/// assert_eq!(tool.name(), "search_manual");
/// # Ok(())
/// # }
/// ```
pub struct RetrievalTool {
    inner: FunctionTool,
    cite_instruction: Option<String>,
}

/// Builds a [`RetrievalTool`]; see [`RetrievalTool::builder`].
#[derive(Debug)]
#[must_use]
pub struct RetrievalToolBuilder {
    corpus: Arc<Corpus>,
    name: String,
    description: String,
    options: SearchOptions,
    max_top_k: usize,
    refresh_on_query: bool,
    session_artifacts: Option<Glob>,
    cite_instruction: bool,
}

/// What the tool needs at each call.
struct Search {
    corpus: Arc<Corpus>,
    options: SearchOptions,
    max_top_k: usize,
    refresh_on_query: bool,
    session_artifacts: Option<Glob>,
}

impl RetrievalTool {
    /// The tool `search_documents` over `corpus`, with the defaults of [`RetrievalToolBuilder`].
    pub fn new(corpus: impl Into<Arc<Corpus>>) -> Self {
        Self::builder(corpus).build()
    }

    /// Starts building a tool over `corpus`.
    pub fn builder(corpus: impl Into<Arc<Corpus>>) -> RetrievalToolBuilder {
        RetrievalToolBuilder {
            corpus: corpus.into(),
            name: DEFAULT_NAME.to_owned(),
            description: DEFAULT_DESCRIPTION.to_owned(),
            options: SearchOptions::default(),
            max_top_k: DEFAULT_MAX_TOP_K,
            refresh_on_query: true,
            session_artifacts: None,
            cite_instruction: true,
        }
    }
}

impl RetrievalToolBuilder {
    /// The name the model calls the tool by (default `search_documents`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// What the tool searches, for the model: say what the documents are about.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// How many passages a call returns when the model does not say (default 5, at least 1).
    pub fn top_k(mut self, top_k: usize) -> Self {
        self.options = self.options.top_k(top_k);
        self
    }

    /// The most passages the model may ask for (default 20, at least 1).
    pub fn max_top_k(mut self, max_top_k: usize) -> Self {
        self.max_top_k = max_top_k.max(1);
        self
    }

    /// How passages are ranked (default [`Ranking::Fused`]).
    pub fn ranking(mut self, ranking: Ranking) -> Self {
        self.options = self.options.ranking(ranking);
        self
    }

    /// Leaves out passages whose cosine similarity to the query is below `min_score`.
    pub fn min_score(mut self, min_score: f32) -> Self {
        self.options = self.options.min_score(min_score);
        self
    }

    /// Whether each call first runs [`Corpus::refresh`], so that files changed, added or deleted
    /// since the last call are seen (default `true`). A file whose size and modification time did
    /// not change is not read; turn it off for a corpus that does not change.
    pub fn refresh_on_query(mut self, refresh: bool) -> Self {
        self.refresh_on_query = refresh;
        self
    }

    /// Also searches the artifacts of the caller's session whose names `glob` matches (and the
    /// user's `user:` artifacts), indexed at each call for that session alone (for that user
    /// alone): what one user uploads is never cited to another. Artifacts that are not text are
    /// left out.
    pub fn session_artifacts(mut self, glob: Glob) -> Self {
        self.session_artifacts = Some(glob);
        self
    }

    /// Whether the tool tells the model, in the system instruction, to cite the source and lines
    /// of the passages it uses (default `true`).
    pub fn cite_instruction(mut self, cite: bool) -> Self {
        self.cite_instruction = cite;
        self
    }

    /// The tool.
    pub fn build(self) -> RetrievalTool {
        let cite_instruction = self.cite_instruction.then(|| {
            format!(
                "When you use a passage returned by `{}`, cite its source and lines, as in \
                 (guide.md, lines 3-7). If it returns no passage, say that the documents do not \
                 cover the question.",
                self.name
            )
        });
        let search = Arc::new(Search {
            corpus: self.corpus,
            options: self.options,
            max_top_k: self.max_top_k,
            refresh_on_query: self.refresh_on_query,
            session_artifacts: self.session_artifacts,
        });
        let inner = FunctionTool::builder(
            self.name,
            self.description,
            move |ctx: ToolContext, args: RetrievalArgs| {
                let search = search.clone();
                async move { search.run(ctx, args).await }
            },
        )
        .effect(ToolEffect::ReadOnly)
        .build();
        RetrievalTool {
            inner,
            cite_instruction,
        }
    }
}

impl Search {
    async fn run(&self, ctx: ToolContext, args: RetrievalArgs) -> Result<Value, RetrievalError> {
        if self.refresh_on_query
            && let Err(error) = self.corpus.refresh().await
        {
            // A corpus that could not be refreshed is still searched as it is: an answer from
            // slightly old documents beats none. An embedder failure ends the call below anyway.
            tracing::warn!(%error, "the corpus could not be refreshed before a search");
        }
        if let Some(glob) = &self.session_artifacts {
            self.corpus.sync_artifacts(&ctx, glob).await?;
        }
        let scopes = Scope::visible_from(ctx.session_key());
        let query = args.query.trim();
        if self.corpus.is_empty_in(&|scope| scopes.contains(scope)) {
            return Ok(answer(
                query,
                &[],
                Some("No documents are indexed, so there is nothing to search or cite."),
            ));
        }
        if query.is_empty() {
            return Ok(answer(
                query,
                &[],
                Some("The query is empty: call again with the words of what you look for."),
            ));
        }
        let top_k = args
            .top_k
            .map_or(self.options.top_k, |asked| asked as usize)
            .clamp(1, self.max_top_k);
        let options = self.options.top_k(top_k);
        let passages = self.corpus.search_in(query, options, &scopes).await?;
        let message = passages.is_empty().then_some(
            "No passage of the documents is close enough to the query: the documents do not \
             seem to cover it.",
        );
        Ok(answer(query, &passages, message))
    }
}

/// The tool's result: the query, the passages and, when there are none, why.
fn answer(query: &str, passages: &[Passage], message: Option<&str>) -> Value {
    let passages: Vec<Value> = passages
        .iter()
        .map(|passage| {
            let mut value = json!({
                "source": passage.source,
                "span": passage.span,
                "score": (f64::from(passage.score) * 1e4).round() / 1e4,
                "text": passage.text,
            });
            if let Some(section) = &passage.section {
                value["section"] = json!(section);
            }
            value
        })
        .collect();
    let mut answer = json!({ "query": query, "passages": passages });
    if let Some(message) = message {
        answer["message"] = json!(message);
    }
    answer
}

#[async_trait]
impl Tool for RetrievalTool {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn description(&self) -> &str {
        self.inner.description()
    }

    fn effect(&self) -> ToolEffect {
        // It reads the corpus; refreshing its index is not an effect outside the process.
        ToolEffect::ReadOnly
    }

    fn declaration(&self) -> Option<FunctionDeclaration> {
        self.inner.declaration()
    }

    async fn process_request(&self, ctx: &ToolContext, request: &mut LlmRequest) -> Result<()> {
        self.inner.process_request(ctx, request).await?;
        if let Some(instruction) = &self.cite_instruction {
            request.append_instructions([instruction.as_str()]);
        }
        Ok(())
    }

    async fn run(&self, ctx: ToolContext, args: Value) -> Result<Value> {
        self.inner.run(ctx, args).await
    }
}

impl std::fmt::Debug for RetrievalTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RetrievalTool")
            .field("name", &self.inner.name())
            .finish_non_exhaustive()
    }
}
