//! `manifests/` against the real API server: server-side dry runs validate
//! the CEL matchConditions, the CRD schema, Pod Security and every field.

use std::path::Path;

use serde_json::{Value, json};

use crate::harness::{NAMESPACE, harness};
use crate::kubectl::parse;
use crate::overlay::read_manifest;

fn manifest_files(dir: &Path) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .expect("manifests/")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".yaml") && name != "kustomization.yaml")
        .collect();
    files.sort();
    files
}

#[test]
fn every_manifest_passes_a_server_side_dry_run() {
    let h = harness();
    // The harness applied the CRD (and the overlay, hence the namespace) for
    // real, so objects that depend on them validate.
    for file in manifest_files(&h.manifests) {
        let path = h.manifests.join(&file);
        let path = path.to_str().expect("UTF-8 path");
        let run = h.admin.run(&["apply", "--dry-run=server", "-f", path]);
        assert!(
            run.success(),
            "{file} fails a server-side dry run:\n{}",
            run.describe()
        );
        assert!(
            run.stdout.contains("(server dry run)"),
            "{}",
            run.describe()
        );
    }
    let dir = h.manifests.to_str().expect("UTF-8 path");
    let run = h.admin.run(&["apply", "--dry-run=server", "-k", dir]);
    assert!(
        run.success(),
        "the kustomize base fails a dry run:\n{}",
        run.describe()
    );
    let objects = run
        .stdout
        .lines()
        .filter(|l| l.contains("(server dry run)"))
        .count();
    assert!(
        objects >= 16,
        "expected every object of the base:\n{}",
        run.describe()
    );
}

#[test]
fn kustomization_lists_every_manifest() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("manifests");
    let kustomization = read_manifest(&root, "kustomization.yaml").expect("kustomization");
    let listed: Vec<String> = kustomization["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|r| r.as_str().map(str::to_owned))
        .collect();
    for file in manifest_files(&root) {
        assert!(
            listed.contains(&file),
            "{file} is not in kustomization.yaml resources"
        );
    }
}

#[test]
fn the_api_server_really_compiles_cel_and_enforces_the_crd_schema() {
    let h = harness();
    // Control: a broken expression and a non-boolean one are rejected, so the
    // dry runs above prove the shipped expressions compile.
    let config = read_manifest(&h.manifests, "validatingwebhookconfiguration.yaml").expect("vwc");
    for (broken, error) in [
        ("request.options.(", "compilation failed"),
        ("'not a bool'", "must evaluate to bool"),
    ] {
        let mut bad = config.clone();
        bad["metadata"]["name"] = json!("forcegate-broken");
        bad["webhooks"][0]["matchConditions"][0]["expression"] = json!(broken);
        let run = h
            .admin
            .run_stdin(&["apply", "--dry-run=server", "-f", "-"], &bad.to_string());
        assert!(
            !run.success(),
            "a broken matchCondition was accepted:\n{}",
            run.describe()
        );
        assert!(
            run.stderr.contains(error),
            "expected {error:?}:\n{}",
            run.describe()
        );
    }
    // The CRD's schema is enforced: a record without its required fields
    // and one with an unknown phase are refused.
    let missing = json!({
        "apiVersion": "forcegate.dev/v1alpha1",
        "kind": "ForceDeletion",
        "metadata": {"name": "fd-schema-check"},
        "spec": {"subject": "Pod x/y"},
    });
    let run = h.admin.run_stdin(
        &["create", "--dry-run=server", "-f", "-"],
        &missing.to_string(),
    );
    assert!(
        !run.success(),
        "the CRD schema accepted an incomplete record:\n{}",
        run.describe()
    );
    assert!(run.stderr.contains("Required value"), "{}", run.describe());
}

#[test]
fn deployment_passes_pod_security_restricted_and_wires_what_forcegate_reads() {
    let h = harness();
    let dir = h.manifests.to_str().expect("UTF-8 path");
    let list = parse(
        &h.admin
            .ok(&["apply", "--dry-run=server", "-k", dir, "-o", "json"]),
    );
    let items = list["items"].as_array().expect("a List");
    let find_named = |kind: &str, name: &str| {
        items
            .iter()
            .find(|i| i["kind"] == kind && i["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name} in the base"))
    };
    let find = |kind: &str| find_named(kind, "forcegate");
    let namespace = find("Namespace");
    assert_eq!(
        namespace.pointer("/metadata/labels/pod-security.kubernetes.io~1enforce"),
        Some(&json!("restricted"))
    );

    // A pod of the Deployment's template, admitted by Pod Security
    // "restricted" in the live namespace (enforced, not just warned).
    let deployment = find("Deployment");
    let template = &deployment["spec"]["template"];
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "template-check", "namespace": NAMESPACE, "labels": template["metadata"]["labels"]},
        "spec": template["spec"],
    });
    let run = h
        .admin
        .run_stdin(&["create", "--dry-run=server", "-f", "-"], &pod.to_string());
    assert!(
        run.success(),
        "the pod template fails admission:\n{}",
        run.describe()
    );
    assert!(!run.stderr.contains("PodSecurity"), "{}", run.describe());
    let mut privileged = pod.clone();
    privileged["spec"]["containers"][0]["securityContext"]["allowPrivilegeEscalation"] =
        json!(true);
    let run = h.admin.run_stdin(
        &["create", "--dry-run=server", "-f", "-"],
        &privileged.to_string(),
    );
    assert!(
        !run.success() && run.stderr.contains("violates PodSecurity"),
        "the namespace must enforce restricted:\n{}",
        run.describe()
    );

    assert_eq!(deployment["spec"]["replicas"], 2);
    let spec = &template["spec"];
    assert_eq!(spec["securityContext"]["runAsNonRoot"], true);
    assert_eq!(
        spec["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    assert!(spec.pointer("/affinity/podAntiAffinity").is_some());
    let container = &spec["containers"][0];
    let security = &container["securityContext"];
    assert_eq!(security["readOnlyRootFilesystem"], true);
    assert_eq!(security["allowPrivilegeEscalation"], false);
    assert_eq!(security["capabilities"]["drop"], json!(["ALL"]));
    assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert!(
        container
            .pointer("/lifecycle/preStop/sleep/seconds")
            .is_some()
    );
    assert!(container.pointer("/resources/requests/memory").is_some());
    assert!(container.pointer("/resources/limits/memory").is_some());
    for (env, field) in [
        ("POD_NAME", "metadata.name"),
        ("POD_NAMESPACE", "metadata.namespace"),
    ] {
        let found = container["env"].as_array().into_iter().flatten().any(|e| {
            e["name"] == env && e.pointer("/valueFrom/fieldRef/fieldPath") == Some(&json!(field))
        });
        assert!(found, "{env} must come from the downward API ({field})");
    }

    // Args agree with the mounts, ports and Service.
    let args: Vec<&str> = container["args"]
        .as_array()
        .expect("args")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let arg = |flag: &str| {
        args.iter()
            .find_map(|a| a.strip_prefix(&format!("--{flag}=")))
            .unwrap_or_else(|| panic!("no --{flag}= in {args:?}"))
    };
    assert_eq!(args.first(), Some(&"serve"));
    assert_eq!(arg("cluster"), "kube");
    // --manage-certs: the pair comes from Secret forcegate-tls through the
    // API, so nothing is mounted (deploy/cert-manager/ mounts it instead).
    assert!(args.contains(&"--manage-certs"), "{args:?}");
    assert_eq!(arg("service"), "forcegate");
    assert!(container.get("volumeMounts").is_none() && spec.get("volumes").is_none());
    let https_port = container["ports"]
        .as_array()
        .expect("ports")
        .iter()
        .find(|p| p["name"] == "https")
        .expect("https port");
    assert_eq!(
        arg("listen").rsplit(':').next(),
        Some(https_port["containerPort"].to_string().as_str())
    );
    let service = find("Service");
    let https = service["spec"]["ports"]
        .as_array()
        .expect("ports")
        .iter()
        .find(|p| p["name"] == "https")
        .expect("Service https port");
    assert_eq!(https["port"], 443);
    assert_eq!(https["targetPort"], "https");
    // The webhook Service carries the webhook port only; metrics have
    // their own Service for a ServiceMonitor to select.
    assert_eq!(service["spec"]["ports"].as_array().map(Vec::len), Some(1));
    let metrics = find_named("Service", "forcegate-metrics");
    assert_eq!(
        metrics["metadata"]["labels"]["app.kubernetes.io/component"],
        "metrics"
    );
    assert_eq!(metrics["spec"]["ports"][0]["name"], "metrics");
    assert_eq!(metrics["spec"]["ports"][0]["targetPort"], "metrics");
    assert_eq!(
        arg("metrics-listen").rsplit(':').next(),
        Some(metrics["spec"]["ports"][0]["port"].to_string().as_str())
    );
    // Ingress only to the two ports; metrics only from labelled namespaces.
    let policy = find("NetworkPolicy");
    assert_eq!(policy["spec"]["policyTypes"], json!(["Ingress"]));
    let rules = policy["spec"]["ingress"].as_array().expect("ingress rules");
    let ports: Vec<&Value> = rules.iter().map(|r| &r["ports"][0]["port"]).collect();
    assert_eq!(ports, [&json!("https"), &json!("metrics")]);
    assert_eq!(
        rules[1]["from"][0]["namespaceSelector"]["matchLabels"]["forcegate.dev/scrape-metrics"],
        "true"
    );
    let pdb = find("PodDisruptionBudget");
    assert_eq!(pdb["spec"]["minAvailable"], 1);
}
