//! A namespace held Terminating the ways `stuck` must name: a custom
//! resource whose finalizer's controller is not installed, an APIService
//! that is not Available, and a fail-closed webhook without endpoints.

use std::time::Duration;

use serde_json::{Value, json};

use crate::fixtures::Scene;
use crate::kubectl::eventually;

/// Objects `stuck` needs that live outside the scene's namespace; removed
/// on drop so the stale API group does not outlive the test.
pub struct ClusterWide<'a>(&'a Scene);

impl Drop for ClusterWide<'_> {
    fn drop(&mut self) {
        for (kind, name) in [
            ("validatingwebhookconfiguration", "acme-widgets"),
            ("apiservice", "v1.metrics.acme.example"),
        ] {
            let _ = self
                .0
                .k()
                .run(&["delete", kind, name, "--ignore-not-found", "--wait=false"]);
        }
    }
}

fn create_widget_world(scene: &Scene) {
    scene.k().ok_stdin(&["apply", "-f", "-"], &json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.acme.example"},
        "spec": {
            "group": "acme.example",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}],
        },
    }).to_string());
    scene.k().ok(&[
        "wait",
        "--for=condition=Established",
        "--timeout=60s",
        "crd/widgets.acme.example",
    ]);
    eventually(
        "the Widget type to be served",
        Duration::from_secs(30),
        || {
            let run = scene.k().run_stdin(&["create", "-f", "-"], &json!({
            "apiVersion": "acme.example/v1", "kind": "Widget",
            "metadata": {"name": "w1", "namespace": scene.ns, "finalizers": ["acme.example/cleanup"]},
        }).to_string());
            if run.success() {
                Ok(())
            } else {
                Err(run.describe())
            }
        },
    );
    scene.ok(&["delete", "widget.acme.example", "w1", "--wait=false"]);
}

/// Build the blockers, then delete the scene's namespace and report the
/// conditions the namespace controller would. Drop the guard to remove the
/// cluster-wide objects again.
pub fn hold_namespace(scene: &Scene) -> ClusterWide<'_> {
    create_widget_world(scene);
    let cleanup = ClusterWide(scene);
    scene.k().create(&json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "acme-widgets"},
        "webhooks": [{
            "name": "widgets.acme.example",
            "clientConfig": {"service": {"namespace": "acme-system", "name": "acme-webhook", "path": "/validate"}},
            "rules": [{"operations": ["UPDATE", "DELETE"], "apiGroups": ["acme.example"], "apiVersions": ["*"], "resources": ["widgets"]}],
            "failurePolicy": "Fail", "sideEffects": "None", "admissionReviewVersions": ["v1"],
        }],
    }));
    scene.k().create(&json!({
        "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": "v1.metrics.acme.example"},
        "spec": {
            "group": "metrics.acme.example", "version": "v1",
            "service": {"namespace": "acme-system", "name": "acme-metrics", "port": 443},
            "insecureSkipTLSVerify": true, "groupPriorityMinimum": 1000, "versionPriority": 15,
        },
    }));
    eventually(
        "the APIService to be reported unavailable",
        Duration::from_secs(60),
        || {
            let api = scene
                .k()
                .get(&["apiservice", "v1.metrics.acme.example"])
                .ok_or("gone")?;
            let available = (api
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten())
            .find(|c| c["type"] == "Available")
            .map(|c| c["status"].clone());
            if available == Some(json!("False")) {
                Ok(())
            } else {
                Err(format!("{api:#}"))
            }
        },
    );
    scene
        .k()
        .ok(&["delete", "namespace", &scene.ns, "--wait=false"]);
    // No kube-controller-manager runs here: report what its namespace
    // controller would, as the other fixtures patch statuses.
    scene.k().ok(&["patch", "namespace", &scene.ns, "--subresource=status", "--type=merge", "-p", &json!({"status": {"conditions": [
        {"type": "NamespaceDeletionDiscoveryFailure", "status": "True", "reason": "DiscoveryFailed",
         "message": "Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: metrics.acme.example/v1: stale GroupVersion discovery: metrics.acme.example/v1"},
        {"type": "NamespaceContentRemaining", "status": "True", "reason": "SomeResourcesRemain",
         "message": "Some resources are remaining: widgets.acme.example has 1 resource instances"},
        {"type": "NamespaceFinalizersRemaining", "status": "True", "reason": "SomeFinalizersRemain",
         "message": "Some content in the namespace has finalizers remaining: acme.example/cleanup in 1 resource instances"},
    ]}}).to_string()]);

    cleanup
}
