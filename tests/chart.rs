//! charts/forcegate against the kustomize base and the classification:
//! `helm lint` is clean in every certificate mode, the rendered webhook
//! configurations equal manifests/ (whose exemptions
//! tests/webhook_manifests.rs ties to `intent::match_conditions`), the
//! trusted users default to `intent::actors`, both install the same objects
//! (the differences are listed here), the copies of shared files have not
//! drifted, and the versions follow Cargo.toml.
//!
//! helm comes from tests/chart_support (built from the Go module proxy).

mod chart_support;

use std::collections::{BTreeMap, BTreeSet};

use chart_support::{chart, objects, render, root, run_helm};
use forcegate::intent::{actors, match_conditions};
use serde_json::{Value, json};

fn find<'a>(objects: &'a [Value], kind: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} rendered"))
}

fn base(file: &str) -> Value {
    let text = std::fs::read_to_string(root().join("manifests").join(file)).expect(file);
    serde_saphyr::from_str(&text).expect(file)
}

fn base_objects() -> Vec<Value> {
    let dir = root().join("manifests");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("manifests/").flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".yaml") || name == "kustomization.yaml" {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).expect("readable");
        found.extend(objects(&text));
    }
    // The base includes ../policies: the shipped policies its Kustomization lists.
    let policies = root().join("policies");
    let kustomization =
        std::fs::read_to_string(policies.join("Kustomization")).expect("Kustomization");
    let listed: Value = serde_saphyr::from_str(&kustomization).expect("Kustomization parses");
    for file in listed["resources"].as_array().expect("resources") {
        let file = file.as_str().expect("a file name");
        let text = std::fs::read_to_string(policies.join(file)).expect("a shipped policy");
        found.extend(objects(&text));
    }
    found
}

/// Expressions compared with whitespace folded (YAML `>-` vs one line).
fn normalized_webhooks(config: &Value) -> Value {
    let mut webhooks = config["webhooks"].clone();
    for webhook in webhooks.as_array_mut().expect("webhooks") {
        for condition in webhook["matchConditions"]
            .as_array_mut()
            .into_iter()
            .flatten()
        {
            let text = condition["expression"].as_str().expect("expression");
            condition["expression"] = json!(text.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
    webhooks
}

#[test]
fn chart_version_and_app_version_follow_the_crate() {
    let text = std::fs::read_to_string(chart().join("Chart.yaml")).expect("Chart.yaml");
    let meta: Value = serde_saphyr::from_str(&text).expect("Chart.yaml parses");
    assert_eq!(
        meta["version"],
        env!("CARGO_PKG_VERSION"),
        "Chart.yaml version"
    );
    assert_eq!(
        meta["appVersion"],
        env!("CARGO_PKG_VERSION"),
        "Chart.yaml appVersion"
    );
    let image = find(&render(&[]), "Deployment")
        .pointer("/spec/template/spec/containers/0/image")
        .cloned();
    assert_eq!(
        image,
        Some(json!(format!(
            "ghcr.io/forcegate/forcegate:{}",
            env!("CARGO_PKG_VERSION")
        )))
    );
}

#[test]
fn helm_lint_is_clean_in_every_mode() {
    let chart = chart();
    let path = chart.to_str().expect("UTF-8 path");
    for set in [
        "certificates.mode=self-managed",
        "certificates.mode=cert-manager,serviceMonitor.enabled=true,prometheusRule.enabled=true,grafanaDashboard.enabled=true,policies.install=true",
        "certificates.mode=secret,certificates.secretName=mine,certificates.caBundle=Y2E=",
    ] {
        let (ok, text) = run_helm(&["lint", "--strict", path, "--set", set]);
        assert!(
            ok && !text.contains("[WARNING]"),
            "helm lint --set {set}:\n{text}"
        );
    }
    let (ok, text) = run_helm(&["template", "x", path, "--set", "certificates.mode=secret"]);
    assert!(!ok && text.contains("is required in secret mode"), "{text}");
}

#[test]
fn rendered_webhook_configurations_equal_the_base() {
    let objects = render(&[]);
    for (kind, file) in [
        (
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfiguration.yaml",
        ),
        (
            "MutatingWebhookConfiguration",
            "mutatingwebhookconfiguration.yaml",
        ),
    ] {
        let rendered = find(&objects, kind);
        let expected = base(file);
        assert_eq!(rendered["metadata"]["name"], expected["metadata"]["name"]);
        assert_eq!(
            normalized_webhooks(rendered),
            normalized_webhooks(&expected),
            "{kind}: the chart's webhooks differ from manifests/{file}"
        );
    }
}

#[test]
fn trusted_users_default_to_the_classification() {
    let text = std::fs::read_to_string(chart().join("values.yaml")).expect("values.yaml");
    let values: Value = serde_saphyr::from_str(&text).expect("values.yaml parses");
    let users = &values["trustedUsers"];
    let pairs = |owners: &[actors::FinalizerOwner]| json!(match_conditions::owned_pairs(owners));
    assert_eq!(users["podDeleters"], json!(actors::POD_DELETERS));
    assert_eq!(
        users["podStatusFinishers"],
        json!(actors::POD_STATUS_FINISHERS)
    );
    assert_eq!(
        users["finalizerOwners"],
        pairs(actors::METADATA_FINALIZER_OWNERS)
    );
    assert_eq!(
        users["namespaceFinalizerOwners"],
        pairs(&[actors::NAMESPACE_SPEC_FINALIZER_OWNER])
    );
    // A changed list reaches the rendered conditions.
    let narrowed = render(&[
        "trustedUsers.podDeleters={system:serviceaccount:kube-system:pod-garbage-collector}",
    ]);
    let text = find(&narrowed, "ValidatingWebhookConfiguration")["webhooks"][0]["matchConditions"]
        [1]["expression"]
        .to_string();
    assert!(!text.contains("system:kube-controller-manager"), "{text}");
}

/// Where the chart and the base may differ: the Namespace (`helm install
/// --create-namespace`) and the CRD (the chart's crds/, a copy) are the
/// base's alone; the chart carries the metrics Service, the NetworkPolicy
/// and the node-fencing policy that manifests/ gets from their own issues.
const BASE_ONLY: &[&str] = &[
    "Namespace/forcegate",
    "CustomResourceDefinition/forcedeletions.forcegate.dev",
    "CustomResourceDefinition/forcedeletionpolicies.forcegate.dev",
];
const CHART_ONLY: &[&str] = &[
    "Service/forcegate-metrics",
    "NetworkPolicy/forcegate",
    "ValidatingAdmissionPolicy/forcegate-node-fencing",
    "ValidatingAdmissionPolicyBinding/forcegate-node-fencing",
];

/// An object without what may differ: metadata, the chart's
/// `app.kubernetes.io/instance` label in selectors, pod template labels,
/// the container args (compared on their own), and line folding of CEL.
fn comparable(object: &Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.remove("app.kubernetes.io/instance");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut object = object.clone();
    if object.get("webhooks").is_some() {
        object["webhooks"] = normalized_webhooks(&object);
    }
    if let Some(map) = object.as_object_mut() {
        map.remove("metadata");
    }
    if let Some(template) = object.pointer_mut("/spec/template/metadata") {
        template.as_object_mut().map(|m| m.remove("labels"));
    }
    if let Some(container) = object.pointer_mut("/spec/template/spec/containers/0") {
        container.as_object_mut().map(|m| m.remove("args"));
    }
    strip(&mut object);
    object
}

/// The first place where `chart` and `base` differ: `path: chart vs base`.
fn first_difference(chart: &Value, base: &Value, path: &str) -> Option<String> {
    match (chart, base) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            keys.into_iter().find_map(|k| {
                let (x, y) = (
                    a.get(k).unwrap_or(&Value::Null),
                    b.get(k).unwrap_or(&Value::Null),
                );
                first_difference(x, y, &format!("{path}/{k}"))
            })
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| first_difference(x, y, &format!("{path}/{i}"))),
        _ => (chart != base).then(|| format!("{path}: {chart} vs {base}")),
    }
}

#[test]
fn chart_and_base_install_the_same_objects() {
    let key = |o: &Value| {
        let kind = o["kind"].as_str().unwrap_or("");
        format!("{kind}/{}", o["metadata"]["name"].as_str().unwrap_or(""))
    };
    let rendered: BTreeMap<String, Value> = render(&[]).into_iter().map(|o| (key(&o), o)).collect();
    let base: BTreeMap<String, Value> = base_objects().into_iter().map(|o| (key(&o), o)).collect();
    for (name, object) in &base {
        match rendered.get(name) {
            Some(chart) => {
                let difference = first_difference(&comparable(chart), &comparable(object), "");
                assert!(
                    difference.is_none(),
                    "{name}: the chart differs from manifests/ at {}",
                    difference.unwrap_or_default()
                );
            }
            None => assert!(
                BASE_ONLY.contains(&name.as_str()),
                "{name} is in manifests/ but not in the chart"
            ),
        }
    }
    for name in rendered.keys() {
        assert!(
            base.contains_key(name) || CHART_ONLY.contains(&name.as_str()),
            "{name} is in the chart but not in manifests/"
        );
    }
    let args = |o: &Value| -> BTreeSet<String> {
        o["spec"]["template"]["spec"]["containers"][0]["args"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str().map(str::to_owned))
            .collect()
    };
    let (chart, base) = (
        args(&rendered["Deployment/forcegate"]),
        args(&base["Deployment/forcegate"]),
    );
    // The chart selects its webhooks by release too, and passes its check interval.
    let only_chart: Vec<&String> = chart.difference(&base).collect();
    assert_eq!(
        only_chart,
        [
            "--cert-check-interval=43200",
            "--webhook-selector=app.kubernetes.io/name=forcegate,app.kubernetes.io/instance=forcegate"
        ]
    );
    let only_base: Vec<&String> = base.difference(&chart).collect();
    assert_eq!(
        only_base,
        ["--webhook-selector=app.kubernetes.io/name=forcegate"]
    );
}

#[test]
fn certificate_modes_wire_the_secret_and_the_ca_bundle() {
    let managed = render(&[]);
    let container = &find(&managed, "Deployment")["spec"]["template"]["spec"]["containers"][0];
    assert!(
        container["args"]
            .as_array()
            .expect("args")
            .contains(&json!("--manage-certs"))
    );
    assert!(managed.iter().all(|o| o["kind"] != "Certificate"));

    let cert_manager = render(&["certificates.mode=cert-manager"]);
    for kind in [
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
    ] {
        assert_eq!(
            find(&cert_manager, kind)
                .pointer("/metadata/annotations/cert-manager.io~1inject-ca-from"),
            Some(&json!("forcegate/forcegate-tls"))
        );
    }
    let serving = cert_manager
        .iter()
        .find(|o| o["kind"] == "Certificate" && o["metadata"]["name"] == "forcegate-tls")
        .expect("serving Certificate");
    assert!(
        serving["spec"]["dnsNames"]
            .as_array()
            .expect("names")
            .contains(&json!("forcegate.forcegate.svc"))
    );
    let pod = &find(&cert_manager, "Deployment")["spec"]["template"]["spec"];
    assert_eq!(pod["volumes"][0]["secret"]["secretName"], "forcegate-tls");
    assert!(
        pod["containers"][0]["args"]
            .as_array()
            .expect("args")
            .contains(&json!("--manage-certs=false"))
    );

    let provided = render(&[
        "certificates.mode=secret",
        "certificates.secretName=mine",
        "certificates.caBundle=Y2E=",
    ]);
    let pod = &find(&provided, "Deployment")["spec"]["template"]["spec"];
    assert_eq!(pod["volumes"][0]["secret"]["secretName"], "mine");
    for webhook in find(&provided, "ValidatingWebhookConfiguration")["webhooks"]
        .as_array()
        .expect("webhooks")
    {
        assert_eq!(webhook["clientConfig"]["caBundle"], "Y2E=");
    }
}

#[test]
fn monitoring_policies_and_crd_copies_match_their_sources() {
    let same = |copy: &str, source: &str| {
        let read = |p: &str| {
            std::fs::read_to_string(root().join(p)).unwrap_or_else(|e| panic!("{p}: {e}"))
        };
        assert_eq!(
            read(copy),
            read(source),
            "{copy} drifted from {source}: run deploy/monitoring/generate.sh"
        );
    };
    same(
        "charts/forcegate/files/rules.yaml",
        "deploy/monitoring/rules.yaml",
    );
    same(
        "charts/forcegate/files/dashboard.json",
        "deploy/monitoring/dashboard.json",
    );
    same(
        "charts/forcegate/crds/forcedeletions.forcegate.dev.yaml",
        "manifests/crd.yaml",
    );
    same(
        "charts/forcegate/crds/forcedeletionpolicies.forcegate.dev.yaml",
        "manifests/policy-crd.yaml",
    );
    let mut shipped = Vec::new();
    for entry in std::fs::read_dir(root().join("policies"))
        .expect("policies/")
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".yaml") && !name.ends_with("_test.yaml") {
            same(
                &format!("charts/forcegate/files/policies/{name}"),
                &format!("policies/{name}"),
            );
            shipped.push(name);
        }
    }
    let copies = std::fs::read_dir(chart().join("files/policies"))
        .expect("copies")
        .count();
    assert_eq!(
        copies,
        shipped.len(),
        "files/policies holds a policy policies/ does not"
    );

    let objects = render(&[
        "serviceMonitor.enabled=true",
        "prometheusRule.enabled=true",
        "grafanaDashboard.enabled=true",
        "policies.install=true",
    ]);
    let monitoring = |file: &str| {
        let text =
            std::fs::read_to_string(root().join("deploy/monitoring").join(file)).expect(file);
        serde_saphyr::from_str::<Value>(&text).expect(file)
    };
    assert_eq!(
        find(&objects, "ServiceMonitor")["spec"],
        monitoring("servicemonitor.yaml")["spec"]
    );
    assert_eq!(
        find(&objects, "PrometheusRule")["spec"],
        monitoring("rules.yaml")
    );
    let dashboard = objects
        .iter()
        .find(|o| o["kind"] == "ConfigMap" && o["metadata"]["name"] == "forcegate-dashboard")
        .expect("dashboard ConfigMap");
    assert_eq!(
        dashboard["data"],
        monitoring("dashboard-configmap.yaml")["data"]
    );
    let policies = objects
        .iter()
        .filter(|o| o["kind"] == "ForceDeletionPolicy")
        .count();
    assert_eq!(policies, shipped.len());
}
