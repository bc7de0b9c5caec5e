//! [`Launcher`]: a program's apps and the command line that runs them.

use std::ffi::OsString;
use std::process::ExitCode;
use std::sync::Arc;

use adk_core::{IntoAgent, Llm};
use adk_tool::{IntoTool, Tool};
use clap::{CommandFactory as _, FromArgMatches as _};

use crate::apps::{App, AppSource};
use crate::args::{Cli, Command, SessionsCommand};
use crate::error::{LaunchError, LaunchErrorKind};
use crate::{a2a, create, eval, eval_set, serve, sessions, terminal};

/// The command line of a program that runs agents: `run` (an interactive terminal session),
/// `web` (ADK's REST + SSE API with the adk-web dev UI), `api_server` (the API alone), `a2a` (one
/// agent over the A2A protocol) and `create` (a new agent project), with the same flags as the
/// `adk` binary, which is built on it.
///
/// An app is a name (sessions are stored under it) and an agent tree: one the program built with
/// its own models ([`app`](Self::app)), or one built on the model the command line chooses
/// ([`app_on_model`](Self::app_on_model)): Gemini or an OpenAI-compatible server when the
/// environment configures one, else a local model that needs no key.
///
/// ```no_run
/// use std::process::ExitCode;
/// use std::sync::Arc;
///
/// use adk_flow::LlmAgent;
/// use adk_launcher::Launcher;
///
/// #[tokio::main]
/// async fn main() -> ExitCode {
///     Launcher::new()
///         .app_on_model("assistant", |model| {
///             let agent = LlmAgent::builder("assistant")
///                 .model(model)
///                 .instruction("You are a helpful assistant.")
///                 .build()?;
///             Ok(Arc::new(agent))
///         })
///         .run()
///         .await
/// }
/// ```
#[derive(Clone, Default)]
#[must_use]
pub struct Launcher {
    apps: Vec<App>,
    function_tools: Vec<Arc<dyn Tool>>,
    metrics: eval::Metrics,
}

impl Launcher {
    /// A launcher with no apps yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the app `name` with `root_agent`, an agent tree that already has its models.
    pub fn app(mut self, name: impl Into<String>, root_agent: impl IntoAgent) -> Self {
        self.apps.push(App {
            name: name.into(),
            source: AppSource::Agent(root_agent.into_agent()),
        });
        self
    }

    /// Adds the app `name`, whose agent tree `build` makes on the model the command line chooses
    /// (only when a command runs the app).
    pub fn app_on_model<F, A>(mut self, name: impl Into<String>, build: F) -> Self
    where
        F: Fn(Arc<dyn Llm>) -> adk_core::Result<A> + Send + Sync + 'static,
        A: IntoAgent,
    {
        self.apps.push(App {
            name: name.into(),
            source: AppSource::OnModel(Arc::new(move |model| {
                build(model).map(IntoAgent::into_agent)
            })),
        });
        self
    }

    /// Registers `tool` for agents described in YAML: a config's `tools: [name]` finds it by its
    /// name (see `adk-config`).
    pub fn function_tool(mut self, tool: impl IntoTool) -> Self {
        self.function_tools.push(tool.into_tool());
        self
    }

    /// Offers the custom eval metric `metric` to `eval` and to the eval routes of `web` and
    /// `api_server`, under the name eval configs give it.
    pub fn eval_metric(
        mut self,
        name: impl Into<String>,
        metric: impl adk_eval::IntoMetric,
    ) -> Self {
        self.metrics.push((name.into(), metric.into_metric()));
        self
    }

    /// Parses the process's arguments and runs the command they name; errors are printed on
    /// standard error as one line (all details with `-v`), and the exit code says whether the
    /// command succeeded.
    pub async fn run(self) -> ExitCode {
        self.run_from(std::env::args_os()).await
    }

    /// Like [`run`](Self::run) with `args` (the program's name first) instead of the process's.
    pub async fn run_from<I, T>(self, args: I) -> ExitCode
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let cli = match parse(args) {
            Ok(cli) => cli,
            // Help and version go to standard output with success; usage errors to standard
            // error with clap's exit code.
            Err(error) => {
                let _ = error.print();
                return ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2));
            }
        };
        let verbose = cli.verbose;
        match self.execute(cli.command).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                // An error can quote what a server sent, so it is shown as carefully as model
                // text.
                if verbose {
                    eprintln!("error: {}", terminal::printable(&format!("{error:?}")));
                } else {
                    eprintln!("error: {}", terminal::printable(&error.one_line()));
                    eprintln!("(run with -v for details)");
                }
                ExitCode::FAILURE
            }
        }
    }

    /// Runs the command `args` name (the program's name first), returning what went wrong instead
    /// of printing it: for embedding the launcher or testing a program built on it.
    pub async fn try_run_from<I, T>(self, args: I) -> Result<(), LaunchError>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let cli = parse(args).map_err(|error| {
            LaunchError::new(LaunchErrorKind::Usage, error.render().to_string())
        })?;
        self.execute(cli.command).await
    }

    async fn execute(self, command: Command) -> Result<(), LaunchError> {
        match command {
            Command::Run(args) => terminal::run(&self.apps, &self.function_tools, args).await,
            Command::Web(args) => {
                let ui = !args.no_ui;
                serve::serve(&self.apps, &self.function_tools, &self.metrics, args, ui).await
            }
            Command::ApiServer(args) => {
                serve::serve(&self.apps, &self.function_tools, &self.metrics, args, false).await
            }
            Command::A2a(args) => a2a::serve(&self.apps, &self.function_tools, args).await,
            Command::Create(args) => create::create(&args),
            Command::Eval(args) => {
                eval::eval(&self.apps, &self.function_tools, &self.metrics, args).await
            }
            Command::EvalSet(args) => eval_set::eval_set(&self.apps, args).await,
            Command::Sessions(args) => match args.command {
                SessionsCommand::Resume(args) => {
                    sessions::resume(&self.apps, &self.function_tools, args).await
                }
            },
        }
    }
}

impl std::fmt::Debug for Launcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launcher")
            .field(
                "apps",
                &self.apps.iter().map(|app| &app.name).collect::<Vec<_>>(),
            )
            .field(
                "function_tools",
                &self
                    .function_tools
                    .iter()
                    .map(|tool| tool.name())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// The arguments as the command line's structure, with the program's name from `args`.
fn parse<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let name = args
        .first()
        .and_then(|program| std::path::Path::new(program).file_stem())
        .map_or_else(
            || "adk".to_owned(),
            |stem| stem.to_string_lossy().into_owned(),
        );
    let matches = Cli::command().bin_name(name).try_get_matches_from(args)?;
    Cli::from_arg_matches(&matches)
}
