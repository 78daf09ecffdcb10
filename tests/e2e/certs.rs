//! Self-managed certificates (`serve --manage-certs`) on the real API
//! server. Each test installs the chart's ServiceAccount and RBAC as its own
//! release in its own namespace, registers the chart's webhook
//! configurations with `url:` pointing at a forcegate process on the host
//! (webhook names prefixed with the release, rules limited to the test's
//! namespace by namespaceSelector, so nothing else is gated by them), and
//! removes all of it again, webhooks first.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use base64::Engine as _;
use forcegate::tlsmgr::authority::{Cert, certificates};
use serde_json::{Value, json};

use crate::chart_support::{objects, template};
use crate::fixtures::{NodeState, PodSpec, Scene, denied_by};
use crate::force_delete::leader;
use crate::harness::{Harness, free_port, harness, http_get, read_from, tail};
use crate::kubectl::{Kubectl, Run, eventually, parse};
use crate::process::{self, Tied};
use crate::setup::token_kubeconfig;

const READY: Duration = Duration::from_secs(90);
const WEBHOOK_KINDS: [&str; 2] = [
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
];

/// The chart as release `fgc-<name>` in namespace `fgc-<name>`.
struct Install {
    h: &'static Harness,
    release: String,
    fullname: String,
    /// `--service=` and `--webhook-selector=` of the rendered Deployment.
    args: Vec<String>,
    kubeconfig: PathBuf,
    rbac: Value,
    webhooks: Vec<Value>,
}

impl Install {
    fn new(h: &'static Harness, name: &str) -> Install {
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
    fn register(&self, port: u16, only: &str) {
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

    fn webhook(&self, name: &str) -> String {
        format!("{}.{name}", self.release)
    }

    /// `forcegate serve --manage-certs` as the chart's ServiceAccount.
    fn start(&self, identity: &str, port: u16) -> Forcegate {
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

    fn secret(&self, suffix: &str) -> Option<Value> {
        let name = format!("{}-{suffix}", self.fullname);
        self.h.admin.get(&["-n", &self.release, "secret", &name])
    }

    fn live_webhooks(&self) -> Vec<Value> {
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

struct Forcegate {
    process: Option<Tied>,
    log: PathBuf,
    metrics_port: u16,
}

impl Forcegate {
    fn wait_ready(&mut self) {
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

    fn log_tail(&self) -> String {
        tail(&read_from(&self.log, 0), 40)
    }

    /// Sum of the samples of `family` whose labels contain every `labels`.
    fn metric(&self, family: &str, labels: &[&str]) -> f64 {
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

fn data(secret: &Value, key: &str) -> Vec<u8> {
    let encoded = secret["data"][key].as_str().unwrap_or_default();
    base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .unwrap_or_default()
}

fn certs(pem: &[u8]) -> Vec<Cert> {
    certificates(pem).expect("PEM certificates")
}

fn resource_version(object: &Value) -> u64 {
    object["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|rv| rv.parse().ok())
        .expect("numeric resourceVersion")
}

fn force_delete_dry_run(kubectl: &Kubectl, ns: &str, pod: &str) -> Run {
    kubectl.run(&[
        "-n",
        ns,
        "delete",
        "pod",
        pod,
        "--force",
        "--grace-period=0",
        "--wait=false",
        "--dry-run=server",
    ])
}

#[test]
fn forcegate_creates_its_secrets_injects_the_ca_bundle_and_is_called() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "certs-deny");
    let install = Install::new(h, "deny");
    let port = free_port().expect("a free port");
    install.register(port, &scene.ns);
    let mut forcegate = install.start("fgc-deny-a", port);
    forcegate.wait_ready();

    let ca = install.secret("ca").expect("CA Secret created");
    let tls = install.secret("tls").expect("serving Secret created");
    assert_eq!(
        ca.pointer("/metadata/labels/forcegate.dev~1certificate"),
        Some(&json!("ca"))
    );
    assert_eq!(
        tls.pointer("/metadata/labels/forcegate.dev~1certificate"),
        Some(&json!("serving"))
    );
    let bundle = certs(&data(&ca, "ca.crt"));
    assert_eq!(bundle, certs(&data(&ca, "tls.crt")), "one CA, trusted");
    assert!(certs(&data(&tls, "tls.crt"))[0].signed_by(&bundle[0]));
    for config in install.live_webhooks() {
        for webhook in config["webhooks"].as_array().expect("webhooks") {
            let injected = webhook["clientConfig"]["caBundle"]
                .as_str()
                .unwrap_or_default();
            let injected = base64::engine::general_purpose::STANDARD
                .decode(injected)
                .expect("base64");
            assert_eq!(certs(&injected), bundle, "{}", webhook["name"]);
        }
    }

    leader(&scene);
    let mine = install.webhook("force-delete.pods.forcegate.dev");
    scene.until_forcegate_sees(
        &[
            "delete",
            "pod",
            "db-0",
            "--force",
            "--grace-period=0",
            "--wait=false",
            "--dry-run=server",
        ],
        |run| denied_by(run, &mine, "statefulset-leader"),
    );
    let denied = forcegate.metric(
        "forcegate_admission_requests_total",
        &["endpoint=\"validate\"", "decision=\"denied\""],
    );
    assert!(
        denied >= 1.0,
        "forcegate counted no denial:\n{}",
        forcegate.log_tail()
    );
    let run = scene.run(&[
        "delete",
        "pod",
        "db-0",
        "--force",
        "--grace-period=0",
        "--wait=false",
    ]);
    assert!(
        !run.success()
            && run
                .stderr
                .contains("forcegate denied the force deletion of pod"),
        "{}",
        run.describe()
    );
    assert!(scene.pod("db-0").is_some(), "the leader must still exist");
}

#[test]
fn a_forced_ca_rotation_under_a_stream_of_force_deletes_fails_no_call() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "certs-rotate");
    let install = Install::new(h, "rotate");
    let port = free_port().expect("a free port");
    install.register(port, &scene.ns);
    let mut forcegate = install.start("fgc-rotate-a", port);
    forcegate.wait_ready();
    // A fenced node: the force delete is allowed, so any failed call shows.
    let node = scene.node("n1", NodeState::OutOfService);
    scene.running_pod("web-0", &node, PodSpec::default());
    eventually("the dry run to pass", Duration::from_secs(20), || {
        let run = force_delete_dry_run(scene.k(), &scene.ns, "web-0");
        if run.success() {
            Ok(())
        } else {
            Err(run.describe())
        }
    });
    let old_ca = certs(&data(&install.secret("ca").expect("CA"), "tls.crt")).remove(0);
    let old_key = data(&install.secret("tls").expect("pair"), "tls.key");

    let stop = Arc::new(AtomicBool::new(false));
    let stream = {
        let stop = stop.clone();
        let ns = scene.ns.clone();
        thread::spawn(move || {
            let (mut calls, mut failures) = (0, Vec::new());
            while !stop.load(Ordering::SeqCst) {
                let run = force_delete_dry_run(&h.admin, &ns, "web-0");
                calls += 1;
                if !run.success() {
                    failures.push(run.describe());
                }
            }
            (calls, failures)
        })
    };
    thread::sleep(Duration::from_secs(2));
    let ca_name = format!("{}-ca", install.fullname);
    h.admin.ok(&[
        "-n",
        &install.release,
        "annotate",
        "secret",
        &ca_name,
        "forcegate.dev/rotate=e2e",
    ]);
    let new_ca = eventually("a pair from a new CA", Duration::from_secs(60), || {
        let ca = certs(&data(&install.secret("ca").ok_or("no CA")?, "tls.crt")).remove(0);
        let leaf = certs(&data(&install.secret("tls").ok_or("no pair")?, "tls.crt")).remove(0);
        match ca != old_ca && leaf.signed_by(&ca) {
            true => Ok(ca),
            false => Err("not rotated yet".to_owned()),
        }
    });
    eventually(
        "forcegate to serve the new pair",
        Duration::from_secs(30),
        || match forcegate.metric("forcegate_tls_reloads_total", &["result=\"success\""]) >= 1.0 {
            true => Ok(()),
            false => Err(forcegate.log_tail()),
        },
    );
    thread::sleep(Duration::from_secs(3));
    stop.store(true, Ordering::SeqCst);
    let (calls, failures) = stream.join().expect("stream thread");
    assert!(
        failures.is_empty(),
        "{} of {calls} calls failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(calls >= 10, "only {calls} calls during the rotation");
    assert!(
        forcegate.metric(
            "forcegate_admission_requests_total",
            &["endpoint=\"validate\""]
        ) >= 10.0
    );

    // Both CAs in every bundle, written before the pair from the new CA.
    let tls = install.secret("tls").expect("pair");
    assert_ne!(data(&tls, "tls.key"), old_key);
    for config in install.live_webhooks() {
        assert!(
            resource_version(&config) < resource_version(&tls),
            "bundle after the pair"
        );
        for webhook in config["webhooks"].as_array().expect("webhooks") {
            let bundle = base64::engine::general_purpose::STANDARD
                .decode(
                    webhook["clientConfig"]["caBundle"]
                        .as_str()
                        .unwrap_or_default(),
                )
                .expect("base64");
            assert_eq!(
                certs(&bundle),
                vec![new_ca.clone(), old_ca.clone()],
                "{}",
                webhook["name"]
            );
        }
    }
}

#[test]
fn two_processes_started_at_once_write_one_ca_and_one_pair() {
    let h = harness();
    let _running = h.shared();
    let scene = Scene::new(h, "certs-pair");
    let install = Install::new(h, "pair");
    let port = free_port().expect("a free port");
    install.register(port, &scene.ns);
    let watch = {
        let ns = install.release.clone();
        thread::spawn(move || {
            h.admin.run(&[
                "-n",
                &ns,
                "get",
                "secrets",
                "--watch",
                "--output-watch-events",
                "-o",
                "json",
                "--request-timeout=40s",
            ])
        })
    };
    thread::sleep(Duration::from_secs(2));
    let mut a = install.start("fgc-pair-a", port);
    let mut b = install.start("fgc-pair-b", free_port().expect("a free port"));
    a.wait_ready();
    b.wait_ready();
    let events = watch.join().expect("watch thread").stdout;

    let mut keys: BTreeMap<String, BTreeSet<Vec<u8>>> = BTreeMap::new();
    for event in serde_json::Deserializer::from_str(&events).into_iter::<Value>() {
        let object = &event.expect("watch event JSON")["object"];
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        keys.entry(name)
            .or_default()
            .insert(data(object, "tls.key"));
    }
    for suffix in ["ca", "tls"] {
        let name = format!("{}-{suffix}", install.fullname);
        let written = keys.get(&name).map_or(0, BTreeSet::len);
        assert_eq!(
            written, 1,
            "{name} written with {written} keys; events:\n{events}"
        );
    }
    let lease = h
        .admin
        .get(&["-n", &install.release, "lease", "forcegate-certs"])
        .expect("the certificate Lease");
    let holder = lease["spec"]["holderIdentity"].as_str().unwrap_or_default();
    assert!(
        ["fgc-pair-a", "fgc-pair-b"].contains(&holder),
        "holder {holder:?}"
    );
    let expiry =
        |f: &Forcegate| f.metric("forcegate_tls_certificate_expiry_timestamp_seconds", &[]);
    assert_eq!(expiry(&a), expiry(&b), "both serve the one pair");
}

#[test]
fn a_secret_forcegate_did_not_create_is_left_untouched() {
    let h = harness();
    let install = Install::new(h, "foreign");
    let name = format!("{}-tls", install.fullname);
    h.admin.ok(&[
        "-n",
        &install.release,
        "create",
        "secret",
        "generic",
        &name,
        "--from-literal=tls.crt=mine",
    ]);
    let before = install.secret("tls").expect("the foreign Secret");
    let forcegate = install.start("fgc-foreign-a", free_port().expect("a free port"));
    let expected = format!(
        "Secret {}/{name} exists but is not forcegate's",
        install.release
    );
    eventually(
        "forcegate to refuse the Secret",
        Duration::from_secs(60),
        || {
            let log = read_from(&forcegate.log, 0);
            match log.contains(&expected)
                && log.contains("never overwrites a Secret it did not create")
            {
                true => Ok(()),
                false => Err(tail(&log, 20)),
            }
        },
    );
    assert!(
        !matches!(http_get(forcegate.metrics_port, "/readyz"), Ok((200, _))),
        "forcegate must not be ready without its own pair"
    );
    let after = install.secret("tls").expect("still there");
    assert_eq!(
        after["metadata"]["resourceVersion"],
        before["metadata"]["resourceVersion"]
    );
    assert_eq!(after["data"], before["data"]);
    assert!(after.pointer("/metadata/labels").is_none());
}
