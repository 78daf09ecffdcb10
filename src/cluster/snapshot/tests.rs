use std::io::Write;

use super::*;
use crate::cluster::ClusterView;

const KUBECTL_PODS: &str = r#"apiVersion: v1
items:
- apiVersion: v1
  kind: Pod
  metadata:
    annotations:
      kubectl.kubernetes.io/last-applied-configuration: |
        {"apiVersion":"v1","kind":"Pod"}
    creationTimestamp: "2024-05-01T10:00:00Z"
    managedFields:
    - apiVersion: v1
      fieldsType: FieldsV1
      manager: kubectl-client-side-apply
      operation: Update
    name: web-1
    namespace: shop
    uid: 1b4e28ba-2fa1-11d2-883f-0016d3cca427
  spec:
    containers:
    - image: nginx:1.27
      name: web
    nodeName: node-a
  status:
    phase: Running
    podIP: 10.244.1.7
- apiVersion: v1
  kind: Service
  metadata:
    name: web
    namespace: shop
  spec:
    ports:
    - port: 80
kind: List
metadata:
  resourceVersion: ""
"#;

#[test]
fn reads_a_kubectl_list_skipping_unknown_kinds() {
    let snapshot = SnapshotCluster::from_yaml_str(KUBECTL_PODS).expect("loads");
    assert_eq!(snapshot.kinds(), vec![Kind::Pod]);
    let pod = snapshot
        .pod("shop", "web-1")
        .expect("pods present")
        .expect("pod found");
    assert_eq!(pod.pod_ip.as_deref(), Some("10.244.1.7"));
    let by_uid = snapshot
        .pod_by_uid("1b4e28ba-2fa1-11d2-883f-0016d3cca427")
        .expect("known");
    assert_eq!(by_uid.map(|p| p.meta.name.clone()), Some("web-1".into()));
}

#[test]
fn absent_kinds_are_unknown_and_typed_empty_lists_declare_them() {
    let yaml = format!(
        "{KUBECTL_PODS}---\napiVersion: storage.k8s.io/v1\nkind: VolumeAttachmentList\nitems: []\n"
    );
    let snapshot = SnapshotCluster::from_yaml_str(&yaml).expect("loads");
    assert_eq!(
        snapshot.volume_attachments_for_pv("pv-1"),
        Ok(vec![]),
        "declared present, no objects"
    );
    let unknown = snapshot.node("node-a").expect_err("nodes absent");
    assert_eq!(unknown.kind, "Node");
    assert_eq!(unknown.reason, "not in the snapshot");
    assert!(
        snapshot.is_synced(),
        "a loaded snapshot is ready even with absent kinds"
    );
    let nodes = snapshot
        .status()
        .into_iter()
        .find(|s| s.kind == "Node")
        .expect("status for every kind");
    assert!(!nodes.synced);
}

#[test]
fn api_server_json_lists_may_omit_item_kinds() {
    let json = r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"42"},
        "items":[{"metadata":{"name":"a","namespace":"ns","uid":"u-a"},"spec":{"containers":[{"name":"c"}]}}]}"#;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("pods.json");
    std::fs::write(&path, json).expect("write");
    let snapshot = SnapshotCluster::load(&[&path]).expect("loads");
    assert!(snapshot.pod("ns", "a").expect("known").is_some());
}

#[test]
fn kindless_items_before_the_list_kind_are_resolved_afterwards() {
    let yaml = "apiVersion: coordination.k8s.io/v1\nitems:\n- metadata:\n    name: l\n    namespace: ns\n  spec:\n    holderIdentity: p-0_x\nkind: LeaseList\n";
    let snapshot = SnapshotCluster::from_yaml_str(yaml).expect("loads");
    assert_eq!(
        snapshot.leases_held_by("ns", "p-0").expect("known").len(),
        1
    );
}

#[test]
fn directories_are_searched_recursively_in_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let nested = dir.path().join("a/b");
    std::fs::create_dir_all(&nested).expect("mkdir");
    std::fs::write(
        dir.path().join("a/nodes.yml"),
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n",
    )
    .expect("write");
    std::fs::write(
        nested.join("ns.json"),
        r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"shop"}}"#,
    )
    .expect("write");
    std::fs::write(dir.path().join("README.md"), "# not yaml").expect("write");
    std::fs::create_dir_all(dir.path().join(".git")).expect("mkdir");
    std::fs::write(dir.path().join(".git/x.yaml"), "{{{").expect("write");
    let snapshot = SnapshotCluster::load(&[dir.path()]).expect("loads");
    assert_eq!(snapshot.kinds(), vec![Kind::Node, Kind::Namespace]);
    assert_eq!(snapshot.files().len(), 2);
}

#[test]
fn syntax_errors_name_the_file_and_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("broken.yaml");
    let mut file = File::create(&path).expect("create");
    write!(
        file,
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: [unclosed\n"
    )
    .expect("write");
    let err = SnapshotCluster::load(&[&path]).expect_err("broken");
    let text = err.to_string();
    assert!(text.starts_with(&path.display().to_string()), "{text}");
    match err {
        SnapshotError::Parse { line, .. } => assert!(line.is_some(), "{text}"),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn ill_typed_objects_are_errors_at_the_offending_line() {
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ns\nspec:\n  containers: 7\n";
    let err = SnapshotCluster::from_yaml_str(yaml).expect_err("bad pod");
    match &err {
        SnapshotError::Parse { line, .. } => assert_eq!(*line, Some(7), "{err}"),
        other => panic!("unexpected {other:?}"),
    }
    // Objects whose keys come in another order are decoded via a value and
    // named in the error instead.
    let yaml = "metadata:\n  name: p\n  namespace: ns\nspec:\n  containers: 7\nkind: Pod\napiVersion: v1\n";
    let err = SnapshotCluster::from_yaml_str(yaml).expect_err("bad pod");
    assert!(err.to_string().contains("Pod ns/p"), "{err}");
}

#[test]
fn json_errors_carry_line_and_column() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bad.json");
    std::fs::write(&path, "{\"kind\": \"Node\",\n \"metadata\": {\"name\": }}").expect("write");
    let err = SnapshotCluster::load(&[&path]).expect_err("bad json");
    match &err {
        SnapshotError::Parse { line, column, .. } => {
            assert_eq!(*line, Some(2));
            assert!(column.is_some());
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn missing_paths_and_empty_directories_are_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("nope");
    assert!(matches!(
        SnapshotCluster::load(&[&missing]),
        Err(SnapshotError::Read { .. })
    ));
    assert!(matches!(
        SnapshotCluster::load(&[dir.path()]),
        Err(SnapshotError::NoFiles { .. })
    ));
}

#[test]
fn documents_without_kind_or_name_are_rejected() {
    let err = SnapshotCluster::from_yaml_str("metadata:\n  name: x\n").expect_err("no kind");
    assert!(err.to_string().contains("no `kind`"), "{err}");
    let err = SnapshotCluster::from_yaml_str("apiVersion: v1\nkind: Node\nmetadata: {}\n")
        .expect_err("no name");
    assert!(err.to_string().contains("metadata.name"), "{err}");
}

#[test]
fn namespace_counts_cover_present_namespaced_kinds() {
    let yaml = format!(
        "{KUBECTL_PODS}---\napiVersion: v1\nkind: ConfigMapList\nitems:\n- metadata:\n    name: cfg\n    namespace: shop\n"
    );
    let snapshot = SnapshotCluster::from_yaml_str(&yaml).expect("loads");
    let counts = snapshot.namespace_counts("shop").expect("known");
    assert_eq!(counts.get("Pod"), Some(&1));
    assert_eq!(counts.get("ConfigMap"), Some(&1));
    assert_eq!(snapshot.namespace_counts("empty").expect("known").len(), 0);
    assert_eq!(
        snapshot.counted_kinds(),
        vec!["Pod".to_owned(), "ConfigMap".to_owned()]
    );
    let nodes_only =
        SnapshotCluster::from_yaml_str("apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n")
            .expect("loads");
    assert!(nodes_only.namespace_counts("shop").is_err());
}

#[test]
fn list_items_in_any_key_order_and_unknown_kinds_are_handled() {
    let yaml = r#"apiVersion: v1
kind: List
items:
- metadata: {name: odd, namespace: ns}
  kind: Pod
  apiVersion: v1
  spec: {containers: [{name: c}]}
- apiVersion: v1
  kind: Secret
  metadata: {name: s, namespace: ns}
  data: {password: aHVudGVyMg==}
- ~
- kind: ConfigMap
  apiVersion: v1
  data: {big: "ignored"}
  metadata: {name: cm, namespace: ns}
"#;
    let snapshot = SnapshotCluster::from_yaml_str(yaml).expect("loads");
    assert!(snapshot.pod("ns", "odd").expect("known").is_some());
    assert_eq!(snapshot.kinds(), vec![Kind::Pod, Kind::ConfigMap]);
    assert_eq!(
        snapshot
            .namespace_counts("ns")
            .expect("known")
            .get("ConfigMap"),
        Some(&1)
    );
}
