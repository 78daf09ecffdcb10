//! deploy/monitoring/ holds together: the generated PrometheusRule and
//! dashboard ConfigMap carry exactly their sources (rules.yaml,
//! dashboard.json), every alert has what on-call needs (summary, a
//! description, a severity, a runbook entry that exists in
//! docs/operations.md) and a promtool test that makes it fire and one where
//! it stays silent. promtool itself runs in `.ci/run`.

mod monitoring_support;

use std::collections::{BTreeMap, BTreeSet};

use monitoring_support::{read, yaml};
use serde_json::Value;

/// The alerts issue 30 asks for; rules.yaml may have more, never fewer.
const REQUIRED_ALERTS: &[&str] = &[
    "ForceDeletionNeedsAttention",
    "ForceDeletionCleanupPending",
    "NamespaceStuckTerminating",
    "PodStuckTerminating",
    "ForcegateWebhookFailing",
    "ForcegateWebhookSlow",
    "ForcegateClusterCacheStale",
    "ForcegateCertificateExpiringSoon",
    "ForcegateDown",
    "ForceDeletionsSurge",
];

const RUNBOOK: &str = "https://github.com/forcegate/forcegate/blob/main/docs/operations.md#";

fn alerts() -> Vec<Value> {
    let rules = yaml("rules.yaml");
    rules["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .flat_map(|g| g["rules"].as_array().expect("rules").clone())
        .filter(|r| r.get("alert").is_some())
        .collect()
}

#[test]
fn prometheusrule_wraps_exactly_the_rules_file() {
    let wrapped = yaml("prometheusrule.yaml");
    assert_eq!(wrapped["apiVersion"], "monitoring.coreos.com/v1");
    assert_eq!(wrapped["kind"], "PrometheusRule");
    assert_eq!(
        wrapped["spec"],
        yaml("rules.yaml"),
        "prometheusrule.yaml differs from rules.yaml: run deploy/monitoring/generate.sh"
    );
}

#[test]
fn dashboard_configmap_carries_exactly_the_dashboard() {
    let map = yaml("dashboard-configmap.yaml");
    assert_eq!(map["kind"], "ConfigMap");
    assert_eq!(map["metadata"]["labels"]["grafana_dashboard"], "1");
    let embedded: Value = serde_json::from_str(
        map["data"]["forcegate.json"]
            .as_str()
            .expect("data.forcegate.json"),
    )
    .expect("the embedded dashboard is JSON");
    let source: Value = serde_json::from_str(&read("dashboard.json")).expect("JSON");
    assert_eq!(
        embedded, source,
        "dashboard-configmap.yaml differs from dashboard.json: run deploy/monitoring/generate.sh"
    );
}

#[test]
fn servicemonitor_scrapes_the_metrics_port_of_forcegate_metrics() {
    let monitor = yaml("servicemonitor.yaml");
    assert_eq!(monitor["kind"], "ServiceMonitor");
    assert_eq!(
        monitor["spec"]["namespaceSelector"]["matchNames"][0],
        "forcegate"
    );
    assert_eq!(monitor["spec"]["endpoints"][0]["port"], "metrics");
    assert_eq!(monitor["spec"]["endpoints"][0]["path"], "/metrics");
    // The Service's name becomes the job label the ForcegateDown alert uses.
    let down = alerts()
        .into_iter()
        .find(|a| a["alert"] == "ForcegateDown")
        .expect("ForcegateDown");
    assert!(
        down["expr"]
            .as_str()
            .is_some_and(|e| e.contains("job=\"forcegate-metrics\"")),
        "{down}"
    );
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces
/// to dashes.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

#[test]
fn every_alert_says_what_it_is_what_to_run_and_where_its_runbook_is() {
    let operations = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/operations.md"),
    )
    .expect("docs/operations.md");
    let anchors: BTreeSet<String> = operations
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|l| anchor(l.trim_start_matches('#')))
        .collect();
    let alerts = alerts();
    let names: BTreeSet<&str> = alerts.iter().filter_map(|a| a["alert"].as_str()).collect();
    for required in REQUIRED_ALERTS {
        assert!(names.contains(required), "rules.yaml has no {required}");
    }
    for alert in &alerts {
        let name = alert["alert"].as_str().expect("name");
        let notes = &alert["annotations"];
        for key in ["summary", "description"] {
            assert!(
                notes[key].as_str().is_some_and(|t| t.len() > 20),
                "{name}: no {key}"
            );
        }
        assert!(
            notes["description"]
                .as_str()
                .is_some_and(|d| d.contains("`kubectl ")),
            "{name}: the description names no command to run"
        );
        let severity = alert["labels"]["severity"].as_str().unwrap_or_default();
        assert!(
            ["critical", "warning", "info"].contains(&severity),
            "{name}: severity {severity:?}"
        );
        let url = notes["runbook_url"].as_str().unwrap_or_default();
        let target = url.strip_prefix(RUNBOOK).unwrap_or_else(|| {
            panic!("{name}: runbook_url {url:?} is not into docs/operations.md")
        });
        assert_eq!(target, name.to_lowercase(), "{name}: runbook anchor");
        assert!(
            anchors.contains(target),
            "{name}: docs/operations.md has no heading for #{target}"
        );
    }
}

#[test]
fn every_alert_has_a_promtool_test_that_fires_it_and_one_that_keeps_it_silent() {
    // alert -> (fired somewhere, silent somewhere)
    let mut seen: BTreeMap<String, (bool, bool)> = BTreeMap::new();
    let dir = monitoring_support::monitoring_dir().join("tests");
    for entry in std::fs::read_dir(&dir).expect("deploy/monitoring/tests") {
        let path = entry.expect("entry").path();
        let file = format!(
            "tests/{}",
            path.file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
        );
        let suite = yaml(&file);
        assert_eq!(suite["rule_files"][0], "../rules.yaml", "{file}");
        for test in suite["tests"].as_array().expect("tests") {
            for case in test["alert_rule_test"].as_array().into_iter().flatten() {
                let name = case["alertname"].as_str().expect("alertname").to_owned();
                let fired = case["exp_alerts"].as_array().is_some_and(|a| !a.is_empty());
                let entry = seen.entry(name).or_default();
                if fired {
                    entry.0 = true;
                } else {
                    entry.1 = true;
                }
            }
        }
    }
    for alert in alerts() {
        let name = alert["alert"].as_str().expect("name");
        let (fired, silent) = seen.get(name).copied().unwrap_or_default();
        assert!(fired, "no promtool test makes {name} fire");
        assert!(silent, "no promtool test keeps {name} silent");
    }
}
