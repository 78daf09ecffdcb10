//! Certificate rotation the way the kubelet updates a mounted Secret
//! (swap of the `..data` symlink) while requests run: zero failed requests,
//! and fresh handshakes get the new serial.

mod server_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use forcegate::certs::Leaf;
use hyper::StatusCode;
use server_support::*;

/// Poll `check` until it holds or `within` passes.
async fn eventually<F, Fut>(within: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + within;
    while tokio::time::Instant::now() < deadline {
        if check().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    false
}

#[derive(Default)]
struct Tally {
    ok: AtomicUsize,
    failures: std::sync::Mutex<Vec<String>>,
}

impl Tally {
    fn record(&self, result: Result<Reply, String>, what: &str) {
        match result {
            Ok(reply) if reply.status == StatusCode::OK => {
                self.ok.fetch_add(1, Ordering::SeqCst);
            }
            Ok(reply) => self.fail(format!("{what}: HTTP {}", reply.status)),
            Err(err) => self.fail(format!("{what}: {err}")),
        }
    }

    fn fail(&self, message: String) {
        if let Ok(mut failures) = self.failures.lock() {
            failures.push(message);
        }
    }
}

fn request(url: &str) -> hyper::Request<Body> {
    hyper::Request::post(url)
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(full(fixture("kubelet-final-delete")))
        .expect("request")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn symlink_swap_rotates_without_failed_requests() {
    let mut harness = Harness::start(static_engine(true), |_| {}).await;
    let ca = harness.authority.cert_pem();
    let addr = harness.server.local_addr();
    let url = harness.url("/validate");
    let old_serial = harness.server.certificate().serial;
    assert_eq!(
        served_serial(addr, &ca).await.expect("handshake"),
        old_serial
    );

    let stop = Arc::new(AtomicBool::new(false));
    let tally = Arc::new(Tally::default());
    let mut workers = Vec::new();
    // Kept-alive HTTP/1.1 and h2 connections, and a new handshake per request.
    for mode in ["http1", "h2", "fresh"] {
        let (stop, tally, ca, url) = (stop.clone(), tally.clone(), ca.clone(), url.clone());
        workers.push(tokio::spawn(async move {
            let pooled = https_client(&ca, mode == "h2");
            while !stop.load(Ordering::SeqCst) {
                let client = if mode == "fresh" {
                    https_client(&ca, false)
                } else {
                    pooled.clone()
                };
                tally.record(send(&client, request(&url)).await, mode);
            }
        }));
    }

    tokio::time::sleep(Duration::from_millis(300)).await;
    let new_leaf = harness
        .authority
        .issue(SERVICE, NAMESPACE, 2)
        .expect("new leaf");
    let new_serial = serial_of(&new_leaf.cert_pem);
    assert_ne!(new_serial, old_serial);
    harness.secret.rotate(&new_leaf);

    let rotated = eventually(Duration::from_secs(10), || {
        let ca = ca.clone();
        let new_serial = new_serial.clone();
        async move {
            served_serial(addr, &ca)
                .await
                .is_ok_and(|s| s == new_serial)
        }
    })
    .await;
    // Keep the load running a little past the swap.
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::SeqCst);
    for worker in workers {
        worker.await.expect("worker");
    }

    assert!(rotated, "new serial never served");
    assert_eq!(harness.server.certificate().serial, new_serial);
    let failures = tally.failures.lock().expect("tally").clone();
    assert!(failures.is_empty(), "failed requests: {failures:?}");
    let ok = tally.ok.load(Ordering::SeqCst);
    assert!(ok > 20, "too little load to mean anything: {ok} requests");
    let (_, _, metrics) = plain_get(&harness.metrics_url("/metrics")).await;
    assert_eq!(
        metric(&metrics, "forcegate_tls_reloads_total{result=\"success\"}"),
        Some(1.0)
    );
    let expiry = metric(
        &metrics,
        "forcegate_tls_certificate_expiry_timestamp_seconds",
    );
    assert_eq!(expiry, Some(harness.server.certificate().not_after as f64));
    harness.server.shutdown().await;
}

#[tokio::test]
async fn invalid_new_pair_keeps_the_old_one_serving() {
    let mut harness = Harness::start(static_engine(true), |_| {}).await;
    let ca = harness.authority.cert_pem();
    let addr = harness.server.local_addr();
    let old_serial = harness.server.certificate().serial;
    let other = harness
        .authority
        .issue(SERVICE, NAMESPACE, 2)
        .expect("leaf");
    let another = harness
        .authority
        .issue(SERVICE, NAMESPACE, 2)
        .expect("leaf");

    let broken = [
        Leaf {
            cert_pem: "not a certificate".into(),
            key_pem: other.key_pem.clone(),
        },
        Leaf {
            cert_pem: other.cert_pem.clone(),
            key_pem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".into(),
        },
        // Certificate and key from different pairs.
        Leaf {
            cert_pem: other.cert_pem.clone(),
            key_pem: another.key_pem.clone(),
        },
    ];
    for (attempt, leaf) in broken.iter().enumerate() {
        harness.secret.rotate(leaf);
        let expected = (attempt + 1) as f64;
        let url = harness.metrics_url("/metrics");
        let rejected = eventually(Duration::from_secs(10), || {
            let url = url.clone();
            async move {
                let (_, _, text) = plain_get(&url).await;
                metric(&text, "forcegate_tls_reloads_total{result=\"error\"}") == Some(expected)
            }
        })
        .await;
        assert!(rejected, "attempt {attempt} not rejected");
        assert_eq!(
            served_serial(addr, &ca).await.expect("handshake"),
            old_serial
        );
        let reply = post_json(
            &harness.client(false),
            &harness.url("/validate"),
            fixture("kubelet-final-delete"),
        )
        .await;
        assert_eq!(reply.status, StatusCode::OK);
    }

    harness.secret.rotate(&other);
    let new_serial = serial_of(&other.cert_pem);
    let replaced = eventually(Duration::from_secs(10), || {
        let (ca, new_serial) = (ca.clone(), new_serial.clone());
        async move {
            served_serial(addr, &ca)
                .await
                .is_ok_and(|s| s == new_serial)
        }
    })
    .await;
    assert!(replaced, "valid pair after broken ones was not picked up");
    harness.server.shutdown().await;
}
