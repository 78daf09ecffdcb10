//! Finalizer stripping (UPDATE) and namespace force-finalize
//! (`namespaces/finalize`).

use std::time::Duration;

use serde_json::Value;

use crate::fixtures::{NodeState, PodSpec, Scene, denied_by, record_name, uid};
use crate::harness::harness;
use crate::kubectl::eventually;

const FINALIZERS: &str = "finalizers.forcegate.dev";
const NAMESPACE_FINALIZE: &str = "namespace-finalize.forcegate.dev";
const STRIP: &str = r#"{"metadata":{"finalizers":null}}"#;

/// A claim with `kubernetes.io/pvc-protection` mounted by a running pod,
/// and user `alice` who may patch it. Returns the claim's UID.
pub fn claim_in_use(scene: &Scene) -> String {
    let node = scene.node("n1", NodeState::Ready);
    let uid = scene.claim_bound_to("data", None);
    scene.running_pod(
        "app-0",
        &node,
        PodSpec {
            claims: vec!["data".into()],
            ..PodSpec::default()
        },
    );
    scene.human("alice");
    let claim = scene
        .k()
        .get(&["-n", &scene.ns, "pvc", "data"])
        .expect("claim");
    assert_eq!(
        finalizers(&claim),
        vec!["kubernetes.io/pvc-protection"],
        "the API server adds pvc-protection to every claim"
    );
    uid
}

fn finalizers(object: &Value) -> Vec<String> {
    object
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|f| f.as_str().map(str::to_owned))
        .collect()
}

#[test]
fn finalizer_strip_by_a_human_is_denied() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "strip");
    let uid = claim_in_use(&scene);
    let strip = [
        "patch",
        "pvc",
        "data",
        "--type=merge",
        "-p",
        STRIP,
        "--as=alice",
    ];
    let mut dry = strip.to_vec();
    dry.push("--dry-run=server");
    scene.until_forcegate_sees(&dry, |run| {
        denied_by(run, FINALIZERS, "protected-finalizers")
    });

    let run = scene.run(&strip);
    assert!(
        denied_by(&run, FINALIZERS, "protected-finalizers"),
        "{}",
        run.describe()
    );
    assert!(
        run.stderr.contains("is still mounted by app-0"),
        "the denial should name the pod using the claim:\n{}",
        run.describe()
    );
    let claim = scene
        .k()
        .get(&["-n", &scene.ns, "pvc", "data"])
        .expect("claim");
    assert_eq!(finalizers(&claim), vec!["kubernetes.io/pvc-protection"]);
    assert!(
        claim
            .pointer("/metadata/annotations/forcegate.dev~1cleanup")
            .is_none()
    );
    assert!(scene.record(&uid).is_none());
}

#[test]
fn job_tracking_finalizer_strip_by_a_human_is_denied() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "tracking");
    let node = scene.node("n1", NodeState::Ready);
    let (owner, job) = scene.active_cron_job("report");
    scene.running_pod(
        "report-run",
        &node,
        PodSpec {
            owner: Some(owner),
            finalizers: vec!["batch.kubernetes.io/job-tracking".into()],
            ..PodSpec::default()
        },
    );
    scene.human("bob");
    let strip = [
        "patch",
        "pod",
        "report-run",
        "--type=merge",
        "-p",
        STRIP,
        "--as=bob",
    ];
    let mut dry = strip.to_vec();
    dry.push("--dry-run=server");
    scene.until_forcegate_sees(&dry, |run| denied_by(run, FINALIZERS, "job-state"));

    let run = scene.run(&strip);
    assert!(
        denied_by(&run, FINALIZERS, "job-state"),
        "{}",
        run.describe()
    );
    assert!(
        run.stderr.contains(&format!("Job {job} counts")),
        "{}",
        run.describe()
    );
    let pod = scene.pod("report-run").expect("pod");
    assert_eq!(finalizers(&pod), vec!["batch.kubernetes.io/job-tracking"]);
}

#[test]
fn break_glass_strip_is_allowed_recorded_and_annotated() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "breakglass");
    let uid = claim_in_use(&scene);
    let reason = "INC-4711 storage backend wedged";
    scene.ok(&[
        "annotate",
        "pvc",
        "data",
        &format!("forcegate.dev/break-glass={reason}"),
    ]);

    // The annotation alone is not enough: alice is not in the group.
    let not_member = [
        "patch",
        "pvc",
        "data",
        "--type=merge",
        "-p",
        STRIP,
        "--as=alice",
    ];
    let mut dry = not_member.to_vec();
    dry.push("--dry-run=server");
    let run = scene.until_forcegate_sees(&dry, |run| {
        denied_by(run, FINALIZERS, "protected-finalizers")
    });
    assert!(
        run.stderr
            .contains("alice is not in group forcegate:break-glass"),
        "the denial should say why break-glass did not apply:\n{}",
        run.describe()
    );

    let run = scene.run(&[
        "patch",
        "pvc",
        "data",
        "--type=merge",
        "-p",
        STRIP,
        "--as=alice",
        "--as-group=forcegate:break-glass",
        "--as-group=system:authenticated",
    ]);
    assert!(
        run.success(),
        "break-glass by a member must pass:\n{}",
        run.describe()
    );
    assert!(
        run.stderr
            .contains(&format!("break-glass by alice (\"{reason}\")")),
        "kubectl should show the break-glass warning:\n{}",
        run.describe()
    );
    let record = record_name(&uid);
    let claim = scene
        .k()
        .get(&["-n", &scene.ns, "pvc", "data"])
        .expect("claim");
    assert!(finalizers(&claim).is_empty(), "{claim:#}");
    assert_eq!(
        claim
            .pointer("/metadata/annotations/forcegate.dev~1cleanup")
            .and_then(Value::as_str),
        Some(record.as_str()),
        "the mutating webhook must link the claim to its record: {claim:#}"
    );
    let written = scene
        .record(&uid)
        .expect("a break-glass strip must be recorded");
    assert_eq!(
        written
            .pointer("/spec/breakGlassReason")
            .and_then(Value::as_str),
        Some(reason)
    );
    assert_eq!(
        written
            .pointer("/spec/requester/username")
            .and_then(Value::as_str),
        Some("alice")
    );
    assert_eq!(
        written
            .pointer("/spec/action/removedFinalizers/0")
            .and_then(Value::as_str),
        Some("kubernetes.io/pvc-protection")
    );
}

#[test]
fn namespace_force_finalize_is_gated_until_the_namespace_is_empty() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "finalize");
    let ns = scene.ns.clone();
    let node = scene.node("n1", NodeState::Ready);
    scene.running_pod("leftover", &node, PodSpec::default());
    scene.ok(&[
        "create",
        "configmap",
        "settings",
        "--from-literal=mode=prod",
    ]);
    let namespace = scene.k().get(&["namespace", &ns]).expect("namespace");
    let ns_uid = uid(&namespace);
    scene.k().ok(&["delete", "namespace", &ns, "--wait=false"]);
    let terminating = eventually(
        "the namespace to be Terminating",
        Duration::from_secs(10),
        || {
            let ns = scene.k().get(&["namespace", &ns]).ok_or("namespace gone")?;
            if ns.pointer("/status/phase").and_then(Value::as_str) == Some("Terminating") {
                Ok(ns)
            } else {
                Err(format!("{ns:#}"))
            }
        },
    );
    let mut finalized = terminating.clone();
    finalized["spec"]["finalizers"] = serde_json::json!([]);
    let body = finalized.to_string();
    let path = format!("/api/v1/namespaces/{ns}/finalize");
    let dry_path = format!("{path}?dryRun=All");

    // Still holding a pod and a ConfigMap: denied, with counts.
    let run = eventually(
        "forcegate to see the namespace Terminating",
        Duration::from_secs(20),
        || {
            let run = scene
                .k()
                .run_stdin(&["replace", "--raw", &dry_path, "-f", "-"], &body);
            if denied_by(&run, NAMESPACE_FINALIZE, "namespace-finalize")
                && run.stderr.contains("Pod=1")
            {
                Ok(run)
            } else {
                Err(run.describe())
            }
        },
    );
    assert!(run.stderr.contains("ConfigMap=1"), "{}", run.describe());
    let run = scene
        .k()
        .run_stdin(&["replace", "--raw", &path, "-f", "-"], &body);
    assert!(
        denied_by(&run, NAMESPACE_FINALIZE, "namespace-finalize"),
        "force-finalizing a namespace that still holds objects must be denied:\n{}",
        run.describe()
    );
    assert!(
        scene.k().get(&["namespace", &ns]).is_some(),
        "namespace must survive"
    );
    assert!(scene.record(&ns_uid).is_none());

    // Emptied (the kubelet finishes its pod): allowed, recorded, gone.
    scene.ok(&[
        "delete",
        "pod",
        "leftover",
        "--grace-period=0",
        "--force",
        &format!("--as=system:node:{node}"),
        "--as-group=system:nodes",
        "--as-group=system:authenticated",
    ]);
    scene.ok(&["delete", "configmap", "settings"]);
    eventually(
        "forcegate to see the namespace empty",
        Duration::from_secs(20),
        || {
            let run = scene
                .k()
                .run_stdin(&["replace", "--raw", &dry_path, "-f", "-"], &body);
            if run.success() {
                Ok(())
            } else {
                Err(run.describe())
            }
        },
    );
    assert!(
        scene.record(&ns_uid).is_none(),
        "the dry run must not record"
    );
    let run = scene
        .k()
        .run_stdin(&["replace", "--raw", &path, "-f", "-"], &body);
    assert!(
        run.success(),
        "an empty namespace may be finalized:\n{}",
        run.describe()
    );
    assert!(
        scene.k().get(&["namespace", &ns]).is_none(),
        "the namespace must be gone"
    );
    let record = scene
        .record(&ns_uid)
        .expect("the finalize must be recorded");
    assert_eq!(
        record.pointer("/spec/action/type").and_then(Value::as_str),
        Some("NamespaceFinalize")
    );
}
