//! The test bed's kubectl (v1.36, no skew), run with a deadline, and
//! polling with a deadline.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::process;

/// Longest a single kubectl call may take (it also gets `--request-timeout`).
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Clone, Debug)]
pub struct Kubectl {
    bin: PathBuf,
    kubeconfig: PathBuf,
}

/// One kubectl invocation and what it printed.
#[derive(Debug)]
pub struct Run {
    pub command: String,
    /// `None` when kubectl had to be killed at the deadline.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// Everything about the call, for assertion messages.
    pub fn describe(&self) -> String {
        format!(
            "$ {}\nexit: {}\n--- stdout\n{}\n--- stderr\n{}",
            self.command,
            self.code
                .map_or_else(|| "killed at the deadline".to_owned(), |c| c.to_string()),
            self.stdout.trim_end(),
            self.stderr.trim_end()
        )
    }
}

impl Kubectl {
    pub fn new(bin: &Path, kubeconfig: &Path) -> Self {
        Self {
            bin: bin.join("kubectl"),
            kubeconfig: kubeconfig.to_owned(),
        }
    }

    pub fn run(&self, args: &[&str]) -> Run {
        self.call(args, None)
    }

    pub fn run_stdin(&self, args: &[&str], input: &str) -> Run {
        self.call(args, Some(input))
    }

    /// Run and require success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let run = self.run(args);
        assert!(run.success(), "kubectl failed:\n{}", run.describe());
        run.stdout
    }

    pub fn ok_stdin(&self, args: &[&str], input: &str) -> String {
        let run = self.run_stdin(args, input);
        assert!(run.success(), "kubectl failed:\n{}", run.describe());
        run.stdout
    }

    /// Create `object` (JSON) and return what the API server stored.
    pub fn create(&self, object: &Value) -> Value {
        let out = self.ok_stdin(&["create", "-o", "json", "-f", "-"], &object.to_string());
        parse(&out)
    }

    /// `kubectl get <args> -o json`, or `None` when it does not exist.
    pub fn get(&self, args: &[&str]) -> Option<Value> {
        let mut all = vec!["get", "--ignore-not-found", "-o", "json"];
        all.extend_from_slice(args);
        let out = self.ok(&all);
        (!out.trim().is_empty()).then(|| parse(&out))
    }

    fn call(&self, args: &[&str], input: Option<&str>) -> Run {
        let mut command = Command::new(&self.bin);
        command
            .env("KUBECONFIG", &self.kubeconfig)
            .env_remove("HTTPS_PROXY")
            .env_remove("https_proxy")
            .env_remove("HTTP_PROXY")
            .env_remove("http_proxy")
            .env_remove("ALL_PROXY")
            .arg("--request-timeout=30s")
            .args(args);
        let rendered = format!("kubectl {}", args.join(" "));
        match process::run(&mut command, input, CALL_TIMEOUT) {
            Ok(done) => Run {
                command: rendered,
                code: done.status.and_then(|s| s.code()),
                stdout: done.stdout,
                stderr: done.stderr,
            },
            Err(err) => panic!("cannot run {}: {err}", self.bin.display()),
        }
    }
}

pub fn parse(text: &str) -> Value {
    serde_json::from_str(text)
        .unwrap_or_else(|err| panic!("kubectl printed invalid JSON ({err}):\n{text}"))
}

/// Poll `check` until it returns `Ok`, at most `timeout`; panics with the
/// last reason otherwise.
pub fn eventually<T>(
    what: &str,
    timeout: Duration,
    mut check: impl FnMut() -> Result<T, String>,
) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        match check() {
            Ok(value) => return value,
            Err(last) if Instant::now() >= deadline => {
                panic!("timed out after {timeout:?} waiting for {what}; last:\n{last}")
            }
            Err(_) => thread::sleep(Duration::from_millis(250)),
        }
    }
}
