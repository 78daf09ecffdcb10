//! Client-certificate authentication of the HTTPS port: only a client whose
//! certificate chains to the configured CA (and carries an accepted name)
//! gets an answer; everyone else is refused during the TLS handshake. The
//! plain health port stays open. A new CA bundle is picked up live.

mod server_support;

use std::path::PathBuf;
use std::time::Duration;

use forcegate::certs::{Authority, Leaf};
use forcegate::server::ClientAuth;
use hyper::StatusCode;
use server_support::*;

struct ClientCa {
    dir: tempfile::TempDir,
    authority: Authority,
}

impl ClientCa {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let ca = Self {
            dir,
            authority: Authority::generate("clients", "test", 1).expect("client CA"),
        };
        ca.install(&ca.authority);
        ca
    }

    fn file(&self) -> PathBuf {
        self.dir.path().join("client-ca.crt")
    }

    fn install(&self, authority: &Authority) {
        let tmp = self.dir.path().join("client-ca.crt.new");
        std::fs::write(&tmp, authority.cert_pem()).expect("write CA");
        std::fs::rename(&tmp, self.file()).expect("swap CA");
    }

    fn client(&self, name: &str) -> Leaf {
        self.authority.issue_client(name, 1).expect("client cert")
    }

    fn auth(&self, names: &[&str]) -> ClientAuth {
        ClientAuth {
            ca_file: self.file(),
            names: names.iter().map(|n| (*n).to_owned()).collect(),
        }
    }
}

/// POST a review as `identity`; `Err` when the connection was refused.
async fn review_as(
    harness: &Harness,
    h2: bool,
    identity: Option<&Leaf>,
) -> Result<StatusCode, String> {
    let client = https_client_as(&harness.authority.cert_pem(), h2, identity);
    let request = hyper::Request::post(harness.url("/validate"))
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(full(fixture("kubelet-final-delete")))
        .expect("request");
    send(&client, request).await.map(|reply| reply.status)
}

async fn refusals(harness: &Harness) -> Option<f64> {
    let (_, _, metrics) = plain_get(&harness.metrics_url("/metrics")).await;
    metric(
        &metrics,
        "forcegate_tls_handshake_failures_total{reason=\"client_auth\"}",
    )
}

#[tokio::test]
async fn only_clients_with_a_certificate_from_the_client_ca_are_answered() {
    let clients = ClientCa::new();
    let harness = Harness::start(static_engine(true), |config| {
        config.client_auth = Some(clients.auth(&[]));
    })
    .await;
    let apiserver = clients.client("kube-apiserver");
    let stranger = Authority::generate("other", "test", 1)
        .expect("CA")
        .issue_client("kube-apiserver", 1)
        .expect("client cert");
    for h2 in [false, true] {
        let anonymous = review_as(&harness, h2, None).await;
        assert!(
            anonymous.is_err(),
            "no certificate answered (h2={h2}): {anonymous:?}"
        );
        let forged = review_as(&harness, h2, Some(&stranger)).await;
        assert!(forged.is_err(), "foreign CA answered (h2={h2}): {forged:?}");
        let trusted = review_as(&harness, h2, Some(&apiserver)).await;
        assert_eq!(trusted, Ok(StatusCode::OK), "h2={h2}");
    }
    assert_eq!(refusals(&harness).await, Some(4.0));
    // Health stays reachable without a certificate on the plain port.
    let (status, _, body) = plain_get(&harness.metrics_url("/healthz")).await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "ok\n"));
    harness.server.shutdown().await;
}

#[tokio::test]
async fn client_cert_names_narrow_the_accepted_certificates() {
    let clients = ClientCa::new();
    let harness = Harness::start(static_engine(true), |config| {
        config.client_auth = Some(clients.auth(&["kube-apiserver"]));
    })
    .await;
    let intruder = review_as(&harness, false, Some(&clients.client("intruder"))).await;
    assert!(intruder.is_err(), "unlisted name answered: {intruder:?}");
    let apiserver = review_as(&harness, false, Some(&clients.client("kube-apiserver"))).await;
    assert_eq!(apiserver, Ok(StatusCode::OK));
    assert_eq!(refusals(&harness).await, Some(1.0));
    harness.server.shutdown().await;
}

#[tokio::test]
async fn a_new_client_ca_bundle_is_picked_up_without_a_restart() {
    let clients = ClientCa::new();
    let harness = Harness::start(static_engine(true), |config| {
        config.client_auth = Some(clients.auth(&[]));
    })
    .await;
    let old = clients.client("kube-apiserver");
    assert_eq!(
        review_as(&harness, false, Some(&old)).await,
        Ok(StatusCode::OK)
    );

    let rotated = Authority::generate("clients", "test", 1).expect("new CA");
    let new = rotated
        .issue_client("kube-apiserver", 1)
        .expect("client cert");
    clients.install(&rotated);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while review_as(&harness, false, Some(&new)).await != Ok(StatusCode::OK) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the new client CA was not picked up"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let stale = review_as(&harness, false, Some(&old)).await;
    assert!(
        stale.is_err(),
        "a certificate of the replaced CA answered: {stale:?}"
    );
    harness.server.shutdown().await;
}
