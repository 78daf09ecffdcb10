//! The steps that bring the test bed up: build, cluster, certificate and
//! forcegate's credentials. [`crate::harness`] runs them once.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};

use crate::harness::{NAMESPACE, SERVICE_ACCOUNT, expect_ok, read_from, tail};
use crate::kubectl::Kubectl;
use crate::process::{self, Tied};

const BUILD_TIMEOUT: Duration = Duration::from_secs(45 * 60);
const CLUSTER_TIMEOUT: Duration = Duration::from_secs(180);

/// `tests/cluster/build.sh`: its last stdout line is the bin directory.
pub fn build_test_bed(root: &Path) -> Result<PathBuf> {
    let started = Instant::now();
    let mut command = Command::new("bash");
    command
        .arg(root.join("tests/cluster/build.sh"))
        .current_dir(root);
    let done = process::run(&mut command, None, BUILD_TIMEOUT)
        .context("running tests/cluster/build.sh")?;
    let Some(status) = done.status else {
        bail!("tests/cluster/build.sh did not finish within {BUILD_TIMEOUT:?}");
    };
    if !status.success() {
        bail!(
            "tests/cluster/build.sh failed ({status}): the API server cannot be built\n{}",
            tail(&done.stderr, 40)
        );
    }
    let bin = done
        .stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| PathBuf::from(l.trim()))
        .ok_or_else(|| anyhow!("tests/cluster/build.sh printed no bin directory"))?;
    for tool in ["kube-apiserver", "etcd", "kubectl", "testcluster"] {
        if !bin.join(tool).is_file() {
            bail!("test bed {} has no {tool}", bin.display());
        }
    }
    eprintln!(
        "e2e: test bed {} ready in {:.1?}",
        bin.display(),
        started.elapsed()
    );
    Ok(bin)
}

/// `target/tmp/e2e/run-<pid>`; directories of runs whose process is gone
/// are removed.
pub fn work_dir() -> Result<PathBuf> {
    let parent = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("e2e");
    std::fs::create_dir_all(&parent)?;
    if let Ok(entries) = std::fs::read_dir(&parent) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let stale = name
                .strip_prefix("run-")
                .and_then(|pid| pid.parse::<u32>().ok())
                .is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists());
            if stale {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    let work = parent.join(format!("run-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    Ok(work)
}

/// Start `testcluster`, tied to this process; returns it and the kubeconfig.
pub fn start_cluster(bin: &Path, work: &Path) -> Result<(Tied, PathBuf)> {
    let log_path = work.join("testcluster.log");
    let log = std::fs::File::create(&log_path)?;
    let mut command = Command::new(bin.join("testcluster"));
    command
        .arg("--state-dir")
        .arg(work.join("cluster"))
        .args(["--exit-on-stdin-eof", "--timeout=150s", "-v"])
        .stdout(Stdio::piped())
        .stderr(log);
    let mut cluster = Tied::spawn("testcluster", &mut command).context("spawning testcluster")?;
    let stdout = cluster.take_stdout().context("testcluster stdout")?;
    let (send, receive) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(path) = line.strip_prefix("KUBECONFIG=") {
                let _ = send.send(Some(PathBuf::from(path)));
                return;
            }
        }
        let _ = send.send(None);
    });
    let failed = |why: &str| {
        anyhow!(
            "the API server could not be started ({why}):\n{}",
            tail(&read_from(&log_path, 0), 60)
        )
    };
    match receive.recv_timeout(CLUSTER_TIMEOUT) {
        Ok(Some(kubeconfig)) => Ok((cluster, kubeconfig)),
        Ok(None) => Err(failed("testcluster exited before it was ready")),
        Err(_) => Err(failed(&format!("not ready within {CLUSTER_TIMEOUT:?}"))),
    }
}

/// `forcegate certs` for Service forcegate/forcegate; returns the caBundle.
pub fn issue_certificate(dir: &Path) -> Result<String> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_forcegate"));
    command
        .args(["certs", "--service", "forcegate", "-n", NAMESPACE, "--out"])
        .arg(dir);
    let done = process::run(&mut command, None, Duration::from_secs(60))?;
    if !done.status.is_some_and(|s| s.success()) {
        bail!("forcegate certs failed:\n{}", done.stderr);
    }
    let bundle = done.stdout.trim().to_owned();
    if bundle.is_empty() {
        bail!("forcegate certs printed no caBundle");
    }
    Ok(bundle)
}

/// A kubeconfig with a token of forcegate's ServiceAccount (so the
/// manifests' RBAC is what forcegate gets).
pub fn service_account_kubeconfig(admin: &Kubectl, work: &Path) -> Result<PathBuf> {
    token_kubeconfig(
        admin,
        NAMESPACE,
        SERVICE_ACCOUNT,
        &work.join("forcegate.kubeconfig"),
    )
}

/// Write `path`: the admin's cluster with a token of ServiceAccount
/// `namespace/account`.
pub fn token_kubeconfig(
    admin: &Kubectl,
    namespace: &str,
    account: &str,
    path: &Path,
) -> Result<PathBuf> {
    let token = expect_ok(
        admin,
        &[
            "-n",
            namespace,
            "create",
            "token",
            account,
            "--duration=24h",
        ],
        "creating a token for a ServiceAccount",
    )?;
    let config: Value = serde_json::from_str(&expect_ok(
        admin,
        &["config", "view", "--raw", "--minify", "-o", "json"],
        "reading the admin kubeconfig",
    )?)?;
    let cluster = config
        .pointer("/clusters/0/cluster")
        .cloned()
        .context("admin kubeconfig without a cluster")?;
    let kubeconfig = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "testcluster", "cluster": cluster}],
        "users": [{"name": "forcegate", "user": {"token": token.trim()}}],
        "contexts": [{"name": "forcegate", "context": {"cluster": "testcluster", "user": "forcegate"}}],
        "current-context": "forcegate",
    });
    std::fs::write(path, kubeconfig.to_string())?;
    Ok(path.to_owned())
}
