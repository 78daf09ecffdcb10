//! Real TLS clients (HTTP/1.1 like kube-apiserver, or h2) and helpers.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Bytes;
use forcegate::certs::Leaf;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper::StatusCode;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

pub type Body = UnsyncBoxBody<Bytes, Infallible>;
pub type HttpsClient = Client<HttpsConnector<HttpConnector>, Body>;

pub fn client_config(ca_pem: &str) -> rustls::ClientConfig {
    client_config_as(ca_pem, None)
}

/// A client config trusting `ca_pem`, presenting `identity` when given.
pub fn client_config_as(ca_pem: &str, identity: Option<&Leaf>) -> rustls::ClientConfig {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert.expect("CA PEM")).expect("CA added");
    }
    let builder = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("versions")
    .with_root_certificates(roots);
    match identity {
        None => builder.with_no_client_auth(),
        Some(leaf) => {
            let chain = CertificateDer::pem_slice_iter(leaf.cert_pem.as_bytes())
                .collect::<Result<Vec<_>, _>>()
                .expect("client certificate PEM");
            let key = PrivateKeyDer::from_pem_slice(leaf.key_pem.as_bytes()).expect("client key");
            builder
                .with_client_auth_cert(chain, key)
                .expect("client identity")
        }
    }
}

/// A client that verifies the server against our CA. HTTP/1.1 only (as
/// kube-apiserver) or h2 only via ALPN.
pub fn https_client(ca_pem: &str, h2: bool) -> HttpsClient {
    https_client_as(ca_pem, h2, None)
}

/// [`https_client`] presenting a client certificate.
pub fn https_client_as(ca_pem: &str, h2: bool, identity: Option<&Leaf>) -> HttpsClient {
    let builder = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(client_config_as(ca_pem, identity))
        .https_only();
    let connector = if h2 {
        builder.enable_http2().build()
    } else {
        builder.enable_http1().build()
    };
    Client::builder(TokioExecutor::new())
        .http2_only(h2)
        .build(connector)
}

pub fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed_unsync()
}

pub struct Reply {
    pub status: StatusCode,
    pub version: hyper::Version,
    pub content_type: String,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|err| {
            panic!("not JSON ({err}): {}", String::from_utf8_lossy(&self.body))
        })
    }
}

pub async fn send(client: &HttpsClient, request: hyper::Request<Body>) -> Result<Reply, String> {
    let response = client
        .request(request)
        .await
        .map_err(|err| format!("{err:?}"))?;
    let status = response.status();
    let version = response.version();
    let content_type = response
        .headers()
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|err| format!("{err:?}"))?
        .to_bytes()
        .to_vec();
    Ok(Reply {
        status,
        version,
        content_type,
        body,
    })
}

pub async fn post(client: &HttpsClient, url: &str, content_type: &str, body: Body) -> Reply {
    let request = hyper::Request::post(url)
        .header(hyper::header::CONTENT_TYPE, content_type)
        .body(body)
        .expect("request");
    send(client, request).await.expect("request succeeds")
}

pub async fn post_json(client: &HttpsClient, url: &str, body: Vec<u8>) -> Reply {
    post(client, url, "application/json", full(body)).await
}

pub async fn get(client: &HttpsClient, url: &str) -> Reply {
    let request = hyper::Request::get(url)
        .body(full(Bytes::new()))
        .expect("request");
    send(client, request).await.expect("request succeeds")
}

/// GET over plain HTTP (the metrics port).
pub async fn plain_get(url: &str) -> (StatusCode, String, String) {
    let client: Client<HttpConnector, Body> =
        Client::builder(TokioExecutor::new()).build(HttpConnector::new());
    let request = hyper::Request::get(url)
        .body(full(Bytes::new()))
        .expect("request");
    let response = client.request(request).await.expect("plain GET");
    let status = response.status();
    let content_type = response
        .headers()
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    (
        status,
        content_type,
        String::from_utf8_lossy(&body).into_owned(),
    )
}

/// Serial of the certificate a *fresh* handshake is served.
pub async fn served_serial(addr: std::net::SocketAddr, ca_pem: &str) -> Result<String, String> {
    let connector = tokio_rustls::TlsConnector::from(Arc::new(client_config(ca_pem)));
    let tcp = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| e.to_string())?;
    let name = rustls_pki_types::ServerName::try_from("127.0.0.1").map_err(|e| e.to_string())?;
    let tls = connector
        .connect(name, tcp)
        .await
        .map_err(|e| e.to_string())?;
    let (_, session) = tls.get_ref();
    let der = session
        .peer_certificates()
        .and_then(|c| c.first())
        .ok_or("no peer certificate")?;
    forcegate::server::tls::certificate_info(der).map(|info| info.serial)
}

pub fn serial_of(cert_pem: &str) -> String {
    use rustls_pki_types::CertificateDer;
    use rustls_pki_types::pem::PemObject;
    let der = CertificateDer::from_pem_slice(cert_pem.as_bytes()).expect("PEM");
    forcegate::server::tls::certificate_info(&der)
        .expect("parses")
        .serial
}

/// The value of a metric line (exact labels) in OpenMetrics text.
pub fn metric(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|value| value.split_whitespace().next()?.parse().ok())
}
