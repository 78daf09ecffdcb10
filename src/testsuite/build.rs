//! Shorthand cases → the AdmissionReview the API server would send.
//!
//! The reviews are shaped like real ones (see tests/fixtures/reviews): the
//! object as stored goes in `oldObject`, DELETE carries the adjusted
//! DeleteOptions, evictions are `pods/eviction` CREATEs with an Eviction
//! body, finalizer strips are UPDATEs, namespace finalize is an UPDATE on
//! `namespaces/finalize` whose request namespace is the namespace itself.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::model::{Case, FinalizeRequest, PodRequest, StripRequest};

/// Build the review for a shorthand case. `objects` is the cluster as the
/// case sees it (later entries win). `Ok(None)`: the case names a file.
pub fn shorthand(case: &Case, objects: &[Value], uid: &str) -> Result<Option<Value>, String> {
    let given = [
        case.review.is_some(),
        case.force_delete.is_some(),
        case.evict.is_some(),
        case.strip_finalizers.is_some(),
        case.finalize_namespace.is_some(),
    ];
    if given.iter().filter(|g| **g).count() != 1 {
        return Err(
            "a case needs exactly one of review, forceDelete, evict, stripFinalizers, finalizeNamespace"
                .into(),
        );
    }
    let review = if let Some(request) = &case.force_delete {
        force_delete(request, objects, uid, case.dry_run)?
    } else if let Some(request) = &case.evict {
        evict(request, objects, uid, case.dry_run)
    } else if let Some(request) = &case.strip_finalizers {
        strip(request, objects, uid, case.dry_run)?
    } else if let Some(request) = &case.finalize_namespace {
        finalize(request, objects, uid, case.dry_run)?
    } else {
        return Ok(None);
    };
    Ok(Some(review))
}

/// A deterministic UUID-shaped request uid, so outputs are reproducible.
pub fn request_uid(seed: &str) -> String {
    let a = fnv(seed.as_bytes(), 0xcbf2_9ce4_8422_2325);
    let b = fnv(seed.as_bytes(), 0x8422_2325_cbf2_9ce4);
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        b >> 52,
        b & 0xffff_ffff_ffff
    )
}

fn fnv(bytes: &[u8], basis: u64) -> u64 {
    bytes.iter().fold(basis, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Naive English plural of a kind, as resource names are formed.
fn plural(kind: &str) -> String {
    let lower = kind.to_lowercase();
    if lower.ends_with("ss") || lower.ends_with('x') || lower.ends_with("ch") {
        format!("{lower}es")
    } else if lower.ends_with('s') {
        lower
    } else if let Some(stem) = lower.strip_suffix('y') {
        format!("{stem}ies")
    } else {
        format!("{lower}s")
    }
}

fn api_group(api_version: &str) -> (&str, &str) {
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}

fn meta_str<'v>(object: &'v Value, field: &str) -> Option<&'v str> {
    object.get("metadata")?.get(field)?.as_str()
}

/// Find an object by plural resource (optionally `resource.group`),
/// namespace and name; the last definition wins.
fn find<'v>(
    objects: &'v [Value],
    resource: &str,
    namespace: Option<&str>,
    name: &str,
) -> Option<&'v Value> {
    let (resource, group) = match resource.split_once('.') {
        Some((r, g)) => (r, Some(g)),
        None => (resource, None),
    };
    objects.iter().rev().find(|o| {
        let kind = o.get("kind").and_then(Value::as_str).unwrap_or_default();
        let api_version = o
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        plural(kind) == resource
            && group.is_none_or(|g| api_group(api_version).0 == g)
            && meta_str(o, "name") == Some(name)
            && meta_str(o, "namespace").filter(|n| !n.is_empty()) == namespace
    })
}

fn with_groups(groups: &[String]) -> Vec<String> {
    let mut all = groups.to_vec();
    if !all.iter().any(|g| g == "system:authenticated") {
        all.push("system:authenticated".into());
    }
    all
}

fn annotate(object: &mut Value, annotations: &BTreeMap<String, String>) {
    if annotations.is_empty() {
        return;
    }
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        let entry = meta
            .entry("annotations")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(map) = entry.as_object_mut() {
            for (k, v) in annotations {
                map.insert(k.clone(), v.clone().into());
            }
        }
    }
}

struct Review<'a> {
    uid: &'a str,
    kind: (&'a str, &'a str, &'a str),
    resource: (&'a str, &'a str, &'a str),
    subresource: Option<&'a str>,
    name: &'a str,
    namespace: Option<&'a str>,
    operation: &'a str,
    user: &'a str,
    groups: Vec<String>,
    object: Value,
    old_object: Value,
    dry_run: bool,
    options: Value,
}

impl Review<'_> {
    fn into_json(self) -> Value {
        let kind = json!({"group": self.kind.0, "version": self.kind.1, "kind": self.kind.2});
        let resource = json!({"group": self.resource.0, "version": self.resource.1, "resource": self.resource.2});
        let mut request = json!({
            "uid": self.uid,
            "kind": kind,
            "resource": resource,
            "requestKind": kind,
            "requestResource": resource,
            "name": self.name,
            "operation": self.operation,
            "userInfo": {"username": self.user, "groups": self.groups},
            "object": self.object,
            "oldObject": self.old_object,
            "dryRun": self.dry_run,
            "options": self.options,
        });
        if let Some(map) = request.as_object_mut() {
            if let Some(sub) = self.subresource {
                map.insert("subResource".into(), sub.into());
                map.insert("requestSubResource".into(), sub.into());
            }
            if let Some(ns) = self.namespace {
                map.insert("namespace".into(), ns.into());
            }
        }
        json!({"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": request})
    }
}

fn force_delete(
    r: &PodRequest,
    objects: &[Value],
    uid: &str,
    dry_run: bool,
) -> Result<Value, String> {
    let mut pod = find(objects, "pods", Some(&r.namespace), &r.name)
        .cloned()
        .ok_or_else(|| {
            format!(
                "forceDelete: pod {}/{} is not among the cluster objects (a DELETE always carries the pod)",
                r.namespace, r.name
            )
        })?;
    annotate(&mut pod, &r.annotations);
    let mut options = json!({
        "kind": "DeleteOptions",
        "apiVersion": "meta.k8s.io/v1",
        "gracePeriodSeconds": r.grace_period_seconds.unwrap_or(0),
        "propagationPolicy": "Background",
    });
    if r.uid_precondition
        && let (Some(map), Some(pod_uid)) = (options.as_object_mut(), meta_str(&pod, "uid"))
    {
        map.insert("preconditions".into(), json!({"uid": pod_uid}));
    }
    Ok(Review {
        uid,
        kind: ("", "v1", "Pod"),
        resource: ("", "v1", "pods"),
        subresource: None,
        name: &r.name,
        namespace: Some(&r.namespace),
        operation: "DELETE",
        user: &r.user,
        groups: with_groups(&r.groups),
        object: Value::Null,
        old_object: pod,
        dry_run,
        options,
    }
    .into_json())
}

fn evict(r: &PodRequest, objects: &[Value], uid: &str, dry_run: bool) -> Value {
    let mut delete_options = json!({
        "kind": "DeleteOptions",
        "apiVersion": "meta.k8s.io/v1",
        "gracePeriodSeconds": r.grace_period_seconds.unwrap_or(0),
    });
    let pod = find(objects, "pods", Some(&r.namespace), &r.name);
    if r.uid_precondition
        && let (Some(map), Some(pod_uid)) = (
            delete_options.as_object_mut(),
            pod.and_then(|p| meta_str(p, "uid")),
        )
    {
        map.insert("preconditions".into(), json!({"uid": pod_uid}));
    }
    let mut eviction = json!({
        "kind": "Eviction",
        "apiVersion": "policy/v1",
        "metadata": {"name": r.name, "namespace": r.namespace, "creationTimestamp": null},
        "deleteOptions": delete_options,
    });
    annotate(&mut eviction, &r.annotations);
    Review {
        uid,
        kind: ("policy", "v1", "Eviction"),
        resource: ("", "v1", "pods"),
        subresource: Some("eviction"),
        name: &r.name,
        namespace: Some(&r.namespace),
        operation: "CREATE",
        user: &r.user,
        groups: with_groups(&r.groups),
        object: eviction,
        old_object: Value::Null,
        dry_run,
        options: json!({"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}),
    }
    .into_json()
}

fn strip(r: &StripRequest, objects: &[Value], uid: &str, dry_run: bool) -> Result<Value, String> {
    let resource = r.resource.as_deref().unwrap_or("pods");
    let namespace = r.namespace.as_deref();
    let mut old = match &r.object {
        Some(object) => object.clone(),
        None => find(objects, resource, namespace, &r.name)
            .cloned()
            .ok_or_else(|| {
                format!(
                    "stripFinalizers: {resource} {}{} is not among the cluster objects; add it or give `object`",
                    namespace.map(|n| format!("{n}/")).unwrap_or_default(),
                    r.name
                )
            })?,
    };
    annotate(&mut old, &r.annotations);
    let current: Vec<String> = old
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let remaining: Vec<String> = match (&r.finalizers, &r.keep) {
        (Some(_), Some(_)) => {
            return Err("stripFinalizers: give `finalizers` or `keep`, not both".into());
        }
        (Some(remove), None) => {
            if let Some(missing) = remove.iter().find(|f| !current.contains(f)) {
                return Err(format!(
                    "stripFinalizers: {missing} is not among the object's finalizers {current:?}"
                ));
            }
            current
                .iter()
                .filter(|f| !remove.contains(f))
                .cloned()
                .collect()
        }
        (None, Some(keep)) => current
            .iter()
            .filter(|f| keep.contains(f))
            .cloned()
            .collect(),
        (None, None) => Vec::new(),
    };
    let mut new = old.clone();
    if let Some(meta) = new.get_mut("metadata").and_then(Value::as_object_mut) {
        if remaining.is_empty() {
            meta.remove("finalizers");
        } else {
            meta.insert("finalizers".into(), json!(remaining));
        }
    }
    let api_version = old
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("v1")
        .to_string();
    let kind = old
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let (group, version) = api_group(&api_version);
    let plural_resource = resource.split_once('.').map_or(resource, |(r, _)| r);
    let name = r.name.clone();
    let request_namespace = if plural_resource == "namespaces" {
        Some(name.as_str())
    } else {
        namespace
    };
    Ok(Review {
        uid,
        kind: (group, version, &kind),
        resource: (group, version, plural_resource),
        subresource: r.subresource.as_deref(),
        name: &name,
        namespace: request_namespace,
        operation: "UPDATE",
        user: &r.user,
        groups: with_groups(&r.groups),
        object: new,
        old_object: old.clone(),
        dry_run,
        options: json!({"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "kubectl-patch"}),
    }
    .into_json())
}

fn finalize(
    r: &FinalizeRequest,
    objects: &[Value],
    uid: &str,
    dry_run: bool,
) -> Result<Value, String> {
    let mut old = find(objects, "namespaces", None, &r.name)
        .cloned()
        .ok_or_else(|| {
            format!(
                "finalizeNamespace: namespace {} is not among the cluster objects",
                r.name
            )
        })?;
    annotate(&mut old, &r.annotations);
    let mut new = old.clone();
    match new.as_object_mut() {
        Some(map) => {
            let spec = map.entry("spec").or_insert_with(|| json!({}));
            if let Some(spec) = spec.as_object_mut() {
                spec.insert("finalizers".into(), json!(r.keep));
            }
        }
        None => {
            return Err(format!(
                "finalizeNamespace: namespace {} is not an object",
                r.name
            ));
        }
    }
    Ok(Review {
        uid,
        kind: ("", "v1", "Namespace"),
        resource: ("", "v1", "namespaces"),
        subresource: Some("finalize"),
        name: &r.name,
        namespace: Some(&r.name),
        operation: "UPDATE",
        user: &r.user,
        groups: with_groups(&r.groups),
        object: new,
        old_object: old,
        dry_run,
        options: json!({"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"}),
    }
    .into_json())
}

#[cfg(test)]
mod tests;
