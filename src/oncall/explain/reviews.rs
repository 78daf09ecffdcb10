//! The AdmissionReviews the API server would send forcegate for a grace-0
//! delete, a grace-0 eviction and a finalizer strip (or, for a namespace,
//! a force-finalize) of one object, shaped as kube-apiserver shapes them
//! (see `examples/reviews/`).

use serde::Serialize;
use serde_json::{Value, json};

use super::{Target, User};

/// What an on-call human might do to the object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Action {
    /// `kubectl delete pod --force --grace-period=0`.
    ForceDelete,
    /// `pods/eviction` with `gracePeriodSeconds: 0`.
    Eviction,
    /// `metadata.finalizers` removed by an UPDATE.
    FinalizerStrip,
    /// `PUT /api/v1/namespaces/<ns>/finalize` with `spec.finalizers` emptied.
    NamespaceFinalize,
}

impl Action {
    /// A short title.
    pub fn title(self) -> &'static str {
        match self {
            Action::ForceDelete => "grace-0 delete",
            Action::Eviction => "grace-0 eviction",
            Action::FinalizerStrip => "finalizer strip",
            Action::NamespaceFinalize => "namespace force-finalize",
        }
    }

    /// The command a human would type for it.
    pub fn command(self, target: &Target) -> String {
        let ns = target
            .namespace
            .as_deref()
            .map(|ns| format!(" -n {ns}"))
            .unwrap_or_default();
        let name = &target.name;
        let resource = target.resource_arg();
        match self {
            Action::ForceDelete => {
                format!("kubectl delete pod {name}{ns} --force --grace-period=0")
            }
            Action::Eviction => format!(
                "kubectl create --raw /api/v1/namespaces/{}/pods/{name}/eviction (deleteOptions.gracePeriodSeconds: 0)",
                target.namespace.as_deref().unwrap_or_default()
            ),
            Action::FinalizerStrip => format!(
                "kubectl patch {resource} {name}{ns} --type=merge -p '{{\"metadata\":{{\"finalizers\":null}}}}'"
            ),
            Action::NamespaceFinalize => format!(
                "kubectl replace --raw /api/v1/namespaces/{name}/finalize -f - (spec.finalizers: [])"
            ),
        }
    }
}

/// Each action that applies to `target`, with the review it would cause.
pub fn reviews(target: &Target, user: &User) -> Vec<(Action, Value)> {
    let mut reviews = Vec::new();
    let pod = target.group.is_empty() && target.resource == "pods";
    if pod {
        reviews.push((Action::ForceDelete, force_delete(target, user)));
        reviews.push((Action::Eviction, eviction(target, user)));
    }
    if !target.finalizers().is_empty() {
        reviews.push((Action::FinalizerStrip, strip(target, user)));
    }
    let namespace = target.group.is_empty() && target.resource == "namespaces";
    if namespace && !target.spec_finalizers().is_empty() {
        reviews.push((Action::NamespaceFinalize, finalize(target, user)));
    }
    reviews
}

/// The review's fixed members; `request` gets the action's own on top.
fn review(target: &Target, user: &User, action: Action, request: Value) -> Value {
    let group_version_kind =
        json!({"group": target.group, "version": target.version, "kind": target.kind});
    let group_version_resource =
        json!({"group": target.group, "version": target.version, "resource": target.resource});
    let mut base = json!({
        "uid": format!("forcegate-explain-{}", action.title().replace(' ', "-")),
        "kind": group_version_kind,
        "resource": group_version_resource,
        "requestKind": group_version_kind,
        "requestResource": group_version_resource,
        "name": target.name,
        "userInfo": {"username": user.username, "groups": user.groups},
        "dryRun": false,
    });
    if let Some(ns) = target.request_namespace() {
        base["namespace"] = json!(ns);
    }
    if let (Some(base), Value::Object(extra)) = (base.as_object_mut(), request) {
        base.extend(extra);
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": base})
}

fn force_delete(target: &Target, user: &User) -> Value {
    review(
        target,
        user,
        Action::ForceDelete,
        json!({
            "operation": "DELETE",
            "oldObject": target.object,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0},
        }),
    )
}

fn eviction(target: &Target, user: &User) -> Value {
    let mut review = review(
        target,
        user,
        Action::Eviction,
        json!({
            "operation": "CREATE",
            "subResource": "eviction",
            "requestSubResource": "eviction",
            "object": {
                "apiVersion": "policy/v1",
                "kind": "Eviction",
                "metadata": {"name": target.name, "namespace": target.namespace},
                "deleteOptions": {"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0},
            },
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
        }),
    );
    let eviction_kind = json!({"group": "policy", "version": "v1", "kind": "Eviction"});
    review["request"]["kind"] = eviction_kind.clone();
    review["request"]["requestKind"] = eviction_kind;
    review
}

fn strip(target: &Target, user: &User) -> Value {
    let mut stripped = target.object.clone();
    if let Some(meta) = stripped.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("finalizers");
    }
    review(
        target,
        user,
        Action::FinalizerStrip,
        json!({
            "operation": "UPDATE",
            "object": stripped,
            "oldObject": target.object,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "UpdateOptions"},
        }),
    )
}

fn finalize(target: &Target, user: &User) -> Value {
    let mut finalized = target.object.clone();
    if let Some(spec) = finalized.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert("finalizers".into(), json!([]));
    }
    review(
        target,
        user,
        Action::NamespaceFinalize,
        json!({
            "operation": "UPDATE",
            "subResource": "finalize",
            "requestSubResource": "finalize",
            "object": finalized,
            "oldObject": target.object,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "UpdateOptions"},
        }),
    )
}
