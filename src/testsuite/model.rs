//! The `PolicyTestSuite` YAML: policies under test, a cluster, and cases.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::policy::model::Located;

pub const KIND: &str = "PolicyTestSuite";

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Suite {
    pub api_version: Located<String>,
    pub kind: Located<String>,
    pub metadata: SuiteMetadata,
    /// Policy files or directories, relative to the suite file.
    pub policies: Vec<Located<String>>,
    #[serde(default)]
    pub settings: SuiteSettings,
    #[serde(default)]
    pub cluster: ClusterSpec,
    pub cases: Vec<Located<Case>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SuiteMetadata {
    pub name: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SuiteSettings {
    /// Default `forcegate:break-glass`.
    pub break_glass_group: Option<String>,
}

/// Cluster objects the facts are read from.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ClusterSpec {
    /// Snapshot files or directories (YAML/JSON, objects or Lists), relative
    /// to the suite file.
    pub files: Vec<Located<String>>,
    /// Objects written inline, kubectl-shaped.
    pub objects: Vec<Value>,
    /// Treat every kind forcegate knows as present even without objects
    /// (a complete snapshot). Default true.
    pub all_kinds_known: bool,
    /// Kinds (e.g. `Lease`) to leave out, so facts depending on them are unknown.
    pub missing_kinds: Vec<Located<String>>,
}

impl Default for ClusterSpec {
    fn default() -> Self {
        Self {
            files: Vec::new(),
            objects: Vec::new(),
            all_kinds_known: true,
            missing_kinds: Vec::new(),
        }
    }
}

/// One request and what the policies must decide about it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Case {
    pub name: String,
    /// A full AdmissionReview JSON file, relative to the suite file.
    pub review: Option<String>,
    pub force_delete: Option<PodRequest>,
    pub evict: Option<PodRequest>,
    pub strip_finalizers: Option<StripRequest>,
    pub finalize_namespace: Option<FinalizeRequest>,
    /// Send the request as a dry run.
    #[serde(default)]
    pub dry_run: bool,
    /// Objects added to (or replacing, by kind/namespace/name) the suite's.
    #[serde(default)]
    pub objects: Vec<Value>,
    /// Kinds to leave out for this case.
    #[serde(default)]
    pub missing_kinds: Vec<Located<String>>,
    pub expect: Expect,
}

/// `forceDelete` / `evict`: a pod by namespace and name.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PodRequest {
    pub namespace: String,
    pub name: String,
    pub user: String,
    #[serde(default)]
    pub groups: Vec<String>,
    /// Default 0 (a force delete).
    pub grace_period_seconds: Option<i64>,
    /// Send `preconditions.uid` as the kubelet and pod GC do.
    #[serde(default)]
    pub uid_precondition: bool,
    /// Annotations added to the pod as the request carries it (e.g. break-glass).
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
}

/// `stripFinalizers`: an UPDATE removing finalizers from an object.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StripRequest {
    /// Plural resource, optionally `resource.group`; default `pods`.
    pub resource: Option<String>,
    /// e.g. `status` for `pods/status`.
    pub subresource: Option<String>,
    pub namespace: Option<String>,
    pub name: String,
    /// Finalizers to remove (default: all).
    pub finalizers: Option<Vec<String>>,
    /// Finalizers to keep (the rest are removed).
    pub keep: Option<Vec<String>>,
    pub user: String,
    #[serde(default)]
    pub groups: Vec<String>,
    /// The object as it is now, for kinds the cluster view does not hold.
    pub object: Option<Value>,
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
}

/// `finalizeNamespace`: `PUT /api/v1/namespaces/NAME/finalize`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FinalizeRequest {
    pub name: String,
    pub user: String,
    #[serde(default)]
    pub groups: Vec<String>,
    /// `spec.finalizers` after the request (default: none).
    #[serde(default)]
    pub keep: Vec<String>,
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
}

/// What must hold. Only the fields given are checked.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Expect {
    pub allowed: Option<bool>,
    /// Exactly these policies deny (empty list: none).
    pub denying_policies: Option<Vec<String>>,
    /// `ForceDelete`, `SystemFinalization`, ...
    pub intent: Option<String>,
    pub message_contains: Option<OneOrMany>,
    /// Each text must appear in some warning.
    pub warnings_contain: Option<OneOrMany>,
    /// No warnings at all.
    pub no_warnings: Option<bool>,
    /// A cleanup record was written.
    pub recorded: Option<bool>,
    pub break_glass: Option<bool>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    pub fn items(&self) -> Vec<&str> {
        match self {
            OneOrMany::One(s) => vec![s.as_str()],
            OneOrMany::Many(v) => v.iter().map(String::as_str).collect(),
        }
    }
}
