//! `web` and `api_server`: the apps served over ADK's REST + SSE API, with the adk-web dev UI for
//! `web`, until Ctrl-C or SIGTERM.

use std::sync::Arc;

use adk_server::{Server, ServerConfig, dev_ui, shutdown_signal};
use adk_telemetry::span_store::SpanStore;
use adk_tool::Tool;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer as _};

use crate::apps::{self, App, AppSource};
use crate::args::ServeArgs;
use crate::error::{Context as _, LaunchError, LaunchErrorKind};
use crate::{gate, store};

/// Serves every app until a shutdown signal; with `ui`, the dev UI too.
pub(crate) async fn serve(
    apps: &[App],
    function_tools: &[Arc<dyn Tool>],
    metrics: &crate::eval::Metrics,
    mut args: ServeArgs,
    ui: bool,
) -> Result<(), LaunchError> {
    let pool_size = store::session_pool_size(
        args.services.db_pool_size,
        args.replicas.max_concurrent_runs,
    );
    args.services.db_pool_size = Some(pool_size);
    let eval_storage = eval_storage(&args)?;
    let mut apps = apps.to_vec();
    if let Some(dir) = &args.agents_dir {
        apps.push(App {
            name: dir.display().to_string(),
            source: AppSource::YamlDir(dir.clone()),
        });
    }
    if apps.is_empty() {
        return Err(LaunchError::new(
            LaunchErrorKind::Usage,
            "there is no agent to serve",
        ));
    }
    let access = gate::access(&args.gate, &args.host).await?;
    let spans = SpanStore::with_max_bytes(
        adk_server::DEFAULT_SPAN_CAPACITY,
        adk_server::DEFAULT_SPAN_BYTES,
    );
    install_tracing(&spans);
    if ui {
        // The dev UI's trace panel shows the model's requests and answers, as ADK's does.
        adk_telemetry::content::set_capture_message_content(true);
    }
    let dev_ui_dir = if ui {
        let dir = dev_ui::default_dir().ok_or_else(|| {
            LaunchError::new(
                LaunchErrorKind::Server,
                "no user cache directory for the dev UI: set HOME, XDG_CACHE_HOME or ADK_DEV_UI_DIR",
            )
        })?;
        Some(
            dev_ui::fetch(&dir)
                .await
                .context(LaunchErrorKind::Server, || {
                    "cannot get the dev UI".to_owned()
                })?,
        )
    } else {
        None
    };

    // Local MCP processes a folder's configs declare start only when the command line says so.
    let built = apps::build(&apps, &args.model, function_tools, args.allow_stdio_mcp).await?;
    let services = Arc::new(store::open(&args.services).await?);
    let runners = built
        .apps
        .iter()
        .map(|(name, agent)| {
            services.runner(
                name,
                agent.clone(),
                false,
                true,
                built.overflow_summarizer(),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let app_names: Vec<&str> = built.apps.iter().map(|(name, _)| name.as_str()).collect();

    let limits = &args.replicas;
    let mut config = ServerConfig::default()
        .allow_origins(args.allow_origins.iter().cloned())
        .allowed_hosts(access.hosts.iter().cloned())
        .authentication(access.authentication.clone())
        .admin_scope(args.gate.admin_scope.clone())
        .run_config(built.run_config())
        .max_concurrent_runs(limits.max_concurrent_runs)
        .drain_delay(limits.drain_delay)
        .shutdown_grace(limits.shutdown_grace);
    // Replicas sharing PostgreSQL serialise each session's runs with advisory locks there; a
    // single process with SQLite or memory needs only its own locks.
    config = match &services.postgres {
        Some(settings) => {
            let runs = u32::try_from(limits.max_concurrent_runs).unwrap_or(u32::MAX);
            let locks = settings
                .connect_locks(runs, limits.session_lock_wait)
                .await
                .map_err(|error| {
                    LaunchError::new(
                        LaunchErrorKind::Storage,
                        format!("cannot open the PostgreSQL session locks: {error}"),
                    )
                })?;
            config.session_locks(Arc::new(locks))
        }
        None => config.session_locks(Arc::new(adk_session::LocalSessionLocks::new(
            limits.session_lock_wait,
        ))),
    };
    if let Some(dir) = dev_ui_dir {
        config = config.dev_ui_dir(dir);
    }
    config = config.eval_storage(eval_storage);
    // Eval cases with a conversation scenario need a model to play the user: the one the command
    // made ready, looked up only when such a case runs.
    let mut builder = Server::builder().eval_user_simulator(built.ready_model());
    for (name, metric) in metrics {
        builder = builder.eval_metric(name.clone(), metric.clone());
    }
    // The Builder tab edits YAML apps in the dev UI only, as ADK Python's `adk web` does, and
    // creates new ones in the agents folder.
    if ui
        && let Some(yaml_apps) =
            crate::builder::yaml_apps(&built, args.agents_dir.as_deref(), services.clone())
    {
        builder = builder.yaml_apps(yaml_apps);
    }
    let server = builder
        .apps(runners)
        .span_store(spans)
        .config(config)
        .a2a(args.a2a)
        .build()
        .context(LaunchErrorKind::Server, || {
            "cannot set up the server".to_owned()
        })?;
    let address = format!("{}:{}", args.host, args.port);
    let listener = tokio::net::TcpListener::bind(&address)
        .await
        .context(LaunchErrorKind::Server, || {
            format!("cannot listen on {address}")
        })?;
    let local = listener.local_addr().context(LaunchErrorKind::Server, || {
        format!("cannot listen on {address}")
    })?;
    gate::check_exposure(&access, &args.gate, local)?;
    let shown = if ui {
        format!("http://{local}/dev-ui/")
    } else {
        format!("http://{local}")
    };
    let a2a = if args.a2a { ", A2A at /a2a/{app}" } else { "" };
    let who = if access.authentication.is_empty() {
        "no authentication"
    } else {
        "callers authenticated"
    };
    // Listening for the signals before the banner: a signal sent as soon as it is seen stops the
    // server gracefully.
    let stop = shutdown_signal();
    eprintln!(
        "adk: serving {} on {}, {}, {who}, at {shown}{a2a} (Ctrl-C stops)",
        app_names.join(", "),
        built.model_name(),
        services.description
    );
    server
        .serve(listener, stop)
        .await
        .context(LaunchErrorKind::Server, || "the server stopped".to_owned())?;
    eprintln!("adk: stopped");
    Ok(())
}

/// Logs to stderr (`RUST_LOG`, default `info` for adk crates and `warn` otherwise) and records
/// spans in `spans` for the dev UI's trace panel.
fn install_tracing(spans: &SpanStore) {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("warn,adk_server=info,adk_launcher=info"));
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

/// The folder of eval sets and results: `--eval-storage-uri` (a path or a `file://` URL), else
/// the agents folder (as ADK Python), else the server's default.
fn eval_storage(args: &ServeArgs) -> Result<std::path::PathBuf, LaunchError> {
    match &args.eval_storage_uri {
        Some(uri) => crate::eval_set::storage_folder(uri),
        None => Ok(args
            .agents_dir
            .clone()
            .unwrap_or_else(|| adk_server::DEFAULT_EVAL_STORAGE.into())),
    }
}
