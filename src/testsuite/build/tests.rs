use super::*;

#[test]
fn plurals() {
    assert_eq!(plural("Pod"), "pods");
    assert_eq!(plural("PersistentVolumeClaim"), "persistentvolumeclaims");
    assert_eq!(plural("NetworkPolicy"), "networkpolicies");
    assert_eq!(plural("Ingress"), "ingresses");
    assert_eq!(plural("Endpoints"), "endpoints");
}

#[test]
fn uids_are_stable_and_distinct() {
    assert_eq!(request_uid("a/b"), request_uid("a/b"));
    assert_ne!(request_uid("a/b"), request_uid("a/c"));
    assert_eq!(request_uid("x").len(), 36);
}

#[test]
fn strip_removes_only_named_finalizers() {
    let pvc = json!({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": "db", "uid": "u1",
                     "finalizers": ["kubernetes.io/pvc-protection", "example.com/backup"]}
    });
    let r = StripRequest {
        resource: Some("persistentvolumeclaims".into()),
        subresource: None,
        namespace: Some("db".into()),
        name: "data".into(),
        finalizers: Some(vec!["kubernetes.io/pvc-protection".into()]),
        keep: None,
        user: "alice".into(),
        groups: vec![],
        object: None,
        annotations: BTreeMap::new(),
    };
    let objects = [pvc];
    let review = strip(&r, &objects, "uid-1", false).expect("builds");
    let req = &review["request"];
    assert_eq!(req["operation"], "UPDATE");
    assert_eq!(req["kind"]["kind"], "PersistentVolumeClaim");
    assert_eq!(
        req["object"]["metadata"]["finalizers"],
        json!(["example.com/backup"])
    );
    assert_eq!(
        req["oldObject"]["metadata"]["finalizers"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    assert_eq!(req["userInfo"]["groups"], json!(["system:authenticated"]));
    let bad = StripRequest {
        finalizers: Some(vec!["nope".into()]),
        ..r
    };
    let err = strip(&bad, &objects, "u", false).expect_err("unknown finalizer");
    assert!(err.contains("nope is not among"), "{err}");
}
