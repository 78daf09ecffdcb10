//! The steps that bring the test bed up: build, cluster, certificate and
//! forcegate's credentials. [`crate::harness`] runs them once.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use base64::Engine as _;
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
/// The API server presents `identity` to the webhook at `127.0.0.1:port`.
pub fn start_cluster(
    bin: &Path,
    work: &Path,
    identity: &ClientIdentity,
) -> Result<(Tied, PathBuf)> {
    let log_path = work.join("testcluster.log");
    let log = std::fs::File::create(&log_path)?;
    let mut command = Command::new(bin.join("testcluster"));
    command
        .arg("--state-dir")
        .arg(work.join("cluster"))
        .args(["--exit-on-stdin-eof", "--timeout=150s", "-v"])
        .arg(format!(
            "--apiserver-arg=--admission-control-config-file={}",
            identity.admission_config.display()
        ))
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

/// The client certificate kube-apiserver presents to forcegate, and the
/// files that make it do so.
pub struct ClientIdentity {
    /// What `forcegate serve --client-ca-file` trusts.
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
    /// `--admission-control-config-file` of the API server.
    pub admission_config: PathBuf,
}

/// Name of the client certificate (`--client-cert-names`).
pub const API_SERVER_CLIENT: &str = "kube-apiserver";

/// A client CA and certificate, a kubeconfig whose `users` entry named
/// `127.0.0.1:<port>` (the host:port of the webhook URLs: the API server's
/// AuthenticationInfoResolver matches it exactly) holds that certificate,
/// and the AdmissionConfiguration pointing both webhook plugins at it.
pub fn client_identity(dir: &Path, port: u16) -> Result<ClientIdentity> {
    std::fs::create_dir_all(dir)?;
    let authority = forcegate::certs::Authority::generate("kube-apiserver-clients", NAMESPACE, 2)?;
    let leaf = authority.issue_client(API_SERVER_CLIENT, 2)?;
    let identity = ClientIdentity {
        ca: dir.join("client-ca.crt"),
        cert: dir.join("apiserver-client.crt"),
        key: dir.join("apiserver-client.key"),
        admission_config: dir.join("admission-config.json"),
    };
    std::fs::write(&identity.ca, authority.cert_pem())?;
    std::fs::write(&identity.cert, &leaf.cert_pem)?;
    std::fs::write(&identity.key, &leaf.key_pem)?;
    let base64 = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
    let kubeconfig = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "users": [{
            "name": format!("127.0.0.1:{port}"),
            "user": {
                "client-certificate-data": base64(&leaf.cert_pem),
                "client-key-data": base64(&leaf.key_pem),
            },
        }],
    });
    let kubeconfig_path = dir.join("webhook-kubeconfig.json");
    std::fs::write(&kubeconfig_path, kubeconfig.to_string())?;
    let plugin = |name: &str| {
        json!({
            "name": name,
            "configuration": {
                "apiVersion": "apiserver.config.k8s.io/v1",
                "kind": "WebhookAdmissionConfiguration",
                "kubeConfigFile": kubeconfig_path,
            },
        })
    };
    let admission = json!({
        "apiVersion": "apiserver.config.k8s.io/v1",
        "kind": "AdmissionConfiguration",
        "plugins": [plugin("ValidatingAdmissionWebhook"), plugin("MutatingAdmissionWebhook")],
    });
    std::fs::write(&identity.admission_config, admission.to_string())?;
    Ok(identity)
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
