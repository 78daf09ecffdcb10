//! The real server over TLS: admission answers over HTTP/1.1 and h2,
//! health, readiness and metrics.

mod server_support;

use std::sync::Arc;

use forcegate::engine::Endpoint;
use hyper::{StatusCode, Version};
use server_support::*;

#[tokio::test]
async fn kubelet_final_delete_is_allowed_over_http1_and_h2() {
    let harness = Harness::start(static_engine(true), |_| {}).await;
    let body = fixture("kubelet-final-delete");
    for (h2, version) in [(false, Version::HTTP_11), (true, Version::HTTP_2)] {
        let client = harness.client(h2);
        for endpoint in ["/validate", "/mutate"] {
            let reply = post_json(&client, &harness.url(endpoint), body.clone()).await;
            assert_eq!(reply.status, StatusCode::OK, "{endpoint}");
            assert_eq!(reply.version, version);
            assert_eq!(reply.content_type, "application/json");
            let review = reply.json();
            assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
            assert_eq!(review["kind"], "AdmissionReview");
            assert_eq!(
                review["response"]["uid"],
                "b314d5fc-17e8-45cb-d9a4-068bc2f574ba"
            );
            assert_eq!(review["response"]["allowed"], true);
        }
    }
    let (_, _, metrics) = plain_get(&harness.metrics_url("/metrics")).await;
    assert_eq!(
        metric(
            &metrics,
            "forcegate_admission_requests_total{endpoint=\"validate\",intent=\"SystemFinalization\",decision=\"allowed\"}"
        ),
        Some(2.0),
        "{metrics}"
    );
    harness.server.shutdown().await;
}

#[tokio::test]
async fn not_gated_requests_are_allowed_with_their_uid() {
    let harness = Harness::start(static_engine(true), |_| {}).await;
    let client = harness.client(false);
    for name in [
        "delete-graceful",
        "delete-unscheduled",
        "delete-succeeded",
        "eviction-graceful",
        "create-pod",
        "podgc-delete",
        "job-tracking-removed-by-job-controller",
        "namespace-finalize-by-controller",
    ] {
        let body = fixture(name);
        let uid =
            serde_json::from_slice::<serde_json::Value>(&body).expect("JSON")["request"]["uid"]
                .clone();
        let reply = post_json(&client, &harness.url("/validate"), body).await;
        assert_eq!(reply.status, StatusCode::OK, "{name}");
        let review = reply.json();
        assert_eq!(review["response"]["uid"], uid, "{name}");
        assert_eq!(review["response"]["allowed"], true, "{name}");
    }
    harness.server.shutdown().await;
}

#[tokio::test]
async fn server_bytes_equal_the_engine_bytes() {
    let engine = static_engine(true);
    let harness = Harness::start(engine.clone(), |_| {}).await;
    let client = harness.client(false);
    for name in [
        "kubelet-final-delete",
        "delete-graceful",
        "namespace-finalize-noop",
    ] {
        let body = fixture(name);
        let reply = post_json(&client, &harness.url("/validate"), body.clone()).await;
        let direct = engine
            .admit(&body, Endpoint::Validate)
            .await
            .expect("admits");
        assert_eq!(reply.body, direct.body, "{name}");
    }
    harness.server.shutdown().await;
}

#[tokio::test]
async fn health_readiness_and_metrics() {
    let harness = Harness::start(static_engine(true), |_| {}).await;
    let client = harness.client(false);
    let healthz = get(&client, &harness.url("/healthz")).await;
    assert_eq!(healthz.status, StatusCode::OK);
    let readyz = get(&client, &harness.url("/readyz")).await;
    assert_eq!(readyz.status, StatusCode::OK);
    assert_eq!(readyz.json()["ready"], true);

    harness.server.health().set_policies_loaded(false);
    let (status, _, body) = plain_get(&harness.metrics_url("/readyz")).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(body.contains("policies not loaded"), "{body}");
    harness.server.health().set_policies_loaded(true);

    let (status, content_type, text) = plain_get(&harness.metrics_url("/metrics")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(content_type.starts_with("application/openmetrics-text"));
    assert!(text.contains("forcegate_build_info{"), "{text}");
    let expiry = metric(&text, "forcegate_tls_certificate_expiry_timestamp_seconds")
        .expect("expiry exposed");
    assert!((expiry - harness.server.certificate().not_after as f64).abs() < 1.0);
    // Also served on the HTTPS port.
    let tls_metrics = get(&client, &harness.url("/metrics")).await;
    assert_eq!(tls_metrics.status, StatusCode::OK);

    let missing = get(&client, &harness.url("/nope")).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(missing.json()["reason"], "not_found");
    harness.server.shutdown().await;
}

#[tokio::test]
async fn readiness_names_the_kind_not_synced() {
    let harness = Harness::start(static_engine(false), |_| {}).await;
    let (status, _, body) = plain_get(&harness.metrics_url("/readyz")).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    let readiness: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(readiness["ready"], false);
    assert_eq!(
        readiness["reasons"],
        serde_json::json!(["Pod not synced (watch not synced)"])
    );
    // Liveness does not depend on the cluster.
    let (status, _, _) = plain_get(&harness.metrics_url("/healthz")).await;
    assert_eq!(status, StatusCode::OK);
    harness.server.shutdown().await;
}

/// A gated request decided by the shipped policies against the example
/// snapshot: the server answers exactly what the engine (and so
/// `forcegate review`) answers, and a denial carries 403.
#[tokio::test]
async fn gated_force_delete_is_decided_by_the_policies() {
    let (cluster, policies) = example_cluster();
    let engine = engine_with(cluster, policies);
    let harness = Harness::start(engine.clone(), |_| {}).await;
    let body = example_review("force-delete-leader");
    for h2 in [false, true] {
        let reply = post_json(&harness.client(h2), &harness.url("/validate"), body.clone()).await;
        assert_eq!(reply.status, StatusCode::OK);
        let review = reply.json();
        let response = &review["response"];
        assert_eq!(response["uid"], "6a1e0c2d-8b3f-4e7a-9c1d-2f4b6a8c0e11");
        assert_eq!(response["allowed"], false, "{review}");
        assert_eq!(response["status"]["code"], 403);
        assert_eq!(response["status"]["reason"], "Forbidden");
        let message = response["status"]["message"].as_str().expect("message");
        assert!(message.contains("statefulset-leader"), "{message}");
        let direct = engine
            .admit(&body, Endpoint::Validate)
            .await
            .expect("admits");
        assert_eq!(reply.body, direct.body);
    }
    // The mutating webhook never denies.
    let mutate = post_json(
        &harness.client(false),
        &harness.url("/mutate"),
        body.clone(),
    )
    .await;
    assert_eq!(mutate.json()["response"]["allowed"], true);

    let (_, _, metrics) = plain_get(&harness.metrics_url("/metrics")).await;
    assert_eq!(
        metric(
            &metrics,
            "forcegate_admission_requests_total{endpoint=\"validate\",intent=\"ForceDelete\",decision=\"denied\"}"
        ),
        Some(2.0)
    );
    harness.server.shutdown().await;
}

/// Force deleting a pod of a fenced node is allowed, warned and recorded
/// exactly once per call; a dry run records nothing.
#[tokio::test]
async fn allowed_force_delete_records_a_cleanup() {
    let (cluster, policies) = example_cluster();
    let recorder = Arc::new(CountingRecorder::default());
    let engine = engine_recording(cluster, policies, recorder.clone());
    let harness = Harness::start(engine, |_| {}).await;
    let client = harness.client(false);
    let body = example_review("force-delete-fenced");
    let reply = post_json(&client, &harness.url("/validate"), body.clone()).await;
    let response = &reply.json()["response"];
    assert_eq!(response["allowed"], true, "{response}");
    assert!(
        response["warnings"]
            .as_array()
            .is_some_and(|w| !w.is_empty()),
        "{response}"
    );
    assert_eq!(
        recorder.records.load(std::sync::atomic::Ordering::SeqCst),
        1
    );

    let mut dry: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
    dry["request"]["dryRun"] = true.into();
    let reply = post_json(
        &client,
        &harness.url("/validate"),
        serde_json::to_vec(&dry).expect("JSON"),
    )
    .await;
    assert_eq!(reply.json()["response"]["allowed"], true);
    assert_eq!(
        recorder.records.load(std::sync::atomic::Ordering::SeqCst),
        1
    );
    harness.server.shutdown().await;
}
