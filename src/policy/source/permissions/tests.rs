use std::path::Path;

use super::*;
use crate::policy::load::check_text;

fn kinds(conditions: &str) -> Vec<String> {
    let text = format!(
        "apiVersion: forcegate.dev/v1alpha1\nkind: ForceDeletionPolicy\nmetadata:\n  name: p\n\
             spec:\n  match:\n    intents: [ForceDelete]\n  conditions:\n{conditions}  action: Deny\n  message: m\n"
    );
    let (policies, findings) = check_text(Path::new("p.yaml"), &text);
    assert!(findings.is_empty(), "{findings:?}");
    kinds_read_by(&policies[0])
        .into_iter()
        .map(Kind::qualified_resource)
        .collect()
}

/// Every fact group but the request's finalizers is read from kinds
/// the cluster view watches, so a new group must say which.
#[test]
fn every_fact_group_names_its_kinds() {
    for group in GROUPS {
        let kinds = Kind::for_fact_group(group);
        assert_eq!(
            kinds.is_empty(),
            *group == "finalizers",
            "{group}: {kinds:?}"
        );
    }
}

#[test]
fn a_policy_needs_the_kinds_its_facts_are_gathered_from() {
    assert_eq!(
        kinds("    - fact: endpoints.referenced\n      equals: true\n"),
        ["endpointslices.discovery.k8s.io"]
    );
    assert_eq!(
        kinds(
            "    - fact: node.ready\n      equals: true\n    - path: $.facts.volumes.claims\n      exists: true\n"
        ),
        [
            "nodes",
            "volumeattachments.storage.k8s.io",
            "persistentvolumeclaims",
            "persistentvolumes"
        ]
    );
    assert!(kinds("    - fact: intent.dryRun\n      equals: false\n").is_empty());
}
