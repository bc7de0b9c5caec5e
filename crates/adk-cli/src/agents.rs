//! The example agents the command line bundles, each built on the model the command line chooses.

use adk_launcher::Launcher;

/// `launcher` with every bundled example as an app, under its app name, and the examples' eval
/// metrics.
pub(crate) fn bundled(mut launcher: Launcher) -> Launcher {
    for (name, metric) in quickstart::eval::metrics() {
        launcher = launcher.eval_metric(name, metric);
    }
    launcher
        .app_on_model(quickstart::APP_NAME, quickstart::root_agent)
        .app_on_model(multi_agent::APP_NAME, multi_agent::root_agent)
        .app_on_model(pipeline::APP_NAME, pipeline::root_agent)
        .app_on_model(confirmation::APP_NAME, confirmation::root_agent)
        .app_on_model(oauth_mail::APP_NAME, oauth_mail::root_agent)
        .app_on_model(orchestrator::APP_NAME, orchestrator::root_agent)
        .app_on_model(workflow::APP_NAME, workflow::root_agent)
}
