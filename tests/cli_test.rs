//! `forcegate test`: the shipped policies' suites pass, and the runner fails
//! when it should.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn forcegate(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_forcegate"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run forcegate")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn shipped_policy_suites_pass() {
    let out = forcegate(&["test", "policies/"], &root());
    let text = stdout(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("FAIL"), "{text}");
    // Every shipped policy has a suite beside it, and each ran.
    for entry in std::fs::read_dir(root().join("policies")).expect("policies") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let Some(stem) = name.strip_suffix(".yaml") else {
            continue;
        };
        if stem.ends_with("_test") {
            continue;
        }
        assert!(
            text.contains(&format!("policies/{stem}_test.yaml ({stem})")),
            "no suite ran for {name}:\n{text}"
        );
    }
}

#[test]
fn junit_and_json_reports() {
    let out = forcegate(&["test", "-o", "junit", "policies/"], &root());
    assert_eq!(out.status.code(), Some(0));
    let xml = stdout(&out);
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
    assert!(xml.contains("failures=\"0\" errors=\"0\""), "{xml}");
    assert!(xml.matches("<testcase ").count() >= 50, "{xml}");

    let out = forcegate(
        &["test", "-o", "json", "policies/node-alive_test.yaml"],
        &root(),
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json report");
    assert_eq!(report["ok"], true);
    assert_eq!(report["failed"], 0);
    let cases = report["suites"][0]["cases"].as_array().expect("cases");
    assert!(
        cases
            .iter()
            .any(|c| c["observed"]["intent"] == "SystemFinalization")
    );
}

const POLICY: &str = "\
apiVersion: forcegate.dev/v1alpha1
kind: ForceDeletionPolicy
metadata:
  name: no-force-in-prod
spec:
  match:
    intents: [ForceDelete]
    namespaces: [prod]
  action: Deny
  message: no force deletion in {{ target.namespace }}
  remediation: delete {{ target.name }} without --force
";

const SUITE: &str = "\
apiVersion: forcegate.dev/v1alpha1
kind: PolicyTestSuite
metadata:
  name: team
policies: [policy.yaml]
cluster:
  files: [cluster.yaml]
cases:
  - name: prod is denied
    forceDelete: {namespace: prod, name: api-0, user: alice}
    expect: {allowed: false, denyingPolicies: [no-force-in-prod], messageContains: no force deletion in prod}
  - name: dev is allowed
    forceDelete: {namespace: dev, name: api-0, user: alice}
    expect: {allowed: true, recorded: false, noWarnings: true}
  - name: a full review file
    review: review.json
    expect: {allowed: false, denyingPolicies: [no-force-in-prod]}
";

const CLUSTER: &str = "\
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Pod
    metadata: {name: api-0, namespace: prod, uid: 11111111-0000-4000-8000-000000000001}
    spec: {nodeName: n1, containers: [{name: api, image: api:1}]}
    status: {phase: Running}
  - apiVersion: v1
    kind: Pod
    metadata: {name: api-0, namespace: dev, uid: 11111111-0000-4000-8000-000000000002}
    spec: {nodeName: n1, containers: [{name: api, image: api:1}]}
    status: {phase: Running}
";

fn team_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("policy.yaml"), POLICY).expect("write");
    std::fs::write(dir.path().join("team_test.yaml"), SUITE).expect("write");
    std::fs::write(dir.path().join("cluster.yaml"), CLUSTER).expect("write");
    let review = serde_json::json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "5d3c2b1a-0000-4000-8000-000000000001",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "name": "api-0", "namespace": "prod", "operation": "DELETE",
            "userInfo": {"username": "bob", "groups": ["system:authenticated"]},
            "object": null,
            "oldObject": {"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": "api-0", "namespace": "prod", "uid": "11111111-0000-4000-8000-000000000001"},
                          "spec": {"nodeName": "n1", "containers": [{"name": "api", "image": "api:1"}]},
                          "status": {"phase": "Running"}},
            "dryRun": false,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
        }
    });
    std::fs::write(dir.path().join("review.json"), review.to_string()).expect("write");
    dir
}

#[test]
fn a_team_suite_with_files_and_a_review_passes() {
    let dir = team_dir();
    let out = forcegate(&["test", "."], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("1 suites, 3 cases: 3 passed, 0 failed"));
}

#[test]
fn a_failing_expectation_exits_1_and_says_why() {
    let dir = team_dir();
    let suite = SUITE.replace(
        "expect: {allowed: true, recorded: false, noWarnings: true}",
        "expect: {allowed: false}",
    );
    std::fs::write(dir.path().join("team_test.yaml"), suite).expect("write");
    let out = forcegate(&["test", "team_test.yaml"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("FAIL  dev is allowed"), "{text}");
    assert!(text.contains("expected allowed: false, got true"), "{text}");

    let out = forcegate(&["test", "-o", "junit", "team_test.yaml"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("<failure message=\"expected allowed: false, got true\">"));
}

#[test]
fn broken_suites_and_policies_exit_2_with_locations() {
    let dir = team_dir();
    std::fs::write(
        dir.path().join("policy.yaml"),
        POLICY.replace("action: Deny", "action: Refuse"),
    )
    .expect("write");
    let out = forcegate(&["test", "."], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("policy.yaml:9:11: unknown variant `Refuse`"),
        "{stderr}"
    );

    let dir = team_dir();
    std::fs::write(
        dir.path().join("team_test.yaml"),
        SUITE.replace("    expect: {allowed: true", "    expekt: {allowed: true"),
    )
    .expect("write");
    let out = forcegate(&["test", "."], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("team_test.yaml:14:5: unknown field `expekt`"),
        "{stderr}"
    );

    let empty = tempfile::tempdir().expect("tempdir");
    let out = forcegate(&["test", "."], empty.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no test suites"));
}
