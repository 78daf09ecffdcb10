//! `forcegate review`: the contract in DESIGN.md, and byte-identity with
//! the engine the server runs.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;

use arc_swap::ArcSwap;
use forcegate::cleanup::NoopRecorder;
use forcegate::cluster::SnapshotCluster;
use forcegate::engine::{Endpoint, Engine, Settings};
use forcegate::policy::PolicySet;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn forcegate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_forcegate"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run forcegate")
}

fn reviews() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("examples/reviews"))
        .expect("examples/reviews")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 3, "need example reviews, found {files:?}");
    files
}

fn engine() -> Engine {
    let policies = PolicySet::load_dir(&root().join("policies")).expect("shipped policies load");
    let cluster =
        SnapshotCluster::load(&[root().join("examples/cluster")]).expect("example snapshot");
    Engine::new(
        Arc::new(ArcSwap::from_pointee(policies)),
        Arc::new(cluster),
        Arc::new(NoopRecorder),
        Settings::default(),
    )
}

#[tokio::test]
async fn json_output_is_byte_identical_to_the_engine() {
    let files = reviews();
    let engine = engine();
    for endpoint in ["validate", "mutate"] {
        let mut args = vec![
            "review",
            "--policies",
            "policies",
            "--cluster",
            "examples/cluster",
            "-o",
            "json",
            "--endpoint",
            endpoint,
        ];
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        args.extend(names.iter().map(String::as_str));
        let out = forcegate(&args);
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines: Vec<&[u8]> = out
            .stdout
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(lines.len(), files.len());
        let which = if endpoint == "mutate" {
            Endpoint::Mutate
        } else {
            Endpoint::Validate
        };
        for (file, line) in files.iter().zip(lines) {
            let body = std::fs::read(file).expect("read review");
            let admitted = engine.admit(&body, which).await.expect("valid review");
            assert_eq!(
                String::from_utf8_lossy(line),
                String::from_utf8_lossy(&admitted.body),
                "{} on /{endpoint}",
                file.display()
            );
        }
    }
}

fn find(name: &str) -> String {
    let path = root().join("examples/reviews").join(name);
    assert!(path.exists(), "{} missing", path.display());
    format!("examples/reviews/{name}")
}

#[test]
fn exit_codes_follow_the_contract() {
    let base = [
        "review",
        "--policies",
        "policies",
        "--cluster",
        "examples/cluster",
    ];
    let run = |files: &[&str]| {
        let mut args = base.to_vec();
        args.extend(files);
        forcegate(&args)
    };
    let allowed = find("force-delete-fenced.json");
    let denied = find("force-delete-leader.json");
    let kubelet = find("kubelet-final-delete.json");

    let out = run(&[&allowed, &kubelet]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("ALLOWED"), "{text}");

    let out = run(&[&allowed, &denied]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("DENIED"), "{text}");
    assert!(text.contains("statefulset-leader"), "{text}");
    assert!(text.contains("Instead:"), "{text}");
}

#[test]
fn bad_input_exits_2_with_one_line_reason() {
    let dir = tempfile::tempdir().expect("tempdir");
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "this is not json").expect("write");
    let junk = junk.display().to_string();
    let out = forcegate(&[
        "review",
        "--policies",
        "policies",
        "--cluster",
        "examples/cluster",
        &junk,
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("forcegate review: ") && stderr.contains("junk.json"),
        "{stderr}"
    );

    let out = forcegate(&[
        "review",
        "--policies",
        "policies",
        "--cluster",
        "does/not/exist",
        &find("force-delete-fenced.json"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does/not/exist"));

    // Usage errors are 2 as well.
    let out = forcegate(&["review", "--policies", "policies"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_broken_policy_file_is_reported_with_its_location() {
    let dir = tempfile::tempdir().expect("tempdir");
    for entry in std::fs::read_dir(root().join("policies")).expect("policies") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "yaml") {
            std::fs::copy(&path, dir.path().join(path.file_name().expect("name"))).expect("copy");
        }
    }
    let broken = dir.path().join("node-alive.yaml");
    let text = std::fs::read_to_string(&broken).expect("read");
    std::fs::write(&broken, text.replace("fact: node.ready", "fact: node.redy")).expect("write");
    let line = text
        .lines()
        .position(|l| l.contains("fact: node.ready"))
        .expect("line")
        + 1;
    let policies = dir.path().display().to_string();
    let out = forcegate(&[
        "review",
        "--policies",
        &policies,
        "--cluster",
        "examples/cluster",
        &find("force-delete-fenced.json"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let expected = format!("{}:{line}:13: unknown fact `node.redy`", broken.display());
    assert!(stderr.contains(&expected), "{stderr}\nexpected {expected}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(out.stdout.is_empty());
}

#[test]
fn reads_standard_input() {
    let body = std::fs::read(root().join(find("force-delete-leader.json"))).expect("read");
    let mut child = Command::new(env!("CARGO_BIN_EXE_forcegate"))
        .args([
            "review",
            "--policies",
            "policies",
            "--cluster",
            "examples/cluster",
            "-o",
            "json",
            "-",
        ])
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(&body).expect("write stdin");
    }
    let out = child.wait_with_output().expect("wait");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let response: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(response["response"]["allowed"], false);
    assert_eq!(response["response"]["status"]["code"], 403);
}
