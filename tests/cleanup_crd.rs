//! `manifests/crd.yaml` is generated from the Rust types and must not go stale.

use std::path::PathBuf;

use forcegate::cleanup::ForceDeletion;
use forcegate::cleanup::crd::crd_manifest;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

fn manifest_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("manifests/crd.yaml")
}

#[test]
fn crd_manifest_is_up_to_date() {
    let generated = crd_manifest().expect("serialize CRD");
    let path = manifest_path();
    if std::env::var_os("FORCEGATE_UPDATE_MANIFESTS").is_some() {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, &generated).expect("write manifest");
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "{} is stale; regenerate with FORCEGATE_UPDATE_MANIFESTS=1 cargo test --test cleanup_crd",
        path.display()
    );
}

#[test]
fn crd_manifest_reads_back_as_the_crd() {
    let generated = crd_manifest().expect("serialize CRD");
    let parsed: CustomResourceDefinition =
        serde_saphyr::from_str(&generated).expect("YAML parses as a CRD");
    assert_eq!(parsed, ForceDeletion::crd());
}

#[test]
fn crd_shape() {
    let crd = ForceDeletion::crd();
    assert_eq!(
        crd.metadata.name.as_deref(),
        Some("forcedeletions.forcegate.dev")
    );
    assert_eq!(crd.spec.group, "forcegate.dev");
    assert_eq!(crd.spec.scope, "Cluster");
    assert_eq!(crd.spec.names.kind, "ForceDeletion");
    assert_eq!(crd.spec.names.plural, "forcedeletions");
    let version = &crd.spec.versions[0];
    assert_eq!(version.name, "v1alpha1");
    assert!(version.served && version.storage);
    assert!(
        version
            .subresources
            .as_ref()
            .and_then(|s| s.status.as_ref())
            .is_some(),
        "status subresource"
    );
    let columns: Vec<(&str, &str)> = version
        .additional_printer_columns
        .iter()
        .flatten()
        .map(|c| (c.name.as_str(), c.json_path.as_str()))
        .collect();
    assert_eq!(
        columns,
        [
            ("Object", ".spec.subject"),
            ("Node", ".spec.node"),
            ("Requester", ".spec.requester.username"),
            ("Phase", ".status.phase"),
            ("Age", ".metadata.creationTimestamp"),
        ]
    );
    let schema = serde_json::to_value(&version.schema).expect("schema");
    let status = &schema["openAPIV3Schema"]["properties"]["status"]["properties"];
    assert_eq!(
        status["phase"]["enum"],
        serde_json::json!(["Pending", "Verifying", "Clean", "NeedsAttention"])
    );
    let state = &status["checklist"]["items"]["properties"]["state"]["enum"];
    assert_eq!(
        *state,
        serde_json::json!(["ok", "pending", "failed", "manual"])
    );
    let spec = &schema["openAPIV3Schema"]["properties"]["spec"];
    assert_eq!(spec["properties"]["requestedAt"]["format"], "date-time");
    for field in ["subject", "object", "action", "requester", "requestedAt"] {
        assert!(
            spec["required"]
                .as_array()
                .is_some_and(|r| r.iter().any(|f| f == field)),
            "spec.{field} required: {}",
            spec["required"]
        );
    }
}
