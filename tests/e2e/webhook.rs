//! forcegate on the host, registered with the API server by URL.

use std::time::Duration;

use serde_json::Value;

use crate::fixtures::{NodeState, PodSpec, Scene, denied_by};
use crate::harness::{harness, http_get};
use crate::kubectl::eventually;

#[test]
fn forcegate_is_ready_and_the_api_server_calls_it_by_url_with_the_ca_bundle() {
    let h = harness();
    let _running = h.shared();

    let (status, body) = http_get(h.metrics_port, "/readyz").expect("/readyz");
    assert_eq!(
        status, 200,
        "forcegate must be ready once its caches synced: {body}"
    );
    let (status, _) = http_get(h.metrics_port, "/healthz").expect("/healthz");
    assert_eq!(status, 200);

    // Every webhook of both configurations points at this forcegate
    // (policy objects at their own path).
    for (kind, path) in [
        ("validatingwebhookconfiguration", "/validate"),
        ("mutatingwebhookconfiguration", "/mutate"),
    ] {
        let config = h.admin.get(&[kind, "forcegate"]).expect(kind);
        let webhooks = config["webhooks"].as_array().expect("webhooks");
        assert!(!webhooks.is_empty());
        for webhook in webhooks {
            let path = match webhook["name"].as_str() {
                Some("policies.forcegate.dev") => "/validate-policy",
                _ => path,
            };
            assert_eq!(
                webhook.pointer("/clientConfig/url").and_then(Value::as_str),
                Some(format!("https://127.0.0.1:{}{path}", h.port).as_str()),
                "{webhook:#}"
            );
            assert_eq!(
                webhook
                    .pointer("/clientConfig/caBundle")
                    .and_then(Value::as_str),
                Some(h.ca_bundle.as_str()),
                "{webhook:#}"
            );
        }
    }

    // The API server verifies forcegate's certificate against the caBundle
    // and gets a decision back: a Ready node's pod is not force-deleted.
    let scene = Scene::new(h, "wiring");
    let node = scene.node("n1", NodeState::Ready);
    scene.running_pod("p", &node, PodSpec::default());
    let before = admissions(h);
    scene.until_forcegate_sees(
        &[
            "delete",
            "pod",
            "p",
            "--force",
            "--grace-period=0",
            "--dry-run=server",
        ],
        |run| denied_by(run, "force-delete.pods.forcegate.dev", "node-alive"),
    );
    let after = admissions(h);
    assert!(
        after > before,
        "forcegate_admission_requests_total must count the API server's calls ({before} -> {after})"
    );
}

/// Sum of `forcegate_admission_requests_total` on /metrics.
fn admissions(h: &crate::harness::Harness) -> f64 {
    let (status, text) = http_get(h.metrics_port, "/metrics").expect("/metrics");
    assert_eq!(status, 200);
    text.lines()
        .filter(|l| l.starts_with("forcegate_admission_requests_total"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// Families that get their first sample only when something fails.
const FAILURE_ONLY: [&str; 4] = [
    "forcegate_admission_errors_total",
    "forcegate_bad_requests_total",
    "forcegate_tls_reloads_total",
    "forcegate_tls_handshake_failures_total",
];

#[test]
fn every_metric_in_the_operations_guide_is_exported() {
    let h = harness();
    let _running = h.shared();
    let guide =
        std::fs::read_to_string(h.root.join("docs/operations.md")).expect("docs/operations.md");
    let section = guide
        .split("\n## Metrics")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("a Metrics section");
    let documented: Vec<String> = section
        .lines()
        .filter(|l| l.starts_with("| `forcegate_"))
        .flat_map(|l| {
            l.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .filter(|name| name.starts_with("forcegate_"))
        .map(|name| name.split('{').next().unwrap_or_default().to_owned())
        .collect();
    assert!(documented.len() >= 10, "found only {documented:?}");

    // Traffic that gives every other family a sample: a denial, an allowed
    // and recorded force delete, the verifier checking the record.
    let scene = Scene::new(h, "metrics");
    let ready = scene.node("ready", NodeState::Ready);
    scene.running_pod("kept", &ready, PodSpec::default());
    let fenced = scene.node("fenced", NodeState::OutOfService);
    scene.running_pod("gone", &fenced, PodSpec::default());
    scene.until_forcegate_sees(
        &[
            "delete",
            "pod",
            "kept",
            "--force",
            "--grace-period=0",
            "--dry-run=server",
        ],
        |run| denied_by(run, "force-delete.pods.forcegate.dev", "node-alive"),
    );
    scene.until_forcegate_sees(
        &[
            "delete",
            "pod",
            "gone",
            "--force",
            "--grace-period=0",
            "--dry-run=server",
        ],
        |run| run.success(),
    );
    scene.ok(&["delete", "pod", "gone", "--force", "--grace-period=0"]);

    let expected: Vec<String> = documented
        .into_iter()
        .filter(|name| !FAILURE_ONLY.contains(&name.as_str()))
        .collect();
    // The phase gauge is recomputed every 15 s by the verifier leader.
    eventually(
        "every documented metric on /metrics",
        Duration::from_secs(40),
        || {
            let (status, text) = http_get(h.metrics_port, "/metrics").map_err(|e| e.to_string())?;
            if status != 200 {
                return Err(format!("HTTP {status}"));
            }
            // Counters are declared without the `_total` their samples carry.
            let missing: Vec<&String> = expected
                .iter()
                .filter(|name| {
                    let family = name.strip_suffix("_total").unwrap_or(name);
                    !text.contains(&format!("# TYPE {family} "))
                })
                .collect();
            if missing.is_empty() {
                Ok(())
            } else {
                Err(format!("documented but not exported: {missing:?}\n{text}"))
            }
        },
    );
}
