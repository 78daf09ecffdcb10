//! `forcegate explain`, `stuck` and `records` (and `kubectl-forcegate`)
//! over the example snapshot and a real journal file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use forcegate::cleanup::{
    ForceDeletionSpec, JournalRecorder, ObjectReference, RecordedAction, RecordedRequester,
};
use forcegate::cluster::SnapshotCluster;
use forcegate::oncall::explain::{User, reviews};
use forcegate::oncall::inventory::Inventory;
use forcegate::oncall::resource;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run(bin: &str, args: &[&str]) -> Output {
    Command::new(bin)
        .args(args)
        .current_dir(root())
        .env_remove("KUBECONFIG")
        .output()
        .expect("run the binary")
}

fn forcegate(args: &[&str]) -> Output {
    run(env!("CARGO_BIN_EXE_forcegate"), args)
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

const AS: [&str; 4] = ["--as", "alice@example.com", "--as-group", "oncall"];

fn explain_json(resource_name: &str, namespace: &str, name: &str) -> (Value, Output) {
    let mut args = vec![
        "explain",
        resource_name,
        name,
        "--cluster",
        "examples/cluster",
        "-o",
        "json",
    ];
    if !namespace.is_empty() {
        args.extend(["-n", namespace]);
    }
    args.extend(AS);
    let output = forcegate(&args);
    let value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("explain -o json: {e}\n{}", stderr(&output)));
    (value, output)
}

/// `policy=Action` pairs, as the audit annotation `policies` lists them
/// (without rule names).
fn fired(value: &Value) -> Vec<String> {
    (value["policies"].as_array().into_iter().flatten())
        .flat_map(|p| {
            let policy = p["policy"].as_str().unwrap_or_default().to_owned();
            (p["fired"].as_array().into_iter().flatten())
                .map(move |o| format!("{policy}={}", o["action"].as_str().unwrap_or_default()))
        })
        .collect()
}

#[test]
fn explain_verdicts_equal_reviews_for_the_same_requests_and_cluster() {
    let snapshot = SnapshotCluster::load(&[root().join("examples/cluster")]).expect("snapshot");
    let inventory = Inventory::from_files(snapshot.files()).expect("raw objects");
    let dir = tempfile::tempdir().expect("tempdir");
    let user = User {
        username: "alice@example.com".into(),
        groups: vec!["oncall".into(), "system:authenticated".into()],
    };
    let cases = [
        ("pod", "data", "db-0"),
        ("pod", "data", "db-2"),
        ("pod", "shop", "web-5d8f9c7b6d-k2x7p"),
        ("pod", "batch", "report-29146260-7xk2p"),
        ("pvc", "legacy-app", "app-data"),
        ("pv", "", "pvc-5e9d7f46-2b8a-4cd3-b7e1-6a4b8c0d2f06"),
        ("configmap", "legacy-app", "app-settings"),
        ("namespace", "", "legacy-app"),
        ("namespace", "", "old-team"),
    ];
    let mut compared = 0;
    for (resource_name, namespace, name) in cases {
        let (explained, _) = explain_json(resource_name, namespace, name);
        let types = resource::from_inventory(&inventory);
        let rt = resource::resolve(resource_name, &types).expect("type");
        let target = resource::find_target(&inventory, rt, namespace, name).expect("target");
        let actions = explained["actions"].as_array().expect("actions");
        let bodies = reviews(&target, &user);
        assert_eq!(actions.len(), bodies.len(), "{name}");
        for (i, (action, review)) in bodies.iter().enumerate() {
            let path = dir.path().join(format!("{name}-{i}.json"));
            std::fs::write(&path, serde_json::to_vec(review).expect("json")).expect("write");
            let path = path.to_str().expect("utf-8 path");
            let output = forcegate(&[
                "review",
                "--policies",
                "policies",
                "--cluster",
                "examples/cluster",
                "-o",
                "json",
                path,
            ]);
            let answer: Value = serde_json::from_slice(&output.stdout).expect("review -o json");
            let response = &answer["response"];
            let context = format!("{name} {action:?}");
            assert_eq!(actions[i]["allowed"], response["allowed"], "{context}");
            let annotated: Vec<String> = (response["auditAnnotations"]["policies"]
                .as_str()
                .unwrap_or_default()
                .split(','))
            .filter(|p| !p.is_empty())
            .map(|p| match p.split_once('=') {
                Some((policy, verdict)) => {
                    format!("{}={verdict}", policy.split('/').next().unwrap_or(policy))
                }
                None => p.to_owned(),
            })
            .collect();
            assert_eq!(fired(&actions[i]), annotated, "{context}");
            compared += 1;
        }
    }
    assert!(compared >= 12, "compared {compared} decisions");
}

#[test]
fn explain_exits_1_when_forcing_is_unsafe_and_2_on_bad_input() {
    let (explained, output) = explain_json("po", "shop", "web-5d8f9c7b6d-k2x7p");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(
        explained["safePath"][0]["command"],
        "kubectl -n shop delete pod web-5d8f9c7b6d-k2x7p"
    );

    let mut args = vec![
        "explain",
        "pod",
        "nope",
        "-n",
        "shop",
        "--cluster",
        "examples/cluster",
    ];
    args.extend(AS);
    let missing = forcegate(&args);
    assert_eq!(missing.status.code(), Some(2));
    assert_eq!(stderr(&missing).lines().count(), 1, "{}", stderr(&missing));
    assert!(
        stderr(&missing).contains("pods \"nope\" not found in namespace \"shop\""),
        "{}",
        stderr(&missing)
    );

    let anonymous = forcegate(&[
        "explain",
        "pod",
        "db-0",
        "-n",
        "data",
        "--cluster",
        "examples/cluster",
    ]);
    assert_eq!(anonymous.status.code(), Some(2));
    assert!(
        stderr(&anonymous).contains("--as USER"),
        "{}",
        stderr(&anonymous)
    );
}

#[test]
fn explain_text_has_no_colour_off_a_terminal() {
    let mut args = vec![
        "explain",
        "pod",
        "db-0",
        "-n",
        "data",
        "--cluster",
        "examples/cluster",
    ];
    args.extend(AS);
    let output = forcegate(&args);
    let text = stdout(&output);
    assert!(!text.contains('\x1b'), "{text}");
    for expected in [
        "grace-0 delete: DENIED",
        "statefulset-leader",
        "the same verdicts as the grace-0 delete",
        "Safe path",
    ] {
        assert!(text.contains(expected), "{expected:?} in:\n{text}");
    }
}

#[test]
fn stuck_lists_what_is_terminating_and_the_plugin_binary_says_the_same() {
    let all = forcegate(&["stuck", "-A", "--cluster", "examples/cluster", "-o", "json"]);
    assert_eq!(all.status.code(), Some(1), "{}", stderr(&all));
    let report: Value = serde_json::from_slice(&all.stdout).expect("json");
    let names: Vec<&str> = (report["stuck"].as_array().into_iter().flatten())
        .filter_map(|s| s["name"].as_str())
        .collect();
    for expected in ["legacy-app", "old-team", "app-data", "db-0"] {
        assert!(names.contains(&expected), "{expected} in {names:?}");
    }
    let quiet = forcegate(&["stuck", "-n", "sandbox", "--cluster", "examples/cluster"]);
    assert_eq!(quiet.status.code(), Some(0));
    assert!(stdout(&quiet).starts_with("Nothing is stuck Terminating for 5m or more."));

    let args = ["stuck", "-n", "legacy-app", "--cluster", "examples/cluster"];
    let plugin = run(env!("CARGO_BIN_EXE_kubectl-forcegate"), &args);
    let direct = forcegate(&args);
    assert_eq!(plugin.status.code(), Some(1));
    assert_eq!(stdout(&plugin), stdout(&direct));

    let bad = forcegate(&[
        "stuck",
        "--older-than",
        "soon",
        "--cluster",
        "examples/cluster",
    ]);
    assert_eq!(bad.status.code(), Some(2));
}

fn spec(pod: &str, uid: &str) -> ForceDeletionSpec {
    ForceDeletionSpec {
        subject: format!("Pod data/{pod}"),
        object: ObjectReference {
            version: "v1".into(),
            kind: "Pod".into(),
            resource: "pods".into(),
            namespace: Some("data".into()),
            name: pod.into(),
            uid: Some(uid.into()),
            ..ObjectReference::default()
        },
        action: RecordedAction {
            type_: "ForceDelete".into(),
            removed_finalizers: Vec::new(),
            object_deleting: true,
        },
        node: Some("worker-3".into()),
        pod_ips: vec!["10.244.3.7".into()],
        volumes: Vec::new(),
        leases: Vec::new(),
        owners: Vec::new(),
        job: None,
        requester: RecordedRequester {
            username: "alice".into(),
            groups: Vec::new(),
        },
        break_glass_reason: None,
        requested_at: Time("2025-06-01T12:00:00Z".parse().expect("time")),
        policies: Vec::new(),
    }
}

fn journal(dir: &Path) -> (PathBuf, JournalRecorder) {
    let path = dir.join("forcegate.journal");
    let journal = JournalRecorder::open(&path).expect("journal");
    journal
        .record_blocking(spec("db-2", "5bac4e8a-3f6d-4abc-9d7e-2c4f6b8a0d03"))
        .expect("record");
    (path, journal)
}

#[test]
fn records_reads_a_journal_a_running_server_holds_and_checks_it_against_the_snapshot() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Held open (and locked), as `serve` holds it.
    let (path, _held) = journal(dir.path());
    let path = path.to_str().expect("utf-8");
    // `records <args> --journal FILE`, checked against the snapshot or not.
    let records = |args: &[&str], snapshot: bool| {
        let mut all = vec!["records"];
        all.extend(args);
        all.extend(["--journal", path]);
        if snapshot {
            all.extend(["--cluster", "examples/cluster"]);
        }
        let output = forcegate(&all);
        (output.status.code(), stdout(&output), stderr(&output))
    };
    let (code, text, err) = records(&[], false);
    assert_eq!(code, Some(0), "{err}");
    assert!(text.contains("Pending (not verified)"), "{text}");

    // The record's pod is still in the snapshot: not clean yet, and past
    // a deadline of zero.
    let (code, text, err) = records(&[], true);
    assert_eq!(code, Some(0), "{err}");
    assert!(text.contains("Verifying (checked now)"), "{text}");
    let (code, text, err) = records(&["--deadline", "0s", "--phase", "NeedsAttention"], true);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        text.contains("NeedsAttention (checked now)") && text.contains("object-gone"),
        "{text}"
    );

    let name = "fd-5bac4e8a-3f6d-4abc-9d7e-2c4f6b8a0d03";
    let (code, text, _) = records(&["show", name, "--deadline", "0s"], true);
    assert_eq!(code, Some(1));
    for expected in [
        "Pod data/db-2",
        "On the node",
        "crictl pods --label io.kubernetes.pod.uid=5bac4e8a",
    ] {
        assert!(text.contains(expected), "{expected:?} in:\n{text}");
    }
    let (code, _, err) = records(&["show", "fd-nope"], false);
    assert_eq!(code, Some(2));
    assert!(err.contains("forcedeletion \"fd-nope\" not found"), "{err}");
    let (code, _, _) = records(&["--phase", "Dirty"], false);
    assert_eq!(code, Some(2));
}

#[test]
fn an_unreachable_cluster_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    // Nothing listens on port 1.
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u, namespace: shop}}]\ncurrent-context: x\n",
    )
    .expect("write");
    let kubeconfig = kubeconfig.to_str().expect("utf-8");
    for args in [
        vec!["stuck", "--kubeconfig", kubeconfig],
        vec!["records", "--kubeconfig", kubeconfig],
        vec![
            "explain",
            "pod",
            "x",
            "--kubeconfig",
            kubeconfig,
            "--policies",
            "policies",
        ],
    ] {
        let output = forcegate(&args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        let err = stderr(&output);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("cannot reach the API server at https://127.0.0.1:1"),
            "{err}"
        );
    }
}

#[test]
fn the_krew_manifest_installs_this_version_of_the_plugin_binary() {
    let text = std::fs::read_to_string(root().join("plugins/forcegate.yaml")).expect("manifest");
    let manifest: Value = serde_saphyr::from_str(&text).expect("manifest YAML");
    assert_eq!(
        manifest["apiVersion"],
        "krew.googlecontainertools.github.com/v1alpha2"
    );
    assert_eq!(manifest["kind"], "Plugin");
    // `kubectl forcegate` runs `kubectl-forcegate`: the name must match.
    assert_eq!(manifest["metadata"]["name"], "forcegate");
    assert_eq!(
        manifest["spec"]["version"],
        format!("v{}", env!("CARGO_PKG_VERSION"))
    );
    let platforms = manifest["spec"]["platforms"].as_array().expect("platforms");
    assert!(!platforms.is_empty());
    for platform in platforms {
        assert_eq!(platform["bin"], "kubectl-forcegate", "{platform}");
        assert!(
            platform["selector"]["matchLabels"]["os"].is_string(),
            "{platform}"
        );
        let files = platform["files"].as_array().expect("files");
        assert!(
            files.iter().any(|f| f["from"] == "kubectl-forcegate"),
            "{platform}"
        );
        let uri = platform["uri"].as_str().expect("uri");
        assert!(
            uri.contains(&format!("/v{}/", env!("CARGO_PKG_VERSION"))),
            "{uri}"
        );
    }
}
