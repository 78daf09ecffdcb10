//! The metrics the shipped alerts and dashboard query, from the real
//! exporters: forcegate in live mode (the names only a live cluster or the
//! verifier leader exports), the test API server's own /metrics after an
//! outage and a denial (the webhook series with the labels the alerts select
//! on), and kube-state-metrics, built from the Go module proxy by
//! `tests/tools/build.sh` and run against the test API server while a
//! namespace, a pod and a PVC are stuck Terminating.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::fixtures::{NodeState, PodSpec, Scene, denied_by};
use crate::harness::{Harness, harness, http_get, tail};
use crate::kubectl::{Run, eventually};
use crate::monitoring_support::{LIVE_ONLY, Scrape, used_metric_names};
use crate::process::{self, Tied};

const FORCE_DELETE: &str = "force-delete.pods.forcegate.dev";
const FINALIZERS: &str = "finalizers.forcegate.dev";
const BUILD_TIMEOUT: Duration = Duration::from_secs(45 * 60);

/// Lines of `text` for metric `name` whose labels include all of `labels`.
fn series<'a>(text: &'a str, name: &str, labels: &[&str]) -> Vec<&'a str> {
    text.lines()
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with('{'))
        })
        .filter(|l| labels.iter().all(|label| l.contains(label)))
        .collect()
}

fn used_with_prefix(prefix: &str) -> Vec<String> {
    used_metric_names()
        .into_keys()
        .filter(|n| n.starts_with(prefix))
        .collect()
}

/// Every used name with `prefix` has series in `text`; `source` names it.
fn assert_exported(text: &str, prefix: &str, source: &str) {
    let scrape = Scrape::parse(text);
    let missing: Vec<String> = used_with_prefix(prefix)
        .into_iter()
        .filter(|n| scrape.family_of(n).is_none() || !scrape.has_samples(n))
        .collect();
    assert!(
        missing.is_empty(),
        "{source} exports no series of {missing:?}, which the alerts or the dashboard query"
    );
}

#[test]
fn forcegate_and_the_api_server_export_what_the_alerts_query() {
    let h = harness();
    let scene = Scene::new(h, "monitoring");
    let ready = scene.node("n1", NodeState::Ready);
    let fenced = scene.node("n2", NodeState::OutOfService);
    let held = PodSpec {
        finalizers: vec!["example.com/hold".into()],
        ..PodSpec::default()
    };
    scene.running_pod("held", &ready, held);
    scene.running_pod("alive", &ready, PodSpec::default());
    scene.running_pod("ghost", &fenced, PodSpec::default());
    scene.human("carol");

    // forcegate down: a finalizer strip fails open at the mutating webhook
    // and closed at the validating one.
    {
        let _outage = h.outage();
        let strip = r#"{"metadata":{"finalizers":null}}"#;
        let run = scene.run(&[
            "patch",
            "pod",
            "held",
            "--type=merge",
            "-p",
            strip,
            "--as=carol",
        ]);
        assert!(
            run.stderr
                .contains(&format!("failed calling webhook \"{FINALIZERS}\"")),
            "the strip must fail closed:\n{}",
            run.describe()
        );
    }
    let _running = h.shared();
    // A denial, then an allowed force delete that leaves a record.
    let force = [
        "delete",
        "pod",
        "--force",
        "--grace-period=0",
        "--wait=false",
    ];
    let dry_run = |pod| [&force[..], &[pod, "--dry-run=server"]].concat();
    scene.until_forcegate_sees(&dry_run("alive"), |run| {
        denied_by(run, FORCE_DELETE, "node-alive")
    });
    scene.until_forcegate_sees(&dry_run("ghost"), Run::success);
    scene.ok(&[&force[..], &["ghost"]].concat());

    let apiserver = scene.k().ok(&["get", "--raw", "/metrics"]);
    let rejection = "apiserver_admission_webhook_rejection_count";
    for (name, labels) in [
        (
            rejection,
            vec![
                r#"error_type="calling_webhook_error""#,
                r#"name="finalizers.forcegate.dev""#,
                r#"type="validating""#,
            ],
        ),
        (
            rejection,
            vec![
                r#"error_type="no_error""#,
                r#"name="force-delete.pods.forcegate.dev""#,
                r#"rejection_code="403""#,
            ],
        ),
        (
            "apiserver_admission_webhook_fail_open_count",
            vec![r#"name="finalizers.forcegate.dev""#, r#"type="admit""#],
        ),
        (
            "apiserver_admission_webhook_admission_duration_seconds_bucket",
            vec![r#"name="force-delete.pods.forcegate.dev""#],
        ),
    ] {
        assert!(
            !series(&apiserver, name, &labels).is_empty(),
            "the API server has no {name} series with {labels:?}; its webhook series:\n{}",
            apiserver
                .lines()
                .filter(|l| l.contains("forcegate.dev"))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    assert_exported(&apiserver, "apiserver_", "the API server");

    // The verifier leader reports the record's phase every 15 s.
    let live = eventually(
        "forcegate's live-only series",
        Duration::from_secs(90),
        || {
            let (status, text) = http_get(h.metrics_port, "/metrics").map_err(|e| e.to_string())?;
            let scrape = Scrape::parse(&text);
            let missing: Vec<&&str> = LIVE_ONLY
                .iter()
                .filter(|n| !scrape.has_samples(n))
                .collect();
            if status == 200 && missing.is_empty() {
                Ok(text)
            } else {
                Err(format!("HTTP {status}, no series of {missing:?} yet"))
            }
        },
    );
    assert!(
        !series(
            &live,
            "forcegate_forcedeletions_oldest_created_timestamp_seconds",
            &[]
        )
        .is_empty(),
        "{live}"
    );
}

/// `tests/tools/build.sh kube-state-metrics`: its last stdout line is the bin directory.
fn kube_state_metrics(h: &Harness) -> PathBuf {
    let mut command = Command::new("bash");
    command
        .arg(h.root.join("tests/tools/build.sh"))
        .arg("kube-state-metrics");
    let done = process::run(&mut command, None, BUILD_TIMEOUT).expect("runs tests/tools/build.sh");
    assert!(
        done.status.is_some_and(|s| s.success()),
        "tests/tools/build.sh kube-state-metrics failed:\n{}",
        tail(&done.stderr, 40)
    );
    let bin = done.stdout.lines().last().unwrap_or_default().trim();
    PathBuf::from(bin).join("kube-state-metrics")
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("address").port()
}

#[test]
fn kube_state_metrics_exports_what_the_terminating_alerts_query() {
    let h = harness();
    let binary = kube_state_metrics(h);
    let scene = Scene::new(h, "monitoring-ksm");
    let node = scene.node("n1", NodeState::Ready);
    scene.running_pod("stuck", &node, PodSpec::default());
    scene.claim_bound_to("data", None);
    // No kubelet and no controllers: each stays Terminating.
    scene.ok(&["delete", "pod", "stuck", "--wait=false"]);
    scene.ok(&["delete", "pvc", "data", "--wait=false"]);
    let gone = format!("{}-gone", scene.ns);
    scene.k().ok(&["create", "namespace", &gone]);
    scene
        .k()
        .ok(&["delete", "namespace", &gone, "--wait=false"]);

    let port = free_port();
    let telemetry = free_port();
    let log = std::fs::File::create(h.work.join("kube-state-metrics.log")).expect("log file");
    let mut command = process::tied_wrapper(&binary);
    command
        .arg(format!(
            "--kubeconfig={}",
            h.work.join("cluster/kubeconfig").display()
        ))
        .args(["--host=127.0.0.1", "--telemetry-host=127.0.0.1"])
        .arg(format!("--port={port}"))
        .arg(format!("--telemetry-port={telemetry}"))
        .arg("--resources=namespaces,nodes,persistentvolumeclaims,pods")
        .stdout(log.try_clone().expect("log file"))
        .stderr(log);
    let _ksm = Tied::spawn("kube-state-metrics", &mut command).expect("starts kube-state-metrics");

    let ns = format!("namespace=\"{}\"", scene.ns);
    let gone_label = format!("namespace=\"{gone}\"");
    let text = eventually(
        "kube-state-metrics to see the stuck objects",
        Duration::from_secs(90),
        || {
            let (status, text) = http_get(port, "/metrics").map_err(|e| e.to_string())?;
            let stuck = [
                (
                    "kube_pod_deletion_timestamp",
                    vec![ns.as_str(), r#"pod="stuck""#],
                ),
                (
                    "kube_persistentvolumeclaim_deletion_timestamp",
                    vec![ns.as_str(), r#"persistentvolumeclaim="data""#],
                ),
                (
                    "kube_namespace_status_phase",
                    vec![gone_label.as_str(), r#"phase="Terminating""#],
                ),
            ];
            let missing: Vec<&str> = stuck
                .iter()
                .filter(|(name, labels)| series(&text, name, labels).is_empty())
                .map(|(name, _)| *name)
                .collect();
            if status == 200 && missing.is_empty() {
                Ok(text)
            } else {
                Err(format!("HTTP {status}, not yet: {missing:?}"))
            }
        },
    );
    let terminating = series(
        &text,
        "kube_namespace_status_phase",
        &[&gone_label, r#"phase="Terminating""#],
    );
    assert!(
        terminating.iter().all(|l| l.ends_with(" 1")),
        "{terminating:?}"
    );
    assert_exported(&text, "kube_", "kube-state-metrics");
}
