//! Every replica's half: serve the pair in the serving Secret (watched
//! through the API, so a new pair is served within a second of being
//! written), and be ready only while that pair verifies against the
//! caBundle of every webhook entry that calls forcegate, for the host the
//! API server dials.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client};
use rustls::RootCertStore;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::ServerCertVerifier;
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};
use tokio::sync::watch;

use super::authority::certificates;
use super::inject::{self, Entry, Target};
use super::secrets::{Role, owned};
use crate::certs::{CERT_FILE, KEY_FILE};
use crate::server::{CertStore, Health, Shutdown};

/// Readiness parts: the served chain's trust, and the Secret it comes from.
const PART: &str = "certificate";
const SECRET_PART: &str = "certificate-secret";
/// How often the served chain is checked against the webhooks' caBundles.
const TRUST_CHECK: Duration = Duration::from_secs(5);

/// A serving pair: certificate and key PEM.
pub type Pair = (Vec<u8>, Vec<u8>);

/// The latest pair of the serving Secret (`None` until there is one).
pub struct Feed {
    pub source: String,
    pairs: watch::Receiver<Option<Pair>>,
}

impl Feed {
    /// Watch Secret `namespace/name` until `shutdown`.
    pub fn start(
        client: Client,
        namespace: &str,
        name: &str,
        health: Health,
        shutdown: Shutdown,
    ) -> Self {
        let (send, pairs) = watch::channel(None);
        let api: Api<Secret> = Api::namespaced(client, namespace);
        let config = watcher::Config::default().fields(&format!("metadata.name={name}"));
        let source = format!("secret {namespace}/{name}");
        let label = source.clone();
        tokio::spawn(async move {
            let mut events = watcher(api, config)
                .default_backoff()
                .applied_objects()
                .boxed();
            loop {
                let event = tokio::select! {
                    () = shutdown.triggered() => break,
                    event = events.next() => event,
                };
                match event {
                    Some(Ok(secret)) => match pair_of(secret) {
                        Ok(pair) => {
                            health.set_blocker(SECRET_PART, None);
                            send.send_if_modified(|current| {
                                let changed = current.as_ref() != Some(&pair);
                                *current = Some(pair);
                                changed
                            });
                        }
                        Err(reason) => {
                            tracing::error!(source = %label, error = %reason, "cannot serve from the serving Secret");
                            health.set_blocker(SECRET_PART, Some(format!("{label}: {reason}")));
                        }
                    },
                    Some(Err(err)) => {
                        tracing::warn!(source = %label, error = %err, "watching the serving Secret failed; retrying")
                    }
                    None => break,
                }
            }
        });
        Self { source, pairs }
    }

    /// Wait for the first pair; `None` when the watch ended first.
    pub async fn first(&mut self) -> Option<Pair> {
        let pair = self.pairs.wait_for(Option::is_some).await.ok()?;
        pair.clone()
    }

    /// Hand every later pair to `store`, and keep readiness on the trust
    /// check, until `shutdown`.
    pub fn serve_into(
        mut self,
        store: Arc<CertStore>,
        client: Client,
        target: Target,
        health: Health,
        shutdown: Shutdown,
    ) {
        let checked = store.clone();
        let stop = shutdown.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = stop.triggered() => break,
                    changed = self.pairs.changed() => if changed.is_err() { break },
                }
                let pair = self.pairs.borrow_and_update().clone();
                if let Some((cert, key)) = pair {
                    // A rejected pair is logged and counted by the store.
                    let _ = store.replace_pem(cert, key);
                }
            }
        });
        tokio::spawn(async move {
            loop {
                match inject::scan(&client, &target, None).await {
                    Ok(found) => {
                        let verdict = verify(&checked.chain(), &found.entries, &target.selector);
                        if let Err(reason) = &verdict {
                            tracing::debug!(%reason, "serving certificate not trusted yet");
                        }
                        health.set_blocker(PART, verdict.err());
                    }
                    // Keep the last verdict through API hiccups.
                    Err(err) => {
                        tracing::warn!(error = %err, "cannot read the webhook configurations")
                    }
                }
                tokio::select! {
                    () = shutdown.triggered() => break,
                    () = tokio::time::sleep(TRUST_CHECK) => {}
                }
            }
        });
    }
}

/// The readiness reason before the first trust check.
pub fn unchecked() -> (&'static str, String) {
    (
        PART,
        "serving certificate not yet checked against the webhooks' caBundle".to_owned(),
    )
}

fn pair_of(secret: Secret) -> Result<Pair, String> {
    let owned = owned(secret, Role::Serving).map_err(|err| err.to_string())?;
    let field = |key: &str| {
        owned
            .secret
            .data
            .as_ref()
            .and_then(|data| data.get(key))
            .map(|bytes| bytes.0.clone())
            .ok_or_else(|| format!("no {key}"))
    };
    Ok((field(CERT_FILE)?, field(KEY_FILE)?))
}

/// `Ok` when `chain` verifies against every entry's caBundle for the host
/// that entry dials, the way the API server checks it.
pub fn verify(
    chain: &[CertificateDer<'static>],
    entries: &[Entry],
    selector: &str,
) -> Result<(), String> {
    let Some((leaf, intermediates)) = chain.split_first() else {
        return Err("no serving certificate loaded".to_owned());
    };
    if entries.is_empty() {
        return Err(format!(
            "no webhook configuration labelled {selector} calls forcegate"
        ));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    for entry in entries {
        let cas = certificates(&entry.ca_bundle)
            .map_err(|err| format!("{}: caBundle does not parse: {err}", entry.name))?;
        let mut roots = RootCertStore::empty();
        for ca in cas {
            roots
                .add(CertificateDer::from(ca.der))
                .map_err(|err| format!("{}: caBundle holds an unusable CA: {err}", entry.name))?;
        }
        if roots.is_empty() {
            return Err(format!("{}: no caBundle yet", entry.name));
        }
        let verifier =
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .build()
                .map_err(|err| format!("{}: {err}", entry.name))?;
        let host = ServerName::try_from(entry.host.clone())
            .map_err(|err| format!("{}: host {:?}: {err}", entry.name, entry.host))?;
        verifier
            .verify_server_cert(leaf, intermediates, &host, &[], UnixTime::now())
            .map_err(|err| {
                format!(
                    "serving certificate does not verify against the caBundle of {} for {}: {err}",
                    entry.name, entry.host
                )
            })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
