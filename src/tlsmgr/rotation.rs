//! The leader's half: make the Secrets and the caBundle what they should
//! be, in the one order that never breaks a call.
//!
//! 1. The CA Secret: created, kept, or rotated (a new CA whose bundle still
//!    holds every earlier CA until it expires); expired CAs leave it.
//! 2. The bundle goes into every webhook entry that calls forcegate.
//! 3. Only then the serving pair is issued from the current CA, after a
//!    pause when the bundle just changed so every API server has seen it.
//!
//! A pass is idempotent: run twice, it writes nothing the second time.
//! Every write is compare-and-swap, so a pass that loses a race starts
//! over from a fresh read instead of overwriting.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, Client};

use super::authority::{
    Cert, Renewal, Window, bundle_pem, ca_renewal, certificates, first_certificate, leaf_renewal,
    next_due, trust_bundle,
};
use super::inject::{self, Target};
use super::secrets::{self, Owned, Role, Written, contents};
use super::{Settings, TlsMgrError, unix_now};
use crate::certs::{Authority, CA_CERT_FILE, CERT_FILE, KEY_FILE, service_names};

/// What a pass ended with.
#[derive(Debug, PartialEq, Eq)]
pub enum Pass {
    /// All in order; the next certificate is due at this unix time.
    Done { next_due: Option<i64> },
    /// A write lost a race: read again and decide again.
    Again,
}

pub struct Reconciler {
    pub client: Client,
    pub secrets: Api<Secret>,
    pub settings: Settings,
    pub target: Target,
}

/// The current CA as the pass continues with it.
struct Current {
    authority: Authority,
    cert: Cert,
    bundle: Vec<Cert>,
}

impl Reconciler {
    pub fn new(client: Client, settings: Settings) -> Self {
        Self {
            secrets: Api::namespaced(client.clone(), &settings.namespace),
            target: settings.target(),
            client,
            settings,
        }
    }

    fn window(&self) -> Window {
        Window {
            now: unix_now(),
            renew_before: i64::try_from(self.settings.renew_before.as_secs()).unwrap_or(i64::MAX),
        }
    }

    pub async fn pass(&self) -> Result<Pass, TlsMgrError> {
        let Some(ca) = self.ca().await? else {
            return Ok(Pass::Again);
        };
        let bundle = bundle_pem(&ca.bundle);
        let injected = inject::scan(&self.client, &self.target, Some(bundle.as_bytes())).await?;
        if !injected.changed.is_empty() {
            tracing::info!(configurations = ?injected.changed, cas = ca.bundle.len(), "wrote the caBundle");
        }
        if injected.entries.is_empty() {
            tracing::warn!(
                selector = %self.target.selector,
                "no webhook configuration with this label calls forcegate; nothing to inject into"
            );
        }
        let settle = match injected.changed.is_empty() {
            true => Duration::ZERO,
            false => self.settings.propagation,
        };
        let Some(leaf) = self.serving(&ca, settle).await? else {
            return Ok(Pass::Again);
        };
        Ok(Pass::Done {
            next_due: next_due(&[&ca.cert, &leaf], self.window()),
        })
    }

    /// Read, create or rotate the CA; `None` when a write lost a race.
    async fn ca(&self) -> Result<Option<Current>, TlsMgrError> {
        let settings = &self.settings;
        let window = self.window();
        let Some(stored) = secrets::read(&self.secrets, &settings.ca_secret, Role::Ca).await?
        else {
            let (ca, data) = self.fresh_ca(&[], window.now)?;
            let (namespace, name) = (&settings.namespace, &settings.ca_secret);
            let written = secrets::create(&self.secrets, namespace, name, Role::Ca, data).await?;
            if written == Written::Lost {
                return Ok(None);
            }
            tracing::info!(secret = %name, not_after = ca.cert.not_after, "created the webhook CA");
            return Ok(Some(ca));
        };
        let cert_pem = stored.text(CERT_FILE).unwrap_or_default();
        let key_pem = stored.text(KEY_FILE).unwrap_or_default();
        let earlier = certificates(stored.text(CA_CERT_FILE).unwrap_or_default().as_bytes())
            .unwrap_or_else(|err| {
                tracing::warn!(secret = %settings.ca_secret, error = %err, "the CA bundle does not parse; starting a new one");
                Vec::new()
            });
        let current = first_certificate(cert_pem.as_bytes());
        let renewal = match &current {
            Ok(cert) => ca_renewal(cert, &key_pem, stored.rotation_requested(), window),
            Err(err) => Some(Renewal::Invalid(err.clone())),
        };
        if let (Ok(cert), None) = (&current, &renewal) {
            let authority = Authority::from_pem(&cert_pem, &key_pem)?;
            let bundle = trust_bundle(cert, &earlier, window.now);
            if bundle != earlier {
                let data = contents(&cert_pem, &key_pem, &bundle_pem(&bundle));
                if secrets::replace(&self.secrets, stored, data).await? == Written::Lost {
                    return Ok(None);
                }
                tracing::info!(secret = %settings.ca_secret, cas = bundle.len(), "dropped expired CAs from the bundle");
            }
            let cert = cert.clone();
            return Ok(Some(Current {
                authority,
                cert,
                bundle,
            }));
        }
        let mut previous = earlier;
        if let Ok(old) = current {
            previous.insert(0, old);
        }
        let (ca, data) = self.fresh_ca(&previous, window.now)?;
        if secrets::replace(&self.secrets, stored, data).await? == Written::Lost {
            return Ok(None);
        }
        tracing::info!(
            secret = %settings.ca_secret,
            reason = %renewal.map(|r| r.to_string()).unwrap_or_default(),
            cas = ca.bundle.len(),
            "rotated the webhook CA; earlier CAs stay in the bundle until they expire"
        );
        Ok(Some(ca))
    }

    /// A new CA, the bundle trusting it and `earlier` (until each expires),
    /// and the CA Secret's contents for both.
    fn fresh_ca(
        &self,
        earlier: &[Cert],
        now: i64,
    ) -> Result<(Current, BTreeMap<String, ByteString>), TlsMgrError> {
        let settings = &self.settings;
        let authority =
            Authority::generate(&settings.service, &settings.namespace, settings.ca_days)?;
        let cert = parsed(&authority.cert_pem(), &settings.ca_secret)?;
        let bundle = trust_bundle(&cert, earlier, now);
        let data = contents(
            &authority.cert_pem(),
            authority.key_pem(),
            &bundle_pem(&bundle),
        );
        let ca = Current {
            authority,
            cert,
            bundle,
        };
        Ok((ca, data))
    }

    /// Read or (re)issue the serving pair; `None` when a write lost a race.
    async fn serving(&self, ca: &Current, settle: Duration) -> Result<Option<Cert>, TlsMgrError> {
        let settings = &self.settings;
        let names = service_names(&settings.service, &settings.namespace);
        let stored = secrets::read(&self.secrets, &settings.tls_secret, Role::Serving).await?;
        let reason = match &stored {
            None => "none yet".to_owned(),
            Some(stored) => match self.leaf_renewal(stored, ca, &names) {
                Ok(leaf) => return Ok(Some(leaf)),
                Err(reason) => reason,
            },
        };
        if stored.is_some() && !settle.is_zero() {
            // The API servers pick up the new caBundle from their own watch
            // before a pair they would not have trusted is served.
            tokio::time::sleep(settle).await;
        }
        let leaf =
            ca.authority
                .issue(&settings.service, &settings.namespace, settings.leaf_days)?;
        let data = contents(&leaf.cert_pem, &leaf.key_pem, &ca.authority.cert_pem());
        let written = match stored {
            None => {
                secrets::create(
                    &self.secrets,
                    &settings.namespace,
                    &settings.tls_secret,
                    Role::Serving,
                    data,
                )
                .await?
            }
            Some(stored) => secrets::replace(&self.secrets, stored, data).await?,
        };
        if written == Written::Lost {
            return Ok(None);
        }
        let cert = parsed(&leaf.cert_pem, &settings.tls_secret)?;
        tracing::info!(secret = %settings.tls_secret, %reason, not_after = cert.not_after, "issued the serving certificate");
        Ok(Some(cert))
    }

    /// `Ok(leaf)` when the stored pair stays; `Err(why)` when it is reissued.
    fn leaf_renewal(&self, stored: &Owned, ca: &Current, names: &[String]) -> Result<Cert, String> {
        let leaf = first_certificate(stored.text(CERT_FILE).unwrap_or_default().as_bytes())?;
        let key = stored.text(KEY_FILE).unwrap_or_default();
        match leaf_renewal(
            &leaf,
            &key,
            &ca.cert,
            names,
            stored.rotation_requested(),
            self.window(),
        ) {
            None => Ok(leaf),
            Some(reason) => Err(reason.to_string()),
        }
    }
}

fn parsed(pem: &str, secret: &str) -> Result<Cert, TlsMgrError> {
    first_certificate(pem.as_bytes()).map_err(|reason| TlsMgrError::Invalid {
        secret: secret.to_owned(),
        reason,
    })
}
