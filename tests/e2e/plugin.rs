//! `kubectl forcegate ...`: the plugin binary on PATH, run by the test
//! bed's kubectl with the admin's kubeconfig, its output captured for the
//! docs when asked.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use crate::doc_capture;
use crate::harness::Harness;
use crate::kubectl::{Run, parse};
use crate::process;
use crate::setup::build_test_bed;

/// `kubectl forcegate ...` with the admin's kubeconfig and the policies
/// `serve` runs.
pub struct Plugin {
    kubectl: PathBuf,
    path: OsString,
    kubeconfig: PathBuf,
    policies: PathBuf,
}

pub fn plugin(h: &Harness) -> &'static Plugin {
    static PLUGIN: OnceLock<Plugin> = OnceLock::new();
    PLUGIN.get_or_init(|| {
        let bin = build_test_bed(&h.root).expect("test bed (already built by the harness)");
        let config = h.admin.ok(&[
            "config",
            "view",
            "--raw",
            "--minify",
            "--flatten",
            "-o",
            "json",
        ]);
        let kubeconfig = h.work.join("oncall.kubeconfig");
        std::fs::write(&kubeconfig, config).expect("write kubeconfig");
        let plugin_dir = Path::new(env!("CARGO_BIN_EXE_kubectl-forcegate"))
            .parent()
            .expect("bin dir");
        let mut path = OsString::from(plugin_dir);
        path.push(":");
        path.push(std::env::var_os("PATH").unwrap_or_default());
        Plugin {
            kubectl: bin.join("kubectl"),
            path,
            kubeconfig,
            policies: h.root.join("policies"),
        }
    })
}

impl Plugin {
    pub fn run(&self, args: &[&str]) -> Run {
        let mut command = Command::new(&self.kubectl);
        command
            .arg("forcegate")
            .args(args)
            .env("PATH", &self.path)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("FORCEGATE_POLICIES", &self.policies)
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env_remove("HTTPS_PROXY")
            .env_remove("https_proxy")
            .env_remove("HTTP_PROXY")
            .env_remove("http_proxy")
            .env_remove("ALL_PROXY");
        let done = process::run(&mut command, None, Duration::from_secs(120))
            .expect("run kubectl forcegate");
        Run {
            command: format!("kubectl forcegate {}", args.join(" ")),
            code: done.status.and_then(|s| s.code()),
            stdout: done.stdout,
            stderr: done.stderr,
        }
    }

    /// Run, require exit code `code`, and keep the output for the docs.
    pub fn capture(&self, name: &str, args: &[&str], code: i32) -> Run {
        let run = self.run(args);
        assert_eq!(run.code, Some(code), "{}", run.describe());
        doc_capture::write(
            name,
            &format!("kubectl forcegate {}", args.join(" ")),
            &run.stdout,
        );
        if let Err(stale) = doc_capture::check(name) {
            panic!("{stale}");
        }
        run
    }

    pub fn json(&self, args: &[&str]) -> (Value, Run) {
        let mut all = args.to_vec();
        all.extend(["-o", "json"]);
        let run = self.run(&all);
        assert!(matches!(run.code, Some(0 | 1)), "{}", run.describe());
        (parse(&run.stdout), run)
    }
}
