//! `/validate-policy` on the real server over TLS: a ForceDeletionPolicy
//! the loader refuses is denied with its field path; the endpoint is
//! counted apart from the admission decisions. And before the policy
//! objects are listed, candidates are undecidable and `/readyz` says so.

mod server_support;

use std::sync::Arc;

use forcegate::policy::PolicySet;
use forcegate::policy::source::cluster::NOT_LISTED;
use hyper::StatusCode;
use serde_json::{Value, json};
use server_support::*;

fn policy_review(path: &str) -> Vec<u8> {
    let review = json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "policy-create-1",
            "kind": {"group": "forcegate.dev", "version": "v1alpha1", "kind": "ForceDeletionPolicy"},
            "resource": {"group": "forcegate.dev", "version": "v1alpha1", "resource": "forcedeletionpolicies"},
            "name": "leader-label",
            "operation": "CREATE",
            "userInfo": {"username": "platform-ci"},
            "object": {
                "apiVersion": "forcegate.dev/v1alpha1",
                "kind": "ForceDeletionPolicy",
                "metadata": {"name": "leader-label"},
                "spec": {
                    "match": {"intents": ["ForceDelete"]},
                    "conditions": [{"path": path, "equals": "leader"}],
                    "action": "Deny",
                    "message": "pod {{ target.name }} is labelled leader",
                },
            },
        },
    });
    serde_json::to_vec(&review).expect("json")
}

#[tokio::test]
async fn policies_are_checked_by_the_loader_at_their_own_path() {
    let harness = Harness::start(static_engine(true), |_| {}).await;
    let client = harness.client(false);
    let url = harness.url("/validate-policy");

    let good = post_json(&client, &url, policy_review("$.facts.pod.labels.role")).await;
    assert_eq!(good.status, StatusCode::OK);
    let response: Value = good.json()["response"].clone();
    assert_eq!(response["uid"], "policy-create-1");
    assert_eq!(response["allowed"], true, "{response}");

    let bad = post_json(&client, &url, policy_review("$.facts.pod.labels[")).await;
    assert_eq!(bad.status, StatusCode::OK);
    let response: Value = bad.json()["response"].clone();
    assert_eq!(response["allowed"], false, "{response}");
    let message = response["status"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("spec.conditions[0].path: "),
        "the field is named: {message}"
    );

    let wrong_type = post(&client, &url, "text/plain", full("{}")).await;
    assert_eq!(wrong_type.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);

    let (_, _, metrics) = plain_get(&harness.metrics_url("/metrics")).await;
    for (decision, count) in [("allowed", 1.0), ("denied", 1.0)] {
        let series = format!(
            "forcegate_admission_requests_total{{endpoint=\"validate-policy\",intent=\"ForceDeletionPolicy\",decision=\"{decision}\"}}"
        );
        assert_eq!(metric(&metrics, &series), Some(count), "{metrics}");
    }
    harness.server.shutdown().await;
}

#[tokio::test]
async fn before_the_policies_are_listed_candidates_are_undecidable_and_not_ready() {
    let view = Arc::new(StaticView { synced: true });
    let engine = engine_with(view, PolicySet::not_loaded(NOT_LISTED));
    let harness = Harness::start(engine, |_| {}).await;
    harness.server.health().set_policies_loaded(false);
    let client = harness.client(false);
    let url = harness.url("/validate");

    let reply = post_json(&client, &url, fixture("force-delete-leader")).await;
    let response: Value = reply.json()["response"].clone();
    assert_eq!(response["allowed"], false, "{response}");
    let message = response["status"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("its policies are not loaded yet ({NOT_LISTED})")),
        "{message}"
    );
    // What is not a candidate is never held up.
    let reply = post_json(&client, &url, fixture("kubelet-final-delete")).await;
    assert_eq!(reply.json()["response"]["allowed"], true);

    let (status, _, body) = plain_get(&harness.metrics_url("/readyz")).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert!(body.contains("policies not loaded"), "{body}");
    harness.server.health().set_policies_loaded(true);
    let (status, _, _) = plain_get(&harness.metrics_url("/readyz")).await;
    assert_eq!(status, StatusCode::OK);
    harness.server.shutdown().await;
}
