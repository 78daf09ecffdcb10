use serde_json::{Value, json};

use super::*;

fn request(operation: &str, spec: Value) -> Vec<u8> {
    let object = json!({
        "apiVersion": "forcegate.dev/v1alpha1",
        "kind": "ForceDeletionPolicy",
        "metadata": {"name": "p", "uid": "u-1", "generation": 1},
        "spec": spec,
    });
    let review = json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "req-1",
            "kind": {"group": "forcegate.dev", "version": "v1alpha1", "kind": "ForceDeletionPolicy"},
            "resource": {"group": "forcegate.dev", "version": "v1alpha1", "resource": "forcedeletionpolicies"},
            "name": "p",
            "operation": operation,
            "userInfo": {"username": "alice"},
            "object": object,
            "oldObject": if operation == "UPDATE" { object.clone() } else { Value::Null },
            "dryRun": false,
        },
    });
    serde_json::to_vec(&review).expect("json")
}

fn response(reviewed: &Reviewed) -> Value {
    let review: Value = serde_json::from_slice(&reviewed.body).expect("json");
    review["response"].clone()
}

#[test]
fn a_good_policy_is_allowed() {
    let spec = json!({
        "match": {"intents": ["ForceDelete"]},
        "action": "Record",
        "message": "recorded",
    });
    let reviewed = review(&request("CREATE", spec)).expect("review");
    assert!(reviewed.allowed);
    let response = response(&reviewed);
    assert_eq!(response["uid"], "req-1");
    assert_eq!(response["allowed"], true);
}

#[test]
fn a_bad_jsonpath_is_refused_with_its_field_and_reason() {
    let spec = json!({
        "match": {"intents": ["ForceDelete"]},
        "conditions": [{"path": "$.facts[?", "exists": true}],
        "action": "Deny",
        "message": "m",
    });
    for operation in ["CREATE", "UPDATE"] {
        let reviewed = review(&request(operation, spec.clone())).expect("review");
        assert!(!reviewed.allowed, "{operation}");
        let response = response(&reviewed);
        assert_eq!(response["status"]["code"], 422);
        let message = response["status"]["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with("ForceDeletionPolicy p is invalid"),
            "{message}"
        );
        assert!(message.contains("\nspec.conditions[0].path: "), "{message}");
    }
}

#[test]
fn other_requests_are_not_judged_and_bad_bodies_are_errors() {
    let spec = json!({"match": {"intents": []}});
    let reviewed = review(&request("DELETE", spec)).expect("review");
    assert!(reviewed.allowed);
    assert!(matches!(review(b"[]"), Err(BadReview::NotAnObject)));
}
