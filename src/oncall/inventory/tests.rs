use super::*;

#[test]
fn lists_are_flattened_and_typed_lists_declare_their_kind() {
    let mut inventory = Inventory::default();
    inventory.add_document(serde_json::json!({
        "apiVersion": "v1", "kind": "List",
        "items": [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "a"}}]
    }));
    inventory.add_document(serde_json::json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "LeaseList", "items": []
    }));
    inventory.add_document(serde_json::json!({
        "apiVersion": "v1", "kind": "PodList",
        "items": [{"metadata": {"name": "p"}}]
    }));
    assert!(inventory.complete.contains("Deployment.apps"));
    assert!(inventory.complete.contains("Lease.coordination.k8s.io"));
    assert!(inventory.complete.contains("Pod"));
    assert!(!inventory.complete.contains("Node"));
    assert_eq!(inventory.of_kind("", "Pod").count(), 1);
    assert_eq!(inventory.of_kind("apps", "Deployment").count(), 1);
    assert_eq!(inventory.of_kind("", "Deployment").count(), 0);
}

#[test]
fn a_bad_file_names_itself() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("broken.yaml");
    std::fs::write(&path, "kind: [unclosed\n").expect("write");
    let err = Inventory::from_files(&[&path]).expect_err("must fail");
    assert!(err.to_string().contains("broken.yaml"), "{err}");
}
