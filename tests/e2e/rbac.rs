//! The manifests' RBAC, as the API server's authorizer sees it. That it is
//! *enough* is proven by every other test: the harness runs forcegate with
//! a token of this ServiceAccount.

use crate::harness::{NAMESPACE, harness};

#[test]
fn forcegates_service_account_gets_what_it_needs_and_no_more() {
    let h = harness();
    let sa = format!("--as=system:serviceaccount:{NAMESPACE}:forcegate");
    let can = |args: &[&str]| {
        let mut all = vec!["auth", "can-i", sa.as_str()];
        all.extend_from_slice(args);
        let run = h.admin.run(&all);
        match run.stdout.trim() {
            "yes" => true,
            "no" => false,
            _ => panic!("unexpected answer:\n{}", run.describe()),
        }
    };
    let allowed: &[&[&str]] = &[
        &["list", "pods", "-A"],
        &["watch", "nodes"],
        &["watch", "volumeattachments.storage.k8s.io"],
        &["list", "leases.coordination.k8s.io", "-A"],
        &["create", "forcedeletions.forcegate.dev"],
        &["get", "forcedeletions.forcegate.dev"],
        &[
            "patch",
            "forcedeletions.forcegate.dev",
            "--subresource=status",
        ],
        &[
            "patch",
            "customresourcedefinitions.apiextensions.k8s.io/forcedeletions.forcegate.dev",
        ],
        &[
            "update",
            "leases.coordination.k8s.io/forcegate-verifier",
            "-n",
            NAMESPACE,
        ],
        &["create", "events.events.k8s.io", "-n", "default"],
        // --manage-certs: its two Secrets, its Lease, its own webhooks.
        &["create", "secrets", "-n", NAMESPACE],
        &["update", "secrets/forcegate-tls", "-n", NAMESPACE],
        &["watch", "secrets/forcegate-ca", "-n", NAMESPACE],
        &[
            "update",
            "leases.coordination.k8s.io/forcegate-certs",
            "-n",
            NAMESPACE,
        ],
        &[
            "update",
            "validatingwebhookconfigurations.admissionregistration.k8s.io/forcegate",
        ],
        &[
            "update",
            "mutatingwebhookconfigurations.admissionregistration.k8s.io/forcegate",
        ],
        // Policies from the cluster: read them, report status.
        &["watch", "forcedeletionpolicies.forcegate.dev"],
        &[
            "patch",
            "forcedeletionpolicies.forcegate.dev",
            "--subresource=status",
        ],
        &[
            "update",
            "leases.coordination.k8s.io/forcegate-policy-status",
            "-n",
            NAMESPACE,
        ],
        &[
            "patch",
            "leases.coordination.k8s.io/forcegate-policy-replicas",
            "-n",
            NAMESPACE,
        ],
        &["create", "selfsubjectaccessreviews.authorization.k8s.io"],
    ];
    for args in allowed {
        assert!(can(args), "forcegate needs `{}`", args.join(" "));
    }
    let denied: &[&[&str]] = &[
        &["get", "pods", "-A"],
        &["delete", "pods", "-A"],
        &["get", "secrets", "-A"],
        &["get", "configmaps", "-A"],
        &["update", "forcedeletions.forcegate.dev"],
        &["delete", "forcedeletions.forcegate.dev"],
        &[
            "patch",
            "customresourcedefinitions.apiextensions.k8s.io/other.example.com",
        ],
        &[
            "update",
            "leases.coordination.k8s.io/someone-else",
            "-n",
            NAMESPACE,
        ],
        &[
            "update",
            "leases.coordination.k8s.io/forcegate-verifier",
            "-n",
            "kube-system",
        ],
        &["create", "events.events.k8s.io", "-n", "kube-system"],
        &[
            "update",
            "validatingwebhookconfigurations.admissionregistration.k8s.io",
        ],
        &[
            "update",
            "mutatingwebhookconfigurations.admissionregistration.k8s.io/someone-else",
        ],
        &["update", "secrets/someone-else", "-n", NAMESPACE],
        &["list", "secrets", "-n", NAMESPACE],
        &["create", "secrets", "-n", "kube-system"],
        // Policies are the operators' to write; forcegate only reports.
        &["create", "forcedeletionpolicies.forcegate.dev"],
        &["patch", "forcedeletionpolicies.forcegate.dev"],
        &["delete", "forcedeletionpolicies.forcegate.dev"],
        &[
            "update",
            "leases.coordination.k8s.io/forcegate-policy-replicas",
            "-n",
            NAMESPACE,
        ],
    ];
    for args in denied {
        assert!(
            !can(args),
            "forcegate must not be allowed `{}`",
            args.join(" ")
        );
    }
}
