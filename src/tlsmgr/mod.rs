//! Self-managed webhook TLS (`forcegate serve --cluster kube --manage-certs`).
//!
//! One replica at a time (the holder of Lease `forcegate-certs`) keeps a CA
//! and a serving pair in two Secrets of forcegate's namespace and the CA
//! bundle in forcegate's own webhook configurations ([`rotation`]). Every
//! replica serves the pair in the serving Secret and is ready only while
//! that pair verifies against the caBundle the API server uses
//! ([`serving`]). Secrets without forcegate's label are never written.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::StreamExt;
use futures::channel::oneshot;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::Secret;
use kube::runtime::watcher;
use kube::{Api, Client};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::certs::CertError;
use crate::cleanup::leader::{self, LeaderSettings, LeaseLock};
use crate::server::{CertStore, Health, Shutdown};

pub mod authority;
mod inject;
mod rotation;
mod secrets;
mod serving;

pub use inject::Target;
pub use rotation::{Pass, Reconciler};
pub use secrets::{CERTIFICATE_LABEL, ROTATE_ANNOTATION};
pub use serving::Feed;

/// Lease held by the replica that writes the Secrets and the caBundle.
pub const LEASE: &str = "forcegate-certs";

#[derive(Debug, thiserror::Error)]
pub enum TlsMgrError {
    #[error(
        "Secret {namespace}/{name} exists but is not forcegate's (no label \
         forcegate.dev/certificate={value}); forcegate never overwrites a Secret it did not \
         create: delete it to let forcegate create its own, or serve it as is with \
         --manage-certs=false"
    )]
    NotOurs {
        namespace: String,
        name: String,
        value: &'static str,
    },
    #[error("Secret {secret}: {reason}")]
    Invalid { secret: String, reason: String },
    #[error(transparent)]
    Cert(#[from] CertError),
    #[error(transparent)]
    Kube(#[from] kube::Error),
}

/// Names, lifetimes and timing of self-managed TLS.
#[derive(Clone, Debug)]
pub struct Settings {
    /// forcegate's namespace (Secrets and Lease).
    pub namespace: String,
    /// The Service the API server calls; the certificate names it.
    pub service: String,
    pub ca_secret: String,
    pub tls_secret: String,
    /// Label selector of forcegate's webhook configurations.
    pub webhook_selector: String,
    /// This replica's identity in the Lease.
    pub identity: String,
    pub ca_days: u32,
    pub leaf_days: u32,
    /// Replace a certificate this long before it expires.
    pub renew_before: Duration,
    /// Check at least this often, whatever the expiry dates say.
    pub check_every: Duration,
    /// Pause between writing a new caBundle and serving a pair that needs
    /// it, for every API server's watch to deliver it.
    pub propagation: Duration,
}

impl Settings {
    /// CA 10 years, serving pair 1 year, renewed 90 days ahead, checked
    /// every 12 hours.
    pub fn new(namespace: &str, service: &str, identity: &str) -> Self {
        Self {
            namespace: namespace.to_owned(),
            service: service.to_owned(),
            ca_secret: format!("{service}-ca"),
            tls_secret: format!("{service}-tls"),
            webhook_selector: "app.kubernetes.io/name=forcegate".to_owned(),
            identity: identity.to_owned(),
            ca_days: 3650,
            leaf_days: 365,
            renew_before: Duration::from_secs(90 * 86_400),
            check_every: Duration::from_secs(12 * 3600),
            propagation: Duration::from_secs(5),
        }
    }

    pub fn target(&self) -> Target {
        Target {
            selector: self.webhook_selector.clone(),
            service: self.service.clone(),
            namespace: self.namespace.clone(),
        }
    }
}

/// Self-managed TLS for one replica: the leader loop runs in the
/// background; the replica serves from [`Managed::feed`].
pub struct Managed {
    pub feed: Feed,
    client: Client,
    settings: Settings,
    health: Health,
    shutdown: Shutdown,
}

impl Managed {
    /// Join the election and watch the serving Secret. Readiness stays off
    /// until the served pair is checked against the caBundle.
    pub fn start(client: Client, settings: Settings, health: Health, shutdown: Shutdown) -> Self {
        let (part, reason) = serving::unchecked();
        health.set_blocker(part, Some(reason));
        spawn_leader(client.clone(), settings.clone(), shutdown.clone());
        let feed = Feed::start(
            client.clone(),
            &settings.namespace,
            &settings.tls_secret,
            health.clone(),
            shutdown.clone(),
        );
        Self {
            feed,
            client,
            settings,
            health,
            shutdown,
        }
    }

    /// Feed the running server's store from the Secret from now on.
    pub fn serve_into(self, store: Arc<CertStore>) {
        let target = self.settings.target();
        self.feed
            .serve_into(store, self.client, target, self.health, self.shutdown);
    }
}

fn spawn_leader(client: Client, settings: Settings, shutdown: Shutdown) -> JoinHandle<()> {
    tokio::spawn(async move {
        let lease = LeaderSettings::new(&settings.namespace, LEASE, &settings.identity);
        let lock = LeaseLock::new(client.clone(), lease);
        let stop = shutdown.clone();
        leader::lead(
            lock,
            async move { stop.triggered().await },
            move |stopped| lead_term(client.clone(), settings.clone(), stopped),
            |_| {},
        )
        .await;
    })
}

/// One term of leadership: a pass on start, on every change of the Secrets
/// or the webhook configurations, when a certificate falls due and at
/// least every `check_every`; failures retry with a growing pause.
async fn lead_term(client: Client, settings: Settings, mut stopped: oneshot::Receiver<()>) {
    let changed = Arc::new(Notify::new());
    let watches = watch_inputs(&client, &settings, &changed);
    let reconciler = Reconciler::new(client, settings.clone());
    let mut failures: u32 = 0;
    loop {
        let wait = match reconciler.pass().await {
            Ok(Pass::Done { next_due }) => {
                failures = 0;
                let until_due = next_due
                    .map(|due| due.saturating_sub(unix_now()).max(1))
                    .and_then(|secs| u64::try_from(secs).ok())
                    .map_or(settings.check_every, Duration::from_secs);
                until_due.min(settings.check_every)
            }
            Ok(Pass::Again) => Duration::from_millis(200),
            Err(err) => {
                failures = failures.saturating_add(1);
                tracing::error!(error = %err, "managing the webhook certificates failed; retrying");
                Duration::from_secs(2u64.saturating_pow(failures.min(8)))
            }
        };
        tokio::select! {
            _ = &mut stopped => break,
            () = tokio::time::sleep(wait) => {}
            () = changed.notified() => {
                // Let a burst of events (our own writes) settle.
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        }
    }
    for watch in watches {
        watch.abort();
    }
}

/// Watches that wake the leader: both Secrets, both configuration kinds.
fn watch_inputs(
    client: &Client,
    settings: &Settings,
    changed: &Arc<Notify>,
) -> Vec<JoinHandle<()>> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &settings.namespace);
    let by_name = |name: &str| watcher::Config::default().fields(&format!("metadata.name={name}"));
    let by_label = watcher::Config::default().labels(&settings.webhook_selector);
    vec![
        wake_on(
            watcher(secrets.clone(), by_name(&settings.ca_secret)),
            changed,
        ),
        wake_on(watcher(secrets, by_name(&settings.tls_secret)), changed),
        wake_on(
            watcher(
                Api::<ValidatingWebhookConfiguration>::all(client.clone()),
                by_label.clone(),
            ),
            changed,
        ),
        wake_on(
            watcher(
                Api::<MutatingWebhookConfiguration>::all(client.clone()),
                by_label,
            ),
            changed,
        ),
    ]
}

fn wake_on<K: Send + 'static>(
    stream: impl futures::Stream<Item = watcher::Result<watcher::Event<K>>> + Send + 'static,
    changed: &Arc<Notify>,
) -> JoinHandle<()> {
    let changed = changed.clone();
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        while let Some(event) = stream.next().await {
            match event {
                Ok(watcher::Event::Apply(_) | watcher::Event::Delete(_)) => changed.notify_one(),
                Ok(_) => {}
                // The watcher retries by itself on the next poll.
                Err(err) => {
                    tracing::debug!(error = %err, "certificate input watch failed");
                    tokio::time::sleep(Duration::from_secs(5)).await;
                }
            }
        }
    })
}

pub(crate) fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}
