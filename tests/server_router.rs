//! The admission routes without TLS or sockets (`server::router` called
//! through `tower::ServiceExt::oneshot`), on the branches a healthy request
//! never takes: a request past its deadline, a panic while deciding, and a
//! cleanup record that cannot be written.
//!
//! The engine is real (shipped policies, the example snapshot, which holds
//! the pods the reviews name); so is the recorder where one can be: the CRD
//! recorder against an API server that fails or never answers.

mod server_support;

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use forcegate::cleanup::{ForceDeletionSpec, KubeRecorder, RecordError, Recorder};
use forcegate::engine::{Engine, Settings};
use forcegate::server::{AppState, Config, Health, Metrics, router};
use futures::future::BoxFuture;
use http_body_util::Full;
use hyper::body::Bytes;
use prometheus_client::registry::Registry;
use serde_json::Value;
use tower::ServiceExt;

use server_support::{example_cluster, example_review};

/// Allowed and recorded: the pod's node is fenced.
const RECORDED: &str = "force-delete-fenced";
/// Denied: nothing to record.
const DENIED: &str = "force-delete-leader";
/// What the engine says when the record could not be written.
const NOT_RECORDED: &str = "forcegate could not record the cleanup for this force deletion";

/// The routes over the shipped policies and the example snapshot, with
/// `recorder` and `settings`, and requests cut off after `deadline`.
fn routes(recorder: Arc<dyn Recorder>, settings: Settings, deadline: Duration) -> Router {
    let (cluster, policies) = example_cluster();
    let policies = Arc::new(ArcSwap::from_pointee(policies));
    let engine = Arc::new(Engine::new(policies, cluster, recorder, settings));
    let mut config = Config::new("127.0.0.1:0".parse().expect("address"), "unused");
    config.request_timeout = deadline;
    let mut registry = Registry::default();
    let metrics = Metrics::register(&mut registry);
    let state = AppState::new(engine, &config, metrics, registry, Health::default());
    router(Arc::new(state))
}

fn post(body: Body) -> Request<Body> {
    Request::post("/validate")
        .header(header::CONTENT_TYPE, "application/json")
        .body(body)
        .expect("request")
}

/// Status and body; a route that does not answer within 10 s fails the test.
async fn call(routes: &Router, request: Request<Body>) -> (StatusCode, Vec<u8>) {
    let answered = tokio::time::timeout(Duration::from_secs(10), routes.clone().oneshot(request));
    let response = answered
        .await
        .expect("answered in time")
        .expect("infallible");
    let status = response.status();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("body");
    (status, body.to_vec())
}

async fn call_json(routes: &Router, request: Request<Body>) -> (StatusCode, Value) {
    let (status, body) = call(routes, request).await;
    let json = serde_json::from_slice(&body).unwrap_or_else(|err| {
        panic!("{err}: {}", String::from_utf8_lossy(&body));
    });
    (status, json)
}

async fn metrics_text(routes: &Router) -> String {
    let request = Request::get("/metrics")
        .body(Body::empty())
        .expect("request");
    let (status, body) = call(routes, request).await;
    assert_eq!(status, StatusCode::OK);
    String::from_utf8(body).expect("UTF-8")
}

/// A kube client whose API server answers every request with `answer`.
fn api_server<F>(answer: impl Fn() -> F + Send + Sync + Clone + 'static) -> kube::Client
where
    F: Future<Output = hyper::Response<Full<Bytes>>> + Send + 'static,
{
    let service = tower::service_fn(move |_: hyper::Request<kube::client::Body>| {
        let answer = answer.clone();
        async move { Ok::<_, Infallible>(answer().await) }
    });
    kube::Client::new(service, "default")
}

/// An API server that fails every request (500 InternalError).
fn failing_api() -> kube::Client {
    api_server(|| async {
        let status = serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure",
            "code": 500, "reason": "InternalError", "message": "etcdserver: request timed out",
        });
        hyper::Response::builder()
            .status(500)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(status.to_string())))
            .expect("response")
    })
}

/// An API server that takes every request and never answers.
fn silent_api() -> kube::Client {
    api_server(std::future::pending)
}

fn settings(deny_without_record: bool) -> Settings {
    Settings {
        record_timeout: Duration::from_millis(200),
        deny_without_record,
        ..Settings::default()
    }
}

/// A recorder with a bug: deciding panics the first time a record is due.
struct PanickingRecorder;

impl Recorder for PanickingRecorder {
    fn record(&self, _: ForceDeletionSpec) -> BoxFuture<'_, Result<String, RecordError>> {
        Box::pin(async { panic!("a bug while recording") })
    }
}

#[tokio::test]
async fn a_request_past_its_deadline_is_a_503_with_its_reason() {
    server_support::init();
    let review = example_review(RECORDED);
    // A client that sends half of its body and then stalls ...
    let half = Bytes::copy_from_slice(&review[..review.len() / 2]);
    let chunks = futures::stream::iter([Ok::<_, Infallible>(half)]);
    let stalled = Body::from_stream(futures::StreamExt::chain(
        chunks,
        futures::stream::pending(),
    ));
    // ... and a record the API server never confirms, with a record timeout
    // longer than the request's deadline.
    let slow_record = Settings {
        record_timeout: Duration::from_secs(60),
        ..Settings::default()
    };
    let deadline = Duration::from_millis(300);
    let recorder = Arc::new(KubeRecorder::new(silent_api()));
    let routes = routes(recorder, slow_record, deadline);
    for (what, body) in [
        ("stalled body", stalled),
        ("unconfirmed record", Body::from(review)),
    ] {
        let started = std::time::Instant::now();
        let (status, json) = call_json(&routes, post(body)).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{what}: {json}");
        assert_eq!(json["reason"], "timeout", "{what}: {json}");
        assert_eq!(json["error"], "no decision within 300ms", "{what}: {json}");
        assert!(started.elapsed() < Duration::from_secs(5), "{what}");
    }
    let metrics = metrics_text(&routes).await;
    assert!(
        metrics.contains(r#"forcegate_admission_errors_total{reason="timeout"} 2"#),
        "{metrics}"
    );
}

#[tokio::test]
async fn a_panic_while_deciding_is_a_500_and_the_routes_keep_answering() {
    server_support::init();
    let routes = routes(
        Arc::new(PanickingRecorder),
        Settings::default(),
        Duration::from_secs(10),
    );
    for _ in 0..2 {
        let body = Body::from(example_review(RECORDED));
        let (status, json) = call_json(&routes, post(body)).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{json}");
        assert_eq!(json["reason"], "internal", "{json}");
        assert_eq!(json["error"], "internal error while deciding", "{json}");
    }
    // A request that records nothing is decided as ever.
    let (status, json) = call_json(&routes, post(Body::from(example_review(DENIED)))).await;
    assert_eq!(status, StatusCode::OK, "{json}");
    assert_eq!(json["response"]["allowed"], false, "{json}");
    let metrics = metrics_text(&routes).await;
    for line in [
        r#"forcegate_admission_errors_total{reason="internal"} 2"#,
        "forcegate_admission_requests_in_flight 0",
    ] {
        assert!(metrics.contains(line), "{line} in\n{metrics}");
    }
}

/// The answer to the recorded review when the record cannot be written
/// (the API server `api`), as the AdmissionReview response.
async fn answer_without_record(api: kube::Client, deny_without_record: bool) -> Value {
    let recorder = Arc::new(KubeRecorder::new(api));
    let routes = routes(
        recorder,
        settings(deny_without_record),
        Duration::from_secs(10),
    );
    let (status, json) = call_json(&routes, post(Body::from(example_review(RECORDED)))).await;
    assert_eq!(status, StatusCode::OK, "{json}");
    json["response"].clone()
}

fn warnings(response: &Value) -> Vec<&str> {
    response["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// With `deny_without_record` the recorded review is denied, saying the
/// record could not be written and why (`detail`); without it, allowed
/// with that warning.
async fn record_failure_is_explained(api: fn() -> kube::Client, detail: &str) {
    server_support::init();
    let denied = answer_without_record(api(), true).await;
    assert_eq!(denied["allowed"], false, "{denied}");
    let message = denied["status"]["message"].as_str().unwrap_or_default();
    for part in [NOT_RECORDED, detail, "the record is required"] {
        assert!(message.contains(part), "{part:?} in {message}");
    }

    let allowed = answer_without_record(api(), false).await;
    assert_eq!(allowed["allowed"], true, "{allowed}");
    // A warning is cut at 256 characters: the detail must come early.
    let warned = warnings(&allowed);
    assert!(
        warned
            .iter()
            .any(|w| w.contains(NOT_RECORDED) && w.contains(detail)),
        "{detail:?} in {warned:?}"
    );
}

#[tokio::test]
async fn a_record_the_api_refuses_denies_when_required_and_warns_otherwise() {
    record_failure_is_explained(failing_api, "etcdserver: request timed out").await;
}

#[tokio::test]
async fn a_record_the_api_never_confirms_denies_when_required_and_warns_otherwise() {
    record_failure_is_explained(silent_api, "timed out after 200ms").await;
}
