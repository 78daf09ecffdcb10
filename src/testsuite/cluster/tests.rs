use super::*;
use serde_json::json;

#[test]
fn lists_expand_and_declare() {
    let mut out = Vec::new();
    expand_list(
        json!({"apiVersion": "v1", "kind": "PodList", "items": [{"metadata": {"name": "a"}}]}),
        &mut out,
    );
    expand_list(
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachmentList", "items": []}),
        &mut out,
    );
    assert_eq!(out[0]["kind"], "Pod");
    assert_eq!(out[1]["kind"], "VolumeAttachmentList");
}

#[test]
fn missing_kinds_make_facts_unknown() {
    use crate::cluster::ClusterView;
    let view = snapshot(&[], true, &[Kind::Lease]).expect("builds");
    assert!(view.leases_held_by("ns", "pod").is_err());
    assert!(view.node("n1").is_ok());
    let bad = [json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": 3}})];
    assert!(snapshot(&bad, true, &[]).is_err());
}
