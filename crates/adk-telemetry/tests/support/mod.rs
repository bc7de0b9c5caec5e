//! An OTLP/HTTP receiver on loopback for the export tests: it decodes the protobuf requests that
//! arrive and hands them to the test.

use std::net::SocketAddr;
use std::sync::mpsc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::routing::post;
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use prost::Message as _;

/// How long a test waits for an export before it calls it a hang: generous, as a loaded machine
/// may take seconds; the tests stop waiting as soon as what they expect arrived.
pub(crate) const PATIENCE: std::time::Duration = std::time::Duration::from_secs(120);

/// What the receiver decoded from one request.
pub(crate) enum Received {
    Traces(ExportTraceServiceRequest),
    Metrics(ExportMetricsServiceRequest),
}

/// Starts an OTLP/HTTP receiver on a loopback port, on a thread of its own so that the exporter's
/// blocking flush can wait for it.
pub(crate) fn start_receiver() -> (SocketAddr, mpsc::Receiver<Received>) {
    let (received_tx, received) = mpsc::channel();
    let (address_tx, address) = mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            address_tx.send(listener.local_addr().unwrap()).unwrap();
            let app = Router::new()
                .route("/v1/traces", post(receive_traces))
                .route("/v1/metrics", post(receive_metrics))
                .with_state(received_tx);
            axum::serve(listener, app).await.unwrap();
        });
    });
    (address.recv().unwrap(), received)
}

async fn receive_traces(State(received): State<mpsc::Sender<Received>>, body: Bytes) -> Vec<u8> {
    let request = ExportTraceServiceRequest::decode(body).expect("a protobuf trace export");
    let _ = received.send(Received::Traces(request));
    ExportTraceServiceResponse::default().encode_to_vec()
}

async fn receive_metrics(State(received): State<mpsc::Sender<Received>>, body: Bytes) -> Vec<u8> {
    let request = ExportMetricsServiceRequest::decode(body).expect("a protobuf metrics export");
    let _ = received.send(Received::Metrics(request));
    ExportMetricsServiceResponse::default().encode_to_vec()
}
