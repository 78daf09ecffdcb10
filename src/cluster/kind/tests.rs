use super::*;

#[test]
fn recognises_kinds_by_group_not_version() {
    assert_eq!(Kind::from_api("v1", "Pod"), Some(Kind::Pod));
    assert_eq!(
        Kind::from_api("batch/v1beta1", "CronJob"),
        Some(Kind::CronJob)
    );
    assert_eq!(Kind::from_api("apps/v1", "Pod"), None);
    assert_eq!(Kind::from_api("v1", "Service"), None);
    assert_eq!(
        Kind::from_api("discovery.k8s.io/v1", "EndpointSlice"),
        Some(Kind::EndpointSlice)
    );
}

#[test]
fn typed_lists_name_their_item_kind() {
    assert_eq!(
        Kind::from_list_kind("storage.k8s.io/v1", "VolumeAttachmentList"),
        Some(Kind::VolumeAttachment)
    );
    assert_eq!(Kind::from_list_kind("v1", "List"), None);
    assert_eq!(Kind::from_list_kind("v1", "ServiceList"), None);
}

#[test]
fn fact_groups_name_the_kinds_they_read() {
    assert_eq!(Kind::for_fact_group("endpoints"), [Kind::EndpointSlice]);
    assert!(Kind::for_fact_group("finalizers").is_empty());
    let namespace = Kind::for_fact_group("namespace");
    assert!(namespace.contains(&Kind::Namespace) && namespace.contains(&Kind::ConfigMap));
    assert_eq!(
        Kind::VolumeAttachment.qualified_resource(),
        "volumeattachments.storage.k8s.io"
    );
    assert_eq!(Kind::Pod.qualified_resource(), "pods");
}

#[test]
fn ordinals_are_dense() {
    for (i, kind) in Kind::ALL.iter().enumerate() {
        assert_eq!(kind.ordinal(), i);
    }
}
