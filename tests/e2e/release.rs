//! One chart install per test for the self-managed certificate tests
//! (tests/e2e/certs.rs): the release's namespace, ServiceAccount and RBAC,
//! its webhook configurations calling forcegate processes on the host
//! (names prefixed with the release, rules limited to one namespace), and
//! those processes. Dropping it removes the webhooks first, then the rest.

use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use base64::Engine as _;
use forcegate::tlsmgr::authority::{Cert, certificates};
use serde_json::{Value, json};

use crate::chart_support::{objects, template};
use crate::fixtures::Scene;
use crate::force_delete::force_delete;
use crate::harness::{Harness, free_port, http_get, read_from, tail};
use crate::kubectl::{Kubectl, Run, parse};
use crate::process::{self, Tied};
use crate::setup::token_kubeconfig;

const READY: Duration = Duration::from_secs(90);
const WEBHOOK_KINDS: [&str; 2] = [
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
];
/// The chart as release `fgc-<name>` in namespace `fgc-<name>`.
pub struct Install {
    pub h: &'static Harness,
    pub release: String,
    pub fullname: String,
    /// `--service=` and `--webhook-selector=` of the rendered Deployment.
    args: Vec<String>,
    kubeconfig: PathBuf,
    rbac: Value,
    webhooks: Vec<Value>,
}

impl Install {
    pub fn new(h: &'static Harness, name: &str) -> Install {
        let release = format!("fgc-{name}");
        h.admin.ok(&["create", "namespace", &release]);
        let rendered = objects(&template(&release, &release, &[]));
        let of = |kinds: &[&str]| -> Vec<Value> {
            rendered
                .iter()
                .filter(|o| kinds.iter().any(|k| o["kind"] == *k))
                .cloned()
                .collect()
        };
        let deployment = &of(&["Deployment"])[0];
        let fullname = deployment["metadata"]["name"]
            .as_str()
            .expect("name")
            .to_owned();
        let args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
            .as_array()
            .expect("args")
            .iter()
            .filter_map(Value::as_str)
            .filter(|a| a.starts_with("--service=") || a.starts_with("--webhook-selector="))
            .map(str::to_owned)
            .collect();
        let rbac = json!({
            "apiVersion": "v1",
            "kind": "List",
            "items": of(&["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]),
        });
        h.admin.ok_stdin(&["apply", "-f", "-"], &rbac.to_string());
        let kubeconfig = token_kubeconfig(
            &h.admin,
            &release,
            &fullname,
            &h.work.join(format!("{release}.kubeconfig")),
        )
        .expect("a token for the chart's ServiceAccount");
        Install {
            h,
            release,
            fullname,
            args,
            kubeconfig,
            rbac,
            webhooks: of(&WEBHOOK_KINDS),
        }
    }

    /// Register the chart's webhooks, calling `port` and gating only `only`.
    pub fn register(&self, port: u16, only: &str) {
        let mut configs = self.webhooks.clone();
        for config in &mut configs {
            let path = match config["kind"] == "ValidatingWebhookConfiguration" {
                true => "/validate",
                false => "/mutate",
            };
            for webhook in config["webhooks"].as_array_mut().expect("webhooks") {
                let name = format!(
                    "{}.{}",
                    self.release,
                    webhook["name"].as_str().expect("name")
                );
                webhook["name"] = json!(name);
                webhook["clientConfig"] = json!({"url": format!("https://127.0.0.1:{port}{path}")});
                webhook["namespaceSelector"] =
                    json!({"matchLabels": {"kubernetes.io/metadata.name": only}});
            }
        }
        let list = json!({"apiVersion": "v1", "kind": "List", "items": configs});
        self.h
            .admin
            .ok_stdin(&["apply", "-f", "-"], &list.to_string());
    }

    pub fn webhook(&self, name: &str) -> String {
        format!("{}.{name}", self.release)
    }

    /// `forcegate serve --manage-certs` as the chart's ServiceAccount.
    pub fn start(&self, identity: &str, port: u16) -> Forcegate {
        let metrics_port = free_port().expect("a free port");
        let log = self.h.work.join(format!("{identity}.log"));
        let file = std::fs::File::create(&log).expect("log file");
        let mut command = process::tied_wrapper(Path::new(env!("CARGO_BIN_EXE_forcegate")));
        process::without_proxy(&mut command)
            .args(["serve", "--cluster", "kube", "--manage-certs"])
            .arg(format!("--listen=127.0.0.1:{port}"))
            .arg(format!("--metrics-listen=127.0.0.1:{metrics_port}"))
            .args(&self.args)
            .arg(format!(
                "--policies={}",
                self.h.root.join("policies").display()
            ))
            .arg("--shutdown-timeout=5")
            .current_dir(&self.h.work)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("POD_NAMESPACE", &self.release)
            .env("POD_NAME", identity)
            .env("RUST_LOG", "warn,forcegate=info")
            .stdout(file.try_clone().expect("log file"))
            .stderr(file);
        let process = Tied::spawn(identity, &mut command).expect("spawns forcegate");
        Forcegate {
            process: Some(process),
            log,
            metrics_port,
        }
    }

    pub fn secret(&self, suffix: &str) -> Option<Value> {
        let name = format!("{}-{suffix}", self.fullname);
        self.h.admin.get(&["-n", &self.release, "secret", &name])
    }

    pub fn live_webhooks(&self) -> Vec<Value> {
        WEBHOOK_KINDS
            .iter()
            .map(|kind| {
                let name = format!("{}/{}", kind.to_lowercase(), self.fullname);
                parse(&self.h.admin.ok(&["get", &name, "-o", "json"]))
            })
            .collect()
    }
}

impl Drop for Install {
    fn drop(&mut self) {
        // Webhooks first: nothing may be left that calls a stopped process.
        let selector = format!("app.kubernetes.io/instance={}", self.release);
        let kinds = "validatingwebhookconfigurations,mutatingwebhookconfigurations";
        let run = self.h.admin.run(&["delete", kinds, "-l", &selector]);
        if !run.success() {
            eprintln!(
                "e2e: removing {}'s webhooks failed:\n{}",
                self.release,
                run.describe()
            );
        }
        let rbac = self.rbac.to_string();
        let _ = self.h.admin.run_stdin(
            &["delete", "--ignore-not-found", "--wait=false", "-f", "-"],
            &rbac,
        );
        let _ = self
            .h
            .admin
            .run(&["delete", "namespace", &self.release, "--wait=false"]);
    }
}

pub struct Forcegate {
    process: Option<Tied>,
    pub log: PathBuf,
    pub metrics_port: u16,
}

impl Forcegate {
    pub fn wait_ready(&mut self) {
        let deadline = Instant::now() + READY;
        let mut last: String;
        loop {
            match http_get(self.metrics_port, "/readyz") {
                Ok((200, _)) => return,
                Ok((status, body)) => last = format!("HTTP {status}: {body}"),
                Err(err) => last = err.to_string(),
            }
            let exited = self.process.as_mut().and_then(Tied::exited);
            assert!(
                exited.is_none(),
                "forcegate exited ({exited:?}):\n{}",
                self.log_tail()
            );
            assert!(
                Instant::now() < deadline,
                "forcegate not ready after {READY:?} (last /readyz: {last}):\n{}",
                self.log_tail()
            );
            thread::sleep(Duration::from_millis(200));
        }
    }

    pub fn log_tail(&self) -> String {
        tail(&read_from(&self.log, 0), 40)
    }

    /// Sum of the samples of `family` whose labels contain every `labels`.
    pub fn metric(&self, family: &str, labels: &[&str]) -> f64 {
        let (_, text) = http_get(self.metrics_port, "/metrics").expect("/metrics");
        text.lines()
            .filter(|l| l.starts_with(family) && labels.iter().all(|want| l.contains(want)))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }
}

impl Drop for Forcegate {
    fn drop(&mut self) {
        if let Some(process) = self.process.take() {
            let _ = process.stop(Duration::from_secs(20));
        }
    }
}

pub fn data(secret: &Value, key: &str) -> Vec<u8> {
    let encoded = secret["data"][key].as_str().unwrap_or_default();
    base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .unwrap_or_default()
}

pub fn certs(pem: &[u8]) -> Vec<Cert> {
    certificates(pem).expect("PEM certificates")
}

/// The CAs of a live webhook entry's caBundle.
pub fn ca_bundle(webhook: &Value) -> Vec<Cert> {
    let encoded = webhook["clientConfig"]["caBundle"]
        .as_str()
        .unwrap_or_default();
    certs(
        &base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .expect("base64"),
    )
}

/// A scene for the pods, the chart installed for it, and the port its
/// webhooks call.
pub fn installed(h: &'static Harness, name: &str) -> (Scene, Install, u16) {
    let scene = Scene::new(h, &format!("certs-{name}"));
    let install = Install::new(h, name);
    let port = free_port().expect("a free port");
    install.register(port, &scene.ns);
    (scene, install, port)
}

pub fn resource_version(object: &Value) -> u64 {
    object["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|rv| rv.parse().ok())
        .expect("numeric resourceVersion")
}

pub fn force_delete_dry_run(kubectl: &Kubectl, ns: &str, pod: &str) -> Run {
    let mut args = vec!["-n", ns];
    args.extend(force_delete(pod, &["--dry-run=server"]));
    kubectl.run(&args)
}
