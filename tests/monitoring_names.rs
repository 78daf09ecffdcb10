//! Every metric the shipped alerts and dashboard query exists: the
//! `forcegate_*` names in the scrape of a running `forcegate serve` (the
//! binary, with its dev certificates, the example cluster and a journal,
//! after a denial, an allowed force delete and a bad request over TLS), the
//! others in the lists the e2e suite checks against the real API server and
//! kube-state-metrics (tests/e2e/monitoring.rs).

mod monitoring_support;
mod server_support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use monitoring_support::{LIVE_ONLY, PROMETHEUS_OWN, Scrape, used_metric_names};
use server_support::{full, https_client, manifest_path, plain_get, post, post_json};

/// Prefixes of the names exported by others, checked by the e2e suite.
const ELSEWHERE: &[&str] = &["apiserver_", "kube_"];

struct Serve(Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `forcegate serve` on 127.0.0.1 ports of its choosing; returns the child
/// and the webhook and metrics addresses it logged.
fn serve(work: &std::path::Path) -> (Serve, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_forcegate"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "127.0.0.1:0",
        ])
        .arg("--tls-dir")
        .arg(work.join("certs"))
        .arg("--policies")
        .arg(manifest_path("policies"))
        .arg("--cluster")
        .arg(manifest_path("examples/cluster"))
        .arg("--journal")
        .arg(work.join("forcegate.journal"))
        .args(["--log-format", "json"])
        .env("RUST_LOG", "forcegate=info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("forcegate serve starts");
    let stderr = child.stderr.take().expect("stderr");
    let serve = Serve(child);
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = send.send(line);
        }
    });
    let mut log = Vec::new();
    loop {
        let line = receive
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("serve did not start:\n{}", log.join("\n")));
        let event: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        if event["message"] == "serving admission webhook" {
            let listen = event["listen"].as_str().map(str::to_owned);
            // `metrics` is logged as `Some(127.0.0.1:PORT)`.
            let metrics = event["metrics"]
                .as_str()
                .and_then(|m| m.strip_prefix("Some(")?.strip_suffix(')'))
                .map(str::to_owned);
            match (listen, metrics) {
                (Some(listen), Some(metrics)) => return (serve, listen, metrics),
                _ => panic!("no listen or metrics address in {line}"),
            }
        }
        log.push(line);
    }
}

/// The example AdmissionReviews posted to /validate, and the decision each gets.
const REVIEWS: &[(&str, bool)] = &[
    ("force-delete-leader", false),
    ("force-delete-fenced", true),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_metric_an_alert_or_panel_queries_is_exported() {
    server_support::init();
    let work = tempfile::tempdir().expect("tempdir");
    let (_serve, listen, metrics) = serve(work.path());
    let port = listen.rsplit(':').next().expect("a port");
    let validate = format!("https://localhost:{port}/validate");
    let ca = std::fs::read_to_string(work.path().join("certs/ca.crt")).expect("dev CA");
    let client = https_client(&ca, false);
    for (review, allowed) in REVIEWS {
        let body = std::fs::read(manifest_path(&format!("examples/reviews/{review}.json")))
            .expect("example review");
        let reply = post_json(&client, &validate, body).await;
        let answer = reply.json();
        assert_eq!(
            answer["response"]["allowed"], *allowed,
            "{review}: {answer}"
        );
    }
    let reply = post(&client, &validate, "text/plain", full("not a review")).await;
    assert_eq!(
        reply.status.as_u16(),
        415,
        "a wrong content type is a bad request"
    );

    let (status, _, text) = plain_get(&format!("http://{metrics}/metrics")).await;
    assert_eq!(status.as_u16(), 200, "{text}");
    let scrape = Scrape::parse(&text);
    assert!(scrape.family_count() > 10, "a real scrape expected");

    let used = used_metric_names();
    let mut problems = Vec::new();
    for (name, places) in &used {
        let places = places.join(", ");
        if LIVE_ONLY.contains(&name.as_str()) {
            continue;
        }
        if name.starts_with("forcegate_") {
            if scrape.family_of(name).is_none() || !scrape.has_samples(name) {
                problems.push(format!(
                    "{name} (used by {places}) has no series in forcegate serve"
                ));
            }
        } else if !PROMETHEUS_OWN.contains(&name.as_str())
            && !ELSEWHERE.iter().any(|p| name.starts_with(p))
        {
            problems.push(format!(
                "{name} (used by {places}): nothing checks that it exists"
            ));
        }
    }
    // The exception lists hold exactly what needs them.
    for name in LIVE_ONLY {
        if !used.contains_key(*name) || scrape.has_samples(name) {
            problems.push(format!(
                "LIVE_ONLY lists {name}: no query uses it, or it has series here"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn dashboard_and_rules_queries_name_their_metrics() {
    let used = used_metric_names();
    for expected in [
        "forcegate_forcedeletions",
        "forcegate_break_glass_total",
        "apiserver_admission_webhook_rejection_count",
        "kube_pod_deletion_timestamp",
        "up",
    ] {
        assert!(
            used.contains_key(expected),
            "{expected} not found in {used:?}"
        );
    }
}
