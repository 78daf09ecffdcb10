//! The create-or-get protocol against a scripted API server (no cluster).

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Request, Response, StatusCode};
use serde_json::json;

use super::*;

const UID: &str = "5f0c8a4e-1b7d-4c3e-9a51-7e2f0d6b9c11";

fn spec(node: &str) -> ForceDeletionSpec {
    serde_json::from_value(json!({
        "subject": "Pod db/web-0",
        "object": {"version": "v1", "kind": "Pod", "resource": "pods", "namespace": "db", "name": "web-0", "uid": UID},
        "action": {"type": "ForceDelete", "objectDeleting": true},
        "node": node,
        "requester": {"username": "alice@example.com"},
        "requestedAt": "2026-03-02T10:00:00Z"
    }))
    .expect("spec")
}

fn status(code: u16, reason: &str) -> (u16, serde_json::Value) {
    (
        code,
        json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": reason,
               "message": format!("forcedeletions.forcegate.dev \"fd-{UID}\" {reason}")}),
    )
}

fn existing() -> (u16, serde_json::Value) {
    let mut record = ForceDeletion::new(&format!("fd-{UID}"), spec("worker-1"));
    record.metadata.resource_version = Some("812".into());
    record.status = Some(crate::cleanup::ForceDeletionStatus {
        phase: crate::cleanup::Phase::Verifying,
        ..Default::default()
    });
    (200, serde_json::to_value(record).expect("json"))
}

/// `METHOD path` and request body, in order.
type RequestLog = Arc<Mutex<Vec<(String, String)>>>;

/// Answers requests in order from `script`; logs `METHOD path` and bodies.
fn scripted(script: Vec<(u16, serde_json::Value)>) -> (Client, RequestLog) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let script = Arc::new(Mutex::new(script.into_iter()));
    let seen = log.clone();
    let service = tower::service_fn(move |request: Request<kube::client::Body>| {
        let seen = seen.clone();
        let script = script.clone();
        async move {
            let line = format!("{} {}", request.method(), request.uri().path());
            let body = http_body_util::BodyExt::collect(request.into_body())
                .await
                .map(|b| String::from_utf8_lossy(&b.to_bytes()).into_owned())
                .unwrap_or_default();
            seen.lock().expect("log").push((line, body));
            let (code, reply) = script
                .lock()
                .expect("script")
                .next()
                .unwrap_or_else(|| status(500, "InternalError"));
            let response = Response::builder()
                .status(StatusCode::from_u16(code).expect("code"))
                .header("content-type", "application/json")
                .body(Full::new(Bytes::from(reply.to_string())))
                .expect("response");
            Ok::<_, Infallible>(response)
        }
    });
    (Client::new(service, "default"), log)
}

fn methods(log: &Mutex<Vec<(String, String)>>) -> Vec<String> {
    log.lock()
        .expect("log")
        .iter()
        .map(|(l, _)| l.clone())
        .collect()
}

const COLLECTION: &str = "/apis/forcegate.dev/v1alpha1/forcedeletions";

#[tokio::test]
async fn creates_a_new_record() {
    let (client, log) = scripted(vec![(201, existing().1)]);
    let recorder = KubeRecorder::new(client);
    let (name, created) = recorder
        .create_or_get(spec("worker-1"))
        .await
        .expect("record");
    assert_eq!(name, format!("fd-{UID}"));
    assert!(created);
    assert_eq!(methods(&log), [format!("POST {COLLECTION}")]);
    let body: serde_json::Value =
        serde_json::from_str(&log.lock().expect("log")[0].1).expect("body");
    assert_eq!(body["metadata"]["name"], format!("fd-{UID}"));
    assert_eq!(body["metadata"]["labels"]["forcegate.dev/namespace"], "db");
    assert_eq!(body["spec"]["object"]["uid"], UID);
    assert!(body.get("status").is_none_or(serde_json::Value::is_null));
}

#[tokio::test]
async fn already_exists_gets_the_same_name_and_writes_nothing_else() {
    let (client, log) = scripted(vec![status(409, "AlreadyExists"), existing()]);
    let recorder = KubeRecorder::new(client);
    // A second admission call with slightly different facts.
    let (name, created) = recorder
        .create_or_get(spec("worker-2"))
        .await
        .expect("record");
    assert_eq!(name, format!("fd-{UID}"));
    assert!(!created);
    assert_eq!(
        methods(&log),
        [
            format!("POST {COLLECTION}"),
            format!("GET {COLLECTION}/fd-{UID}")
        ],
        "no PUT/PATCH: the first record and its status are kept"
    );
}

#[tokio::test]
async fn record_deleted_between_create_and_get_is_created_again() {
    let (client, log) = scripted(vec![
        status(409, "AlreadyExists"),
        status(404, "NotFound"),
        (201, existing().1),
    ]);
    let (name, created) = KubeRecorder::new(client)
        .create_or_get(spec("worker-1"))
        .await
        .expect("record");
    assert_eq!(name, format!("fd-{UID}"));
    assert!(created);
    assert_eq!(methods(&log).len(), 3);
}

#[tokio::test]
async fn api_errors_surface_as_record_errors() {
    let (client, _log) = scripted(vec![status(403, "Forbidden")]);
    let recorder = KubeRecorder::new(client);
    let recorder: &dyn Recorder = &recorder;
    match recorder.record(spec("worker-1")).await {
        Err(RecordError::Api(kube::Error::Api(status))) => assert!(status.is_forbidden()),
        other => panic!("expected a Forbidden API error, got {other:?}"),
    }
}
