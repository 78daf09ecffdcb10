//! Which controller owns each well-known finalizer, and as whom it runs.
//!
//! Removing a finalizer is the owner's job: it runs the promised cleanup and
//! then removes it. Anyone else removing it skips that cleanup. The users
//! listed are how the owner authenticates: kube-controller-manager runs each
//! controller as `system:serviceaccount:kube-system:<controller>` with
//! `--use-service-account-credentials` (kubeadm's default), else as
//! `system:kube-controller-manager`.

use super::FinalizerFacts;

/// An owner of a finalizer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FinalizerOwner {
    /// Controller name, e.g. `job-controller`.
    pub controller: &'static str,
    /// Usernames the owner removes it as (empty when it depends on how the
    /// component is deployed, e.g. CSI sidecars).
    pub users: &'static [&'static str],
}

const KCM: &str = "system:kube-controller-manager";

/// Exact finalizer names → owner.
const OWNERS: &[(&str, FinalizerOwner)] = &[
    (
        "kubernetes",
        FinalizerOwner {
            controller: "namespace-controller",
            users: &[
                "system:serviceaccount:kube-system:namespace-controller",
                KCM,
            ],
        },
    ),
    (
        "batch.kubernetes.io/job-tracking",
        FinalizerOwner {
            controller: "job-controller",
            users: &["system:serviceaccount:kube-system:job-controller", KCM],
        },
    ),
    (
        "kubernetes.io/pvc-protection",
        FinalizerOwner {
            controller: "pvc-protection-controller",
            users: &[
                "system:serviceaccount:kube-system:pvc-protection-controller",
                KCM,
            ],
        },
    ),
    (
        "kubernetes.io/pv-protection",
        FinalizerOwner {
            controller: "pv-protection-controller",
            users: &[
                "system:serviceaccount:kube-system:pv-protection-controller",
                KCM,
            ],
        },
    ),
    (
        "kubernetes.io/pv-controller",
        FinalizerOwner {
            controller: "persistent-volume-binder",
            users: &[
                "system:serviceaccount:kube-system:persistent-volume-binder",
                KCM,
            ],
        },
    ),
    (
        "foregroundDeletion",
        FinalizerOwner {
            controller: "generic-garbage-collector",
            users: &[
                "system:serviceaccount:kube-system:generic-garbage-collector",
                KCM,
            ],
        },
    ),
    (
        "orphan",
        FinalizerOwner {
            controller: "generic-garbage-collector",
            users: &[
                "system:serviceaccount:kube-system:generic-garbage-collector",
                KCM,
            ],
        },
    ),
    (
        "service.kubernetes.io/load-balancer-cleanup",
        FinalizerOwner {
            controller: "service-controller",
            users: &[
                "system:serviceaccount:kube-system:service-controller",
                "system:cloud-controller-manager",
            ],
        },
    ),
    (
        "customresourcecleanup.apiextensions.k8s.io",
        FinalizerOwner {
            controller: "apiextensions-apiserver",
            users: &["system:apiserver"],
        },
    ),
    (
        "external-provisioner.volume.kubernetes.io/finalizer",
        FinalizerOwner {
            controller: "csi-external-provisioner",
            users: &[],
        },
    ),
];

/// Finalizer name prefixes → owner (the suffix is a driver name).
const PREFIX_OWNERS: &[(&str, FinalizerOwner)] = &[
    (
        "external-attacher/",
        FinalizerOwner {
            controller: "csi-external-attacher",
            users: &[],
        },
    ),
    (
        "snapshot.storage.kubernetes.io/",
        FinalizerOwner {
            controller: "snapshot-controller",
            users: &[],
        },
    ),
];

/// The owner of `finalizer`, when it is a well-known one.
pub fn owner_of(finalizer: &str) -> Option<FinalizerOwner> {
    OWNERS
        .iter()
        .find(|(name, _)| *name == finalizer)
        .or_else(|| {
            PREFIX_OWNERS
                .iter()
                .find(|(prefix, _)| finalizer.starts_with(prefix))
        })
        .map(|(_, owner)| *owner)
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
    ["kubernetes.io", "k8s.io"]
        .iter()
        .any(|reserved| domain == *reserved || domain.ends_with(&format!(".{reserved}")))
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
mod tests {
    use super::*;

    #[test]
    fn well_known_finalizers_have_owners() {
        let job = owner_of("batch.kubernetes.io/job-tracking").expect("known");
        assert_eq!(job.controller, "job-controller");
        assert!(
            job.users
                .contains(&"system:serviceaccount:kube-system:job-controller")
        );
        assert_eq!(
            owner_of("kubernetes").map(|o| o.controller),
            Some("namespace-controller")
        );
        assert_eq!(
            owner_of("external-attacher/ebs.csi.aws.com").map(|o| o.controller),
            Some("csi-external-attacher")
        );
        assert_eq!(
            owner_of("orphan").map(|o| o.controller),
            Some("generic-garbage-collector")
        );
        assert_eq!(owner_of("example.com/s3-bucket"), None);
    }

    #[test]
    fn reserved_domains_are_well_known_even_without_an_owner() {
        assert!(is_well_known("node.kubernetes.io/something-new"));
        assert!(is_well_known("foregroundDeletion"));
        assert!(!is_well_known("example.com/s3-bucket"));
        assert!(!is_well_known("notkubernetes.io/x"));
    }

    #[test]
    fn describe_keeps_request_order() {
        let facts = describe(&[
            "example.com/dns".to_owned(),
            "kubernetes.io/pvc-protection".to_owned(),
        ]);
        assert_eq!(facts.len(), 2);
        assert_eq!(facts[0].owner, None);
        assert!(!facts[0].well_known);
        assert_eq!(facts[1].owner.as_deref(), Some("pvc-protection-controller"));
        assert!(facts[1].well_known);
    }
}
