//! `forcegate lint`: every problem with `file:line:col: reason`, exit codes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn lint(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_forcegate"))
        .arg("lint")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run forcegate")
}

#[test]
fn shipped_policies_are_clean() {
    let out = lint(&["policies/"], &root());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("7 policies, 0 problems"));
}

const BROKEN: &str = "\
apiVersion: forcegate.dev/v1alpha1
kind: ForceDeletionPolicy
metadata:
  name: broken
spec:
  match:
    intents: [ForceDelete, Evict]
  conditions:
    - fact: node.redy
      equals: true
    - path: $.object.metadata[
      exists: true
    - fact: pod.name
      matches: \"web-(\"
    - fact: node.fenced
      equals: \"false\"
    - path: $.facts.nodes.ready
      equals: true
  action: Deny
  message: \"node {{ facts.node.name }} is {{ facts.node.ready | upper }}\"
";

#[test]
fn every_semantic_problem_is_located() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("broken.yaml"), BROKEN).expect("write");
    let out = lint(&["broken.yaml"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let expected = [
        "broken.yaml:7:28: unknown intent `Evict`",
        "broken.yaml:9:13: unknown fact `node.redy` (did you mean `node.ready`?)",
        "broken.yaml:11:13: invalid JSONPath `$.object.metadata[`: expected selector at column 19",
        "broken.yaml:14:16: invalid regular expression `web-(`",
        "broken.yaml:15:7: fact `node.fenced` is a boolean; \"false\" can never match it",
        "broken.yaml:17:13: JSONPath `$.facts.nodes.ready` reads unknown fact group `nodes`",
        "broken.yaml:20:42: in template: unknown filter `upper`",
    ];
    assert_eq!(lines.len(), expected.len(), "{text}");
    for want in expected {
        assert!(
            lines.iter().any(|l| l.starts_with(want)),
            "missing {want:?} in:\n{text}"
        );
    }
}

#[test]
fn schema_errors_and_json_output() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("a.yaml"),
        BROKEN.replace("  action: Deny", "  action: Deny\n  severity: high"),
    )
    .expect("write");
    std::fs::write(
        dir.path().join("b.yaml"),
        BROKEN
            .replace("name: broken", "name: other")
            .replace("kind: ForceDeletionPolicy", "kind: Policy"),
    )
    .expect("write");
    let out = lint(&["-o", "json", "."], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let findings = report["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 2, "{report:#}");
    assert_eq!(findings[0]["line"], 20);
    assert_eq!(findings[0]["column"], 3);
    assert!(
        findings[0]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("unknown field `severity`"))
    );
    assert_eq!(findings[1]["line"], 2);
    assert_eq!(
        findings[1]["message"],
        "kind must be `ForceDeletionPolicy`, not `Policy`"
    );
}

#[test]
fn duplicate_names_across_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let policy = std::fs::read_to_string(root().join("policies/node-alive.yaml")).expect("read");
    std::fs::write(dir.path().join("a.yaml"), &policy).expect("write");
    std::fs::write(dir.path().join("b.yaml"), &policy).expect("write");
    let out = lint(&["."], dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("duplicate policy name `node-alive`"));
}

#[test]
fn usage_errors_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = lint(&["missing.yaml"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.yaml"));
    let out = lint(&["."], dir.path());
    assert_eq!(out.status.code(), Some(2));
}
