//! The policy objects a replica has seen, each with the generation it has
//! in force: a generation that does not compile leaves the last good one
//! in force (and says why), so one bad edit never unloads a policy.
//!
//! Pure bookkeeping over watch events; [`super::cluster`] feeds it.

use std::collections::{BTreeMap, BTreeSet};

use crate::policy::crd::ForceDeletionPolicy;
use crate::policy::object;
use crate::policy::status::Compiled;
use crate::policy::{Policy, PolicySet};

/// One policy object and what this replica made of it.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The object as last seen (its status included).
    pub object: ForceDeletionPolicy,
    pub uid: String,
    /// `metadata.generation` of `object`.
    pub generation: i64,
    /// The generation in force and its compiled policy.
    pub in_force: Option<(i64, Policy)>,
    /// Why `generation` does not compile.
    pub error: Option<String>,
}

/// What an event changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changed {
    /// The policies in force.
    pub set: bool,
    /// A generation that does not compile: the object's name and why.
    pub failed: Option<(String, String)>,
}

/// Every policy object by name, and whether the first list has completed.
#[derive(Debug, Default)]
pub struct Store {
    entries: BTreeMap<String, Entry>,
    /// Names listed since the watch (re)started, until the list completes.
    relisted: Option<BTreeSet<String>>,
    synced: bool,
}

impl Store {
    /// An object was added or changed. Only a new generation (or a new
    /// object under the same name) is compiled; a status write is not.
    pub fn apply(&mut self, object: ForceDeletionPolicy) -> Changed {
        let name = object.metadata.name.clone().unwrap_or_default();
        let uid = object.metadata.uid.clone().unwrap_or_default();
        let generation = object.metadata.generation.unwrap_or(0);
        if let Some(seen) = &mut self.relisted {
            seen.insert(name.clone());
        }
        let previous = self.entries.remove(&name).filter(|e| e.uid == uid);
        if let Some(mut entry) = previous.clone().filter(|e| e.generation == generation) {
            entry.object = object;
            self.entries.insert(name, entry);
            return Changed::default();
        }
        let compiled = serde_json::to_value(&object)
            .map_err(|err| err.to_string())
            .and_then(|value| object::compile(&value).map_err(|p| object::describe(&p)));
        let (in_force, error, changed) = match compiled {
            Ok(policy) => (
                Some((generation, policy)),
                None,
                Changed {
                    set: true,
                    failed: None,
                },
            ),
            Err(error) => (
                previous.and_then(|e| e.in_force),
                Some(error.clone()),
                Changed {
                    set: false,
                    failed: Some((name.clone(), error)),
                },
            ),
        };
        self.entries.insert(
            name,
            Entry {
                object,
                uid,
                generation,
                in_force,
                error,
            },
        );
        changed
    }

    /// An object was deleted: its policy stops applying.
    pub fn delete(&mut self, name: &str) -> Changed {
        let removed = self.entries.remove(name);
        Changed {
            set: removed.is_some_and(|e| e.in_force.is_some()),
            failed: None,
        }
    }

    /// The watch restarted: a full list follows.
    pub fn relist(&mut self) {
        self.relisted = Some(BTreeSet::new());
    }

    /// The list completed: objects it did not hold were deleted meanwhile.
    pub fn listed(&mut self) -> Changed {
        let seen = self.relisted.take().unwrap_or_default();
        let gone: Vec<String> = self
            .entries
            .keys()
            .filter(|name| !seen.contains(*name))
            .cloned()
            .collect();
        let mut changed = Changed {
            set: !self.synced,
            failed: None,
        };
        for name in gone {
            changed.set |= self.delete(&name).set;
        }
        self.synced = true;
        changed
    }

    /// Whether the first list has completed.
    pub fn is_synced(&self) -> bool {
        self.synced
    }

    /// The policies in force, as the engine evaluates them.
    pub fn set(&self) -> PolicySet {
        let policies: Vec<Policy> = self
            .entries
            .values()
            .filter_map(|e| e.in_force.as_ref().map(|(_, p)| p.clone()))
            .collect();
        let sources = policies.iter().map(|p| p.file.clone()).collect();
        PolicySet::new(policies, sources)
    }

    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.values()
    }

    /// What this replica has in force, for its report to the status writer.
    pub fn report(&self) -> BTreeMap<String, Compiled> {
        self.entries
            .iter()
            .map(|(name, e)| {
                let compiled = Compiled {
                    uid: e.uid.clone(),
                    generation: e.in_force.as_ref().map(|(g, _)| *g),
                    observed: e.generation,
                    error: e.error.as_deref().map(Compiled::short),
                };
                (name.clone(), compiled)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
