//! forcegate runs with client-certificate authentication in the e2e bed:
//! the API server presents its client certificate (admission kubeconfig),
//! so every webhook call of the suite proves that side works. Here: a
//! review posted straight to forcegate's port without that certificate is
//! refused during the handshake; with it, it is answered. And the
//! manifests' way to turn it on (components/client-auth) builds and passes a
//! server-side dry run.

use std::sync::Arc;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use serde_json::{Value, json};

use crate::harness::{Harness, harness, http_get};
use crate::kubectl::parse;
use crate::overlay::relative;

/// POST `review` to forcegate's `/validate` as a TLS client presenting the
/// API server's client certificate (`as_api_server`) or none. `Err` names
/// why the connection failed; `Ok` holds the HTTP status and JSON body.
pub fn post_review(
    h: &Harness,
    as_api_server: bool,
    review: &Value,
) -> Result<(u16, Value), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(post(h, as_api_server, review))
}

async fn post(h: &Harness, as_api_server: bool, review: &Value) -> Result<(u16, Value), String> {
    let ca = std::fs::read(h.work.join("certs").join(forcegate::certs::CA_CERT_FILE))
        .map_err(|e| format!("serving CA: {e}"))?;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&ca) {
        roots
            .add(cert.map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    }
    let builder = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
    .with_root_certificates(roots);
    let mut config = if as_api_server {
        let chain = CertificateDer::pem_file_iter(&h.client_cert)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|e| format!("client certificate: {e}"))?;
        let key =
            PrivateKeyDer::from_pem_file(&h.client_key).map_err(|e| format!("client key: {e}"))?;
        builder
            .with_client_auth_cert(chain, key)
            .map_err(|e| e.to_string())?
    } else {
        builder.with_no_client_auth()
    };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", h.port))
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let name = ServerName::try_from("127.0.0.1").map_err(|e| e.to_string())?;
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(|e| format!("TLS: {e}"))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .map_err(|e| format!("HTTP handshake: {e}"))?;
    tokio::spawn(connection);
    let request = hyper::Request::post("/validate")
        .header(hyper::header::HOST, format!("127.0.0.1:{}", h.port))
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(review.to_string())))
        .map_err(|e| e.to_string())?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| format!("request: {e}"))?;
    let status = response.status().as_u16();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("body: {e}"))?
        .to_bytes();
    let json = serde_json::from_slice(&body).map_err(|e| format!("not JSON: {e}"))?;
    Ok((status, json))
}

fn refusals(h: &Harness) -> f64 {
    let (_, text) = http_get(h.metrics_port, "/metrics").expect("/metrics");
    text.lines()
        .find_map(|l| {
            l.strip_prefix("forcegate_tls_handshake_failures_total{reason=\"client_auth\"} ")
        })
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

#[test]
fn a_review_posted_without_the_api_servers_client_certificate_is_refused() {
    let h = harness();
    let _running = h.shared();
    let path = h
        .root
        .join("tests/fixtures/reviews/kubelet-final-delete.json");
    let review: Value =
        serde_json::from_slice(&std::fs::read(path).expect("fixture")).expect("fixture JSON");

    let before = refusals(h);
    let anonymous = post_review(h, false, &review);
    assert!(
        anonymous.is_err(),
        "forcegate answered a client without a certificate: {anonymous:?}"
    );
    assert_eq!(refusals(h), before + 1.0, "the refusal is counted");

    let (status, answer) = post_review(h, true, &review).unwrap_or_else(|err| {
        panic!(
            "the API server's certificate was refused: {err}\n{}",
            h.forcegate_log_tail()
        )
    });
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer["response"]["uid"], review["request"]["uid"],
        "{answer}"
    );
}

#[test]
fn the_client_auth_component_mounts_the_client_ca_and_passes_a_dry_run() {
    let h = harness();
    let dir = h.work.join("client-auth-overlay");
    std::fs::create_dir_all(&dir).expect("overlay dir");
    let base = relative(&dir, &h.manifests).expect("base path");
    let component = relative(&dir, &h.manifests.join("components/client-auth")).expect("path");
    std::fs::write(
        dir.join("kustomization.yaml"),
        format!(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n\
             resources:\n- {}\ncomponents:\n- {}\n",
            base.display(),
            component.display()
        ),
    )
    .expect("kustomization");
    let dir = dir.to_str().expect("UTF-8 path");
    let list = parse(
        &h.admin
            .ok(&["apply", "--dry-run=server", "-k", dir, "-o", "json"]),
    );
    let deployment = list["items"]
        .as_array()
        .expect("a List")
        .iter()
        .find(|i| i["kind"] == "Deployment")
        .expect("Deployment");
    let spec = &deployment["spec"]["template"]["spec"];
    let args = &spec["containers"][0]["args"];
    let has = |arg: &str| args.as_array().is_some_and(|a| a.contains(&json!(arg)));
    assert!(
        has("--client-ca-file=/etc/forcegate/client-ca/ca.crt"),
        "{args}"
    );
    assert!(has("--client-cert-names=kube-apiserver"), "{args}");
    let mounted = spec["containers"][0]["volumeMounts"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|m| m["name"] == "client-ca" && m["mountPath"] == "/etc/forcegate/client-ca");
    assert!(mounted, "{spec:#}");
    let volume = spec["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|v| v["name"] == "client-ca")
        .expect("client-ca volume");
    assert_eq!(volume["configMap"]["name"], "forcegate-client-ca");
    // Probes must not need a client certificate.
    for probe in ["readinessProbe", "livenessProbe", "startupProbe"] {
        let port = &spec["containers"][0][probe]["httpGet"]["port"];
        assert_eq!(port, "metrics", "{probe} must use the plain port");
    }
}
