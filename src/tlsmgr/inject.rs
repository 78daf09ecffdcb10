//! The caBundle of forcegate's own webhook configurations: found by label,
//! written entry by entry, read back for readiness.
//!
//! Only configurations matching the label selector are read or written, and
//! in them only entries that call forcegate: a `service` reference to
//! forcegate's Service, or a `url` (a webhook run outside the cluster, as
//! the e2e suite does). An entry naming another Service is left alone.

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration, WebhookClientConfig,
};
use kube::api::{ListParams, PostParams};
use kube::{Api, Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::TlsMgrError;
use super::secrets::FIELD_MANAGER;

/// Where the caBundle goes: forcegate's Service, and the selector of its
/// configurations.
#[derive(Clone, Debug)]
pub struct Target {
    pub selector: String,
    pub service: String,
    pub namespace: String,
}

/// One webhook entry of a selected configuration.
#[derive(Clone, Debug)]
pub struct Entry {
    /// `ValidatingWebhookConfiguration forcegate: force-delete.pods.forcegate.dev`.
    pub name: String,
    /// The host the API server verifies the serving certificate for.
    pub host: String,
    pub ca_bundle: Vec<u8>,
}

/// What one pass over the configurations found and did.
#[derive(Debug, Default)]
pub struct Injected {
    pub entries: Vec<Entry>,
    /// Configurations rewritten.
    pub changed: Vec<String>,
}

/// The entries that call forcegate, with the caBundle each holds after
/// `bundle` (PEM), when given, is written into them.
pub async fn scan(
    client: &Client,
    target: &Target,
    bundle: Option<&[u8]>,
) -> Result<Injected, TlsMgrError> {
    let mut found = Injected::default();
    pass::<ValidatingWebhookConfiguration>(client, target, bundle, &mut found).await?;
    pass::<MutatingWebhookConfiguration>(client, target, bundle, &mut found).await?;
    Ok(found)
}

/// The two configuration kinds, seen as lists of client configs.
trait Configuration:
    Resource<DynamicType = (), Scope = kube::core::ClusterResourceScope>
    + Clone
    + std::fmt::Debug
    + Serialize
    + DeserializeOwned
{
    fn entries(&mut self) -> Vec<(&str, &mut WebhookClientConfig)>;
}

/// Both kinds hold `webhooks[].name` and `webhooks[].clientConfig`.
macro_rules! configuration {
    ($($kind:ty),*) => {$(
        impl Configuration for $kind {
            fn entries(&mut self) -> Vec<(&str, &mut WebhookClientConfig)> {
                self.webhooks
                    .iter_mut()
                    .flatten()
                    .map(|w| (w.name.as_str(), &mut w.client_config))
                    .collect()
            }
        }
    )*};
}

configuration!(ValidatingWebhookConfiguration, MutatingWebhookConfiguration);

async fn pass<K: Configuration>(
    client: &Client,
    target: &Target,
    bundle: Option<&[u8]>,
    out: &mut Injected,
) -> Result<(), TlsMgrError> {
    let api: Api<K> = Api::all(client.clone());
    let list = api
        .list(&ListParams::default().labels(&target.selector))
        .await?;
    for mut config in list.items {
        let name = config.meta().name.clone().unwrap_or_default();
        let kind = K::kind(&());
        let mut changed = false;
        for (webhook, client_config) in config.entries() {
            let Some(host) = host(client_config, target) else {
                tracing::warn!(
                    configuration = %name,
                    webhook,
                    "webhook entry calls another Service; its caBundle is left alone"
                );
                continue;
            };
            if let Some(bundle) = bundle {
                let current = client_config.ca_bundle.as_ref().map(|b| b.0.as_slice());
                if current != Some(bundle) {
                    client_config.ca_bundle = Some(ByteString(bundle.to_vec()));
                    changed = true;
                }
            }
            out.entries.push(Entry {
                name: format!("{kind} {name}: {webhook}"),
                host,
                ca_bundle: client_config
                    .ca_bundle
                    .as_ref()
                    .map(|b| b.0.clone())
                    .unwrap_or_default(),
            });
        }
        if changed {
            // resourceVersion from the list: a concurrent edit makes this
            // fail (Conflict) and the next pass starts from a fresh read.
            let params = PostParams {
                field_manager: Some(FIELD_MANAGER.into()),
                ..PostParams::default()
            };
            api.replace(&name, &params, &config).await?;
            out.changed.push(format!("{kind} {name}"));
        }
    }
    Ok(())
}

/// The name the API server checks the certificate against, or `None` for
/// an entry that calls some other Service.
fn host(config: &WebhookClientConfig, target: &Target) -> Option<String> {
    if let Some(service) = &config.service {
        let ours = service.name == target.service && service.namespace == target.namespace;
        return ours.then(|| format!("{}.{}.svc", service.name, service.namespace));
    }
    let url = config.url.as_deref()?;
    let rest = url.strip_prefix("https://")?;
    let authority = rest.split('/').next()?;
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next()?,
        None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
    };
    Some(host.to_owned())
}

#[cfg(test)]
mod tests;
