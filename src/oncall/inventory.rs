//! Raw objects, as `kubectl get -o yaml|json` writes them, from snapshot
//! files or one-shot API lists: what `stuck` builds its evidence from and
//! `explain` finds its target in.
//!
//! Like the snapshot cluster view, an inventory knows a kind only by
//! containing it (or an empty typed list of it): evidence from a kind that
//! is not [complete](Inventory::complete) is "unknown", never "none".

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use super::OncallError;

/// Objects (each with `apiVersion` and `kind`) and what is known of them.
#[derive(Clone, Debug, Default)]
pub struct Inventory {
    pub objects: Vec<Value>,
    /// Kinds all of whose objects are here (in the scope read), as
    /// `Kind.group` (`Pod`, `Deployment.apps`).
    pub complete: BTreeSet<String>,
    /// What could not be read, and why.
    pub gaps: Vec<Gap>,
}

/// Something that could not be read: a kind (forbidden, failed list) or an
/// API group whose discovery failed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Gap {
    pub what: String,
    pub reason: String,
}

/// `Kind.group`, or `Kind` for the core group, as kubectl names kinds.
pub fn group_kind(api_version: &str, kind: &str) -> String {
    match api_version.rsplit_once('/') {
        Some((group, _)) if !group.is_empty() => format!("{kind}.{group}"),
        _ => kind.to_owned(),
    }
}

/// The API group of an `apiVersion` (`""` for core).
pub fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// A string member at `path`, or `""`.
pub fn str_at<'a>(value: &'a Value, path: &[&str]) -> &'a str {
    path.iter()
        .try_fold(value, |v, key| v.get(key))
        .and_then(Value::as_str)
        .unwrap_or("")
}

impl Inventory {
    /// Read snapshot files (YAML, multi-document, or JSON; objects or Lists).
    pub fn from_files(files: &[impl AsRef<Path>]) -> Result<Inventory, OncallError> {
        let mut inventory = Inventory::default();
        for file in files {
            let file = file.as_ref();
            let text = std::fs::read_to_string(file)
                .map_err(|e| OncallError::Input(format!("{}: {e}", file.display())))?;
            for document in parse(file, &text)? {
                inventory.add_document(document);
            }
        }
        Ok(inventory)
    }

    /// Add one object, or each item of a `List` (a typed list declares its
    /// item kind complete even when empty, as the snapshot view does).
    pub fn add_document(&mut self, document: Value) {
        let api_version = str_at(&document, &["apiVersion"]).to_owned();
        let kind = str_at(&document, &["kind"]).to_owned();
        let Some(list_kind) = kind.strip_suffix("List") else {
            if !kind.is_empty() {
                self.complete.insert(group_kind(&api_version, &kind));
                self.objects.push(document);
            }
            return;
        };
        let typed = !list_kind.is_empty();
        if typed {
            self.complete.insert(group_kind(&api_version, list_kind));
        }
        let Some(Value::Array(items)) = document.get("items").cloned() else {
            return;
        };
        for mut item in items {
            if typed && let Some(map) = item.as_object_mut() {
                map.entry("apiVersion")
                    .or_insert_with(|| Value::String(api_version.clone()));
                map.entry("kind")
                    .or_insert_with(|| Value::String(list_kind.to_owned()));
            }
            self.add_document(item);
        }
    }

    /// Objects of `kind` in API group `group`.
    pub fn of_kind<'a>(&'a self, group: &'a str, kind: &'a str) -> impl Iterator<Item = &'a Value> {
        self.objects.iter().filter(move |o| {
            str_at(o, &["kind"]) == kind && group_of(str_at(o, &["apiVersion"])) == group
        })
    }
}

fn parse(file: &Path, text: &str) -> Result<Vec<Value>, OncallError> {
    let bad = |message: String| OncallError::Input(format!("{}: {message}", file.display()));
    if file.extension().and_then(|e| e.to_str()) == Some("json") {
        return serde_json::Deserializer::from_str(text)
            .into_iter::<Value>()
            .collect::<Result<_, _>>()
            .map_err(|e| bad(e.to_string()));
    }
    let documents: Vec<Value> =
        serde_saphyr::from_multiple_with_options(text, crate::cluster::snapshot::yaml_options())
            .map_err(|e| bad(e.to_string().lines().next().unwrap_or_default().to_owned()))?;
    Ok(documents.into_iter().filter(|d| !d.is_null()).collect())
}

#[cfg(test)]
mod tests;
