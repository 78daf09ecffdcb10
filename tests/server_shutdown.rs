//! Graceful shutdown with requests in flight: readiness turns false, new
//! connections are refused, every in-flight request is answered, exit 0.

mod server_support;

use std::convert::Infallible;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::StatusCode;
use hyper::body::Frame;
use server_support::*;
use tokio::sync::{Notify, mpsc};

/// A request whose body arrives in two halves: the second only after
/// `release` is notified, so the request is in flight until then.
fn split_request(url: &str, body: Vec<u8>, release: Arc<Notify>) -> hyper::Request<Body> {
    let (tx, rx) = mpsc::channel::<Bytes>(2);
    tokio::spawn(async move {
        let half = body.len() / 2;
        let _ = tx.send(Bytes::copy_from_slice(&body[..half])).await;
        release.notified().await;
        let _ = tx.send(Bytes::copy_from_slice(&body[half..])).await;
    });
    let frames = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|bytes| (Ok::<_, Infallible>(Frame::data(bytes)), rx))
    });
    hyper::Request::post(url)
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(StreamBody::new(frames).boxed_unsync())
        .expect("request")
}

async fn wait_for(what: &str, within: Duration, mut check: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + within;
    while !check() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_answers_every_in_flight_request() {
    let harness = Harness::start(static_engine(true), |config| {
        config.shutdown_timeout = Duration::from_secs(10);
    })
    .await;
    let body = fixture("kubelet-final-delete");
    let release = Arc::new(Notify::new());
    let mut in_flight = Vec::new();
    // Four HTTP/1.1 connections and four h2 streams on one connection.
    for h2 in [false, true] {
        let client = harness.client(h2);
        for _ in 0..4 {
            let request = split_request(&harness.url("/validate"), body.clone(), release.clone());
            let client = client.clone();
            in_flight.push(tokio::spawn(async move { send(&client, request).await }));
        }
    }
    let metrics = harness.server.metrics().clone();
    wait_for("8 requests in flight", Duration::from_secs(10), || {
        metrics.in_flight_now() == 8
    })
    .await;

    // What SIGTERM does (the signal itself is tested on the binary below).
    harness.server.shutdown_handle().trigger();
    let health = harness.server.health().clone();
    wait_for("readiness to turn false", Duration::from_secs(5), || {
        health.is_shutting_down()
    })
    .await;
    let addr = harness.server.local_addr();
    let mut refused = false;
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(addr).await.is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(refused, "new connections still accepted after shutdown");

    release.notify_waiters();
    for request in in_flight {
        let reply = request
            .await
            .expect("task")
            .expect("in-flight request answered");
        assert_eq!(reply.status, StatusCode::OK);
        assert_eq!(
            reply.json()["response"]["uid"],
            "b314d5fc-17e8-45cb-d9a4-068bc2f574ba"
        );
    }
    let drained = harness.server.wait().await;
    assert!(drained.is_clean(), "{drained:?}");
}

#[tokio::test]
async fn drain_deadline_bounds_the_shutdown() {
    let harness = Harness::start(static_engine(true), |config| {
        config.shutdown_timeout = Duration::from_millis(300);
    })
    .await;
    let release = Arc::new(Notify::new());
    let request = split_request(
        &harness.url("/validate"),
        fixture("kubelet-final-delete"),
        release.clone(),
    );
    let client = harness.client(false);
    let stuck = tokio::spawn(async move { send(&client, request).await });
    let metrics = harness.server.metrics().clone();
    wait_for("request in flight", Duration::from_secs(10), || {
        metrics.in_flight_now() == 1
    })
    .await;
    let started = std::time::Instant::now();
    let drained = harness.server.shutdown().await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(drained.abandoned_connections, 1);
    assert!(!drained.is_clean());
    stuck.abort();
}

/// The binary: SIGTERM with a request in flight; the request is answered
/// and the process exits 0. Also checks dev certificates are created.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_drains_and_exits_zero() {
    init();
    let work = tempfile::tempdir().expect("tempdir");
    let tls_dir = work.path().join("certs");
    let mut child = Command::new(env!("CARGO_BIN_EXE_forcegate"))
        .arg("serve")
        .args(["--listen", "127.0.0.1:0", "--metrics-listen", ""])
        .arg("--tls-dir")
        .arg(&tls_dir)
        .arg("--policies")
        .arg(manifest_path("policies"))
        .arg("--cluster")
        .arg(manifest_path("examples/cluster"))
        .arg("--journal")
        .arg(work.path().join("forcegate.journal"))
        .args(["--log-format", "json", "--shutdown-timeout", "10"])
        .env("RUST_LOG", "forcegate=info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("forcegate serve starts");
    let stderr = child.stderr.take().expect("stderr");
    let (lines_tx, mut lines) = mpsc::unbounded_channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    let mut log = Vec::new();
    let mut listen = None;
    while listen.is_none() {
        let line = tokio::time::timeout(Duration::from_secs(60), lines.recv())
            .await
            .ok()
            .flatten()
            .unwrap_or_else(|| panic!("serve did not start:\n{}", log.join("\n")));
        if let Ok(event) = serde_json::from_str::<serde_json::Value>(&line)
            && event["message"] == "serving admission webhook"
        {
            listen = event["listen"].as_str().map(str::to_owned);
        }
        log.push(line);
    }
    assert!(
        log.iter().any(|l| l.contains("created a development CA")),
        "dev certificates not announced:\n{}",
        log.join("\n")
    );
    let port = listen
        .and_then(|l| l.rsplit(':').next().map(str::to_owned))
        .expect("listen address");
    let ca = std::fs::read_to_string(tls_dir.join("ca.crt")).expect("dev CA written");
    let client = https_client(&ca, false);
    let url = format!("https://127.0.0.1:{port}/validate");

    let release = Arc::new(Notify::new());
    let request = split_request(&url, fixture("kubelet-final-delete"), release.clone());
    let pending = tokio::spawn({
        let client = client.clone();
        async move { send(&client, request).await }
    });
    // Let the request reach the handler before the signal.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let pid = child.id().to_string();
    let killed = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    assert!(killed.success());
    tokio::time::sleep(Duration::from_millis(200)).await;
    release.notify_waiters();
    let reply = pending
        .await
        .expect("task")
        .expect("in-flight request answered");
    assert_eq!(reply.status, StatusCode::OK);

    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .expect("join")
        .expect("wait");
    assert_eq!(status.code(), Some(0), "exit status {status:?}");
}
