//! Bad input gets a 4xx with a JSON error body and a metric, never a 500,
//! never a hung connection; the same connection keeps working afterwards.

mod server_support;

use std::convert::Infallible;

use axum::body::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::StatusCode;
use hyper::body::Frame;
use server_support::*;

fn edited(name: &str, edit: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let mut value: serde_json::Value = serde_json::from_slice(&fixture(name)).expect("JSON");
    edit(&mut value);
    serde_json::to_vec(&value).expect("JSON")
}

#[tokio::test]
async fn each_bad_input_is_a_4xx_with_reason_and_metric() {
    let harness = Harness::start(static_engine(true), |config| {
        config.body_limit = 64 * 1024;
    })
    .await;
    let cases: Vec<(&str, &str, Vec<u8>, StatusCode, &str)> = vec![
        (
            "non-JSON",
            "application/json",
            b"{\"apiVersion\": ".to_vec(),
            StatusCode::BAD_REQUEST,
            "not_json",
        ),
        (
            "JSON array",
            "application/json",
            b"[]".to_vec(),
            StatusCode::BAD_REQUEST,
            "not_an_object",
        ),
        (
            "v1beta1",
            "application/json",
            edited("force-delete-leader", |v| {
                v["apiVersion"] = "admission.k8s.io/v1beta1".into()
            }),
            StatusCode::BAD_REQUEST,
            "wrong_api_version",
        ),
        (
            "wrong kind",
            "application/json",
            edited("force-delete-leader", |v| v["kind"] = "Pod".into()),
            StatusCode::BAD_REQUEST,
            "wrong_kind",
        ),
        (
            "no request",
            "application/json",
            edited("force-delete-leader", |v| {
                v.as_object_mut().expect("object").remove("request");
            }),
            StatusCode::BAD_REQUEST,
            "no_request",
        ),
        (
            "no uid",
            "application/json",
            edited("force-delete-leader", |v| {
                v["request"].as_object_mut().expect("object").remove("uid");
            }),
            StatusCode::BAD_REQUEST,
            "no_uid",
        ),
        (
            "empty uid",
            "application/json",
            edited("force-delete-leader", |v| v["request"]["uid"] = "".into()),
            StatusCode::BAD_REQUEST,
            "no_uid",
        ),
        (
            "malformed request",
            "application/json",
            edited("force-delete-leader", |v| {
                v["request"]["operation"] = 7.into()
            }),
            StatusCode::BAD_REQUEST,
            "malformed_request",
        ),
        (
            "text/plain",
            "text/plain",
            fixture("kubelet-final-delete"),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "wrong_content_type",
        ),
        (
            "YAML",
            "application/yaml",
            fixture("kubelet-final-delete"),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "wrong_content_type",
        ),
        (
            "oversize",
            "application/json",
            vec![b' '; 64 * 1024 + 1],
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
        ),
    ];
    for h2 in [false, true] {
        // One client per protocol: its pooled connection must survive every case.
        let client = harness.client(h2);
        for (what, content_type, body, status, reason) in &cases {
            let reply = post(
                &client,
                &harness.url("/validate"),
                content_type,
                full(body.clone()),
            )
            .await;
            assert_eq!(reply.status, *status, "{what} (h2={h2})");
            assert_eq!(reply.content_type, "application/json", "{what}");
            let error = reply.json();
            assert_eq!(error["reason"], *reason, "{what}: {error}");
            assert!(
                error["error"].as_str().is_some_and(|e| !e.is_empty()),
                "{what}"
            );
        }
        let ok = post_json(
            &client,
            &harness.url("/validate"),
            fixture("kubelet-final-delete"),
        )
        .await;
        assert_eq!(
            ok.status,
            StatusCode::OK,
            "connection still serves (h2={h2})"
        );
    }
    let (_, _, metrics) = plain_get(&harness.metrics_url("/metrics")).await;
    for (reason, count) in [
        ("not_json", 2.0),
        ("wrong_api_version", 2.0),
        ("wrong_kind", 2.0),
        ("no_request", 2.0),
        ("no_uid", 4.0),
        ("wrong_content_type", 4.0),
        ("too_large", 2.0),
    ] {
        let series = format!("forcegate_bad_requests_total{{reason=\"{reason}\"}}");
        assert_eq!(
            metric(&metrics, &series),
            Some(count),
            "{series}\n{metrics}"
        );
    }
    harness.server.shutdown().await;
}

/// A chunked body (no Content-Length) is cut off once it passes the limit.
#[tokio::test]
async fn chunked_oversize_body_is_413() {
    let harness = Harness::start(static_engine(true), |config| {
        config.body_limit = 1024 * 1024;
    })
    .await;
    for h2 in [false, true] {
        let client = harness.client(h2);
        let chunks =
            (0..64).map(|_| Ok::<_, Infallible>(Frame::data(Bytes::from(vec![b' '; 32 * 1024]))));
        let body = StreamBody::new(futures::stream::iter(chunks)).boxed_unsync();
        let request = hyper::Request::post(harness.url("/validate"))
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .body(body)
            .expect("request");
        match send(&client, request).await {
            Ok(reply) => {
                assert_eq!(reply.status, StatusCode::PAYLOAD_TOO_LARGE, "h2={h2}");
                assert_eq!(reply.json()["reason"], "too_large");
            }
            // HTTP/1.1 may see the server close while it is still uploading.
            Err(err) => assert!(!h2, "h2 must get the 413: {err}"),
        }
    }
    harness.server.shutdown().await;
}

#[tokio::test]
async fn wrong_method_is_405_not_500() {
    let harness = Harness::start(static_engine(true), |_| {}).await;
    let reply = get(&harness.client(false), &harness.url("/validate")).await;
    assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED);
    harness.server.shutdown().await;
}

/// A client that never finishes its TLS handshake is cut off.
#[tokio::test]
async fn stalled_handshake_is_dropped() {
    use tokio::io::AsyncReadExt;
    let harness = Harness::start(static_engine(true), |config| {
        config.handshake_timeout = std::time::Duration::from_millis(200);
    })
    .await;
    let mut stream = tokio::net::TcpStream::connect(harness.server.local_addr())
        .await
        .expect("connect");
    let mut buf = [0u8; 16];
    let read = tokio::time::timeout(std::time::Duration::from_secs(5), stream.read(&mut buf))
        .await
        .expect("server closes within the handshake timeout");
    assert_eq!(read.expect("clean close"), 0);
    let (_, _, metrics) = plain_get(&harness.metrics_url("/metrics")).await;
    assert_eq!(
        metric(
            &metrics,
            "forcegate_tls_handshake_failures_total{reason=\"timeout\"}"
        ),
        Some(1.0)
    );
    harness.server.shutdown().await;
}
