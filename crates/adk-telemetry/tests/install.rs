//! `otel::install`: one call sets up export through the global subscriber, and a second call is
//! refused with an error that says what to do instead. (Its own test binary, as it sets the
//! process's global subscriber.)

mod support;

use adk_telemetry::otel::{ErrorKind, OtelConfig};
use support::{Received, start_receiver};

#[test]
fn install_exports_through_the_global_subscriber_and_only_once() {
    let (address, received) = start_receiver();
    let config = OtelConfig::new()
        .endpoint(format!("http://{address}/"))
        .metrics(false);
    let guard = adk_telemetry::otel::install(config.clone()).unwrap();

    let again = adk_telemetry::otel::install(config).unwrap_err();
    assert_eq!(again.kind(), ErrorKind::Subscriber);
    assert!(again.to_string().contains("otel::layer()"), "{again}");

    drop(adk_telemetry::merged_tools_span());
    guard.flush().unwrap();

    let mut names = Vec::new();
    while let Ok(request) = received.recv_timeout(support::PATIENCE) {
        match request {
            Received::Traces(request) => names.extend(
                request
                    .resource_spans
                    .into_iter()
                    .flat_map(|resource| resource.scope_spans)
                    .flat_map(|scope| scope.spans)
                    .map(|span| span.name),
            ),
            Received::Metrics(request) => {
                panic!("metrics were turned off: {request:?}")
            }
        }
        if !names.is_empty() {
            break;
        }
    }
    assert_eq!(names, ["execute_tool (merged)"]);
    drop(guard);
}
