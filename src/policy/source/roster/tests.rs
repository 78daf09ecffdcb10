use super::*;

#[test]
fn keys_are_qualified_names_from_identities() {
    assert_eq!(
        key("forcegate-7d9f-x2x9q"),
        "replicas.forcegate.dev/forcegate-7d9f-x2x9q"
    );
    assert_eq!(key("host:42"), "replicas.forcegate.dev/host-42");
    let long = format!("{}-abcde", "x".repeat(80));
    let name = key(&long);
    assert!(
        name.ends_with("-abcde") && name.len() == PREFIX.len() + 63,
        "{name}"
    );
    assert_eq!(key("--"), "replicas.forcegate.dev/replica");
}

#[test]
fn reports_are_read_back_and_foreign_annotations_ignored() {
    let report = Report {
        replica: "fg-a".into(),
        time: "t".into(),
        policies: BTreeMap::new(),
    };
    let lease = Lease {
        metadata: ObjectMeta {
            annotations: Some(
                [
                    (key("fg-a"), serde_json::to_string(&report).expect("json")),
                    (key("fg-b"), "not json".to_owned()),
                    ("other.example/x".to_owned(), "{}".to_owned()),
                ]
                .into(),
            ),
            ..ObjectMeta::default()
        },
        spec: None,
    };
    let found = reports(&lease);
    assert_eq!(found.len(), 1);
    assert_eq!(found[&key("fg-a")], report);
    assert_eq!(
        annotations_patch([("k", None), ("v", Some("x".into()))]),
        json!({"metadata": {"annotations": {"k": null, "v": "x"}}})
    );
}
