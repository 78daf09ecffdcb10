//! The `ForceDeletionPolicy` custom resource: the policy documents of
//! [`super::model`] as cluster objects, with a status.
//!
//! The CRD's schema is generated from the same model as
//! `policies/schema.json` (tests fail when either file is stale), so the
//! API server enforces the shape, enums and CEL rules itself, even with
//! forcegate down. Semantics (facts, JSONPaths, templates) are checked by
//! the loader, at apply time by the `/validate-policy` webhook.
//!
//! The spec is kept as raw JSON here: it is compiled by the same loader as
//! files ([`super::object`]), which reports problems by field path.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use kube::core::schema::{OptionalEnum, StructuralSchemaRewriter};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use schemars::transform::AddNullable;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::model::{DNS_LABEL, PolicySpec};

/// A policy as the API server stores it; `spec` is compiled by the loader.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[kube(
    group = "forcegate.dev",
    version = "v1alpha1",
    kind = "ForceDeletionPolicy",
    plural = "forcedeletionpolicies",
    singular = "forcedeletionpolicy",
    shortname = "fdp",
    category = "forcegate",
    status = "PolicyStatus",
    // The schema comes from the policy model, in `definition`.
    schema = "disabled",
    doc = "A forcegate policy in the cluster: which force deletions it gates and what it decides.",
    printcolumn = r#"{"name":"Intents","type":"string","jsonPath":".status.intents","description":"Requests the policy gates"}"#,
    printcolumn = r#"{"name":"Action","type":"string","jsonPath":".status.actions","description":"What its rules do when they hold"}"#,
    printcolumn = r#"{"name":"On-Unknown","type":"string","jsonPath":".status.onUnknown","description":"What its rules do when a fact they read is unknown"}"#,
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status","description":"Every serving forcegate replica has this generation in force"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#,
    printcolumn = r#"{"name":"Message","type":"string","priority":1,"jsonPath":".status.conditions[?(@.type==\"Ready\")].message"}"#
)]
pub struct RawPolicySpec {
    #[serde(flatten)]
    pub fields: Map<String, Value>,
}

/// What forcegate reports about a policy. Written by one replica (the
/// status lease's holder), only when it changes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PolicyStatus {
    /// The generation this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// `match.intents`, comma-separated (a printer column).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intents: Option<String>,
    /// The rules' actions, comma-separated (a printer column).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actions: Option<String>,
    /// The rules' `onUnknown`, default `Deny` (a printer column).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_unknown: Option<String>,
    /// `Ready` and `PermissionsGranted`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<PolicyCondition>,
    /// What each serving replica has in force.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]
    pub replicas: Vec<ReplicaPolicyStatus>,
}

/// A Kubernetes-style condition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PolicyCondition {
    /// `Ready` or `PermissionsGranted`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[schemars(extend("enum" = ["True", "False", "Unknown"]))]
    pub status: String,
    /// CamelCase reason, e.g. `CompileFailed`.
    pub reason: String,
    #[serde(default)]
    pub message: String,
    /// The generation the condition was computed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[schemars(schema_with = "date_time")]
    pub last_transition_time: Time,
}

/// One serving replica's view of the policy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaPolicyStatus {
    /// The replica (its pod name).
    pub name: String,
    /// The generation it has in force; absent when none ever compiled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
    /// Why the latest generation it saw did not compile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `Time` has no JsonSchema here; it is an RFC 3339 string on the wire.
fn date_time(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "format": "date-time" })
}

/// Why the CRD could not be generated (a model the CRD cannot express).
#[derive(Debug, thiserror::Error)]
pub enum CrdError {
    #[error("the generated schema is not a CRD schema: {0}")]
    Schema(#[from] serde_json::Error),
    #[error("cannot write the CRD as YAML: {0}")]
    Yaml(#[from] serde_saphyr::SerializeError),
}

/// The CRD, its schema generated from [`PolicySpec`] and [`PolicyStatus`].
pub fn definition() -> Result<CustomResourceDefinition, CrdError> {
    use kube::CustomResourceExt;
    let mut crd = ForceDeletionPolicy::crd();
    let schema: JSONSchemaProps = serde_json::from_value(root_schema())?;
    for version in &mut crd.spec.versions {
        version.schema = Some(
            k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceValidation {
                open_api_v3_schema: Some(schema.clone()),
            },
        );
    }
    Ok(crd)
}

/// `manifests/policy-crd.yaml` as it must read.
pub fn manifest() -> Result<String, CrdError> {
    let yaml = serde_saphyr::to_string(&definition()?)?;
    Ok(format!(
        "# Generated from src/policy/model.rs and src/policy/crd.rs; do not edit.\n\
         # Regenerate: FORCEGATE_UPDATE_SCHEMA=1 cargo test --lib policy::\n\
         {yaml}"
    ))
}

/// The object schema: apiVersion, kind, metadata, and the model's spec
/// and status, structural as the API server requires.
fn root_schema() -> Value {
    let spec = structural::<PolicySpec>();
    let status = structural::<PolicyStatus>();
    json!({
        "description": "A forcegate policy in the cluster: which force deletions it gates and what it decides. See docs/policies.md.",
        "type": "object",
        "required": ["spec"],
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": spec,
            "status": status,
        },
        "x-kubernetes-validations": [{
            "rule": format!("size(self.metadata.name) <= 63 && self.metadata.name.matches('{DNS_LABEL}')"),
            "message": "metadata.name must be a DNS-1123 label (lowercase letters, digits and `-`, at most 63)",
        }],
    })
}

/// `T`'s schema the way kube's derive writes CRD schemas (OpenAPI v3,
/// inlined, structural), with the two things a structural schema cannot
/// say in JSON Schema's words: any JSON value (`equals: …`) and recursion
/// (a condition's `all`/`any`/`not` hold conditions). Nested conditions
/// keep their fields unpruned; the loader checks them.
fn structural<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::openapi3()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .with_transform(AddNullable::default())
        .with_transform(StructuralSchemaRewriter)
        .with_transform(OptionalEnum)
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Some(object) = schema.as_object_mut() {
        object.remove("components");
    }
    any_value(&mut schema);
    schema
}

/// Schemas that accept anything (`true`, `{}`, a `$ref` back into the
/// model) become `x-kubernetes-preserve-unknown-fields`. Defaults go: the
/// loader applies them, and the API server would write them into every
/// stored object.
fn any_value(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    object.remove("default");
    object.remove("title");
    for key in ["properties", "additionalProperties", "items"] {
        match object.get_mut(key) {
            Some(Value::Object(children)) if key == "properties" => {
                for child in children.values_mut() {
                    open(child);
                    any_value(child);
                }
            }
            Some(child) => {
                open(child);
                any_value(child);
            }
            None => {}
        }
    }
}

/// Replace an unconstrained or recursive schema with one the API server
/// stores as given.
fn open(schema: &mut Value) {
    let unconstrained = match schema {
        Value::Bool(true) => true,
        Value::Object(object) => {
            object.contains_key("$ref")
                || object
                    .keys()
                    .all(|k| matches!(k.as_str(), "description" | "nullable" | "default"))
        }
        _ => false,
    };
    if !unconstrained {
        return;
    }
    let mut open = Map::new();
    if let Value::Object(object) = schema {
        for key in ["description", "nullable"] {
            if let Some(value) = object.get(key) {
                open.insert(key.into(), value.clone());
            }
        }
        if object.contains_key("$ref") {
            open.insert("type".into(), json!("object"));
        }
    }
    open.insert("x-kubernetes-preserve-unknown-fields".into(), json!(true));
    *schema = Value::Object(open);
}

#[cfg(test)]
mod tests;
