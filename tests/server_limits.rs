//! Limits that hold under abuse, on the real server with real TLS: the 413
//! reaches an h2 client, idle and old connections are closed, a flood of
//! idle connections on the metrics port leaves the webhook port answering,
//! and a burst of maximum-size bodies keeps the process's peak memory well
//! inside the Deployment's 256 MiB limit.

mod server_support;

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use forcegate::certs;
use http_body_util::{BodyExt, Empty};
use hyper::StatusCode;
use hyper_util::rt::{TokioExecutor, TokioIo};
use server_support::*;
use tokio::net::TcpStream;
use tokio::time::Instant;

/// A review of the given size whose padding is one long string (few JSON
/// items) or an array of zeros (one item per two bytes).
fn padded_review(bytes: usize, items: bool) -> Vec<u8> {
    let mut review: serde_json::Value =
        serde_json::from_slice(&fixture("force-delete-leader")).expect("fixture");
    let base = serde_json::to_vec(&review).expect("JSON").len();
    let room = bytes.saturating_sub(base + 64);
    let old = &mut review["request"]["oldObject"];
    if items {
        old["padding"] = serde_json::Value::Array(vec![0.into(); room / 2]);
    } else {
        old["metadata"]["annotations"]["padding"] = "x".repeat(room).into();
    }
    serde_json::to_vec(&review).expect("JSON")
}

#[tokio::test]
async fn an_over_limit_body_declared_by_content_length_gets_its_413_over_h2() {
    let harness = Harness::start(static_engine(true), |_| {}).await;
    let body = vec![b' '; forcegate::server::DEFAULT_BODY_LIMIT + 2 * 1024 * 1024];
    let reply = post(
        &harness.client(true),
        &harness.url("/validate"),
        "application/json",
        full(body),
    )
    .await;
    assert_eq!(reply.version, hyper::Version::HTTP_2);
    assert_eq!(reply.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(reply.json()["reason"], "too_large");
    harness.server.shutdown().await;
}

#[tokio::test]
async fn a_body_budget_smaller_than_one_body_is_refused_at_start() {
    init();
    let authority = forcegate::certs::Authority::generate(SERVICE, NAMESPACE, 1).expect("CA");
    let secret = SecretDir::new(&authority.issue(SERVICE, NAMESPACE, 1).expect("leaf"));
    let mut config =
        forcegate::server::Config::new("127.0.0.1:0".parse().expect("addr"), secret.path());
    config.body_budget = config.body_limit - 1;
    let err = forcegate::server::Server::new(config, static_engine(true))
        .bind()
        .await
        .err()
        .expect("refused");
    assert!(
        matches!(err, forcegate::server::ServerError::Config(_)),
        "{err}"
    );
    assert!(err.to_string().contains("body budget"), "{err}");
}

/// A TLS connection speaking `h2` or `http/1.1`, and when the server closed it.
async fn connect(harness: &Harness, h2: bool) -> (Sender, tokio::task::JoinHandle<Instant>) {
    let mut config = client_config(&harness.authority.cert_pem());
    config.alpn_protocols = vec![if h2 {
        b"h2".to_vec()
    } else {
        b"http/1.1".to_vec()
    }];
    let tcp = TcpStream::connect(harness.server.local_addr())
        .await
        .expect("connect");
    let name = rustls_pki_types::ServerName::try_from("127.0.0.1").expect("name");
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .expect("TLS");
    let io = TokioIo::new(tls);
    if h2 {
        let (sender, connection) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
            .await
            .expect("h2 handshake");
        let closed = tokio::spawn(async move {
            let _ = connection.await;
            Instant::now()
        });
        (Sender::H2(sender), closed)
    } else {
        let (sender, connection) = hyper::client::conn::http1::handshake(io)
            .await
            .expect("h1 handshake");
        let closed = tokio::spawn(async move {
            let _ = connection.await;
            Instant::now()
        });
        (Sender::H1(sender), closed)
    }
}

enum Sender {
    H1(hyper::client::conn::http1::SendRequest<Empty<Bytes>>),
    H2(hyper::client::conn::http2::SendRequest<Empty<Bytes>>),
}

impl Sender {
    /// GET /healthz; `None` once the connection no longer takes requests.
    async fn healthz(&mut self) -> Option<StatusCode> {
        let request = hyper::Request::get("https://127.0.0.1/healthz")
            .body(Empty::new())
            .expect("request");
        let response = match self {
            Sender::H1(sender) => {
                sender.ready().await.ok()?;
                sender.send_request(request).await.ok()?
            }
            Sender::H2(sender) => {
                sender.ready().await.ok()?;
                sender.send_request(request).await.ok()?
            }
        };
        let status = response.status();
        response.into_body().collect().await.ok()?;
        Some(status)
    }
}

#[tokio::test]
async fn idle_connections_are_closed_after_the_idle_timeout() {
    let idle = Duration::from_millis(300);
    let harness = Harness::start(static_engine(true), |config| config.idle_timeout = idle).await;
    for h2 in [false, true] {
        let (mut sender, closed) = connect(&harness, h2).await;
        assert_eq!(sender.healthz().await, Some(StatusCode::OK));
        let last_request = Instant::now();
        let closed_at = tokio::time::timeout(Duration::from_secs(5), closed)
            .await
            .unwrap_or_else(|_| panic!("idle connection still open after 5 s (h2={h2})"))
            .expect("connection task");
        let after = closed_at - last_request;
        assert!(
            after >= idle - Duration::from_millis(50),
            "closed after {after:?} (h2={h2})"
        );
    }
    harness.server.shutdown().await;
}

#[tokio::test]
async fn busy_connections_are_closed_gracefully_at_their_maximum_age() {
    let age = Duration::from_millis(500);
    let harness = Harness::start(static_engine(true), |config| {
        config.max_connection_age = age
    })
    .await;
    let (mut sender, mut closed) = connect(&harness, true).await;
    let opened = Instant::now();
    let mut answered = 0;
    loop {
        tokio::select! {
            at = &mut closed => {
                let lived = at.expect("connection task") - opened;
                assert!(lived >= age, "closed after {lived:?}");
                break;
            }
            status = sender.healthz() => match status {
                Some(status) => {
                    assert_eq!(status, StatusCode::OK);
                    answered += 1;
                    assert!(opened.elapsed() < Duration::from_secs(5), "never closed");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                // GOAWAY received: no new streams on this connection.
                None => {
                    let at = tokio::time::timeout(Duration::from_secs(5), &mut closed).await;
                    assert!(at.is_ok(), "the connection did not close after GOAWAY");
                    break;
                }
            },
        }
    }
    assert!(answered >= 5, "only {answered} answers before the close");
    harness.server.shutdown().await;
}

/// Enough open files for `wanted` sockets, raising the soft limit if needed.
fn ensure_open_files(wanted: u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        if limit.rlim_cur < wanted && limit.rlim_max >= wanted {
            limit.rlim_cur = wanted;
            assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
        }
    }
    assert!(
        limit.rlim_cur >= wanted,
        "this test needs {wanted} open files; `ulimit -n` allows {} (hard {})",
        limit.rlim_cur,
        limit.rlim_max
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_idle_connections_on_the_metrics_port_leaves_the_webhook_answering() {
    const FLOOD: usize = 4096;
    ensure_open_files(FLOOD as u64 * 2 + 1024);
    // Default limits: the flood is eight times the webhook's slots, so one
    // limit shared by both ports would be exhausted.
    let harness = Harness::start(static_engine(true), |_| {}).await;
    let metrics_addr = harness.server.metrics_addr().expect("metrics port");
    let stop = Arc::new(tokio::sync::Notify::new());
    let connected = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut flood = Vec::with_capacity(FLOOD);
    for _ in 0..FLOOD {
        let (stop, connected) = (stop.clone(), connected.clone());
        flood.push(tokio::spawn(async move {
            tokio::select! {
                stream = TcpStream::connect(metrics_addr) => {
                    let Ok(_stream) = stream else { return };
                    connected.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    stop.notified().await;
                }
                _ = stop.notified() => {}
            }
        }));
    }
    // Past the kernel's first SYN retry (1 s): every connection the server
    // will accept has been accepted.
    tokio::time::sleep(Duration::from_millis(2000)).await;
    let started = Instant::now();
    let reply = tokio::time::timeout(
        Duration::from_secs(3),
        post_json(
            &harness.client(false),
            &harness.url("/validate"),
            fixture("kubelet-final-delete"),
        ),
    )
    .await
    .expect("the webhook port did not answer under the metrics flood");
    assert_eq!(reply.status, StatusCode::OK);
    eprintln!(
        "{} of {FLOOD} flood connections established; webhook answered in {:?}",
        connected.load(std::sync::atomic::Ordering::Relaxed),
        started.elapsed()
    );
    stop.notify_waiters();
    for task in flood {
        task.abort();
    }
    harness.server.shutdown().await;
}

/// `forcegate serve` as a child process, on the shipped policies and the
/// example snapshot, so its memory is its own.
struct Served {
    child: Child,
    _dir: tempfile::TempDir,
    port: u16,
    ca_pem: String,
}

impl Served {
    async fn start() -> Self {
        init();
        let dir = tempfile::tempdir().expect("tempdir");
        let free = || std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr());
        let (port, metrics) = (free().expect("port").port(), free().expect("port").port());
        let child = Command::new(env!("CARGO_BIN_EXE_forcegate"))
            .arg("serve")
            .arg(format!("--listen=127.0.0.1:{port}"))
            .arg(format!("--metrics-listen=127.0.0.1:{metrics}"))
            .arg(format!("--tls-dir={}", dir.path().join("tls").display()))
            .arg(format!(
                "--policies={}",
                manifest_path("policies").display()
            ))
            .arg(format!(
                "--cluster={}",
                manifest_path("examples/cluster").display()
            ))
            .arg(format!(
                "--journal={}",
                dir.path().join("journal").display()
            ))
            .env("RUST_LOG", "error")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn forcegate serve");
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            assert!(Instant::now() < deadline, "forcegate serve did not start");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let ca_pem = std::fs::read_to_string(dir.path().join("tls").join(certs::CA_CERT_FILE))
            .expect("dev CA");
        Self {
            child,
            _dir: dir,
            port,
            ca_pem,
        }
    }

    /// Peak resident memory so far, in KiB.
    fn peak_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("/proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM")
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_maximum_size_bodies_stays_inside_the_memory_limit() {
    const LIMIT_KIB: u64 = 256 * 1024;
    let served = Served::start().await;
    let url = format!("https://127.0.0.1:{}/validate", served.port);
    let client = https_client(&served.ca_pem, false);
    let before = served.peak_kib();
    let limit = forcegate::server::DEFAULT_BODY_LIMIT;
    // Maximum-size bodies, more than the budget holds at once: long
    // strings, arrays of zeros as large as the budget admits, and ones
    // that would decode past it (refused before decoding).
    let bursts: [(Vec<u8>, usize, StatusCode); 3] = [
        (padded_review(limit - 1024, false), 24, StatusCode::OK),
        (padded_review(600 * 1024, true), 8, StatusCode::OK),
        (
            padded_review(limit - 1024, true),
            8,
            StatusCode::PAYLOAD_TOO_LARGE,
        ),
    ];
    let started = Instant::now();
    for (body, count, expected) in bursts {
        let replies: Vec<_> = (0..count)
            .map(|_| {
                let (client, url, body) = (client.clone(), url.clone(), body.clone());
                tokio::spawn(async move { post_json(&client, &url, body).await.status })
            })
            .collect();
        for reply in replies {
            assert_eq!(reply.await.expect("request task"), expected);
        }
    }
    let peak = served.peak_kib();
    eprintln!(
        "VmHWM {} MiB before, {} MiB after the bursts ({:?})",
        before / 1024,
        peak / 1024,
        started.elapsed()
    );
    assert!(
        peak < LIMIT_KIB * 3 / 4,
        "peak resident memory {} MiB is not well inside 256 MiB",
        peak / 1024
    );
}
