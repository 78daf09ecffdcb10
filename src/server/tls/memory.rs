//! A serving pair handed over as bytes (a Secret read through the API)
//! instead of read from a directory. Same checks and same swap rules: a
//! pair that does not parse, match or is out of date never replaces the
//! current one.

use std::path::Path;
use std::sync::Arc;

use rustls_pki_types::CertificateDer;

use super::{CertStore, Reloaded, TlsError, parse_pair};
use crate::server::metrics::TlsMetrics;

impl CertStore {
    /// A store whose first pair is `cert`/`key` (PEM). `source` names where
    /// they came from (e.g. `secret forcegate/forcegate-tls`) in errors and
    /// logs; nothing is read from it.
    pub fn from_pem(
        source: &str,
        cert: Vec<u8>,
        key: Vec<u8>,
        metrics: TlsMetrics,
    ) -> Result<Arc<Self>, TlsError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let source = Path::new(source);
        let loaded = parse_pair(source, (cert, key), &provider)?;
        Ok(Self::start(source, provider, loaded, metrics))
    }

    /// Offer a new pair; swapped in only when valid, in date and different.
    pub fn replace_pem(&self, cert: Vec<u8>, key: Vec<u8>) -> Result<Reloaded, TlsError> {
        self.reported(self.try_swap((cert, key)))
    }

    /// The chain new handshakes present, leaf first.
    pub fn chain(&self) -> Vec<CertificateDer<'static>> {
        self.current.load().key.cert.clone()
    }
}

#[cfg(test)]
mod tests;
