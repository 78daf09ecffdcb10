//! The ForceDeletionPolicy document as written in YAML.
//!
//! These types are the policy API: serde reads them (with source locations,
//! so every problem can be reported as `file:line:column`) and schemars turns
//! them into `policies/schema.json` for editors. They are deliberately loose
//! where a precise message beats a generic schema error (intents, operators):
//! [`super::compile`] checks those and says what is wrong and where.

use std::borrow::Cow;
use std::collections::BTreeMap;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::decision::Action;

/// `apiVersion` of every policy document.
pub const API_VERSION: &str = "forcegate.dev/v1alpha1";
/// `kind` of every policy document.
pub const KIND: &str = "ForceDeletionPolicy";
/// A Kubernetes DNS-1123 label (length checked apart), as policy and rule
/// names must be.
pub const DNS_LABEL: &str = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";

/// A value with the 1-based line and column it was read from (0 when the
/// source had no locations, e.g. JSON built in memory).
#[derive(Clone, Debug, PartialEq)]
pub struct Located<T> {
    pub value: T,
    pub line: u32,
    pub column: u32,
}

impl<T> Located<T> {
    pub fn new(value: T, line: u32, column: u32) -> Self {
        Self {
            value,
            line,
            column,
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Located<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spanned = serde_saphyr::Spanned::<T>::deserialize(deserializer)?;
        Ok(Self {
            value: spanned.value,
            line: u32::try_from(spanned.referenced.line()).unwrap_or(u32::MAX),
            column: u32::try_from(spanned.referenced.column()).unwrap_or(u32::MAX),
        })
    }
}

/// Locations are invisible in the schema: a `Located<T>` is a `T`.
impl<T: JsonSchema> JsonSchema for Located<T> {
    fn inline_schema() -> bool {
        T::inline_schema()
    }

    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        T::schema_id()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        T::json_schema(generator)
    }
}

/// One `ForceDeletionPolicy` document.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(
    title = "ForceDeletionPolicy",
    description = "A forcegate policy: which force deletions it gates and what it decides. See docs/policies.md."
)]
pub struct PolicyDocument {
    #[schemars(extend("const" = API_VERSION))]
    pub api_version: Located<String>,
    #[schemars(extend("const" = KIND))]
    pub kind: Located<String>,
    pub metadata: Metadata,
    pub spec: PolicySpec,
    /// Written by forcegate in the cluster; read from `kubectl get -o yaml`
    /// output and ignored.
    #[serde(default)]
    #[schemars(skip)]
    pub status: Option<IgnoredAny>,
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Metadata {
    /// Unique within the loaded set; a DNS-1123 label (`node-alive`).
    pub name: Located<String>,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    // What the API server adds, as `kubectl get -o yaml` prints it: read and
    // ignored, so a policy fetched from a cluster lints as written.
    #[serde(default)]
    #[schemars(skip)]
    pub uid: Option<IgnoredAny>,
    #[serde(default)]
    #[schemars(skip)]
    pub resource_version: Option<IgnoredAny>,
    #[serde(default)]
    #[schemars(skip)]
    pub generation: Option<IgnoredAny>,
    #[serde(default)]
    #[schemars(skip)]
    pub creation_timestamp: Option<IgnoredAny>,
    #[serde(default)]
    #[schemars(skip)]
    pub managed_fields: Option<IgnoredAny>,
}

/// Either one rule written inline (`conditions`, `action`, `message`,
/// `remediation`) or several under `rules`, sharing `match` and `exclude`.
// The `x-kubernetes-*` keywords are for the CRD: the API server enforces
// them itself, so they hold even while forcegate is down.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [{
    "rule": "has(self.rules) ? !(has(self.conditions) || has(self.action) || has(self.message) || has(self.remediation)) : (has(self.action) && has(self.message))",
    "message": "use either `rules` or one inline rule (`action` and `message`, optional `conditions` and `remediation`), not both"
}]))]
pub struct PolicySpec {
    /// For humans and `forcegate lint`; not shown to requesters.
    #[serde(default)]
    pub description: Option<String>,
    #[serde(rename = "match")]
    pub matches: Located<Match>,
    #[serde(default)]
    pub exclude: Exclude,
    /// What to do when a rule cannot be decided because a fact it reads is
    /// unknown. Default `Deny`. Rules may override it.
    #[serde(default)]
    pub on_unknown: Option<Located<UnknownAction>>,
    /// Inline single rule: all must hold (empty: always).
    #[serde(default)]
    pub conditions: Option<Vec<Located<Condition>>>,
    #[serde(default)]
    pub action: Option<Located<Action>>,
    /// Template, e.g. `node {{ facts.node.name }} is Ready`.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub message: Option<Located<String>>,
    /// Template: what to do instead.
    #[serde(default)]
    pub remediation: Option<Located<String>>,
    /// Several rules; every one that holds fires. Names are unique.
    #[serde(default)]
    #[schemars(length(min = 1), extend(
        "x-kubernetes-list-type" = "map",
        "x-kubernetes-list-map-keys" = ["name"]
    ))]
    pub rules: Option<Vec<Located<Rule>>>,
}

/// What requests a policy applies to. Every given field must match.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Match {
    /// `ForceDelete`, `Eviction`, `FinalizerRemoval`, `NamespaceFinalize`.
    #[schemars(length(min = 1), extend("items" = {
        "type": "string",
        "enum": ["ForceDelete", "Eviction", "FinalizerRemoval", "NamespaceFinalize"]
    }))]
    pub intents: Vec<Located<String>>,
    /// `resource[.group][/subresource]`, e.g. `pods`, `pods/eviction`,
    /// `namespaces/finalize`, `jobs.batch`, `pods/*`, `*`. Default: any.
    #[serde(default)]
    pub resources: Option<Vec<Located<String>>>,
    /// Namespace names; `*` wildcards allowed (`team-*`). Default: any.
    #[serde(default)]
    pub namespaces: Option<Vec<Located<String>>>,
    /// Labels of the target's namespace (the namespace itself for namespaces).
    #[serde(default)]
    pub namespace_selector: Option<Located<LabelSelector>>,
    /// Labels of the target object (the pod for evictions).
    #[serde(default)]
    pub object_selector: Option<Located<LabelSelector>>,
}

/// Requests from these principals never reach the policy's rules.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Exclude {
    /// Exact usernames.
    #[serde(default)]
    pub users: Vec<String>,
    #[serde(default)]
    pub groups: Vec<String>,
    /// `namespace/name`, `namespace/*`, or the full `system:serviceaccount:ns:name`.
    #[serde(default)]
    pub service_accounts: Vec<Located<String>>,
    /// Namespace names (`*` wildcards allowed).
    #[serde(default)]
    pub namespaces: Vec<Located<String>>,
}

/// Kubernetes-style label selector.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LabelSelector {
    #[serde(default)]
    pub match_labels: BTreeMap<String, String>,
    #[serde(default)]
    pub match_expressions: Vec<Located<LabelSelectorRequirement>>,
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LabelSelectorRequirement {
    pub key: String,
    /// `In`, `NotIn`, `Exists`, `DoesNotExist`.
    #[schemars(extend("enum" = ["In", "NotIn", "Exists", "DoesNotExist"]))]
    pub operator: Located<String>,
    #[serde(default)]
    pub values: Vec<String>,
}

/// What `onUnknown` may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum UnknownAction {
    Deny,
    Warn,
    Record,
    /// The rule does not fire.
    Ignore,
}

impl UnknownAction {
    /// The action an undecidable rule takes, or `None` to stay silent.
    pub fn action(self) -> Option<Action> {
        match self {
            UnknownAction::Deny => Some(Action::Deny),
            UnknownAction::Warn => Some(Action::Warn),
            UnknownAction::Record => Some(Action::Record),
            UnknownAction::Ignore => None,
        }
    }
}

/// One named rule of a policy.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Rule {
    /// Unique within the policy; shown in outcomes as `policy/rule`. A
    /// DNS-1123 label.
    #[schemars(length(max = 63), regex(pattern = DNS_LABEL))]
    pub name: Located<String>,
    /// All must hold (empty: always).
    #[serde(default)]
    pub conditions: Vec<Located<Condition>>,
    pub action: Located<Action>,
    #[serde(default)]
    pub on_unknown: Option<Located<UnknownAction>>,
    /// Template.
    #[schemars(length(min = 1))]
    pub message: Located<String>,
    /// Template: what to do instead.
    #[serde(default)]
    pub remediation: Option<Located<String>>,
}

/// A test on one selection (`fact` or `path`) with exactly one operator, or
/// a combination (`all`, `any`, `not`).
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Condition {
    /// A built-in fact, e.g. `node.ready` (see docs/policies.md).
    #[serde(default)]
    #[schemars(schema_with = "fact_schema")]
    pub fact: Option<Located<String>>,
    /// An RFC 9535 JSONPath over `{request, object, oldObject, facts, intent, ...}`.
    #[serde(default)]
    pub path: Option<Located<String>>,
    /// Shown instead of the generated text when this condition triggers a policy.
    #[serde(default)]
    pub description: Option<String>,

    #[serde(default)]
    pub all: Option<Vec<Located<Condition>>>,
    #[serde(default)]
    pub any: Option<Vec<Located<Condition>>>,
    #[serde(default)]
    pub not: Option<Box<Located<Condition>>>,

    #[serde(default)]
    pub equals: Option<Value>,
    #[serde(default)]
    pub not_equals: Option<Value>,
    #[serde(default, rename = "in")]
    pub is_in: Option<Vec<Value>>,
    #[serde(default)]
    pub not_in: Option<Vec<Value>>,
    #[serde(default)]
    pub exists: Option<bool>,
    /// Regular expression (Rust `regex` syntax), unanchored.
    #[serde(default)]
    pub matches: Option<Located<String>>,
    #[serde(default)]
    pub not_matches: Option<Located<String>>,
    #[serde(default)]
    pub greater_than: Option<f64>,
    #[serde(default)]
    pub greater_than_or_equal: Option<f64>,
    #[serde(default)]
    pub less_than: Option<f64>,
    #[serde(default)]
    pub less_than_or_equal: Option<f64>,
    /// A list holds the value, a string holds the substring, a map holds the key.
    #[serde(default)]
    pub contains: Option<Value>,
    #[serde(default)]
    pub contains_any: Option<Vec<Value>>,
}

/// `fact:` lists the catalog, so editors complete fact names.
fn fact_schema(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = super::catalog::FACTS.iter().map(|f| f.name).collect();
    schemars::json_schema!({
        "description": "A built-in fact, e.g. `node.ready` (see docs/policies.md).",
        "anyOf": [{"type": "string", "enum": names}, {"type": "null"}]
    })
}

/// The JSON Schema for policy documents, as written to `policies/schema.json`.
pub fn schema() -> Schema {
    schemars::schema_for!(PolicyDocument)
}

#[cfg(test)]
mod tests;
