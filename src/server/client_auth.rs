//! Optional client-certificate authentication of the HTTPS port.
//!
//! With `--client-ca-file`, a TLS client must present a certificate that
//! chains to that bundle (rustls' WebPKI verifier: validity, key usage for
//! client auth, signatures) and, with `--client-cert-names`, whose subject
//! common name or one of whose DNS names is listed. Anything else is refused
//! during the handshake, before a byte of HTTP is read: a review forged from
//! inside the cluster network never reaches the engine.
//!
//! The acceptor holds the whole rustls configuration behind an `ArcSwap`, so
//! a new CA bundle (a rotated ConfigMap or Secret) takes effect for new
//! handshakes without a restart; a bundle that does not parse is rejected
//! with a warning and the current one stays.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::CryptoProvider;
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{
    DigitallySignedStruct, DistinguishedName, RootCertStore, ServerConfig, SignatureScheme,
};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, UnixTime};

use super::tls::{CertStore, TlsError};

/// What a client must present; `None` in [`super::Config`] accepts any client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientAuth {
    /// PEM bundle of the CA(s) client certificates must chain to.
    pub ca_file: PathBuf,
    /// Accepted subject common names / DNS names; empty accepts any name.
    pub names: Vec<String>,
}

/// The rustls configuration new handshakes get.
pub(super) struct Acceptor {
    certs: Arc<CertStore>,
    client: Option<ClientCa>,
    current: ArcSwap<ServerConfig>,
}

struct ClientCa {
    auth: ClientAuth,
    /// The bundle in force, to skip no-op reloads and report a bad one once.
    source: Mutex<(Vec<u8>, Option<Vec<u8>>)>,
}

impl Acceptor {
    pub(super) fn new(certs: Arc<CertStore>, client: Option<ClientAuth>) -> Result<Self, TlsError> {
        let (config, client) = match client {
            None => (certs.server_config(None)?, None),
            Some(auth) => {
                let pem = read(&auth.ca_file)?;
                let verifier = verifier(&auth, &pem, certs.provider())?;
                tracing::info!(
                    ca_file = %auth.ca_file.display(),
                    names = ?auth.names,
                    "client certificates required on the HTTPS port"
                );
                let config = certs.server_config(Some(verifier))?;
                let source = Mutex::new((pem, None));
                (config, Some(ClientCa { auth, source }))
            }
        };
        Ok(Self {
            certs,
            client,
            current: ArcSwap::new(config),
        })
    }

    pub(super) fn current(&self) -> Arc<ServerConfig> {
        self.current.load_full()
    }

    /// Directories whose changes may need a reload (the CA file's, when it
    /// lives outside the certificate directory).
    pub(super) fn extra_watch_dir(&self) -> Option<PathBuf> {
        let parent = self.client.as_ref()?.auth.ca_file.parent()?;
        let parent = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        (parent != self.certs.dir()).then(|| parent.to_owned())
    }

    /// Re-read the client CA bundle; swap the configuration when it changed
    /// and parses. Returns whether it was replaced.
    pub(super) fn reload_client_ca(&self) -> bool {
        let Some(client) = &self.client else {
            return false;
        };
        let mut source = client.source.lock().unwrap_or_else(|p| p.into_inner());
        let pem = match read(&client.auth.ca_file) {
            Ok(pem) => pem,
            Err(err) => {
                tracing::warn!(error = %err, "client CA bundle unreadable; keeping the current one");
                return false;
            }
        };
        if pem == source.0 || source.1.as_ref() == Some(&pem) {
            return false;
        }
        let config = verifier(&client.auth, &pem, self.certs.provider())
            .and_then(|verifier| self.certs.server_config(Some(verifier)));
        match config {
            Ok(config) => {
                self.current.store(config);
                *source = (pem, None);
                tracing::info!(ca_file = %client.auth.ca_file.display(), "client CA bundle replaced");
                true
            }
            Err(err) => {
                tracing::warn!(error = %err, "new client CA bundle rejected; keeping the current one");
                source.1 = Some(pem);
                false
            }
        }
    }
}

fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read {
        path: path.to_owned(),
        source,
    })
}

fn verifier(
    auth: &ClientAuth,
    pem: &[u8],
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<dyn ClientCertVerifier>, TlsError> {
    let invalid = |reason: String| TlsError::ClientCa {
        path: auth.ca_file.clone(),
        reason,
    };
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(pem) {
        let cert = cert.map_err(|err| invalid(err.to_string()))?;
        roots.add(cert).map_err(|err| invalid(err.to_string()))?;
    }
    if roots.is_empty() {
        return Err(invalid("no PEM certificate found".into()));
    }
    let webpki = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|err| invalid(err.to_string()))?;
    if auth.names.is_empty() {
        return Ok(webpki);
    }
    Ok(Arc::new(NameCheck {
        inner: webpki,
        names: auth.names.iter().map(|n| n.to_ascii_lowercase()).collect(),
    }))
}

/// The WebPKI verifier, then the certificate's names against an allow list.
#[derive(Debug)]
struct NameCheck {
    inner: Arc<dyn ClientCertVerifier>,
    names: Vec<String>,
}

impl NameCheck {
    fn accepts(&self, der: &[u8]) -> bool {
        let Ok((_, cert)) = x509_parser::parse_x509_certificate(der) else {
            return false;
        };
        let common_names = cert
            .subject()
            .iter_common_name()
            .filter_map(|cn| cn.as_str().ok());
        let dns_names = cert
            .subject_alternative_name()
            .ok()
            .flatten()
            .into_iter()
            .flat_map(|san| san.value.general_names.iter())
            .filter_map(|name| match name {
                x509_parser::extensions::GeneralName::DNSName(dns) => Some(*dns),
                _ => None,
            });
        common_names
            .chain(dns_names)
            .any(|name| self.names.iter().any(|n| n.eq_ignore_ascii_case(name)))
    }
}

impl ClientCertVerifier for NameCheck {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        let verified = self
            .inner
            .verify_client_cert(end_entity, intermediates, now)?;
        if self.accepts(end_entity) {
            Ok(verified)
        } else {
            Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::ApplicationVerificationFailure,
            ))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// Whether a failed handshake was the client's certificate being refused
/// (missing, untrusted, expired or not an accepted name).
pub(super) fn is_client_auth_refusal(err: &std::io::Error) -> bool {
    let Some(rustls_err) = err
        .get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>())
    else {
        return false;
    };
    matches!(
        rustls_err,
        rustls::Error::NoCertificatesPresented | rustls::Error::InvalidCertificate(_)
    )
}

#[cfg(test)]
mod tests;
