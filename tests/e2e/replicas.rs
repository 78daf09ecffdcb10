//! Two forcegate processes serving the same cluster from the policy
//! objects: each reports what it has in force, one writes status, and
//! `Ready` means both. With the webhook's forcegate down, the API server
//! still refuses schema-invalid policies; one that gets past it without
//! compiling leaves the last good generation in force where there is one.

use std::net::TcpListener;
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{Harness, POD_NAME, harness, http_get, read_from, tail};
use crate::kubectl::eventually;
use crate::policies::{apply, condition, scoped_policy};
use crate::process::Tied;

const STATUS_TIMEOUT: Duration = Duration::from_secs(30);

/// Another `forcegate serve --policies crd` as forcegate's ServiceAccount,
/// on ports of its own; stopped (SIGTERM) on drop.
struct Replica {
    name: String,
    metrics_port: u16,
    log: std::path::PathBuf,
    process: Option<Tied>,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Replica {
    fn start(h: &Harness, name: &str) -> Replica {
        let metrics_port = free_port();
        let log = h.work.join(format!("{name}.log"));
        let file = std::fs::File::create(&log).expect("log file");
        let mut command = h.serve_command(name, free_port(), metrics_port);
        command.stdout(file.try_clone().expect("log")).stderr(file);
        let process = Tied::spawn(name, &mut command).expect("spawn a second forcegate");
        let replica = Replica {
            name: name.to_owned(),
            metrics_port,
            log,
            process: Some(process),
        };
        eventually(
            &format!("{name} ready"),
            Duration::from_secs(60),
            || match http_get(metrics_port, "/readyz") {
                Ok((200, _)) => Ok(()),
                other => Err(format!("{other:?}\n{}", replica.log_tail())),
            },
        );
        replica
    }

    fn log_tail(&self) -> String {
        format!(
            "--- {} log\n{}",
            self.name,
            tail(&read_from(&self.log, 0), 30)
        )
    }

    fn stop(&mut self) {
        if let Some(process) = self.process.take() {
            let status = process.stop(Duration::from_secs(30));
            assert!(
                status.as_ref().is_ok_and(|s| s.success()),
                "{} did not stop cleanly: {status:?}\n{}",
                self.name,
                self.log_tail()
            );
        }
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        if let Some(process) = self.process.take() {
            let _ = process.stop(Duration::from_secs(30));
        }
    }
}

/// `(name, generation)` of each replica in the policy's status.
fn replicas(object: &Value) -> Vec<(String, Option<i64>)> {
    object["status"]["replicas"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            (
                r["name"].as_str().unwrap_or_default().to_owned(),
                r["generation"].as_i64(),
            )
        })
        .collect()
}

/// Wait until `name`'s status is Ready=`ready` with `expected` replicas.
fn until_status(h: &Harness, name: &str, ready: &str, expected: &[(&str, Option<i64>)]) -> Value {
    let expected: Vec<(String, Option<i64>)> = expected
        .iter()
        .map(|(n, g)| ((*n).to_owned(), *g))
        .collect();
    eventually(
        &format!("{name} Ready={ready} on {expected:?}"),
        STATUS_TIMEOUT,
        || {
            let (c, object) = condition(h, name, "Ready")?;
            if c["status"] == ready && replicas(&object) == expected {
                Ok(object)
            } else {
                Err(object.to_string())
            }
        },
    )
}

/// The field managers that wrote the object's status.
fn status_writers(object: &Value) -> Vec<String> {
    object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["subresource"] == "status")
        .filter_map(|m| m["manager"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn two_replicas_report_what_they_compiled_and_one_writes_status() {
    let h = harness();
    let _running = h.shared();
    let mut second = Replica::start(h, "forcegate-e2e-2");
    let name = "e2e-replicas";
    let policy = scoped_policy(name, "e2e-none", "Deny", json!([]));
    assert!(apply(h, &policy).success());
    let both = [(POD_NAME, Some(1)), ("forcegate-e2e-2", Some(1))];
    let object = until_status(h, name, "True", &both);
    let (ready, _) = condition(h, name, "Ready").expect("Ready");
    assert!(
        ready["message"]
            .as_str()
            .is_some_and(|m| m.contains("in force on 2 replicas")),
        "{object}"
    );
    let object = h
        .admin
        .get(&["fdp", name, "--show-managed-fields"])
        .expect("policy");
    let writers = status_writers(&object);
    assert_eq!(writers.len(), 1, "one replica writes status: {writers:?}");
    assert!(
        [POD_NAME, "forcegate-e2e-2"]
            .iter()
            .any(|r| writers[0] == format!("forcegate/{r}")),
        "{writers:?}"
    );

    let patch = r#"{"spec":{"action":"Warn"}}"#;
    h.admin
        .ok(&["patch", "fdp", name, "--type=merge", "-p", patch]);
    until_status(
        h,
        name,
        "True",
        &[(POD_NAME, Some(2)), ("forcegate-e2e-2", Some(2))],
    );

    // A replica that stops withdraws its report; Ready then means the rest.
    second.stop();
    until_status(h, name, "True", &[(POD_NAME, Some(2))]);
    h.admin.ok(&["delete", "fdp", name]);
}

#[test]
fn with_forcegate_down_the_api_server_still_refuses_and_the_last_good_generation_holds() {
    let h = harness();
    let second = Replica::start(h, "forcegate-e2e-3");
    let name = "e2e-last-good";
    let policy = scoped_policy(name, "e2e-none", "Deny", json!([]));
    assert!(apply(h, &policy).success());
    until_status(
        h,
        name,
        "True",
        &[(POD_NAME, Some(1)), ("forcegate-e2e-3", Some(1))],
    );

    let outage = h.outage();
    assert!(
        http_get(h.metrics_port, "/readyz").is_err(),
        "forcegate must be down"
    );
    // The schema holds without forcegate.
    let mut invalid = policy.clone();
    invalid["spec"]["action"] = json!("Block");
    let run = apply(h, &invalid);
    assert!(
        !run.success()
            && run
                .stderr
                .contains("spec.action: Unsupported value: \"Block\""),
        "{}",
        run.describe()
    );
    assert!(
        !run.stderr.contains("admission webhook"),
        "{}",
        run.describe()
    );
    // What only the loader knows gets in (the webhook fails open) ...
    let mut broken = policy.clone();
    broken["spec"]["conditions"] = json!([{"path": "$.facts.pod.labels[", "exists": true}]);
    let run = apply(h, &broken);
    assert!(run.success(), "{}", run.describe());
    // ... and the replica still running keeps generation 1 in force,
    // counts the failure, and (now the status writer) says so.
    let failures = eventually("the failed reload counted", STATUS_TIMEOUT, || {
        let (_, metrics) = http_get(second.metrics_port, "/metrics").map_err(|e| e.to_string())?;
        let line = metrics
            .lines()
            .find(|l| l.starts_with("forcegate_policy_reloads_total{result=\"failure\"}"))
            .map(str::to_owned);
        line.ok_or(metrics)
    });
    assert!(!failures.ends_with(" 0"), "{failures}");
    let object = until_status(h, name, "False", &[("forcegate-e2e-3", Some(1))]);
    let (ready, _) = condition(h, name, "Ready").expect("Ready");
    assert_eq!(ready["reason"], "CompileFailed", "{object}");
    let message = ready["message"].as_str().unwrap_or_default();
    assert!(message.contains("spec.conditions[0].path: "), "{object}");
    assert!(
        message.contains("last good generation stays in force"),
        "{object}"
    );

    // Back up, the restarted replica has no good generation of it to keep.
    drop(outage);
    until_status(
        h,
        name,
        "False",
        &[(POD_NAME, None), ("forcegate-e2e-3", Some(1))],
    );
    h.admin.ok(&["delete", "fdp", name]);
    drop(second);
}
