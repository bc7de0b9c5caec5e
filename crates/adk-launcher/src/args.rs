//! The command line's arguments: the same subcommands and flags for the `adk` binary and for every
//! user binary built on the launcher.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::embedder::EmbedderSpec;

/// Run agents from the terminal, or serve them over HTTP with the dev UI.
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
    /// Serve the agents over ADK's REST + SSE API with the adk-web dev UI at /dev-ui/.
    Web(ServeArgs),
    /// Serve the agents over ADK's REST + SSE API, without the dev UI.
    #[command(name = "api_server", alias = "api-server")]
    ApiServer(ServeArgs),
    /// Serve one agent over the Agent2Agent (A2A) protocol: its card at
    /// /.well-known/agent-card.json, JSON-RPC at /.
    A2a(A2aArgs),
    /// Create a new agent project: a Cargo binary on the launcher, or a YAML agent folder.
    Create(CreateArgs),
    /// Run an agent on ADK eval sets and score it; exits non-zero when a case fails.
    Eval(EvalArgs),
    /// Manage an app's eval sets: create one, or add cases to it from conversation scenarios.
    #[command(name = "eval_set", alias = "eval-set")]
    EvalSet(EvalSetArgs),
    /// Work with stored sessions.
    Sessions(SessionsArgs),
}

/// The options of `sessions`.
#[derive(Debug, Args)]
pub(crate) struct SessionsArgs {
    #[command(subcommand)]
    pub(crate) command: SessionsCommand,
}

/// What `sessions` does.
#[derive(Debug, Subcommand)]
pub(crate) enum SessionsCommand {
    /// Continue the invocation of a session that a crash cut off (its last event is the user's
    /// message, an unanswered call or a tool's result), from its last stored event, and print
    /// what it answers.
    Resume(ResumeArgs),
}

/// The options of `sessions resume`.
#[derive(Debug, Args)]
pub(crate) struct ResumeArgs {
    /// The app the session belongs to: one of this program's apps, or a folder holding a
    /// `root_agent.yaml`.
    pub(crate) app: String,

    /// The user the session belongs to.
    pub(crate) user: String,

    /// The session.
    pub(crate) session: String,

    #[command(flatten)]
    pub(crate) services: ServiceArgs,

    #[command(flatten)]
    pub(crate) model: ModelArgs,
}

/// The options of `run`.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The agent to run: one of this program's apps, or a folder holding a `root_agent.yaml`.
    /// May be left out when the program has one app.
    pub(crate) agent: Option<String>,

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
    pub(crate) services: ServiceArgs,

    #[command(flatten)]
    pub(crate) model: ModelArgs,
}

/// The options of `web` and `api_server`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// A folder of YAML agents to serve besides this program's apps: each subfolder holding a
    /// `root_agent.yaml` is an app named after the subfolder.
    pub(crate) agents_dir: Option<PathBuf>,

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

    /// Also serve each app over A2A at /a2a/{app}.
    #[arg(long)]
    pub(crate) a2a: bool,

    /// Where the eval routes (the dev UI's Evals tab) keep eval sets and results: a folder, or a
    /// `file://` URL of one, laid out as ADK Python's local eval managers lay it out. By default
    /// the agents folder when one is given (where ADK Python keeps them), else `.adk/evals`.
    #[arg(long)]
    pub(crate) eval_storage_uri: Option<String>,

    /// Let YAML agents of the folder start MCP servers as local processes
    /// (`stdio_server_params`); off by default, as for ADK Python's web server.
    #[arg(long, env = "ADK_ALLOW_CONFIG_STDIO_MCP_SERVERS")]
    pub(crate) allow_stdio_mcp: bool,

    #[command(flatten)]
    pub(crate) gate: GateArgs,

    #[command(flatten)]
    pub(crate) replicas: ReplicaArgs,

    #[command(flatten)]
    pub(crate) services: ServiceArgs,

    #[command(flatten)]
    pub(crate) model: ModelArgs,
}

/// The options of `a2a`.
#[derive(Debug, Args)]
pub(crate) struct A2aArgs {
    /// The agent to serve: one of this program's apps. May be left out when the program has one.
    pub(crate) agent: Option<String>,

    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub(crate) host: String,

    /// The port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 8001)]
    pub(crate) port: u16,

    /// The URL other agents reach this one at, as its card says; by default the address it
    /// listens on.
    #[arg(long)]
    pub(crate) url: Option<String>,

    /// Origins allowed to call the agent from a browser besides its own (repeat or separate by
    /// commas); `regex:<pattern>` allows every origin the pattern matches.
    #[arg(long = "allow-origins", value_delimiter = ',')]
    pub(crate) allow_origins: Vec<String>,

    /// Let a YAML agent start MCP servers as local processes (`stdio_server_params`); off by
    /// default for a server.
    #[arg(long, env = "ADK_ALLOW_CONFIG_STDIO_MCP_SERVERS")]
    pub(crate) allow_stdio_mcp: bool,

    #[command(flatten)]
    pub(crate) gate: GateArgs,

    #[command(flatten)]
    pub(crate) services: ServiceArgs,

    #[command(flatten)]
    pub(crate) model: ModelArgs,
}

/// Who may call a server (`web`, `api_server`, `a2a`), and by which host names.
#[derive(Debug, Args)]
pub(crate) struct GateArgs {
    /// How callers authenticate: `jwt` (bearer tokens checked against --jwks-url, --jwks-file or
    /// --jwt-secret-file, with --jwt-issuer and --jwt-audience), `api-key` (keys whose SHA-256
    /// --api-keys-file lists), or `none`. By default chosen from the other flags.
    #[arg(long, value_enum, env = "ADK_AUTH")]
    pub(crate) auth: Option<AuthMode>,

    /// The URL of the JSON Web Key Set JWTs are verified with (an identity provider's jwks_uri).
    #[arg(long, env = "ADK_JWKS_URL", conflicts_with_all = ["jwks_file", "jwt_secret_file"])]
    pub(crate) jwks_url: Option<String>,

    /// A file holding the JSON Web Key Set JWTs are verified with.
    #[arg(long, env = "ADK_JWKS_FILE", conflicts_with = "jwt_secret_file")]
    pub(crate) jwks_file: Option<PathBuf>,

    /// A file holding the shared secret HS256 JWTs are verified with (at least 32 bytes).
    #[arg(long, env = "ADK_JWT_SECRET_FILE")]
    pub(crate) jwt_secret_file: Option<PathBuf>,

    /// The issuer (`iss`) JWTs must name.
    #[arg(long, env = "ADK_JWT_ISSUER")]
    pub(crate) jwt_issuer: Option<String>,

    /// The audience (`aud`) JWTs must name.
    #[arg(long, env = "ADK_JWT_AUDIENCE")]
    pub(crate) jwt_audience: Option<String>,

    /// The JWT claim that names the caller's user (`email`, `preferred_username`).
    #[arg(long, env = "ADK_JWT_USER_CLAIM", default_value = "sub")]
    pub(crate) jwt_user_claim: String,

    /// A file of API keys: one a line, `<sha256 of the key> <user> [scope ...]`.
    #[arg(long, env = "ADK_API_KEYS_FILE")]
    pub(crate) api_keys_file: Option<PathBuf>,

    /// The scope that lets a caller act for every user.
    #[arg(long, env = "ADK_ADMIN_SCOPE", default_value = adk_server::DEFAULT_ADMIN_SCOPE)]
    pub(crate) admin_scope: String,

    /// Host names clients reach the server by, besides localhost, 127.0.0.1, [::1] and the
    /// address it listens on (repeat or separate by commas; `*.domain` for subdomains, `*` for
    /// any). A request naming another host gets 403.
    #[arg(
        long = "allowed-hosts",
        value_delimiter = ',',
        env = "ADK_ALLOWED_HOSTS"
    )]
    pub(crate) allowed_hosts: Vec<String>,

    /// Serve on a non-loopback address without authentication: anyone who reaches the port can
    /// then read and change every user's sessions and run the agents.
    #[arg(long, env = "ADK_ALLOW_UNAUTHENTICATED")]
    pub(crate) allow_unauthenticated: bool,
}

/// How callers of a server authenticate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum AuthMode {
    /// JWT bearer tokens.
    Jwt,
    /// Static API keys, as `Authorization: Bearer <key>` or `X-API-Key: <key>`.
    ApiKey,
    /// No authentication (refused on a non-loopback address without --allow-unauthenticated).
    None,
}

/// The options of `create`.
#[derive(Debug, Args)]
pub(crate) struct CreateArgs {
    /// The new project's name; its folder is created under the current directory.
    pub(crate) name: String,

    /// Create a YAML agent folder (`root_agent.yaml`) instead of a Cargo project.
    #[arg(long)]
    pub(crate) yaml: bool,

    /// The model a YAML agent uses (`gemini-2.5-flash`, `openai/gpt-4o-mini`, `local`); by
    /// default the launcher chooses from the environment at run time, as it always does for a
    /// Cargo project.
    #[arg(long, requires = "yaml")]
    pub(crate) model: Option<String>,

    /// Depend on the `adk` crate at this path instead of its published version (for a checkout of
    /// adk-rs).
    #[arg(long)]
    pub(crate) adk_path: Option<PathBuf>,
}

/// The options of `eval`.
#[derive(Debug, Args)]
pub(crate) struct EvalArgs {
    /// The agent to evaluate: one of this program's apps.
    pub(crate) agent: String,

    /// Eval set files (`*.evalset.json`, or ADK's older `*.test.json`); `FILE:case_1,case_2`
    /// runs only those cases.
    #[arg(required = true)]
    pub(crate) eval_sets: Vec<String>,

    /// The criteria (ADK's `test_config.json`); by default the `test_config.json` beside the eval
    /// set when one set is given, else ADK's defaults.
    #[arg(long, alias = "config_file_path")]
    pub(crate) config: Option<PathBuf>,

    /// Print every invocation: expected and actual answers and tool calls, and each score.
    #[arg(long, alias = "print_detailed_results")]
    pub(crate) print_detailed_results: bool,

    /// Judge the judged metrics (`final_response_match_v2`, the rubric metrics) with the chosen
    /// model; without it they are not evaluated.
    #[arg(long)]
    pub(crate) judge: bool,

    /// Where the results are saved, as ADK's `*.evalset_result.json` files.
    #[arg(long, default_value = ".adk/eval_history")]
    pub(crate) results_dir: PathBuf,

    #[command(flatten)]
    pub(crate) model: ModelArgs,
}

/// The options of `eval_set`.
#[derive(Debug, Args)]
pub(crate) struct EvalSetArgs {
    #[command(subcommand)]
    pub(crate) command: EvalSetCommand,
}

/// What `eval_set` does.
#[derive(Debug, Subcommand)]
pub(crate) enum EvalSetCommand {
    /// Create an empty eval set for an app.
    Create(EvalSetTarget),
    /// Add an eval case to an eval set for each scenario of a conversation scenarios file, named
    /// as ADK names it (from a hash of the scenario); a case already in the set is skipped.
    #[command(name = "add_eval_case", alias = "add-eval-case")]
    AddEvalCase(AddEvalCaseArgs),
}

/// The eval set an `eval_set` command works on, and where it is kept.
#[derive(Debug, Args)]
pub(crate) struct EvalSetTarget {
    /// The app: a folder (the app is named after it, and its sets are kept in it, as ADK Python
    /// keeps them), or one of this program's apps (its sets kept in `.adk/evals/<app>`, where
    /// `adk web` keeps them when it serves no agents folder).
    pub(crate) agent: String,

    /// The eval set's id: ASCII letters, digits and `_`.
    pub(crate) eval_set_id: String,

    /// Where eval sets are kept instead: a folder or a `file://` URL of one, holding a folder per
    /// app, as `adk web --eval-storage-uri` reads it.
    #[arg(long, alias = "eval_storage_uri")]
    pub(crate) eval_storage_uri: Option<String>,
}

/// The options of `eval_set add_eval_case`.
#[derive(Debug, Args)]
pub(crate) struct AddEvalCaseArgs {
    #[command(flatten)]
    pub(crate) target: EvalSetTarget,

    /// A JSON file of conversation scenarios, `{"scenarios": [...]}`, as ADK writes it.
    #[arg(long, alias = "scenarios_file")]
    pub(crate) scenarios_file: PathBuf,

    /// A JSON file of the session every added case starts in: `{"app_name", "user_id",
    /// "state"}`, ADK's `SessionInput`.
    #[arg(long, alias = "session_input_file")]
    pub(crate) session_input_file: PathBuf,
}

/// Where sessions, artifacts and memory are kept.
#[derive(Debug, Args)]
pub(crate) struct ServiceArgs {
    /// Keep sessions, artifacts, memory and credentials in memory only: nothing is stored.
    #[arg(long, conflicts_with_all = ["session_service_uri", "session_db", "artifact_service_uri", "memory_service_uri", "credential_service_uri"])]
    pub(crate) in_memory: bool,

    /// Where sessions are stored: `sqlite://path`, `postgres://...`, or `memory://`.
    #[arg(long, visible_alias = "database-url", env = "ADK_DATABASE_URL")]
    pub(crate) session_service_uri: Option<String>,

    /// The SQLite file that stores sessions when no session service URI is given.
    #[arg(long, alias = "db", default_value = ".adk/sessions.db")]
    pub(crate) session_db: PathBuf,

    /// Where artifacts are stored: `file://dir` or `memory://`; by default an `artifacts` folder
    /// beside the SQLite session file.
    #[arg(long, env = "ADK_ARTIFACT_SERVICE_URI")]
    pub(crate) artifact_service_uri: Option<String>,

    /// Where memory is kept: `memory://` (the default), `sqlite://path` or `postgres://...`.
    #[arg(long, env = "ADK_MEMORY_SERVICE_URI")]
    pub(crate) memory_service_uri: Option<String>,

    /// The embedder memory also searches with, by meaning: `gemini:<model>` (with
    /// `GOOGLE_API_KEY` or `GEMINI_API_KEY`), `openai:<model>` (OpenAI or a compatible server, at
    /// `OPENAI_BASE_URL` with `OPENAI_API_KEY`), `local` (the local model's llama.cpp server,
    /// started for embeddings), or `none`: keyword search only, the default.
    #[arg(long, env = "ADK_MEMORY_EMBEDDER", default_value = "none")]
    pub(crate) memory_embedder: EmbedderSpec,

    /// Where the tokens tools sign users in for (OAuth2) are kept, encrypted with the key in
    /// `ADK_CREDENTIAL_KEY`: `sqlite://path`, `postgres://...`, or `memory://`. By default the
    /// session database when sessions are in SQLite or PostgreSQL and `ADK_CREDENTIAL_KEY` is
    /// set, else memory (users sign in again after a restart).
    #[arg(long, env = "ADK_CREDENTIAL_SERVICE_URI")]
    pub(crate) credential_service_uri: Option<String>,

    /// With PostgreSQL: how many connections the session pool opens at most. By default, for a
    /// server, one for each run it allows at once (`--max-concurrent-runs`), and never fewer than
    /// 8; otherwise 8.
    #[arg(long, env = "ADK_DB_POOL_SIZE")]
    pub(crate) db_pool_size: Option<u32>,

    /// With PostgreSQL: the longest a session statement may run, in seconds, before the database
    /// cancels it (none by default).
    #[arg(long, env = "ADK_DB_STATEMENT_TIMEOUT", value_parser = seconds)]
    pub(crate) db_statement_timeout: Option<Duration>,
}

/// A duration given in seconds, fractions allowed (`2.5`).
pub(crate) fn seconds(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
        .ok_or_else(|| format!("'{text}' is not a number of seconds (such as 10 or 2.5)"))
}

/// How a server shares work with its replicas and sheds load: the limits of `web` and
/// `api_server`.
#[derive(Debug, Args)]
pub(crate) struct ReplicaArgs {
    /// How many runs this server runs at once; one more is answered 503 with Retry-After.
    #[arg(long, env = "ADK_MAX_CONCURRENT_RUNS", default_value_t = adk_server::DEFAULT_MAX_CONCURRENT_RUNS)]
    pub(crate) max_concurrent_runs: usize,

    /// How long, in seconds, a run waits for its session while another run holds it, before it
    /// is answered 409.
    #[arg(long, env = "ADK_SESSION_LOCK_WAIT", value_parser = seconds, default_value = "10")]
    pub(crate) session_lock_wait: Duration,

    /// How long, in seconds, the server goes on serving after SIGTERM with /ready answering 503,
    /// before it stops taking requests (the time a load balancer needs to notice).
    #[arg(long, env = "ADK_DRAIN_DELAY", value_parser = seconds, default_value = "0")]
    pub(crate) drain_delay: Duration,

    /// How long, in seconds, runs in flight may go on after the drain delay before they are
    /// cancelled.
    #[arg(long, env = "ADK_SHUTDOWN_GRACE", value_parser = seconds, default_value = "10")]
    pub(crate) shutdown_grace: Duration,
}

/// Which model the agents talk to, and how runs hold up when it misbehaves.
#[derive(Debug, Clone, Args)]
pub(crate) struct ModelArgs {
    /// The model provider; by default chosen from the environment.
    #[arg(long, value_enum, env = "ADK_PROVIDER")]
    pub(crate) provider: Option<Provider>,

    /// The model: a name that picks its adapter (`gemini-2.5-flash`, `vertex_ai/gemini-2.5-flash`,
    /// `claude-sonnet-4-5` or `anthropic/<name>`, `openai/gpt-4o-mini`,
    /// `openai/responses/gpt-5-mini`, `local`), or a bare name for the provider chosen; by default
    /// the provider's usual model.
    #[arg(long, env = "ADK_MODEL")]
    pub(crate) model: Option<String>,

    /// Fail instead of starting the local model when no provider is configured.
    #[arg(long, env = "ADK_NO_LOCAL_MODEL")]
    pub(crate) no_local_model: bool,

    /// The loop guard, for agents that set none of their own: how many calls of one tool with
    /// the same arguments a model gets answered in one turn (the first runs the tool, the later
    /// ones get its result back with a note to answer); the next ends the turn with a message
    /// saying so. 0 turns the guard off.
    #[arg(long, env = "ADK_MAX_REPEATED_TOOL_CALLS", default_value_t = adk_core::DEFAULT_MAX_REPEATED_TOOL_CALLS)]
    pub(crate) max_repeated_tool_calls: u32,

    /// Let a request longer than the model's context window fail the turn, instead of
    /// summarizing the session's earlier history once and asking again.
    #[arg(long, env = "ADK_NO_OVERFLOW_COMPACTION")]
    pub(crate) no_overflow_compaction: bool,
}

/// A model provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Provider {
    /// Google's Gemini API (`GOOGLE_API_KEY` or `GEMINI_API_KEY`).
    Gemini,
    /// OpenAI, or any OpenAI-compatible server (`OPENAI_API_KEY`, `OPENAI_BASE_URL`).
    Openai,
    /// OpenAI's Responses API (`OPENAI_API_KEY`, `OPENAI_BASE_URL`).
    OpenaiResponses,
    /// Anthropic's Messages API (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`).
    Anthropic,
    /// Gemini on Vertex AI (`GOOGLE_CLOUD_PROJECT`, `GOOGLE_CLOUD_LOCATION`, Application Default
    /// Credentials).
    Vertex,
}
