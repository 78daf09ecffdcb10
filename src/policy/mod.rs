//! ForceDeletionPolicy: the YAML policy language, its loader and evaluator.
//!
//! - [`model`]: the document types (serde + schemars → `policies/schema.json`).
//! - [`load`]: files and directories, all-or-nothing, `file:line:col` errors.
//! - [`catalog`]: the built-in facts `fact:` may name.
//! - [`condition`]: selections, operators, three-valued `all`/`any`/`not`.
//! - `path` and `context`: JSONPaths compiled at load, run on the
//!   evaluation context's roots, each turned into JSON when first read.
//! - [`message`]: templates, warning limits, audit annotation keys.
//! - [`watch`]: hot reload for `serve` that keeps the last good set.
//! - [`crd`], [`object`], [`webhook`]: policies as cluster objects, their
//!   CRD generated from the model, compiled by the same loader, checked at
//!   apply.
//! - [`source`]: the live source (a watch on the objects, per-object last
//!   good generation) and the replicas' reports; [`status`]: what the
//!   status writer puts on each object.
//!
//! Evaluation is pure: the same policies, facts and request always give the
//! same [`Decision`], which is what lets `review` match the server byte for
//! byte.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;

use crate::admission::Request;
use crate::decision::Decision;
use crate::facts::{Facts, Needs};
use crate::intent::Intent;
use reads::Reads;

pub mod catalog;
mod compile;
pub mod condition;
mod context;
pub mod crd;
mod error;
mod eval;
pub mod load;
mod matcher;
pub mod message;
pub mod metrics;
pub mod model;
pub mod object;
mod path;
mod reads;
pub mod source;
pub mod status;
mod unloaded;
pub mod watch;
pub mod webhook;

pub use compile::Policy;
pub use error::{Finding, PolicyError};
pub use eval::{BREAK_GLASS_ANNOTATION, describe_request};
pub use matcher::GATED_INTENTS;
pub use metrics::PolicyMetrics;

/// Everything one evaluation reads.
pub struct EvalInput<'a> {
    pub intent: &'a Intent,
    pub facts: &'a Facts,
    pub request: &'a Request,
    /// Members may break glass on objects annotated `forcegate.dev/break-glass`.
    pub break_glass_group: &'a str,
    pub now: Timestamp,
}

/// A loaded, validated set of policies (all-or-nothing), sorted by name.
#[derive(Clone, Debug, Default)]
pub struct PolicySet {
    policies: Vec<Policy>,
    /// Where the set came from, for logs.
    sources: Vec<PathBuf>,
    /// The optional fact groups some policy reads.
    needs: Needs,
    /// What of the evaluation context some policy reads.
    reads: Reads,
    /// Why no set is in force yet; every candidate is then denied as
    /// undecidable (see [`PolicySet::not_loaded`]).
    not_loaded: Option<Arc<str>>,
}

impl PolicySet {
    /// Load every policy file in `dir` (not suites, not hidden entries).
    pub fn load_dir(dir: &Path) -> Result<PolicySet, PolicyError> {
        let files = load::policy_files(dir)?;
        if files.is_empty() {
            return Err(PolicyError::Empty {
                path: dir.to_path_buf(),
            });
        }
        Self::load_files(&files)
    }

    /// Load exactly these files (directories are expanded) as one set.
    pub fn load_files(paths: &[PathBuf]) -> Result<PolicySet, PolicyError> {
        let files = load::expand(paths)?;
        let policies = load::load_files(&files)?;
        Ok(PolicySet::new(policies, files))
    }

    /// A set of compiled policies (sorted by name) from `sources`.
    pub(crate) fn new(policies: Vec<Policy>, sources: Vec<PathBuf>) -> PolicySet {
        let needs = Needs {
            endpoints: policies.iter().any(|p| p.may_read("endpoints")),
        };
        let mut reads = Reads::default();
        policies.iter().for_each(|policy| policy.reads(&mut reads));
        PolicySet {
            policies,
            sources,
            needs,
            reads,
            not_loaded: None,
        }
    }

    /// No policies yet, and why (a source that has not synced). Unlike an
    /// empty set, which allows everything, this decides nothing: every
    /// candidate is denied as undecidable until a set is loaded.
    pub fn not_loaded(reason: impl Into<Arc<str>>) -> PolicySet {
        PolicySet {
            not_loaded: Some(reason.into()),
            ..PolicySet::default()
        }
    }

    /// Why the set is not loaded yet, if it is not.
    pub fn loading(&self) -> Option<&str> {
        self.not_loaded.as_deref()
    }

    /// The optional fact groups to gather for this set: the ones some
    /// policy may read.
    pub fn needs(&self) -> Needs {
        self.needs
    }

    /// Policy names, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.policies.iter().map(|p| &*p.name).collect()
    }

    pub fn len(&self) -> usize {
        self.policies.len()
    }

    pub fn is_empty(&self) -> bool {
        self.policies.is_empty()
    }

    pub fn policies(&self) -> &[Policy] {
        &self.policies
    }

    /// The files the set was loaded from.
    pub fn sources(&self) -> &[PathBuf] {
        &self.sources
    }

    /// Run every matching policy; the most severe action wins.
    pub fn evaluate(&self, input: &EvalInput<'_>) -> Decision {
        match &self.not_loaded {
            Some(reason) => unloaded::decision(input, reason),
            None => eval::evaluate(&self.policies, &self.reads, input),
        }
    }
}

#[cfg(test)]
mod tests;
