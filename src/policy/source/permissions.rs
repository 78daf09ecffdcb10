//! May forcegate read what a policy's facts come from? Asked with
//! SelfSubjectAccessReviews (list and watch, cluster-wide: what the live
//! cluster view does), which every authenticated identity may create.
//!
//! Answers are kept for [`RECHECK`]; a policy generation not checked yet
//! is checked afresh, so an edit (or a new policy) reflects RBAC as it is.

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use kube::Client;
use kube::api::{Api, PostParams};

use crate::cluster::Kind;
use crate::policy::Policy;
use crate::policy::catalog::GROUPS;
use crate::policy::status::Permissions;

/// How long an answer is trusted.
pub const RECHECK: Duration = Duration::from_secs(300);

/// The kinds `policy`'s facts are gathered from, sorted.
pub fn kinds_read_by(policy: &Policy) -> Vec<Kind> {
    let kinds: BTreeSet<Kind> = GROUPS
        .iter()
        .filter(|group| policy.may_read(group))
        .flat_map(|group| Kind::for_fact_group(group))
        .collect();
    kinds.into_iter().collect()
}

/// SelfSubjectAccessReviews with a cache.
pub struct Checker {
    api: Api<SelfSubjectAccessReview>,
    answers: HashMap<Kind, (bool, Instant)>,
    /// (uid, generation) of the policies checked afresh already.
    checked: BTreeSet<(String, i64)>,
}

impl Checker {
    pub fn new(client: Client) -> Self {
        Self {
            api: Api::all(client),
            answers: HashMap::new(),
            checked: BTreeSet::new(),
        }
    }

    /// Remember only these policy generations as checked.
    pub fn keep(&mut self, current: BTreeSet<(String, i64)>) {
        self.checked.retain(|seen| current.contains(seen));
    }

    /// Which of `kinds` forcegate may not list and watch, for the policy
    /// generation `(uid, generation)`.
    pub async fn check(&mut self, kinds: &[Kind], uid: &str, generation: i64) -> Permissions {
        let fresh = self.checked.insert((uid.to_owned(), generation));
        let mut missing = Vec::new();
        for kind in kinds {
            let known = self
                .answers
                .get(kind)
                .filter(|(_, at)| !fresh && at.elapsed() < RECHECK)
                .map(|(allowed, _)| *allowed);
            let allowed = match known {
                Some(allowed) => allowed,
                None => match self.may_list_and_watch(*kind).await {
                    Ok(allowed) => {
                        self.answers.insert(*kind, (allowed, Instant::now()));
                        allowed
                    }
                    Err(err) => {
                        self.checked.remove(&(uid.to_owned(), generation));
                        return Permissions::Unknown(format!(
                            "could not ask the API server whether forcegate may read {}: {err}",
                            kind.qualified_resource()
                        ));
                    }
                },
            };
            if !allowed {
                missing.push(kind.qualified_resource());
            }
        }
        if missing.is_empty() {
            Permissions::Granted
        } else {
            Permissions::Missing(missing)
        }
    }

    async fn may_list_and_watch(&self, kind: Kind) -> Result<bool, kube::Error> {
        for verb in ["list", "watch"] {
            let review = SelfSubjectAccessReview {
                spec: SelfSubjectAccessReviewSpec {
                    resource_attributes: Some(ResourceAttributes {
                        group: Some(kind.group().to_owned()),
                        resource: Some(kind.resource().to_owned()),
                        verb: Some(verb.to_owned()),
                        ..ResourceAttributes::default()
                    }),
                    ..SelfSubjectAccessReviewSpec::default()
                },
                ..SelfSubjectAccessReview::default()
            };
            let answer = self.api.create(&PostParams::default(), &review).await?;
            if !answer.status.is_some_and(|s| s.allowed) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests;
