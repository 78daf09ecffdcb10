//! Which requests a policy applies to (`match`) and who it never applies to
//! (`exclude`), with the same resource and selector semantics as Kubernetes
//! webhook rules so operators do not have to learn a second dialect.

use std::collections::BTreeMap;

use serde_json::Value;

use super::condition::{Missing, Scope, Verdict};
use super::error::Problems;
use super::model::{self, Located};
use crate::intent::{Intent, Requester};

/// Intents a policy may name. SystemFinalization and NotGated never reach
/// policies: the engine allows them before evaluation.
pub const GATED_INTENTS: &[&str] = &["ForceDelete", "Eviction", "FinalizerRemoval", "NamespaceFinalize"];

/// A compiled `match` + `exclude`.
#[derive(Clone, Debug)]
pub struct Matcher {
    intents: Vec<&'static str>,
    resources: Option<Vec<ResourcePattern>>,
    namespaces: Option<Vec<Glob>>,
    namespace_selector: Option<LabelSelector>,
    object_selector: Option<LabelSelector>,
    exclude: Exclusions,
}

impl Matcher {
    /// Whether the policy applies. Label selectors may need facts the
    /// cluster view lacks, hence a three-valued verdict.
    pub fn applies(&self, intent: &Intent, scope: &Scope<'_>) -> Verdict {
        if !self.intents.contains(&intent.kind.name()) {
            return Verdict::no();
        }
        if let Some(patterns) = &self.resources
            && !patterns.iter().any(|p| p.matches(intent))
        {
            return Verdict::no();
        }
        let namespace = target_namespace(intent);
        if let Some(globs) = &self.namespaces
            && !namespace.is_some_and(|ns| globs.iter().any(|g| g.matches(ns)))
        {
            return Verdict::no();
        }
        if self.exclude.covers(&intent.requester, namespace) {
            return Verdict::no();
        }
        let mut verdicts = Vec::new();
        if let Some(selector) = &self.namespace_selector {
            verdicts.push(match namespace_labels(intent, scope) {
                Ok(labels) => selector.verdict(&labels, "namespace labels"),
                Err(missing) => unknown(missing),
            });
        }
        if let Some(selector) = &self.object_selector {
            verdicts.push(match object_labels(intent, scope) {
                Ok(candidates) => Verdict::or(
                    candidates
                        .iter()
                        .map(|labels| selector.verdict(labels, "object labels")),
                ),
                Err(missing) => unknown(missing),
            });
        }
        Verdict::and(verdicts)
    }
}

fn unknown(missing: Missing) -> Verdict {
    Verdict::unknown(vec![missing])
}

fn labels_missing(what: &str, why: impl Into<String>) -> Missing {
    Missing {
        what: what.into(),
        why: why.into(),
    }
}

/// The namespace a request is about; a Namespace is its own namespace.
pub fn target_namespace(intent: &Intent) -> Option<&str> {
    match intent.target.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => Some(ns),
        _ if intent.target.resource == "namespaces" => Some(intent.target.name.as_str()),
        _ => None,
    }
}

type Labels = BTreeMap<String, String>;

fn labels_at(value: Option<&Value>) -> Option<Labels> {
    let metadata = value?.get("metadata")?;
    let labels = match metadata.get("labels") {
        Some(Value::Object(map)) => map
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
            .collect(),
        _ => Labels::new(),
    };
    Some(labels)
}

/// Namespaces label themselves; for anything else the cluster view must
/// supply `facts.namespace.labels`.
fn namespace_labels(intent: &Intent, scope: &Scope<'_>) -> Result<Labels, Missing> {
    if intent.target.resource == "namespaces" {
        let ctx = scope.context;
        if let Some(labels) =
            labels_at(ctx.get("oldObject")).or_else(|| labels_at(ctx.get("object")))
        {
            return Ok(labels);
        }
    }
    if let Some(reason) = scope.unknown.get("namespace") {
        return Err(labels_missing("namespace labels", reason.clone()));
    }
    match scope.context.pointer("/facts/namespace/labels") {
        Some(Value::Object(map)) => Ok(map
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
            .collect()),
        _ => Err(labels_missing(
            "namespace labels",
            "the cluster view does not provide them",
        )),
    }
}

/// Label sets to test: object and oldObject (either may match, as in
/// Kubernetes), or the pod's labels from the facts for an eviction.
fn object_labels(intent: &Intent, scope: &Scope<'_>) -> Result<Vec<Labels>, Missing> {
    let ctx = scope.context;
    if intent.target.subresource.as_deref() == Some("eviction") {
        if let Some(reason) = scope.unknown.get("pod") {
            return Err(labels_missing("pod labels", reason.clone()));
        }
        return match ctx.pointer("/facts/pod/labels") {
            Some(Value::Object(map)) => Ok(vec![
                map.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect(),
            ]),
            _ => Err(labels_missing("pod labels", "the pod is not in the cluster view")),
        };
    }
    let sets: Vec<Labels> = [ctx.get("object"), ctx.get("oldObject")]
        .into_iter()
        .filter_map(labels_at)
        .collect();
    Ok(if sets.is_empty() { vec![Labels::new()] } else { sets })
}

/// `resource[.group][/subresource]` with Kubernetes rule semantics:
/// `*` is every resource (no subresources), `*/*` everything, `pods/*`
/// every subresource of pods.
#[derive(Clone, Debug, PartialEq)]
struct ResourcePattern {
    resource: String,
    group: Option<String>,
    subresource: Option<String>,
}

impl ResourcePattern {
    fn parse(text: &str) -> Result<Self, String> {
        let (main, subresource) = match text.split_once('/') {
            Some((main, sub)) => (main, Some(sub.to_string())),
            None => (text, None),
        };
        let (resource, group) = match main.split_once('.') {
            Some((resource, group)) => (resource, Some(group.to_string())),
            None => (main, None),
        };
        let valid = |s: &str| {
            s == "*"
                || (!s.is_empty()
                    && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
        };
        if !valid(resource) || subresource.as_deref().is_some_and(|s| !valid(s)) {
            return Err(format!(
                "invalid resource `{text}`; write `resource[.group][/subresource]`, e.g. `pods`, `pods/eviction`, `jobs.batch`, `namespaces/finalize`"
            ));
        }
        Ok(Self {
            resource: resource.to_string(),
            group,
            subresource,
        })
    }

    fn matches(&self, intent: &Intent) -> bool {
        let target = &intent.target;
        let resource_ok = self.resource == "*" || self.resource == target.resource;
        let group_ok = self.group.as_deref().is_none_or(|g| g == target.group);
        let sub_ok = match (&self.subresource, &target.subresource) {
            (None, None) => true,
            (Some(want), Some(have)) => want == "*" || want == have,
            _ => false,
        };
        resource_ok && group_ok && sub_ok
    }
}

/// A name pattern where `*` matches any run of characters.
#[derive(Clone, Debug, PartialEq)]
struct Glob(String);

impl Glob {
    fn matches(&self, text: &str) -> bool {
        glob_match(self.0.as_bytes(), text.as_bytes())
    }
}

fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len()).any(|i| glob_match(rest, &text[i..])),
        Some((c, rest)) => text.first() == Some(c) && glob_match(rest, &text[1..]),
    }
}

#[derive(Clone, Debug, Default)]
struct Exclusions {
    users: Vec<String>,
    groups: Vec<String>,
    /// (namespace, name or `*`)
    service_accounts: Vec<(String, String)>,
    namespaces: Vec<Glob>,
}

impl Exclusions {
    fn covers(&self, requester: &Requester, namespace: Option<&str>) -> bool {
        if self.users.contains(&requester.username) {
            return true;
        }
        if requester.groups.iter().any(|g| self.groups.contains(g)) {
            return true;
        }
        if let Some((ns, name)) = requester
            .username
            .strip_prefix("system:serviceaccount:")
            .and_then(|rest| rest.split_once(':'))
            && self
                .service_accounts
                .iter()
                .any(|(pns, pname)| pns == ns && (pname == "*" || pname == name))
        {
            return true;
        }
        namespace.is_some_and(|ns| self.namespaces.iter().any(|g| g.matches(ns)))
    }
}

/// A compiled Kubernetes label selector.
#[derive(Clone, Debug, Default)]
struct LabelSelector {
    match_labels: Labels,
    expressions: Vec<(String, SelectorOp, Vec<String>)>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum SelectorOp {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

impl LabelSelector {
    fn matches(&self, labels: &Labels) -> bool {
        self.match_labels
            .iter()
            .all(|(k, v)| labels.get(k) == Some(v))
            && self.expressions.iter().all(|(key, op, values)| {
                let have = labels.get(key);
                match op {
                    SelectorOp::In => have.is_some_and(|v| values.contains(v)),
                    SelectorOp::NotIn => have.is_none_or(|v| !values.contains(v)),
                    SelectorOp::Exists => have.is_some(),
                    SelectorOp::DoesNotExist => have.is_none(),
                }
            })
    }

    fn verdict(&self, labels: &Labels, what: &str) -> Verdict {
        if self.matches(labels) {
            Verdict::yes(vec![format!("{what} match the selector")])
        } else {
            Verdict::no()
        }
    }
}

// ---------------------------------------------------------------------------

pub(crate) fn compile(
    matches: &Located<model::Match>,
    exclude: &model::Exclude,
    problems: &mut Problems,
) -> Matcher {
    let m = &matches.value;
    let mut intents = Vec::new();
    if m.intents.is_empty() {
        problems.at(
            matches.line,
            matches.column,
            format!("`match.intents` needs at least one of {}", GATED_INTENTS.join(", ")),
        );
    }
    for intent in &m.intents {
        match GATED_INTENTS.iter().find(|i| **i == intent.value) {
            Some(known) => intents.push(*known),
            None if matches!(intent.value.as_str(), "SystemFinalization" | "NotGated") => problems.at(
                intent.line,
                intent.column,
                format!(
                    "intent `{}` never reaches policies (forcegate always allows it); use one of {}",
                    intent.value,
                    GATED_INTENTS.join(", ")
                ),
            ),
            None => problems.at(
                intent.line,
                intent.column,
                format!("unknown intent `{}`; use one of {}", intent.value, GATED_INTENTS.join(", ")),
            ),
        }
    }
    let resources = m.resources.as_ref().map(|list| {
        list.iter()
            .filter_map(|r| match ResourcePattern::parse(&r.value) {
                Ok(p) => Some(p),
                Err(e) => {
                    problems.at(r.line, r.column, e);
                    None
                }
            })
            .collect()
    });
    let globs = |list: &[Located<String>], problems: &mut Problems| -> Vec<Glob> {
        list.iter()
            .filter_map(|n| {
                let ok = !n.value.is_empty()
                    && n.value
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '*');
                if ok {
                    Some(Glob(n.value.clone()))
                } else {
                    problems.at(
                        n.line,
                        n.column,
                        format!("invalid namespace `{}`: lowercase letters, digits, `-` and `*` only", n.value),
                    );
                    None
                }
            })
            .collect()
    };
    let namespaces = m.namespaces.as_deref().map(|list| globs(list, problems));
    let namespace_selector = m
        .namespace_selector
        .as_ref()
        .map(|s| compile_selector(s, problems));
    let object_selector = m.object_selector.as_ref().map(|s| compile_selector(s, problems));
    let service_accounts = exclude
        .service_accounts
        .iter()
        .filter_map(|sa| match parse_service_account(&sa.value) {
            Some(pair) => Some(pair),
            None => {
                problems.at(
                    sa.line,
                    sa.column,
                    format!(
                        "invalid service account `{}`; write `namespace/name`, `namespace/*` or `system:serviceaccount:namespace:name`",
                        sa.value
                    ),
                );
                None
            }
        })
        .collect();
    Matcher {
        intents,
        resources,
        namespaces,
        namespace_selector,
        object_selector,
        exclude: Exclusions {
            users: exclude.users.clone(),
            groups: exclude.groups.clone(),
            service_accounts,
            namespaces: globs(&exclude.namespaces, problems),
        },
    }
}

fn parse_service_account(text: &str) -> Option<(String, String)> {
    let (ns, name) = match text.strip_prefix("system:serviceaccount:") {
        Some(rest) => rest.split_once(':')?,
        None => text.split_once('/')?,
    };
    (!ns.is_empty() && !name.is_empty() && !name.contains(['/', ':']))
        .then(|| (ns.to_string(), name.to_string()))
}

fn compile_selector(selector: &Located<model::LabelSelector>, problems: &mut Problems) -> LabelSelector {
    let mut expressions = Vec::new();
    for req in &selector.value.match_expressions {
        let op = match req.value.operator.value.as_str() {
            "In" => SelectorOp::In,
            "NotIn" => SelectorOp::NotIn,
            "Exists" => SelectorOp::Exists,
            "DoesNotExist" => SelectorOp::DoesNotExist,
            other => {
                let at = &req.value.operator;
                problems.at(
                    at.line,
                    at.column,
                    format!("unknown selector operator `{other}`; use In, NotIn, Exists or DoesNotExist"),
                );
                continue;
            }
        };
        let needs_values = matches!(op, SelectorOp::In | SelectorOp::NotIn);
        if needs_values == req.value.values.is_empty() {
            problems.at(
                req.line,
                req.column,
                if needs_values {
                    format!("`{}` needs values", req.value.operator.value)
                } else {
                    format!("`{}` takes no values", req.value.operator.value)
                },
            );
        }
        expressions.push((req.value.key.clone(), op, req.value.values.clone()));
    }
    LabelSelector {
        match_labels: selector.value.match_labels.clone(),
        expressions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intent::{IntentKind, ObjectRef};
    use serde_json::json;
    use std::path::Path;

    fn intent(resource: &str, subresource: Option<&str>, ns: &str, user: &str) -> Intent {
        Intent {
            kind: IntentKind::ForceDelete {
                already_terminating: false,
            },
            target: ObjectRef {
                version: "v1".into(),
                kind: "Pod".into(),
                resource: resource.into(),
                subresource: subresource.map(str::to_string),
                namespace: Some(ns.into()),
                name: "web-0".into(),
                ..Default::default()
            },
            requester: Requester {
                username: user.into(),
                groups: vec!["system:authenticated".into()],
            },
            dry_run: false,
        }
    }

    fn matcher(yaml: &str) -> Matcher {
        #[derive(serde::Deserialize)]
        struct Both {
            #[serde(rename = "match")]
            m: Located<model::Match>,
            #[serde(default)]
            exclude: model::Exclude,
        }
        let both: Both = serde_saphyr::from_str(yaml).expect("yaml");
        let mut problems = Problems::new(Path::new("t.yaml"));
        let m = compile(&both.m, &both.exclude, &mut problems);
        assert!(problems.len() == 0, "{:?}", problems.into_findings());
        m
    }

    fn applies(m: &Matcher, intent: &Intent, ctx: &Value) -> super::super::condition::Truth {
        let unknown = BTreeMap::new();
        m.applies(intent, &Scope { context: ctx, unknown: &unknown }).truth
    }

    use super::super::condition::Truth;

    #[test]
    fn resources_follow_webhook_rule_semantics() {
        let ctx = json!({});
        let pods = intent("pods", None, "shop", "alice");
        let evict = intent("pods", Some("eviction"), "shop", "alice");
        let m = matcher("match:\n  intents: [ForceDelete]\n  resources: [pods]\n");
        assert_eq!(applies(&m, &pods, &ctx), Truth::True);
        assert_eq!(applies(&m, &evict, &ctx), Truth::False);
        let m = matcher("match:\n  intents: [ForceDelete]\n  resources: ['pods/*']\n");
        assert_eq!(applies(&m, &pods, &ctx), Truth::False);
        assert_eq!(applies(&m, &evict, &ctx), Truth::True);
        let m = matcher("match:\n  intents: [ForceDelete]\n  resources: [jobs.batch]\n");
        assert_eq!(applies(&m, &pods, &ctx), Truth::False);
    }

    #[test]
    fn intents_namespaces_and_exclusions() {
        let ctx = json!({});
        let m = matcher(
            "match:\n  intents: [Eviction]\n",
        );
        assert_eq!(applies(&m, &intent("pods", None, "shop", "alice"), &ctx), Truth::False);
        let m = matcher(
            "match:\n  intents: [ForceDelete]\n  namespaces: ['team-*']\nexclude:\n  users: [bob]\n  serviceAccounts: [ops/*]\n",
        );
        assert_eq!(applies(&m, &intent("pods", None, "team-a", "alice"), &ctx), Truth::True);
        assert_eq!(applies(&m, &intent("pods", None, "shop", "alice"), &ctx), Truth::False);
        assert_eq!(applies(&m, &intent("pods", None, "team-a", "bob"), &ctx), Truth::False);
        assert_eq!(
            applies(&m, &intent("pods", None, "team-a", "system:serviceaccount:ops:cleaner"), &ctx),
            Truth::False
        );
        assert_eq!(
            applies(&m, &intent("pods", None, "team-a", "system:serviceaccount:dev:cleaner"), &ctx),
            Truth::True
        );
    }

    #[test]
    fn selectors_read_object_or_facts() {
        let m = matcher(
            "match:\n  intents: [ForceDelete]\n  objectSelector:\n    matchExpressions:\n      - {key: tier, operator: In, values: [db]}\n",
        );
        let pod = intent("pods", None, "shop", "alice");
        let ctx = json!({"oldObject": {"metadata": {"labels": {"tier": "db"}}}, "object": null});
        assert_eq!(applies(&m, &pod, &ctx), Truth::True);
        let ctx = json!({"oldObject": {"metadata": {"labels": {"tier": "web"}}}});
        assert_eq!(applies(&m, &pod, &ctx), Truth::False);
        let evict = intent("pods", Some("eviction"), "shop", "alice");
        let ctx = json!({"object": {"metadata": {"name": "web-0"}}, "facts": {"pod": {"labels": {"tier": "db"}}}});
        assert_eq!(applies(&m, &evict, &ctx), Truth::True);

        let m = matcher("match:\n  intents: [ForceDelete]\n  namespaceSelector:\n    matchLabels: {env: prod}\n");
        assert_eq!(applies(&m, &pod, &json!({})), Truth::Unknown);
        let ctx = json!({"facts": {"namespace": {"labels": {"env": "prod"}}}});
        assert_eq!(applies(&m, &pod, &ctx), Truth::True);
    }

    #[test]
    fn compile_reports_bad_input() {
        #[derive(serde::Deserialize)]
        struct Only {
            #[serde(rename = "match")]
            m: Located<model::Match>,
        }
        let only: Only = serde_saphyr::from_str(
            "match:\n  intents: [ForceDelete, SystemFinalization, Evict]\n  resources: [Pods]\n",
        )
        .expect("yaml");
        let mut problems = Problems::new(Path::new("t.yaml"));
        compile(&only.m, &model::Exclude::default(), &mut problems);
        let found: Vec<String> = problems.into_findings().iter().map(ToString::to_string).collect();
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(found[0].starts_with("t.yaml:2:26: intent `SystemFinalization` never reaches"), "{found:?}");
        assert!(found[1].starts_with("t.yaml:2:46: unknown intent `Evict`"));
        assert!(found[2].starts_with("t.yaml:3:15: invalid resource `Pods`"));
    }

    #[test]
    fn globs() {
        assert!(glob_match(b"team-*", b"team-a"));
        assert!(glob_match(b"*", b""));
        assert!(!glob_match(b"team-*", b"teams"));
        assert!(glob_match(b"a*b*c", b"axxbyyc"));
    }
}
