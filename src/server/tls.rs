//! Serving certificate from a Secret-style directory, hot-reloaded.
//!
//! A mounted Secret is updated by writing a new timestamped directory and
//! atomically renaming a `..data` symlink onto it (`tls.crt` and `tls.key`
//! are symlinks through `..data`). We watch the directory, debounce the burst
//! of events such an update makes, ignore access events, and swap the pair
//! only when the new one parses, matches and is in date; otherwise the old
//! pair keeps serving. Each handshake picks the current pair, so existing
//! connections and in-flight requests are untouched by a swap. A slow poll
//! backs up the watch (inotify misses changes when the directory itself is
//! replaced).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use arc_swap::ArcSwap;
use notify::{EventKind, RecursiveMode, Watcher};
use rustls::ServerConfig;
use rustls::crypto::CryptoProvider;
use rustls::server::danger::ClientCertVerifier;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::metrics::TlsMetrics;
use super::shutdown::Shutdown;
use crate::certs::{CERT_FILE, KEY_FILE};

/// ALPN: h2 for clients that want it, HTTP/1.1 for kube-apiserver.
const ALPN: [&[u8]; 2] = [b"h2", b"http/1.1"];

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: no PEM certificate found ({reason})")]
    NoCertificate { path: PathBuf, reason: String },
    #[error("{path}: no PEM private key found ({reason})")]
    NoKey { path: PathBuf, reason: String },
    #[error("{path}: certificate does not parse: {reason}")]
    Parse { path: PathBuf, reason: String },
    #[error("{dir}: key does not fit the certificate: {source}")]
    Key {
        dir: PathBuf,
        #[source]
        source: rustls::Error,
    },
    #[error("{path}: certificate expired (notAfter {not_after})")]
    Expired { path: PathBuf, not_after: i64 },
    #[error("{path}: client CA bundle unusable: {reason}")]
    ClientCa { path: PathBuf, reason: String },
    #[error("cannot build the TLS configuration: {0}")]
    Config(#[source] rustls::Error),
    #[error("cannot watch {dir}: {source}")]
    Watch {
        dir: PathBuf,
        #[source]
        source: notify::Error,
    },
}

/// What the serving certificate is, for logs, metrics and tests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertificateInfo {
    /// Hex serial, colon-separated as `openssl x509 -serial` groups bytes.
    pub serial: String,
    pub subject: String,
    pub not_before: i64,
    pub not_after: i64,
}

/// A loaded pair and the bytes it came from (to skip no-op reloads).
struct Loaded {
    key: Arc<CertifiedKey>,
    info: CertificateInfo,
    source: (Vec<u8>, Vec<u8>),
}

/// The current serving pair of a directory; swapped atomically on reload.
pub struct CertStore {
    dir: PathBuf,
    provider: Arc<CryptoProvider>,
    current: ArcSwap<Loaded>,
    /// The last pair rejected, so an unchanged broken pair is reported once
    /// rather than on every event and poll.
    rejected: std::sync::Mutex<Option<(Vec<u8>, Vec<u8>)>>,
    metrics: TlsMetrics,
}

/// Result of a reload attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reloaded {
    Unchanged,
    Replaced(CertificateInfo),
}

impl CertStore {
    /// Load `tls.crt` / `tls.key` from `dir`. An expired pair is accepted
    /// at start (with an error log) so a later rotation can fix it live.
    pub fn load(dir: &Path, metrics: TlsMetrics) -> Result<Arc<Self>, TlsError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let loaded = load_pair(dir, &provider)?;
        Ok(Self::start(dir, provider, loaded, metrics))
    }

    fn start(
        dir: &Path,
        provider: Arc<CryptoProvider>,
        loaded: Loaded,
        metrics: TlsMetrics,
    ) -> Arc<Self> {
        if loaded.info.not_after < unix_now() {
            tracing::error!(
                dir = %dir.display(),
                not_after = loaded.info.not_after,
                "serving certificate has expired; the API server will refuse it"
            );
        }
        metrics.loaded(loaded.info.not_after);
        tracing::info!(
            dir = %dir.display(),
            serial = %loaded.info.serial,
            subject = %loaded.info.subject,
            not_after = loaded.info.not_after,
            "loaded serving certificate"
        );
        Arc::new(Self {
            dir: dir.to_owned(),
            provider,
            current: ArcSwap::from_pointee(loaded),
            rejected: std::sync::Mutex::new(None),
            metrics,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub(super) fn provider(&self) -> &Arc<CryptoProvider> {
        &self.provider
    }

    pub fn current(&self) -> CertificateInfo {
        self.current.load().info.clone()
    }

    /// Re-read the directory; swap only to a valid, in-date, different pair.
    pub fn reload(&self) -> Result<Reloaded, TlsError> {
        self.reported(self.try_reload())
    }

    /// Log and count the outcome of a reload attempt.
    fn reported(&self, result: Result<Reloaded, TlsError>) -> Result<Reloaded, TlsError> {
        match &result {
            Ok(Reloaded::Unchanged) => {}
            Ok(Reloaded::Replaced(info)) => {
                self.metrics.reload(true);
                self.metrics.loaded(info.not_after);
                tracing::info!(
                    dir = %self.dir.display(),
                    serial = %info.serial,
                    not_after = info.not_after,
                    "serving certificate replaced"
                );
            }
            Err(err) => {
                self.metrics.reload(false);
                let current = self.current.load();
                tracing::warn!(
                    error = %err,
                    serial = %current.info.serial,
                    "new serving certificate rejected; keeping the current one"
                );
            }
        }
        result
    }

    fn try_reload(&self) -> Result<Reloaded, TlsError> {
        self.try_swap(read_pair(&self.dir)?)
    }

    fn try_swap(&self, source: (Vec<u8>, Vec<u8>)) -> Result<Reloaded, TlsError> {
        if source == self.current.load().source {
            return Ok(Reloaded::Unchanged);
        }
        let mut rejected = self.rejected.lock().unwrap_or_else(|p| p.into_inner());
        if rejected.as_ref() == Some(&source) {
            return Ok(Reloaded::Unchanged);
        }
        let checked = parse_pair(&self.dir, source.clone(), &self.provider).and_then(|loaded| {
            if loaded.info.not_after < unix_now() {
                return Err(TlsError::Expired {
                    path: self.dir.join(CERT_FILE),
                    not_after: loaded.info.not_after,
                });
            }
            Ok(loaded)
        });
        match checked {
            Ok(loaded) => {
                *rejected = None;
                let info = loaded.info.clone();
                self.current.store(Arc::new(loaded));
                Ok(Reloaded::Replaced(info))
            }
            Err(err) => {
                *rejected = Some(source);
                Err(err)
            }
        }
    }

    /// A rustls config resolving to whatever pair is current at handshake,
    /// verifying client certificates with `clients` when given.
    pub fn server_config(
        self: &Arc<Self>,
        clients: Option<Arc<dyn ClientCertVerifier>>,
    ) -> Result<Arc<ServerConfig>, TlsError> {
        let builder = ServerConfig::builder_with_provider(self.provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(TlsError::Config)?;
        let builder = match clients {
            Some(verifier) => builder.with_client_cert_verifier(verifier),
            None => builder.with_no_client_auth(),
        };
        let mut config = builder.with_cert_resolver(Arc::new(Resolver(self.clone())));
        config.alpn_protocols = ALPN.iter().map(|p| p.to_vec()).collect();
        Ok(Arc::new(config))
    }
}

struct Resolver(Arc<CertStore>);

impl fmt::Debug for Resolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resolver")
            .field("dir", &self.0.dir)
            .finish_non_exhaustive()
    }
}

impl ResolvesServerCert for Resolver {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.0.current.load().key.clone())
    }
}

fn read_pair(dir: &Path) -> Result<(Vec<u8>, Vec<u8>), TlsError> {
    let read = |name: &str| {
        let path = dir.join(name);
        std::fs::read(&path).map_err(|source| TlsError::Read { path, source })
    };
    Ok((read(CERT_FILE)?, read(KEY_FILE)?))
}

fn load_pair(dir: &Path, provider: &CryptoProvider) -> Result<Loaded, TlsError> {
    parse_pair(dir, read_pair(dir)?, provider)
}

fn parse_pair(
    dir: &Path,
    source: (Vec<u8>, Vec<u8>),
    provider: &CryptoProvider,
) -> Result<Loaded, TlsError> {
    let cert_path = dir.join(CERT_FILE);
    let chain = CertificateDer::pem_slice_iter(&source.0)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| TlsError::NoCertificate {
            path: cert_path.clone(),
            reason: err.to_string(),
        })?;
    let Some(leaf) = chain.first() else {
        return Err(TlsError::NoCertificate {
            path: cert_path,
            reason: "empty file".into(),
        });
    };
    let info = certificate_info(leaf).map_err(|reason| TlsError::Parse {
        path: cert_path.clone(),
        reason,
    })?;
    let key = PrivateKeyDer::from_pem_slice(&source.1).map_err(|err| TlsError::NoKey {
        path: dir.join(KEY_FILE),
        reason: err.to_string(),
    })?;
    let certified =
        CertifiedKey::from_der(chain, key, provider).map_err(|source| TlsError::Key {
            dir: dir.to_owned(),
            source,
        })?;
    Ok(Loaded {
        key: Arc::new(certified),
        info,
        source,
    })
}

/// Serial, subject and validity of a DER certificate.
pub fn certificate_info(der: &[u8]) -> Result<CertificateInfo, String> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).map_err(|err| err.to_string())?;
    let validity = cert.validity();
    Ok(CertificateInfo {
        serial: cert.raw_serial_as_string(),
        subject: cert.subject().to_string(),
        not_before: validity.not_before.timestamp(),
        not_after: validity.not_after.timestamp(),
    })
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Watch `dirs` and call `reload` after changes (debounced) and every
/// `poll_every`, until shutdown.
pub(super) fn watch(
    dirs: Vec<PathBuf>,
    reload: impl Fn() + Send + 'static,
    debounce: Duration,
    poll_every: Duration,
    shutdown: Shutdown,
) -> Result<JoinHandle<()>, TlsError> {
    let (tx, mut rx) = mpsc::channel::<()>(1);
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        match event {
            // Reading the files (ours included) must not trigger reloads.
            Ok(event) if matches!(event.kind, EventKind::Access(_)) => {}
            // A full channel already holds a pending reload.
            Ok(_) => {
                let _ = tx.try_send(());
            }
            Err(err) => tracing::warn!(error = %err, "certificate directory watch error"),
        }
    })
    .map_err(|source| TlsError::Watch {
        dir: dirs.first().cloned().unwrap_or_default(),
        source,
    })?;
    for dir in dirs {
        watcher
            .watch(&dir, RecursiveMode::NonRecursive)
            .map_err(|source| TlsError::Watch { dir, source })?;
    }
    Ok(tokio::spawn(async move {
        // The watcher stops when dropped: keep it for the task's lifetime.
        let _watcher = watcher;
        let mut poll = tokio::time::interval(poll_every);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        poll.tick().await;
        loop {
            tokio::select! {
                _ = shutdown.triggered() => break,
                event = rx.recv() => {
                    if event.is_none() {
                        break;
                    }
                    // Debounce: wait until the directory is quiet.
                    while let Ok(Some(())) = tokio::time::timeout(debounce, rx.recv()).await {}
                    reload();
                }
                _ = poll.tick() => reload(),
            }
        }
    }))
}

mod memory;
#[cfg(test)]
mod tests;
