//! The command line's arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// adk-rs: run agents from the terminal, or serve them over HTTP with the dev UI.
#[derive(Debug, Parser)]
#[command(name = "adk", version, about)]
pub(crate) struct Cli {
    /// Print error details and the source of each error.
    #[arg(short, long, global = true)]
    pub(crate) verbose: bool,

    #[command(subcommand)]
    pub(crate) command: Command,
}

/// What to do.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Talk to an agent in an interactive session: each line you type is a message.
    Run(RunArgs),
    /// Serve the bundled agents over ADK's REST + SSE API with the adk-web dev UI at /dev-ui/.
    Web(ServeArgs),
    /// Serve the bundled agents over ADK's REST + SSE API, without the dev UI.
    #[command(name = "api_server", alias = "api-server")]
    ApiServer(ServeArgs),
}

/// The options of `adk run`.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The agent to run: quickstart, multi_agent, pipeline or confirmation.
    pub(crate) agent: String,

    /// Continue this session (created when it does not exist).
    #[arg(long, conflicts_with = "resume")]
    pub(crate) session: Option<String>,

    /// Continue the user's most recent session of this agent.
    #[arg(long)]
    pub(crate) resume: bool,

    /// The user the sessions belong to.
    #[arg(long, default_value = "user")]
    pub(crate) user: String,

    /// Print each answer whole instead of streaming its tokens.
    #[arg(long)]
    pub(crate) no_stream: bool,

    #[command(flatten)]
    pub(crate) store: StoreArgs,

    #[command(flatten)]
    pub(crate) model: ModelArgs,
}

/// The options of `adk web` and `adk api_server`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub(crate) host: String,

    /// The port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 8000)]
    pub(crate) port: u16,

    /// Origins allowed to call the server from a browser besides its own (repeat or separate by
    /// commas); `regex:<pattern>` allows every origin the pattern matches, `*` any.
    #[arg(long = "allow-origins", value_delimiter = ',')]
    pub(crate) allow_origins: Vec<String>,

    /// Serve the API only, without the dev UI.
    #[arg(long)]
    pub(crate) no_ui: bool,

    #[command(flatten)]
    pub(crate) store: StoreArgs,

    #[command(flatten)]
    pub(crate) model: ModelArgs,
}

/// Where sessions are kept.
#[derive(Debug, Args)]
pub(crate) struct StoreArgs {
    /// Keep sessions in memory only: nothing is stored.
    #[arg(long, conflicts_with_all = ["database_url", "db"])]
    pub(crate) in_memory: bool,

    /// Store sessions in this database: `postgres://...`, or `sqlite://path`.
    #[arg(long, env = "ADK_DATABASE_URL")]
    pub(crate) database_url: Option<String>,

    /// The SQLite file that stores sessions when no database URL is given.
    #[arg(long, alias = "session-db", default_value = ".adk/sessions.db")]
    pub(crate) db: PathBuf,
}

/// Which model the agents talk to.
#[derive(Debug, Args)]
pub(crate) struct ModelArgs {
    /// The model provider; by default chosen from the environment.
    #[arg(long, value_enum, env = "ADK_PROVIDER")]
    pub(crate) provider: Option<Provider>,

    /// The model name; by default the provider's usual model.
    #[arg(long, env = "ADK_MODEL")]
    pub(crate) model: Option<String>,

    /// Fail instead of starting the local model when no provider is configured.
    #[arg(long, env = "ADK_NO_LOCAL_MODEL")]
    pub(crate) no_local_model: bool,
}

/// A model provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Provider {
    /// Google's Gemini API (`GOOGLE_API_KEY` or `GEMINI_API_KEY`).
    Gemini,
    /// OpenAI, or any OpenAI-compatible server (`OPENAI_API_KEY`, `OPENAI_BASE_URL`).
    Openai,
}
