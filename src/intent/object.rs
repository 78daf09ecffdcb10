//! Reading the few fields classification needs from dynamic objects.

use kube::core::DynamicObject;
use serde_json::Value;

/// The member at `path` (member names, outermost first) of the object's
/// body (not metadata). serde_json's `Value::pointer` unescapes each token
/// of its pointer into two new `String`s: half of classifying a force
/// delete went there.
pub(super) fn at<'a>(object: &'a DynamicObject, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(&object.data, |value, member| {
        value.as_object()?.get(*member)
    })
}

/// A non-empty string member at `path` of the object's body.
pub(super) fn str_at<'a>(object: &'a DynamicObject, path: &[&str]) -> Option<&'a str> {
    at(object, path)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// `Succeeded` or `Failed`: the kubelet is done with the pod.
pub(super) fn terminal_phase(pod: &DynamicObject) -> Option<&str> {
    str_at(pod, &["status", "phase"]).filter(|phase| matches!(*phase, "Succeeded" | "Failed"))
}

/// A finalizer list in the body (e.g. a namespace's `spec.finalizers`);
/// missing or null reads as empty.
pub(super) fn finalizers(object: Option<&DynamicObject>, path: &[&str]) -> Vec<String> {
    object
        .and_then(|o| at(o, path))
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(serde_json::Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Entries of `before` missing from `after`, in `before`'s order, once each.
pub(super) fn removed(before: &[String], after: &[String]) -> Vec<String> {
    let mut removed: Vec<String> = Vec::new();
    for finalizer in before {
        if !after.contains(finalizer) && !removed.contains(finalizer) {
            removed.push(finalizer.clone());
        }
    }
    removed
}

#[cfg(test)]
mod tests;
