//! Diagnoses over small snapshots, including the ones that must not call a
//! finalizer's controller dead.

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;

use super::*;
use crate::oncall::inventory::Inventory;

const NOW: &str = "2025-06-01T12:00:00Z";

/// Nodes, kube-controller-manager's Lease, and empty lists of the other kinds
/// evidence reads (present, with no objects).
const BASE: &str = r#"
apiVersion: v1
kind: NodeList
items:
- metadata: {name: up}
  status: {conditions: [{type: Ready, status: "True", lastHeartbeatTime: "2025-06-01T11:59:50Z", lastTransitionTime: "2025-05-01T00:00:00Z"}]}
- metadata: {name: lost}
  spec: {taints: [{key: node.kubernetes.io/unreachable, effect: NoExecute}]}
  status: {conditions: [{type: Ready, status: Unknown, lastHeartbeatTime: "2025-06-01T11:40:00Z", lastTransitionTime: "2025-06-01T11:41:00Z"}]}
- metadata: {name: fenced}
  spec: {taints: [{key: node.kubernetes.io/out-of-service, value: nodeshutdown, effect: NoExecute}]}
  status: {conditions: [{type: Ready, status: Unknown}]}
---
apiVersion: coordination.k8s.io/v1
kind: LeaseList
items:
- metadata: {name: kube-controller-manager, namespace: kube-system}
  spec: {holderIdentity: cp-1_abc, leaseDurationSeconds: 15, renewTime: "2025-06-01T11:59:58.000000Z"}
---
{apiVersion: v1, kind: PodList, items: []}
---
{apiVersion: v1, kind: PersistentVolumeClaimList, items: []}
---
{apiVersion: v1, kind: PersistentVolumeList, items: []}
---
{apiVersion: storage.k8s.io/v1, kind: VolumeAttachmentList, items: []}
---
{apiVersion: apps/v1, kind: DeploymentList, items: []}
---
{apiVersion: apps/v1, kind: StatefulSetList, items: []}
---
{apiVersion: apps/v1, kind: DaemonSetList, items: []}
---
{apiVersion: discovery.k8s.io/v1, kind: EndpointSliceList, items: []}
---
{apiVersion: apiregistration.k8s.io/v1, kind: APIServiceList, items: []}
"#;

/// A Widget deleted 30 days before NOW, held by `acme.example/cleanup`.
const OLD_WIDGET: &str = r#"
apiVersion: acme.example/v1
kind: Widget
metadata:
  name: w1
  namespace: shop
  uid: w-1
  deletionTimestamp: "2025-05-02T12:00:00Z"
  finalizers: [acme.example/cleanup]
"#;

fn evidence(extra: &str) -> Evidence {
    evidence_from(&format!("{BASE}\n---\n{extra}"))
}

fn evidence_from(yaml: &str) -> Evidence {
    let mut inventory = Inventory::default();
    let documents: Vec<serde_json::Value> =
        serde_saphyr::from_multiple(yaml).expect("fixture YAML");
    for document in documents.into_iter().filter(|d| !d.is_null()) {
        inventory.add_document(document);
    }
    Evidence::build(&inventory, NOW.parse::<Timestamp>().expect("time"))
}

fn report(evidence: &Evidence) -> Report {
    diagnose(evidence, Scope::All, Duration::from_secs(300))
}

fn only(report: &Report) -> &Stuck {
    assert_eq!(report.stuck.len(), 1, "{report:#?}");
    &report.stuck[0]
}

fn codes(stuck: &Stuck) -> Vec<&str> {
    stuck.findings.iter().map(|f| f.code).collect()
}

fn pod(name: &str, node: &str, deleted: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: shop, uid: u-{name}, deletionTimestamp: \"{deleted}\"}}\nspec: {{nodeName: {node}, containers: [{{name: c, image: app}}]}}\nstatus: {{phase: Running}}\n"
    )
}

#[test]
fn a_pod_on_an_unreachable_unfenced_node_says_fence_it() {
    let e = evidence(&pod("web-0", "lost", "2025-06-01T11:45:00Z"));
    let stuck = report(&e);
    let stuck = only(&stuck);
    assert_eq!(codes(stuck), ["node-unreachable"]);
    assert_eq!(stuck.level, Level::Act);
    assert_eq!(stuck.age_seconds, 900);
    assert!(
        stuck.findings[0].text.contains("last heartbeat 20m ago"),
        "{stuck:#?}"
    );
    assert_eq!(
        stuck.advice[0].commands,
        ["kubectl taint nodes lost node.kubernetes.io/out-of-service=nodeshutdown:NoExecute"]
    );
}

#[test]
fn a_pod_on_a_fenced_node_waits_for_the_pod_gc_while_the_controller_manager_runs() {
    let stuck = report(&evidence(&pod("web-0", "fenced", "2025-06-01T11:45:00Z")));
    let stuck = only(&stuck);
    assert_eq!(codes(stuck), ["node-fenced", "controller-alive"]);
    assert_eq!(stuck.level, Level::Wait);
}

#[test]
fn a_pod_in_its_grace_period_is_not_stuck_and_past_it_on_a_ready_node_needs_a_human() {
    let within = diagnose(
        &evidence(&pod("web-0", "up", "2025-06-01T12:00:20Z")),
        Scope::All,
        Duration::ZERO,
    );
    assert!(within.stuck.is_empty(), "{within:#?}");

    let late = report(&evidence(&pod("web-0", "up", "2025-06-01T11:30:00Z")));
    assert_eq!(codes(only(&late)), ["node-ready"]);
    assert_eq!(only(&late).level, Level::Human);
}

#[test]
fn a_claim_held_by_pvc_protection_names_the_pods_that_use_it() {
    let e = evidence(
        r#"
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: shop, uid: c-1, deletionTimestamp: "2025-06-01T11:00:00Z", finalizers: [kubernetes.io/pvc-protection]}
---
apiVersion: v1
kind: Pod
metadata: {name: app-0, namespace: shop}
spec: {nodeName: up, containers: [{name: c}], volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]}
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: old-job, namespace: shop}
spec: {nodeName: up, containers: [{name: c}], volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]}
status: {phase: Succeeded}
"#,
    );
    let stuck = report(&e);
    let stuck = only(&stuck);
    assert_eq!(codes(stuck), ["claim-in-use"]);
    assert!(
        stuck.findings[0].text.contains("pods app-0 still use it"),
        "{stuck:#?}"
    );
    assert_eq!(
        stuck.advice[0].commands,
        ["kubectl -n shop delete pod app-0"]
    );
}

#[test]
fn a_slow_controller_is_not_called_dead_however_old_the_object() {
    let e = evidence(&format!(
        "{OLD_WIDGET}\n---\n{}",
        r#"
apiVersion: apps/v1
kind: Deployment
metadata: {name: acme-operator, namespace: acme-system}
spec: {replicas: 1, selector: {}, template: {spec: {containers: [{name: manager, image: "ghcr.io/acme/operator:v2"}]}}}
status: {readyReplicas: 1}
"#
    ));
    let stuck = report(&e);
    let stuck = only(&stuck);
    assert_eq!(stuck.age_seconds, 30 * 86_400);
    assert_eq!(codes(stuck), ["controller-alive"]);
    assert_eq!(stuck.level, Level::Wait);
    assert!(
        stuck.findings[0]
            .text
            .contains("Deployment acme-system/acme-operator (1/1 ready)")
    );
    assert_eq!(
        stuck.advice[0].commands,
        ["kubectl -n acme-system logs deployment/acme-operator --tail=100"]
    );
}

#[test]
fn a_renewed_leader_lease_is_a_running_controller() {
    let e = evidence(&format!(
        "{OLD_WIDGET}\n---\n{}",
        r#"
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: 3c1f2a.acme.example, namespace: operators}
spec: {holderIdentity: mgr-7d9_1, leaseDurationSeconds: 15, renewTime: "2025-06-01T11:59:55.000000Z"}
"#
    ));
    let stuck = report(&e);
    assert_eq!(codes(only(&stuck)), ["controller-alive"]);
}

#[test]
fn no_trace_of_the_controller_calls_it_gone_and_says_what_was_checked() {
    let stuck = report(&evidence(OLD_WIDGET));
    let stuck = only(&stuck);
    assert_eq!(codes(stuck), ["controller-gone"]);
    assert_eq!(stuck.level, Level::Human);
    let text = &stuck.findings[0].text;
    assert!(text.contains("\"acme\" or \"example\""), "{text}");
    assert!(
        text.contains("checked 0 Deployments, 0 StatefulSets, 0 DaemonSets, 0 Pods, 1 Lease"),
        "{text}"
    );
    assert!(
        stuck.advice[0].commands[0]
            .starts_with("kubectl forcegate explain widget.acme.example w1 -n shop")
    );
}

#[test]
fn a_controller_scaled_to_zero_is_down_not_gone() {
    let e = evidence(&format!(
        "{OLD_WIDGET}\n---\n{}",
        r#"
apiVersion: apps/v1
kind: Deployment
metadata: {name: acme-operator, namespace: acme-system}
spec: {replicas: 0, selector: {}, template: {spec: {containers: [{name: m}]}}}
"#
    ));
    let stuck = report(&e);
    assert_eq!(codes(only(&stuck)), ["controller-down"]);
}

#[test]
fn without_the_workload_kinds_it_cannot_tell() {
    let e = evidence_from(OLD_WIDGET);
    let stuck = report(&e);
    let stuck = only(&stuck);
    assert_eq!(codes(stuck), ["controller-unknown"]);
    assert!(
        stuck.findings[0]
            .text
            .contains("Deployment.apps is not in the data read")
    );
}

#[test]
fn a_namespace_names_its_conditions_contents_and_both_kinds_of_blocker() {
    let e = evidence(&format!(
        "{OLD_WIDGET}\n---\n{}",
        r#"
apiVersion: v1
kind: Namespace
metadata: {name: shop, deletionTimestamp: "2025-06-01T11:00:00Z"}
spec: {finalizers: [kubernetes]}
status:
  phase: Terminating
  conditions:
  - {type: NamespaceDeletionDiscoveryFailure, status: "True", reason: DiscoveryFailed, message: "Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: metrics.acme.example/v1: stale GroupVersion discovery"}
  - {type: NamespaceContentRemaining, status: "True", reason: SomeResourcesRemain, message: "Some resources are remaining: widgets.acme.example has 1 resource instances"}
  - {type: NamespaceDeletionContentFailure, status: "False"}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1.metrics.acme.example}
spec: {group: metrics.acme.example, version: v1, service: {namespace: acme-system, name: acme-metrics}}
status: {conditions: [{type: Available, status: "False", reason: ServiceNotFound, message: "service/acme-metrics in \"acme-system\" is not present"}]}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1.apps}
spec: {group: apps, version: v1}
status: {conditions: [{type: Available, status: "True", reason: Local}]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: acme-widgets}
webhooks:
- name: widgets.acme.example
  clientConfig: {service: {namespace: acme-system, name: acme-webhook}}
  rules: [{operations: [UPDATE, DELETE], apiGroups: [acme.example], apiVersions: ["*"], resources: [widgets]}]
  sideEffects: None
  admissionReviewVersions: [v1]
- name: lenient.acme.example
  failurePolicy: Ignore
  clientConfig: {service: {namespace: acme-system, name: acme-webhook}}
  rules: [{operations: [DELETE], apiGroups: [""], apiVersions: ["*"], resources: [pods]}]
  sideEffects: None
  admissionReviewVersions: [v1]
- name: served.acme.example
  clientConfig: {service: {namespace: acme-system, name: served}}
  rules: [{operations: ["*"], apiGroups: [""], apiVersions: ["*"], resources: [configmaps]}]
  sideEffects: None
  admissionReviewVersions: [v1]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: served-1, namespace: acme-system, labels: {kubernetes.io/service-name: served}}
addressType: IPv4
endpoints: [{addresses: [10.0.0.9], conditions: {ready: true}}]
"#
    ));
    let report = report(&e);
    let namespace = (report.stuck.iter())
        .find(|s| s.object.kind == "Namespace")
        .expect("namespace");
    assert_eq!(
        codes(namespace),
        [
            "namespace-condition",
            "namespace-condition",
            "content-remaining",
            "finalizers-remaining",
            "apiservice-unavailable",
            "webhook-no-endpoints",
        ],
        "{namespace:#?}"
    );
    let text: Vec<&str> = namespace.findings.iter().map(|f| f.text.as_str()).collect();
    assert!(
        text[2].contains("still holds 1 Widget.acme.example"),
        "{text:?}"
    );
    assert!(
        text[4].contains("APIService v1.metrics.acme.example is not Available (ServiceNotFound"),
        "{text:?}"
    );
    assert!(
        text[5]
            .contains("webhook widgets.acme.example (ValidatingWebhookConfiguration/acme-widgets)"),
        "{text:?}"
    );
    assert_eq!(namespace.level, Level::Human);
    // The widget it waits on is diagnosed on its own.
    assert!(report.stuck.iter().any(|s| s.object.kind == "Widget"));
}

#[test]
fn younger_objects_and_other_namespaces_are_left_out() {
    let e = evidence(&format!(
        "{}\n---\n{OLD_WIDGET}",
        pod("new", "lost", "2025-06-01T11:58:00Z")
    ));
    assert_eq!(
        report(&e).stuck.len(),
        1,
        "the 2-minute-old pod is under the 5m threshold"
    );
    let other = diagnose(&e, Scope::Namespace("elsewhere"), Duration::ZERO);
    assert!(other.stuck.is_empty());
    assert!(!other.needs_attention());
}
