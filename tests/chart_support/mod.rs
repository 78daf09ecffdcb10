//! helm, built from the Go module proxy by `tests/tools/build.sh helm`
//! (cached under target/tools/), and the chart rendered into objects:
//! shared by tests/chart.rs and the e2e suite.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn chart() -> PathBuf {
    root().join("charts/forcegate")
}

pub fn helm() -> &'static Path {
    static HELM: OnceLock<PathBuf> = OnceLock::new();
    HELM.get_or_init(|| {
        let out = Command::new("bash")
            .arg(root().join("tests/tools/build.sh"))
            .arg("helm")
            .output()
            .expect("runs tests/tools/build.sh");
        assert!(
            out.status.success(),
            "tests/tools/build.sh helm failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let bin = stdout.lines().last().expect("bin directory").trim();
        PathBuf::from(bin).join("helm")
    })
}

/// Run helm (its state under target/tools/helm-home); success and output.
pub fn run_helm(args: &[&str]) -> (bool, String) {
    let home = root().join("target/tools/helm-home");
    let out = Command::new(helm())
        .args(args)
        .env("HELM_CACHE_HOME", home.join("cache"))
        .env("HELM_CONFIG_HOME", home.join("config"))
        .env("HELM_DATA_HOME", home.join("data"))
        .output()
        .expect("runs helm");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// `helm template <release> charts/forcegate -n <namespace> [extra...]`
/// as text.
pub fn template(release: &str, namespace: &str, extra: &[&str]) -> String {
    let chart = chart();
    let mut args = vec![
        "template",
        release,
        chart.to_str().expect("UTF-8 path"),
        "-n",
        namespace,
    ];
    args.extend_from_slice(extra);
    let (ok, text) = run_helm(&args);
    assert!(ok, "helm template failed:\n{text}");
    text
}

/// Every object of a multi-document YAML text.
pub fn objects(text: &str) -> Vec<Value> {
    text.split("\n---")
        .filter_map(|doc| serde_saphyr::from_str::<Value>(doc).ok())
        .filter(|doc| doc.get("kind").is_some())
        .collect()
}

/// The chart rendered as release `forcegate` in namespace `forcegate`,
/// with `--set` for each of `set`.
pub fn render(set: &[&str]) -> Vec<Value> {
    let mut extra = Vec::new();
    for value in set {
        extra.extend(["--set", value]);
    }
    objects(&template("forcegate", "forcegate", &extra))
}
