//! The webhook configurations in `manifests/` against the classification:
//! every matchCondition that exempts a system actor is the text
//! `intent::match_conditions` generates from `intent::actors`, so the API
//! server never skips a request forcegate would gate. (The e2e suite
//! proves the API server accepts these expressions and behaves so.)

use std::collections::BTreeMap;
use std::path::Path;

use forcegate::intent::match_conditions as cel;
use serde_json::{Value, json};

fn manifest(file: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("manifests")
        .join(file);
    let text = std::fs::read_to_string(&path).expect("manifest readable");
    serde_saphyr::from_str(&text).expect("manifest parses")
}

fn webhooks(file: &str) -> BTreeMap<String, Value> {
    manifest(file)["webhooks"]
        .as_array()
        .expect("webhooks")
        .iter()
        .map(|w| (w["name"].as_str().expect("name").to_owned(), w.clone()))
        .collect()
}

/// Whitespace-insensitive: YAML folding turns line breaks into spaces.
fn normalized(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn conditions(webhook: &Value) -> BTreeMap<String, String> {
    webhook["matchConditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let name = c["name"].as_str().expect("condition name").to_owned();
            (
                name,
                normalized(c["expression"].as_str().expect("expression")),
            )
        })
        .collect()
}

/// (webhook, condition, generated text) for every condition derived from
/// `intent::actors`.
fn generated() -> Vec<(&'static str, &'static str, String)> {
    vec![
        (
            "force-delete.pods.forcegate.dev",
            "not-the-pods-own-kubelet",
            cel::not_the_pods_own_kubelet(),
        ),
        (
            "force-delete.pods.forcegate.dev",
            "not-the-pod-gc",
            cel::not_the_pod_gc(),
        ),
        (
            "terminal-phase.pods.forcegate.dev",
            "marks-a-scheduled-pod-terminal",
            cel::marks_a_scheduled_pod_terminal(),
        ),
        (
            "terminal-phase.pods.forcegate.dev",
            "not-the-pods-own-kubelet",
            cel::not_the_pods_own_kubelet(),
        ),
        (
            "terminal-phase.pods.forcegate.dev",
            "not-the-pod-gc-or-node-lifecycle",
            cel::not_a_pod_status_finisher(),
        ),
        (
            "finalizers.forcegate.dev",
            "removes-a-finalizer",
            cel::removes_a_metadata_finalizer(),
        ),
        (
            "finalizers.forcegate.dev",
            "not-the-finalizer-owner",
            cel::not_the_metadata_finalizer_owner(),
        ),
        (
            "namespace-finalize.forcegate.dev",
            "removes-a-finalizer",
            cel::removes_a_namespace_finalizer(),
        ),
        (
            "namespace-finalize.forcegate.dev",
            "not-the-finalizer-owner",
            cel::not_the_namespace_finalizer_owner(),
        ),
    ]
}

#[test]
fn exemptions_are_generated_from_the_classification() {
    let validating = webhooks("validatingwebhookconfiguration.yaml");
    for (webhook, condition, expected) in generated() {
        let found = validating
            .get(webhook)
            .unwrap_or_else(|| panic!("no webhook {webhook}"));
        let found = conditions(found);
        let text = found
            .get(condition)
            .unwrap_or_else(|| panic!("{webhook} has no matchCondition {condition}"));
        assert_eq!(
            text,
            &normalized(&expected),
            "{webhook} {condition} drifted from src/intent/match_conditions.rs"
        );
    }
}

#[test]
fn no_webhook_exempts_by_group_or_username_alone() {
    let all = webhooks("validatingwebhookconfiguration.yaml")
        .into_iter()
        .chain(webhooks("mutatingwebhookconfiguration.yaml"));
    let generated: Vec<String> = generated().into_iter().map(|g| normalized(&g.2)).collect();
    for (name, webhook) in all {
        for (condition, text) in conditions(&webhook) {
            let exempts = text.contains("request.userInfo");
            assert!(
                !exempts || generated.contains(&text),
                "{name} {condition} exempts requesters by hand: {text}"
            );
        }
    }
}

#[test]
fn mutating_webhooks_mirror_the_validating_ones() {
    let validating = webhooks("validatingwebhookconfiguration.yaml");
    let mutating = webhooks("mutatingwebhookconfiguration.yaml");
    assert_eq!(
        mutating.keys().collect::<Vec<_>>(),
        [
            "finalizers.forcegate.dev",
            "namespace-finalize.forcegate.dev"
        ]
    );
    for (name, webhook) in &mutating {
        let twin = &validating[name];
        assert_eq!(webhook["rules"], twin["rules"], "{name} rules");
        assert_eq!(conditions(webhook), conditions(twin), "{name} conditions");
        assert_eq!(webhook["failurePolicy"], "Ignore", "{name}");
        assert_eq!(webhook["sideEffects"], "None", "{name}");
        assert_eq!(webhook["clientConfig"]["service"]["path"], "/mutate");
    }
}

/// The webhook that checks ForceDeletionPolicy objects; it gates no deletion.
const POLICY_WEBHOOK: &str = "policies.forcegate.dev";

#[test]
fn every_route_a_finalizer_can_leave_by_is_sent() {
    let validating = webhooks("validatingwebhookconfiguration.yaml");
    let mut routes = Vec::new();
    for (name, webhook) in validating.iter().filter(|(n, _)| *n != POLICY_WEBHOOK) {
        assert_eq!(webhook["failurePolicy"], "Fail", "{name}");
        assert_eq!(webhook["admissionReviewVersions"], json!(["v1"]), "{name}");
        assert_eq!(webhook["sideEffects"], "NoneOnDryRun", "{name}");
        let excluded = webhook
            .pointer("/namespaceSelector/matchExpressions/0/values")
            .and_then(Value::as_array)
            .is_some_and(|v| v.contains(&json!("forcegate")));
        assert!(excluded, "{name} must never gate forcegate's own namespace");
        for rule in webhook["rules"].as_array().expect("rules") {
            for operation in rule["operations"].as_array().into_iter().flatten() {
                for resource in rule["resources"].as_array().into_iter().flatten() {
                    routes.push(format!(
                        "{} {}",
                        operation.as_str().unwrap_or_default(),
                        resource.as_str().unwrap_or_default()
                    ));
                }
            }
        }
    }
    let gated_kinds = [
        "pods",
        "persistentvolumeclaims",
        "persistentvolumes",
        "namespaces",
        "services",
        "deployments",
        "replicasets",
        "statefulsets",
        "daemonsets",
        "jobs",
        "cronjobs",
    ];
    let mut needed = vec![
        "DELETE pods".to_owned(),
        "CREATE pods/eviction".to_owned(),
        "UPDATE namespaces/finalize".to_owned(),
    ];
    for kind in gated_kinds {
        needed.push(format!("UPDATE {kind}"));
        needed.push(format!("UPDATE {kind}/status"));
    }
    for route in needed {
        assert!(
            routes.contains(&route),
            "no webhook rule for {route}: {routes:?}"
        );
    }
}

/// Policies are checked at `kubectl apply`, but a forcegate outage must not
/// stop anyone managing them (nor `kubectl apply -k` installing them before
/// forcegate runs): Ignore, no side effects, only the policy kind.
#[test]
fn policy_objects_are_sent_to_their_own_path_and_fail_open() {
    let validating = webhooks("validatingwebhookconfiguration.yaml");
    let webhook = &validating[POLICY_WEBHOOK];
    assert_eq!(webhook["failurePolicy"], "Ignore");
    assert_eq!(webhook["sideEffects"], "None");
    assert_eq!(webhook["admissionReviewVersions"], json!(["v1"]));
    assert_eq!(
        webhook["clientConfig"]["service"]["path"],
        "/validate-policy"
    );
    assert_eq!(
        webhook["rules"],
        json!([{
            "operations": ["CREATE", "UPDATE"],
            "apiGroups": ["forcegate.dev"],
            "apiVersions": ["v1alpha1"],
            "resources": ["forcedeletionpolicies"],
            "scope": "Cluster",
        }])
    );
    assert!(webhook.get("matchConditions").is_none());
}
