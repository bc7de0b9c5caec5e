//! `a2a`: one app served over the Agent2Agent protocol on its own, until Ctrl-C or SIGTERM.

use std::sync::Arc;

use adk_a2a::A2aServer;
use adk_server::shutdown_signal;
use adk_tool::Tool;

use crate::apps::{self, App};
use crate::args::A2aArgs;
use crate::error::{Context as _, LaunchError, LaunchErrorKind};
use crate::{gate, store};

/// Serves the app `args` name (or the only one) over A2A.
pub(crate) async fn serve(
    apps: &[App],
    function_tools: &[Arc<dyn Tool>],
    args: A2aArgs,
) -> Result<(), LaunchError> {
    let app = apps::choose(apps, args.agent.as_deref())?;
    let access = gate::access(&args.gate, &args.host).await?;
    let built = apps::build(
        std::slice::from_ref(&app),
        &args.model,
        function_tools,
        args.allow_stdio_mcp,
    )
    .await?;
    let services = store::open(&args.services).await?;
    let (app_name, agent) = built.apps[0].clone();
    let runner = services.runner(&app_name, agent, true, true, built.overflow_summarizer())?;
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
    let url = args.url.unwrap_or_else(|| format!("http://{local}/"));
    let server = A2aServer::builder(runner)
        .url(url.as_str())
        .gate(gate::a2a_gate(&access, &args.gate, &args.allow_origins)?)
        .build()
        .context(LaunchErrorKind::Server, || {
            "cannot set up the A2A server".to_owned()
        })?;
    // Listening for the signals before the banner: a signal sent as soon as it is seen stops the
    // server gracefully.
    let stop = shutdown_signal();
    eprintln!(
        "adk: serving {app_name} over A2A on {}, {}, at {url} (card at {}/.well-known/agent-card.json; \
         Ctrl-C stops)",
        built.model_name(),
        services.description,
        url.trim_end_matches('/'),
    );
    adk_a2a::serve_listener(server, listener, stop)
        .await
        .context(LaunchErrorKind::Server, || {
            "the A2A server stopped".to_owned()
        })?;
    eprintln!("adk: stopped");
    Ok(())
}
