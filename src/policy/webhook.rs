//! `/validate-policy`: a ForceDeletionPolicy that the loader would refuse
//! is refused at `kubectl apply`, with the field and the reason.
//!
//! The API server has already enforced the CRD's schema (types, enums,
//! CEL) by the time it calls; this adds what only the loader knows: facts
//! against their types, JSONPaths, regular expressions, templates. The
//! webhook's failurePolicy is Ignore, so policies can still be managed
//! while forcegate is down; an object that got in then is reported
//! `Ready=False` and its last good generation stays in force.

use kube::core::admission::{AdmissionResponse, Operation};

use super::model::{API_VERSION, KIND};
use super::object;
use crate::admission::{self, BadReview};

/// The answer, as sent, and whether it allowed the change.
#[derive(Debug)]
pub struct Reviewed {
    pub body: Vec<u8>,
    pub allowed: bool,
}

/// Check the object of a CREATE or UPDATE; anything else is allowed (it is
/// not this webhook's to judge).
pub fn review(body: &[u8]) -> Result<Reviewed, BadReview> {
    let request = admission::decode(body)?;
    let mut response = AdmissionResponse::from(&request);
    let ours = request.kind.kind == KIND
        && format!("{}/{}", request.kind.group, request.kind.version) == API_VERSION;
    let changed = matches!(request.operation, Operation::Create | Operation::Update);
    if let (true, true, Some(object)) = (ours, changed, &request.object) {
        let value = serde_json::to_value(object)
            .map_err(|err| BadReview::Malformed(format!("object: {err}")))?;
        if let Err(problems) = object::compile(&value) {
            let name = object.metadata.name.as_deref().unwrap_or_default();
            response = response.deny(format!(
                "{KIND} {name} is invalid (forcegate lint reports the same):\n{}",
                object::describe(&problems)
            ));
            response.result.code = 422;
            response.result.reason = "Invalid".into();
        }
    }
    let allowed = response.allowed;
    let body = serde_json::to_vec(&response.into_review())
        .map_err(|err| BadReview::Malformed(format!("response: {err}")))?;
    Ok(Reviewed { body, allowed })
}

#[cfg(test)]
mod tests {
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
}
