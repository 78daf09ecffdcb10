use super::*;

#[test]
fn holder_identity_forms() {
    assert_eq!(holder_pod("db-0_4f1c"), Some("db-0"));
    assert_eq!(holder_pod("db-0"), Some("db-0"));
    assert_eq!(holder_pod("_x"), None);
    assert!(holder_matches("db-0_4f1c", "db-0"));
    assert!(holder_matches("db-0", "db-0"));
    assert!(!holder_matches("db-01_4f1c", "db-0"));
    assert!(!holder_matches("db-0-x", "db-0"));
    assert!(!holder_matches("db-0", ""));
}

#[test]
fn legacy_record_parses_holder() {
    let object = MetadataOnly {
        leader: Some(r#"{"holderIdentity":"ctrl-7d9f_abc","leaseDurationSeconds":15}"#.to_owned()),
        ..MetadataOnly::default()
    };
    let record = legacy_record(&object).expect("record");
    assert_eq!(record.holder.as_deref(), Some("ctrl-7d9f_abc"));
    let garbage = MetadataOnly {
        leader: Some("{".to_owned()),
        ..MetadataOnly::default()
    };
    assert_eq!(legacy_record(&garbage).and_then(|r| r.holder), None);
}
