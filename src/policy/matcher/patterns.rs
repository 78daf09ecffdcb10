//! The pieces a `match` is made of: resource patterns, name globs,
//! exclusions and label selectors, with Kubernetes semantics.

use super::Labels;
use crate::intent::{Intent, Requester};
use crate::policy::condition::Verdict;

/// `resource[.group][/subresource]` with Kubernetes rule semantics:
/// `*` is every resource (no subresources), `*/*` everything, `pods/*`
/// every subresource of pods.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct ResourcePattern {
    pub(super) resource: String,
    pub(super) group: Option<String>,
    pub(super) subresource: Option<String>,
}

impl ResourcePattern {
    pub(super) fn parse(text: &str) -> Result<Self, String> {
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
                    && s.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
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

    pub(super) fn matches(&self, intent: &Intent) -> bool {
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
pub(super) struct Glob(pub(super) String);

impl Glob {
    pub(super) fn matches(&self, text: &str) -> bool {
        glob_match(self.0.as_bytes(), text.as_bytes())
    }
}

pub(super) fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len()).any(|i| glob_match(rest, &text[i..])),
        Some((c, rest)) => text.first() == Some(c) && glob_match(rest, &text[1..]),
    }
}

#[derive(Clone, Debug, Default)]
pub(super) struct Exclusions {
    pub(super) users: Vec<String>,
    pub(super) groups: Vec<String>,
    /// (namespace, name or `*`)
    pub(super) service_accounts: Vec<(String, String)>,
    pub(super) namespaces: Vec<Glob>,
}

impl Exclusions {
    pub(super) fn covers(&self, requester: &Requester, namespace: Option<&str>) -> bool {
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
pub(super) struct LabelSelector {
    pub(super) match_labels: Labels,
    pub(super) expressions: Vec<(String, SelectorOp, Vec<String>)>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum SelectorOp {
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

    pub(super) fn verdict(&self, labels: &Labels, what: &str) -> Verdict {
        if self.matches(labels) {
            Verdict::yes(format!("{what} match the selector"))
        } else {
            Verdict::no()
        }
    }
}
