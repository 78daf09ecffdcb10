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
    assert!(is_well_known("k8s.io/x"));
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
