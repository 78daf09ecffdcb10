//! Which controller owns each well-known finalizer, and as whom it runs.
//!
//! Removing a finalizer is the owner's job: it runs the promised cleanup and
//! then removes it. Anyone else removing it skips that cleanup. The users
//! listed are how the owner authenticates: kube-controller-manager runs each
//! controller as `system:serviceaccount:kube-system:<controller>` with
//! `--use-service-account-credentials` (kubeadm's default), else as
//! `system:kube-controller-manager`.

use super::FinalizerFacts;
use crate::intent::actors;

/// An owner of a finalizer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FinalizerOwner {
    /// Controller name, e.g. `job-controller`.
    pub controller: &'static str,
    /// Usernames the owner removes it as (empty when it depends on how the
    /// component is deployed, e.g. CSI sidecars).
    pub users: &'static [&'static str],
}

impl From<&actors::FinalizerOwner> for FinalizerOwner {
    fn from(owner: &actors::FinalizerOwner) -> Self {
        Self {
            controller: owner.controller,
            users: owner.users,
        }
    }
}

/// Owners whose identity depends on how they are deployed (CSI sidecars,
/// the snapshot controller), so classification cannot exempt them; the
/// controllers with a fixed identity live in [`actors`], shared with intent.
const DEPLOYMENT_DEFINED: &[(&str, &str)] = &[(
    "external-provisioner.volume.kubernetes.io/finalizer",
    "csi-external-provisioner",
)];

/// Finalizer name prefixes → owner (the suffix is a driver name).
const PREFIX_OWNERS: &[(&str, &str)] = &[
    ("external-attacher/", "csi-external-attacher"),
    ("snapshot.storage.kubernetes.io/", "snapshot-controller"),
];

/// The owner of `finalizer`, when it is a well-known one.
pub fn owner_of(finalizer: &str) -> Option<FinalizerOwner> {
    let namespace = &actors::NAMESPACE_SPEC_FINALIZER_OWNER;
    if let Some(owner) = actors::metadata_finalizer_owner(finalizer).or_else(|| {
        namespace
            .finalizers
            .contains(&finalizer)
            .then_some(namespace)
    }) {
        return Some(owner.into());
    }
    DEPLOYMENT_DEFINED
        .iter()
        .find(|(name, _)| *name == finalizer)
        .or_else(|| {
            PREFIX_OWNERS
                .iter()
                .find(|(prefix, _)| finalizer.starts_with(prefix))
        })
        .map(|(_, controller)| FinalizerOwner {
            controller,
            users: &[],
        })
}

/// Finalizers in Kubernetes' reserved namespaces (`kubernetes.io`, `k8s.io`
/// and their subdomains) or with a known owner.
pub fn is_well_known(finalizer: &str) -> bool {
    if owner_of(finalizer).is_some() {
        return true;
    }
    let Some((domain, _)) = finalizer.split_once('/') else {
        return false;
    };
    // The domain itself or a subdomain of it.
    ["kubernetes.io", "k8s.io"].iter().any(|reserved| {
        domain
            .strip_suffix(reserved)
            .is_some_and(|rest| rest.is_empty() || rest.ends_with('.'))
    })
}

pub(super) fn describe(removed: &[String]) -> Vec<FinalizerFacts> {
    removed
        .iter()
        .map(|name| {
            let owner = owner_of(name);
            FinalizerFacts {
                name: name.clone(),
                owner: owner.map(|o| o.controller.to_owned()),
                owner_users: owner
                    .map(|o| o.users.iter().map(|u| (*u).to_owned()).collect())
                    .unwrap_or_default(),
                well_known: is_well_known(name),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
