use super::*;

/// `policies/schema.json` is generated from these types; regenerate with
/// `FORCEGATE_UPDATE_SCHEMA=1 cargo test --lib policy::model`.
#[test]
fn schema_file_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/schema.json");
    let generated = format!(
        "{}\n",
        serde_json::to_string_pretty(&schema()).expect("schema serializes")
    );
    if std::env::var_os("FORCEGATE_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).expect("write policies/schema.json");
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == generated,
        "policies/schema.json is stale; regenerate with FORCEGATE_UPDATE_SCHEMA=1 cargo test --lib policy::model"
    );
}

#[test]
fn schema_describes_the_language() {
    let schema = serde_json::to_value(schema()).expect("schema serializes");
    let text = schema.to_string();
    for needle in [
        "ForceDeletionPolicy",
        "forcegate.dev/v1alpha1",
        "onUnknown",
        "notMatches",
        "namespaceSelector",
        "serviceAccounts",
        "\"Record\"",
        "\"Ignore\"",
    ] {
        assert!(text.contains(needle), "schema lacks {needle}");
    }
    assert_eq!(
        schema.pointer("/$defs/PolicySpec/required"),
        Some(&serde_json::json!(["match"]))
    );
    let facts = schema
        .pointer("/$defs/Condition/properties/fact/anyOf/0/enum")
        .and_then(serde_json::Value::as_array)
        .map_or(0, Vec::len);
    assert_eq!(facts, super::super::catalog::FACTS.len());
}
