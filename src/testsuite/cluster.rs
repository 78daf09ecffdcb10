//! A suite's cluster: snapshot files and inline objects → a [`SnapshotCluster`].
//!
//! Suites default to a *complete* snapshot (every kind forcegate knows is
//! present, even with no objects) so a case only lists the objects that
//! matter; `missingKinds` takes kinds away to exercise `onUnknown`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::cluster::{Kind, Object, SnapshotCluster};
use crate::policy::load::yaml_options;

/// Read snapshot files (YAML multi-document or JSON) into objects, Lists
/// expanded, in order.
pub fn read_files(files: &[PathBuf]) -> Result<Vec<Value>, String> {
    let mut objects = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let docs: Vec<Value> = serde_saphyr::from_str_multiple_with_options(&text, yaml_options())
            .map_err(|e| {
                let (line, column, reason) = crate::policy::load::located_error(e);
                format!("{}:{line}:{column}: {reason}", file.display())
            })?;
        for doc in docs {
            expand_list(doc, &mut objects);
        }
    }
    Ok(objects)
}

/// Files and directories (searched recursively for .yaml/.yml/.json).
pub fn collect(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for path in paths {
        walk(path, &mut files)?;
    }
    Ok(files)
}

fn walk(path: &Path, files: &mut Vec<PathBuf>) -> Result<(), String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.is_dir() {
        files.push(path.to_path_buf());
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for entry in entries {
        let name = entry
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if name.starts_with('.') {
            continue;
        }
        if entry.is_dir() {
            walk(&entry, files)?;
        } else if name.ends_with(".yaml") || name.ends_with(".yml") || name.ends_with(".json") {
            files.push(entry);
        }
    }
    Ok(())
}

fn expand_list(doc: Value, out: &mut Vec<Value>) {
    let is_list = doc
        .get("kind")
        .and_then(Value::as_str)
        .is_some_and(|k| k.ends_with("List"))
        && doc.get("items").is_some_and(Value::is_array);
    if !is_list {
        if !doc.is_null() {
            out.push(doc);
        }
        return;
    }
    let api_version = doc
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("v1")
        .to_string();
    let list_kind = doc
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let item_kind = list_kind
        .strip_suffix("List")
        .unwrap_or_default()
        .to_string();
    if let Some(Value::Array(items)) = doc.get("items").cloned() {
        if items.is_empty() && list_kind != "List" {
            // A typed empty list declares its kind present.
            out.push(
                serde_json::json!({"apiVersion": api_version, "kind": list_kind, "items": []}),
            );
        }
        for mut item in items {
            if let Some(map) = item.as_object_mut()
                && list_kind != "List"
            {
                map.entry("apiVersion")
                    .or_insert_with(|| api_version.clone().into());
                map.entry("kind")
                    .or_insert_with(|| item_kind.clone().into());
            }
            out.push(item);
        }
    }
}

/// Parse kind names as written in `missingKinds`.
pub fn parse_kind(name: &str) -> Option<Kind> {
    Kind::ALL.into_iter().find(|k| k.name() == name)
}

/// Build the view. Objects of kinds no fact reads are skipped (they can
/// still be the target of a `stripFinalizers` case), and so are objects of
/// `missing` kinds: the snapshot behaves as if they were never collected.
pub fn snapshot(
    objects: &[Value],
    all_kinds_known: bool,
    missing: &[Kind],
) -> Result<SnapshotCluster, String> {
    let mut decoded = Vec::new();
    let mut declared: Vec<Kind> = Vec::new();
    if all_kinds_known {
        declared.extend(Kind::ALL.into_iter().filter(|k| !missing.contains(k)));
    }
    for (i, object) in objects.iter().enumerate() {
        let api_version = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let kind_name = object
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if let Some(kind) = Kind::from_list_kind(api_version, kind_name)
            && object
                .get("items")
                .is_some_and(|i| i.as_array().is_some_and(Vec::is_empty))
        {
            if !missing.contains(&kind) {
                declared.push(kind);
            }
            continue;
        }
        let Some(kind) = Kind::from_api(api_version, kind_name) else {
            continue;
        };
        if missing.contains(&kind) {
            continue;
        }
        let name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("<unnamed>");
        let object = Object::from_value(kind, object.clone())
            .map_err(|e| format!("cluster object #{} ({kind_name} {name}): {e}", i + 1))?;
        decoded.push(object);
    }
    Ok(SnapshotCluster::from_objects(decoded, declared))
}

#[cfg(test)]
mod tests;
