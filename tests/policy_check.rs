//! The pull-request check as shipped: the steps of `action.yml` and the
//! hooks of `.pre-commit-hooks.yaml`, read from the files and run as
//! written (this build's `forcegate` on PATH) against `policies/`, and
//! against a copy with a broken policy, which they must fail.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn yaml(file: &str) -> Value {
    let text = std::fs::read_to_string(root().join(file)).expect("readable");
    serde_saphyr::from_str(&text).expect("parses")
}

/// PATH with this build's `forcegate` first.
fn path_with_forcegate() -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_forcegate"))
        .parent()
        .expect("bin dir")
        .display()
        .to_string();
    format!("{bin}:{}", std::env::var("PATH").unwrap_or_default())
}

/// `${{ inputs.x }}` and `${{ github.action_path }}` as GitHub fills them.
fn expand(text: &str, inputs: &BTreeMap<String, String>) -> String {
    let mut out = text.to_owned();
    for (name, value) in inputs {
        out = out.replace(&format!("${{{{ inputs.{name} }}}}"), value);
    }
    out.replace("${{ github.action_path }}", &root().display().to_string())
}

/// Run every step of the composite action in `dir` with `inputs` over
/// the defaults; the outputs of the steps run (it stops at a failure, as
/// a composite action does).
fn run_action(dir: &Path, overrides: &[(&str, String)]) -> Vec<(String, Output)> {
    let action = yaml("action.yml");
    assert_eq!(action["runs"]["using"], "composite");
    let mut inputs: BTreeMap<String, String> = action["inputs"]
        .as_object()
        .expect("inputs")
        .iter()
        .map(|(name, spec)| {
            (
                name.clone(),
                spec["default"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    for (name, value) in overrides {
        assert!(inputs.contains_key(*name), "no input {name}");
        inputs.insert((*name).to_owned(), value.clone());
    }
    let mut ran = Vec::new();
    for step in action["runs"]["steps"].as_array().expect("steps") {
        assert_eq!(step["shell"], "bash", "{step}");
        let script = step["run"].as_str().expect("a run step");
        let mut command = Command::new("bash");
        command
            .args(["-e", "-c", script])
            .current_dir(dir)
            .env("PATH", path_with_forcegate());
        for (name, value) in step["env"].as_object().into_iter().flatten() {
            command.env(name, expand(value.as_str().unwrap_or_default(), &inputs));
        }
        let output = command.output().expect("bash runs");
        let name = step["name"].as_str().unwrap_or_default().to_owned();
        let failed = !output.status.success();
        ran.push((name, output));
        if failed {
            break;
        }
    }
    ran
}

fn describe(ran: &[(String, Output)]) -> String {
    ran.iter()
        .map(|(name, out)| {
            format!(
                "--- {name}: {}\n{}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        })
        .collect()
}

#[test]
fn the_action_lints_and_tests_the_shipped_policies_with_a_junit_report() {
    let work = tempfile::tempdir().expect("tempdir");
    let junit = work.path().join("report.xml");
    let ran = run_action(&root(), &[("junit", junit.display().to_string())]);
    let names: Vec<&str> = ran.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["Install forcegate", "forcegate lint", "forcegate test"],
        "{}",
        describe(&ran)
    );
    assert!(
        ran.iter().all(|(_, out)| out.status.success()),
        "{}",
        describe(&ran)
    );
    let lint = String::from_utf8_lossy(&ran[1].1.stderr);
    assert!(lint.contains("7 policies, 0 problems"), "{lint}");
    let report = std::fs::read_to_string(&junit).expect("the JUnit report");
    assert!(report.contains("<testsuites"), "{report}");
    assert!(report.contains("policies/node-alive_test.yaml"), "{report}");
}

#[test]
fn the_action_fails_on_a_broken_policy() {
    let work = tempfile::tempdir().expect("tempdir");
    let policies = work.path().join("policies");
    std::fs::create_dir(&policies).expect("mkdir");
    for entry in std::fs::read_dir(root().join("policies")).expect("policies") {
        let path = entry.expect("entry").path();
        if path.is_file() {
            std::fs::copy(&path, policies.join(path.file_name().expect("name"))).expect("copy");
        }
    }
    let broken = policies.join("node-alive.yaml");
    let text = std::fs::read_to_string(&broken).expect("read");
    std::fs::write(&broken, text.replace("fact: node.ready", "fact: node.redy")).expect("write");
    let ran = run_action(work.path(), &[("path", "policies".into())]);
    let (name, lint) = ran.last().expect("a step ran");
    assert_eq!(name, "forcegate lint", "{}", describe(&ran));
    assert_eq!(lint.status.code(), Some(1), "{}", describe(&ran));
    assert!(
        String::from_utf8_lossy(&lint.stdout).contains("unknown fact `node.redy`"),
        "{}",
        describe(&ran)
    );
}

#[test]
fn the_pre_commit_hooks_run_lint_and_test_on_the_policy_directory() {
    let hooks = yaml(".pre-commit-hooks.yaml");
    let hooks = hooks.as_array().expect("a list of hooks");
    let ids: Vec<&str> = hooks.iter().filter_map(|h| h["id"].as_str()).collect();
    assert_eq!(ids, ["forcegate-lint", "forcegate-test"]);
    for hook in hooks {
        assert_eq!(hook["language"], "rust", "{hook}");
        assert_eq!(hook["pass_filenames"], false, "{hook}");
        let entry = hook["entry"].as_str().expect("entry");
        let mut words = entry.split_whitespace();
        let program = words.next().expect("a program");
        let args: Vec<&str> = words
            .chain(
                hook["args"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str),
            )
            .collect();
        let output = Command::new(program)
            .args(&args)
            .current_dir(root())
            .env("PATH", path_with_forcegate())
            .output()
            .expect("the hook runs");
        assert!(
            output.status.success(),
            "{entry} {args:?}: {}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
