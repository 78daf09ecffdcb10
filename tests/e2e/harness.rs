//! One cluster and one forcegate per test binary, started by the first test
//! that asks for it.
//!
//! Start-up: build the test bed, pick forcegate's ports, make the client
//! certificate the API server presents to forcegate (and its admission
//! config), start `testcluster`, apply the CRDs, issue the serving
//! certificate with `forcegate certs`, apply the e2e overlay (the whole
//! base, the shipped policies as objects, webhooks by URL), mint a token
//! for forcegate's ServiceAccount and run `forcegate serve --cluster kube
//! --client-ca-file ...` (policies from the objects) with it, then wait for
//! `/readyz`. A failure anywhere fails every test with the reason.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};

use crate::kubectl::Kubectl;
use crate::overlay;
use crate::process::{self, Tied};
use crate::setup::{
    API_SERVER_CLIENT, build_test_bed, client_identity, issue_certificate,
    service_account_kubeconfig, start_cluster, work_dir,
};

/// Namespace and ServiceAccount of the manifests.
pub const NAMESPACE: &str = "forcegate";
pub const SERVICE_ACCOUNT: &str = "forcegate";
/// Identity the verifier's Lease is held as (POD_NAME).
pub const POD_NAME: &str = "forcegate-e2e";

const READY_TIMEOUT: Duration = Duration::from_secs(60);
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

pub struct Harness {
    pub root: PathBuf,
    pub manifests: PathBuf,
    pub work: PathBuf,
    pub admin: Kubectl,
    /// HTTPS port the webhooks call.
    pub port: u16,
    /// Plain-HTTP port for /metrics, /healthz, /readyz.
    pub metrics_port: u16,
    pub ca_bundle: String,
    /// The client CA forcegate trusts (`--client-ca-file`).
    pub client_ca: PathBuf,
    /// The client certificate and key the API server presents to forcegate
    /// (PEM), for tests that post to forcegate as the API server would.
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
    forcegate_kubeconfig: PathBuf,
    forcegate: Mutex<Option<Tied>>,
    _cluster: Mutex<Tied>,
    /// Tests share it; the outage test takes it exclusively.
    gate: RwLock<()>,
}

static HARNESS: OnceLock<Result<Harness, String>> = OnceLock::new();

/// The shared harness; panics (fails the test) when it could not start.
pub fn harness() -> &'static Harness {
    match HARNESS.get_or_init(|| Harness::start().map_err(|err| format!("{err:#}"))) {
        Ok(harness) => harness,
        Err(err) => panic!("e2e harness could not start: {err}"),
    }
}

/// Held by a test that needs forcegate running; see [`Harness::outage`].
pub struct Shared<'a> {
    _guard: RwLockReadGuard<'a, ()>,
}

/// forcegate stopped for the duration; restarted (and awaited) on drop.
pub struct Outage<'a> {
    harness: &'a Harness,
    _guard: RwLockWriteGuard<'a, ()>,
}

impl Drop for Outage<'_> {
    fn drop(&mut self) {
        if let Err(err) = self.harness.start_forcegate() {
            eprintln!("e2e: restarting forcegate after the outage failed: {err:#}");
        }
    }
}

impl Harness {
    fn start() -> Result<Harness> {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let manifests = root.join("manifests");
        let bin = build_test_bed(&root)?;
        let work = work_dir()?;
        // The webhook port is fixed before the API server starts: its
        // admission kubeconfig names the webhook by host:port.
        let port = free_port()?;
        let metrics_port = free_port()?;
        let identity = client_identity(&work.join("client-auth"), port)?;
        let (cluster, kubeconfig) = start_cluster(&bin, &work, &identity)?;
        let admin = Kubectl::new(&bin, &kubeconfig);

        // The CRDs first: kubectl maps every object of the overlay (the
        // shipped policies among them) before creating any.
        for (file, name) in [
            ("crd.yaml", "forcedeletions.forcegate.dev"),
            ("policy-crd.yaml", "forcedeletionpolicies.forcegate.dev"),
        ] {
            let crd = manifests.join(file);
            expect_ok(&admin, &["apply", "-f", path_str(&crd)?], "applying a CRD")?;
            let name = format!("customresourcedefinition/{name}");
            expect_ok(
                &admin,
                &[
                    "wait",
                    "--for=condition=Established",
                    "--timeout=60s",
                    &name,
                ],
                "waiting for a CRD",
            )?;
        }

        let certs = work.join("certs");
        let ca_bundle = issue_certificate(&certs)?;
        let overlay = overlay::write(&work.join("overlay"), &manifests, port, &ca_bundle)?;
        expect_ok(
            &admin,
            &["apply", "-k", path_str(&overlay)?],
            "applying the e2e overlay of manifests/",
        )?;
        let forcegate_kubeconfig = service_account_kubeconfig(&admin, &work)?;

        let harness = Harness {
            root,
            manifests,
            work,
            admin,
            port,
            metrics_port,
            ca_bundle,
            client_ca: identity.ca,
            client_cert: identity.cert,
            client_key: identity.key,
            forcegate_kubeconfig,
            forcegate: Mutex::new(None),
            _cluster: Mutex::new(cluster),
            gate: RwLock::new(()),
        };
        harness.start_forcegate()?;
        Ok(harness)
    }

    /// Run while forcegate serves; fails the test if it is not running
    /// (a failed restart after the outage test).
    pub fn shared(&self) -> Shared<'_> {
        let guard = self.gate.read().unwrap_or_else(PoisonError::into_inner);
        let running = self
            .forcegate
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some();
        assert!(
            running,
            "forcegate is not running (see the outage test's output)"
        );
        Shared { _guard: guard }
    }

    /// Stop forcegate (asserting a clean drain) until the guard drops.
    pub fn outage(&self) -> Outage<'_> {
        let guard = self.gate.write().unwrap_or_else(PoisonError::into_inner);
        let outage = Outage {
            harness: self,
            _guard: guard,
        };
        let running = self
            .forcegate
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let process = running.expect("forcegate is not running");
        match process.stop(STOP_TIMEOUT) {
            Ok(status) => assert!(
                status.success(),
                "forcegate did not exit cleanly on SIGTERM ({status}):\n{}",
                self.forcegate_log_tail()
            ),
            Err(err) => panic!("{err}\n{}", self.forcegate_log_tail()),
        }
        outage
    }

    /// `forcegate serve --cluster kube` as the ServiceAccount, as replica
    /// `pod_name`, on these ports (tied to this process; output unset).
    pub fn serve_command(&self, pod_name: &str, port: u16, metrics_port: u16) -> Command {
        let mut command = process::tied_wrapper(Path::new(env!("CARGO_BIN_EXE_forcegate")));
        process::without_proxy(&mut command)
            .args(["serve", "--cluster", "kube"])
            .arg(format!("--listen=127.0.0.1:{port}"))
            .arg(format!("--metrics-listen=127.0.0.1:{metrics_port}"))
            .arg(format!("--tls-dir={}", self.work.join("certs").display()))
            // Client auth on: every webhook call in the suite proves the
            // API server presents its certificate.
            .arg(format!("--client-ca-file={}", self.client_ca.display()))
            .arg(format!("--client-cert-names={API_SERVER_CLIENT}"))
            // The shipped policies, as the overlay applied them.
            .arg("--policies=crd")
            .arg("--shutdown-timeout=5")
            .current_dir(&self.work)
            .env("KUBECONFIG", &self.forcegate_kubeconfig)
            .env("POD_NAMESPACE", NAMESPACE)
            .env("POD_NAME", pod_name)
            .env("RUST_LOG", "warn,forcegate=debug");
        command
    }

    /// Start `forcegate serve` as the ServiceAccount and wait for /readyz.
    fn start_forcegate(&self) -> Result<()> {
        let log_path = self.work.join("forcegate.log");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .with_context(|| format!("opening {}", log_path.display()))?;
        let log_offset = log.metadata().map(|m| m.len()).unwrap_or(0);
        let mut command = self.serve_command(POD_NAME, self.port, self.metrics_port);
        command.stdout(log.try_clone()?).stderr(log);
        let mut process = Tied::spawn("forcegate", &mut command).context("spawning forcegate")?;
        let deadline = Instant::now() + READY_TIMEOUT;
        let mut last: String;
        loop {
            match http_get(self.metrics_port, "/readyz") {
                Ok((200, _)) => break,
                Ok((status, body)) => last = format!("HTTP {status}: {body}"),
                Err(err) => last = err.to_string(),
            }
            let log = read_from(&log_path, log_offset);
            if process.exited().is_some() || log.contains("forcegate serve:") {
                bail!("forcegate exited during start-up:\n{}", tail(&log, 40));
            }
            if Instant::now() >= deadline {
                bail!(
                    "forcegate not ready after {READY_TIMEOUT:?} (last /readyz: {last}):\n{}",
                    tail(&log, 40)
                );
            }
            thread::sleep(Duration::from_millis(100));
        }
        *self
            .forcegate
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(process);
        Ok(())
    }

    /// The last lines forcegate logged, for assertion messages.
    pub fn forcegate_log_tail(&self) -> String {
        let log = read_from(&self.work.join("forcegate.log"), 0);
        format!("--- forcegate log (tail)\n{}", tail(&log, 30))
    }
}

pub fn expect_ok(kubectl: &Kubectl, args: &[&str], what: &str) -> Result<String> {
    let run = kubectl.run(args);
    if run.success() {
        Ok(run.stdout)
    } else {
        Err(anyhow!("{what} failed:\n{}", run.describe()))
    }
}

fn path_str(path: &Path) -> Result<&str> {
    path.to_str()
        .ok_or_else(|| anyhow!("path is not UTF-8: {}", path.display()))
}

pub fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// A plain HTTP/1.0 GET on 127.0.0.1 (no chunking, connection closes).
pub fn http_get(port: u16, path: &str) -> std::io::Result<(u16, String)> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    Ok((status, body))
}

pub fn read_from(path: &Path, offset: u64) -> String {
    let bytes = std::fs::read(path).unwrap_or_default();
    let start = usize::try_from(offset).unwrap_or(0).min(bytes.len());
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}

pub fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
