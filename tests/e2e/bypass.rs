//! The ways around the gate, tried with kubectl as an admin would: each now
//! reaches forcegate and gets its decision.

use std::time::Duration;

use serde_json::{Value, json};

use crate::fixtures::{NodeState, PodSpec, Scene, denied_by, record_name, uid};
use crate::harness::harness;
use crate::kubectl::eventually;

const FINALIZERS: &str = "finalizers.forcegate.dev";
const NAMESPACE_FINALIZE: &str = "namespace-finalize.forcegate.dev";
const TERMINAL_PHASE: &str = "terminal-phase.pods.forcegate.dev";
const FORCE_DELETE: &str = "force-delete.pods.forcegate.dev";
const STRIP: &str = r#"{"metadata":{"finalizers":null}}"#;

fn with_dry_run<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut dry = args.to_vec();
    dry.push("--dry-run=server");
    dry
}

/// Hole 1: `kubectl patch pvc X --subresource=status` removing
/// pvc-protection while a pod mounts the claim.
#[test]
fn pvc_protection_stripped_through_status_is_denied() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "status-strip");
    let claim_uid = crate::finalizers::claim_in_use(&scene);
    let strip = [
        "patch",
        "pvc",
        "data",
        "--subresource=status",
        "--type=merge",
        "-p",
        STRIP,
    ];
    scene.until_forcegate_sees(&with_dry_run(&strip), |run| {
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
        "{}",
        run.describe()
    );
    let claim = scene
        .k()
        .get(&["-n", &scene.ns, "pvc", "data"])
        .expect("claim");
    assert_eq!(
        claim.pointer("/metadata/finalizers/0"),
        Some(&json!("kubernetes.io/pvc-protection"))
    );
    assert!(scene.record(&claim_uid).is_none());
}

/// A Terminating namespace still holding a pod, with a metadata finalizer
/// of its own. Returns the namespace as stored.
fn terminating_namespace_with_a_finalizer(scene: &Scene) -> Value {
    let node = scene.node("n1", NodeState::Ready);
    scene.running_pod("leftover", &node, PodSpec::default());
    let ns = scene.ns.clone();
    scene.k().ok(&[
        "patch",
        "namespace",
        &ns,
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":["example.com/dns"]}}"#,
    ]);
    scene.k().ok(&["delete", "namespace", &ns, "--wait=false"]);
    eventually(
        "the namespace to be Terminating",
        Duration::from_secs(10),
        || {
            let found = scene.k().get(&["namespace", &ns]).ok_or("namespace gone")?;
            match found.pointer("/status/phase").and_then(Value::as_str) {
                Some("Terminating") => Ok(found),
                _ => Err(format!("{found:#}")),
            }
        },
    )
}

/// Holes 1 and 2 for namespaces: its metadata finalizers stripped through
/// `namespaces/status`, and through `PUT .../finalize` without touching
/// spec.finalizers.
#[test]
fn namespace_metadata_finalizers_are_gated_on_every_route() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "ns-routes");
    let namespace = terminating_namespace_with_a_finalizer(&scene);
    let ns = scene.ns.clone();

    let strip = [
        "patch",
        "namespace",
        &ns,
        "--subresource=status",
        "--type=merge",
        "-p",
        STRIP,
    ];
    let run = eventually(
        "forcegate to see the namespace Terminating",
        Duration::from_secs(20),
        || {
            let run = scene.k().run(&with_dry_run(&strip));
            match denied_by(&run, FINALIZERS, "namespace-finalize") && run.stderr.contains("Pod=1")
            {
                true => Ok(run),
                false => Err(run.describe()),
            }
        },
    );
    assert!(run.stderr.contains("still holds"), "{}", run.describe());
    let run = scene.k().run(&strip);
    assert!(
        denied_by(&run, FINALIZERS, "namespace-finalize"),
        "{}",
        run.describe()
    );

    // PUT .../finalize dropping only metadata.finalizers.
    let mut finalized = namespace.clone();
    finalized["metadata"]["finalizers"] = json!([]);
    let body = finalized.to_string();
    let path = format!("/api/v1/namespaces/{ns}/finalize");
    let run = scene
        .k()
        .run_stdin(&["replace", "--raw", &path, "-f", "-"], &body);
    assert!(
        denied_by(&run, NAMESPACE_FINALIZE, "namespace-finalize"),
        "{}",
        run.describe()
    );
    let stored = scene.k().get(&["namespace", &ns]).expect("namespace");
    assert_eq!(
        stored.pointer("/metadata/finalizers"),
        Some(&json!(["example.com/dns"])),
        "{stored:#}"
    );
    assert!(scene.record(&uid(&namespace)).is_none());
}

/// A StatefulSet leader on a node in `state`. Returns its UID.
fn leader_on(scene: &Scene, state: NodeState) -> String {
    crate::force_delete::leader_on(scene, state).1
}

const MARK_FAILED: [&str; 7] = [
    "patch",
    "pod",
    "db-0",
    "--subresource=status",
    "--type=merge",
    "-p",
    r#"{"status":{"phase":"Failed"}}"#,
];

/// Hole 3: mark the pod Failed through `pods/status`, then delete it
/// normally (the API server would delete a terminal pod with grace 0).
#[test]
fn marking_a_leader_failed_is_decided_like_its_force_delete() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "mark-failed");
    let pod_uid = leader_on(&scene, NodeState::Unreachable);
    scene.until_forcegate_sees(&with_dry_run(&MARK_FAILED), |run| {
        denied_by(run, TERMINAL_PHASE, "statefulset-leader")
    });
    let run = scene.run(&MARK_FAILED);
    assert!(
        denied_by(&run, TERMINAL_PHASE, "statefulset-leader"),
        "{}",
        run.describe()
    );
    let pod = scene.pod("db-0").expect("pod");
    assert_eq!(pod.pointer("/status/phase"), Some(&json!("Running")));
    assert!(scene.record(&pod_uid).is_none());
}

#[test]
fn marking_a_pod_on_a_fenced_node_failed_is_allowed_and_recorded() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "mark-fenced");
    let pod_uid = leader_on(&scene, NodeState::OutOfService);
    scene.until_forcegate_sees(&with_dry_run(&MARK_FAILED), |run| {
        run.success() && run.stderr.contains("forcegate record-force-deletions")
    });
    let run = scene.run(&MARK_FAILED);
    assert!(run.success(), "{}", run.describe());
    assert!(
        run.stderr
            .contains(&format!("cleanup record {}", record_name(&pod_uid))),
        "{}",
        run.describe()
    );
    let record = scene.record(&pod_uid).expect("the record");
    assert_eq!(
        record.pointer("/spec/object/subresource"),
        Some(&json!("status"))
    );
    assert_eq!(
        record.pointer("/spec/action/type"),
        Some(&json!("ForceDelete"))
    );
}

/// Hole 4: impersonating the kubelets' group without a node's username.
#[test]
fn an_impersonated_kubelet_group_is_decided_not_exempt() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "fake-kubelet");
    let pod_uid = leader_on(&scene, NodeState::Unreachable);
    scene.human("alice");
    let delete = [
        "delete",
        "pod",
        "db-0",
        "--force",
        "--grace-period=0",
        "--wait=false",
        "--as=alice",
        "--as-group=system:nodes",
        "--as-group=system:authenticated",
    ];
    scene.until_forcegate_sees(&with_dry_run(&delete), |run| {
        denied_by(run, FORCE_DELETE, "statefulset-leader")
    });
    let run = scene.run(&delete);
    assert!(
        denied_by(&run, FORCE_DELETE, "statefulset-leader"),
        "{}",
        run.describe()
    );
    assert!(scene.pod("db-0").is_some());
    assert!(scene.record(&pod_uid).is_none());
}

/// A review for `pod`, as the API server would send a grace-0 DELETE, but
/// with `old_object` written by whoever posts it.
fn forged_delete(scene: &Scene, pod: &str, old_object: &Value) -> Value {
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "0d1c6a2e-7b5f-4f0e-9c7a-forged000001",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "requestKind": {"group": "", "version": "v1", "kind": "Pod"},
            "requestResource": {"group": "", "version": "v1", "resource": "pods"},
            "name": pod,
            "namespace": scene.ns,
            "operation": "DELETE",
            "userInfo": {"username": "mallory", "groups": ["system:authenticated"]},
            "oldObject": old_object,
            "dryRun": false,
            "options": {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", "gracePeriodSeconds": 0},
        }
    })
}

/// Hole 5: a review posted straight to forcegate (here with the API
/// server's client certificate, as a forger inside the trust boundary
/// would need) whose oldObject puts a live pod on a node that does not
/// exist ("fenced") is neither allowed nor recorded; one that borrows the
/// pod's UID for another pod's name cannot claim that UID's record.
#[test]
fn a_forged_old_object_neither_allows_nor_records() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "forged");
    let node = scene.node("n1", NodeState::Ready);
    let pod_uid = scene.running_pod("web-0", &node, PodSpec::default());
    scene.running_pod("web-1", &node, PodSpec::default());
    scene.until_forcegate_sees(
        &[
            "delete",
            "pod",
            "web-1",
            "--force",
            "--grace-period=0",
            "--dry-run=server",
        ],
        |run| denied_by(run, FORCE_DELETE, "node-alive"),
    );
    let mut pod = scene.pod("web-0").expect("pod");
    pod["spec"]["nodeName"] = json!("node-that-was-never-there");
    let review = forged_delete(&scene, "web-0", &pod);
    let (status, answer) =
        crate::client_auth::post_review(h, true, &review).expect("forcegate answers");
    assert_eq!(status, 200, "{answer:#}");
    let response = &answer["response"];
    assert_eq!(response["allowed"], json!(false), "{answer:#}");
    let message = response["status"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("node node-that-was-never-there"),
        "the denial names the disagreement: {message}"
    );

    // web-1 under web-0's UID: the record name would be web-0's.
    let mut borrowed = scene.pod("web-1").expect("pod");
    borrowed["metadata"]["uid"] = json!(pod_uid);
    borrowed["spec"]["nodeName"] = json!("node-that-was-never-there");
    let review = forged_delete(&scene, "web-1", &borrowed);
    let (_, answer) = crate::client_auth::post_review(h, true, &review).expect("answer");
    assert_eq!(answer["response"]["allowed"], json!(false), "{answer:#}");

    std::thread::sleep(Duration::from_secs(1));
    assert!(
        scene.record(&pod_uid).is_none(),
        "a forged review wrote a record"
    );
    assert!(scene.pod("web-0").is_some() && scene.pod("web-1").is_some());
}

const NODE_FENCING: &str = "forcegate-node-fencing";

/// Hole 8: what "alive" and "fenced" rest on is guarded by a
/// ValidatingAdmissionPolicy (manifests/node-fencing.yaml).
#[test]
fn a_live_node_cannot_be_fenced_faked_dead_or_deleted_by_a_human() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "node-routes");
    let ready = scene.node("n1", NodeState::Ready);
    let lost = scene.node("n2", NodeState::Unreachable);
    let refused_by_policy = |run: &crate::kubectl::Run| {
        !run.success() && run.stderr.contains(NODE_FENCING) && run.stderr.contains("forcegate: ")
    };
    let taint = |node: &str, extra: &[&str]| {
        let mut args = vec![
            "taint",
            "node",
            node,
            "node.kubernetes.io/out-of-service=nodeshutdown:NoExecute",
        ];
        args.extend_from_slice(extra);
        scene.k().run(&args)
    };
    // The policy is in force once the API server has loaded it.
    let run = eventually("the node policy to apply", Duration::from_secs(20), || {
        let run = taint(&ready, &["--dry-run=server"]);
        match refused_by_policy(&run) {
            true => Ok(run),
            false => Err(run.describe()),
        }
    });
    assert!(run.stderr.contains("is Ready"), "{}", run.describe());
    let run = taint(&lost, &[]);
    assert!(
        run.success(),
        "fencing a lost node is the remedy: {}",
        run.describe()
    );

    // Faking the Ready condition as an admin.
    let dead = json!({"status": {"conditions": [{"type": "Ready", "status": "Unknown",
        "reason": "NodeStatusUnknown", "lastHeartbeatTime": "2020-01-01T00:00:00Z"}]}})
    .to_string();
    let fake = [
        "patch",
        "node",
        ready.as_str(),
        "--subresource=status",
        "--type=merge",
        "-p",
        dead.as_str(),
    ];
    let run = scene.k().run(&fake);
    assert!(refused_by_policy(&run), "{}", run.describe());

    // A human deleting the live node; break-glass may.
    let run = scene
        .k()
        .run(&["delete", "node", &ready, "--dry-run=server"]);
    assert!(refused_by_policy(&run), "{}", run.describe());
    let run = scene.k().run(&[
        "delete",
        "node",
        &ready,
        "--dry-run=server",
        "--as=testcluster-admin",
        "--as-group=system:masters",
        "--as-group=forcegate:break-glass",
    ]);
    assert!(run.success(), "{}", run.describe());
    let node = scene.k().get(&["node", &ready]).expect("node");
    assert_eq!(
        node.pointer("/status/conditions/0/status"),
        Some(&json!("True"))
    );
}
