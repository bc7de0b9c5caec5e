//! `adk web` and `adk api_server`: the bundled agents served over ADK's REST + SSE API, with the
//! adk-web dev UI for `web`, until Ctrl-C or SIGTERM.

use std::sync::Arc;

use adk_core::{ArtifactService, MemoryService};
use adk_runner::Runner;
use adk_server::{Server, ServerConfig, dev_ui, shutdown_signal};
use adk_session::{FileArtifactService, InMemoryArtifactService, InMemoryMemoryService};
use adk_telemetry::span_store::SpanStore;
use anyhow::Context as _;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer as _};

use crate::args::ServeArgs;
use crate::{agents, model, store};

/// Serves every bundled agent as an app until a shutdown signal; with `ui`, the dev UI too.
pub(crate) async fn serve(args: ServeArgs, ui: bool) -> anyhow::Result<()> {
    let spans = SpanStore::new(adk_server::DEFAULT_SPAN_CAPACITY);
    install_tracing(&spans);
    if ui {
        // The dev UI's trace panel shows the model's requests and answers, as ADK's does.
        adk_telemetry::content::set_capture_message_content(true);
    }
    let dev_ui_dir = if ui {
        let dir = dev_ui::default_dir().context(
            "no user cache directory for the dev UI: set HOME, XDG_CACHE_HOME or ADK_DEV_UI_DIR",
        )?;
        Some(dev_ui::fetch(&dir).await?)
    } else {
        None
    };

    let model = model::choose(&args.model).await?;
    let (sessions, location) = store::open(&args.store).await?;
    let artifacts: Arc<dyn ArtifactService> = if args.store.in_memory {
        Arc::new(InMemoryArtifactService::new())
    } else {
        Arc::new(FileArtifactService::new(artifact_dir(&args)))
    };
    let memory: Arc<dyn MemoryService> = Arc::new(InMemoryMemoryService::new());
    let mut runners = Vec::new();
    for (name, bundled) in agents::all() {
        let agent = (bundled.build)(model.llm.clone())
            .with_context(|| format!("cannot build the agent {name}"))?;
        runners.push(
            Runner::builder(bundled.app_name, agent)
                .session_service(sessions.clone())
                .artifact_service(artifacts.clone())
                .memory_service(memory.clone())
                .build()?,
        );
    }
    let app_names: Vec<String> = runners.iter().map(|r| r.app_name().to_owned()).collect();

    let mut config = ServerConfig::default().allow_origins(args.allow_origins.iter().cloned());
    if let Some(dir) = dev_ui_dir {
        config = config.dev_ui_dir(dir);
    }
    let server = Server::builder()
        .apps(runners)
        .span_store(spans)
        .config(config)
        .build()?;
    let address = format!("{}:{}", args.host, args.port);
    let listener = tokio::net::TcpListener::bind(&address)
        .await
        .with_context(|| format!("cannot listen on {address}"))?;
    let local = listener.local_addr()?;
    let shown = if ui {
        format!("http://{local}/dev-ui/")
    } else {
        format!("http://{local}")
    };
    eprintln!(
        "adk: serving {} on {}, {location}, at {shown} (Ctrl-C stops)",
        app_names.join(", "),
        model.llm.name()
    );
    server.serve(listener, shutdown_signal()).await?;
    eprintln!("adk: stopped");
    Ok(())
}

/// Artifacts go beside the SQLite session file (`.adk/artifacts` by default).
fn artifact_dir(args: &ServeArgs) -> std::path::PathBuf {
    args.store
        .db
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .map_or_else(|| ".adk".into(), std::path::Path::to_path_buf)
        .join("artifacts")
}

/// Logs to stderr (`RUST_LOG`, default `info` for adk crates and `warn` otherwise) and records
/// spans in `spans` for the dev UI's trace panel.
fn install_tracing(spans: &SpanStore) {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("warn,adk_server=info,adk_cli=info"));
    let _ = tracing_subscriber::registry()
        .with(spans.layer())
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                .with_filter(filter),
        )
        .try_init();
}
