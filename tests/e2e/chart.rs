//! charts/forcegate and deploy/cert-manager against the real API server:
//! everything they render passes a server-side dry run (`helm lint` runs
//! in tests/chart.rs).

use serde_json::{Value, json};

use crate::chart_support::{objects, template};
use crate::harness::{NAMESPACE, harness};

fn dry_run(items: &[Value]) -> String {
    let h = harness();
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
    let run = h
        .admin
        .run_stdin(&["apply", "--dry-run=server", "-f", "-"], &list.to_string());
    assert!(
        run.success(),
        "server-side dry run failed:\n{}",
        run.describe()
    );
    run.stdout
}

#[test]
fn the_rendered_chart_passes_a_server_side_dry_run() {
    // A release name of its own: every object is new to the API server.
    let rendered = objects(&template(
        "forcegate-dryrun",
        NAMESPACE,
        &["--include-crds"],
    ));
    assert!(rendered.len() >= 14, "{} objects rendered", rendered.len());
    let out = dry_run(&rendered);
    let accepted = out
        .lines()
        .filter(|l| l.contains("(server dry run)"))
        .count();
    assert_eq!(accepted, rendered.len(), "{out}");
    for (mode, extra) in [
        (
            "secret",
            vec![
                "--set",
                "certificates.mode=secret",
                "--set",
                "certificates.secretName=mine",
                "--set",
                "certificates.caBundle=Y2E=",
            ],
        ),
        (
            "networkPolicy",
            vec!["--set", "networkPolicy.apiServerCIDRs={10.0.0.0/8}"],
        ),
    ] {
        let rendered = objects(&template("forcegate-dryrun", NAMESPACE, &extra));
        dry_run(&rendered);
        eprintln!("e2e: chart with {mode} values passes a dry run");
    }
}

#[test]
fn the_cert_manager_overlay_builds_and_passes_a_dry_run() {
    let h = harness();
    let dir = h.root.join("deploy/cert-manager");
    let built = objects(
        &h.admin
            .ok(&["kustomize", dir.to_str().expect("UTF-8 path")]),
    );
    // cert-manager's own kinds need its CRDs, which the test cluster lacks.
    let (cert_manager, core): (Vec<Value>, Vec<Value>) = built.into_iter().partition(|o| {
        o["apiVersion"]
            .as_str()
            .is_some_and(|v| v.starts_with("cert-manager.io/"))
    });
    assert_eq!(cert_manager.len(), 4, "two Issuers, two Certificates");
    let find = |kind: &str| core.iter().find(|o| o["kind"] == kind).expect(kind);
    for kind in [
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
    ] {
        assert_eq!(
            find(kind).pointer("/metadata/annotations/cert-manager.io~1inject-ca-from"),
            Some(&json!("forcegate/forcegate-tls"))
        );
    }
    let pod = &find("Deployment")["spec"]["template"]["spec"];
    let args = pod["containers"][0]["args"].as_array().expect("args");
    assert!(args.contains(&json!("--manage-certs=false")), "{args:?}");
    assert!(
        args.contains(&json!("--tls-dir=/etc/forcegate/tls")),
        "{args:?}"
    );
    assert_eq!(pod["volumes"][0]["secret"]["secretName"], "forcegate-tls");
    dry_run(&core);
}
