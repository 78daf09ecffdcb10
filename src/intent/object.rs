//! Reading the few fields classification needs from dynamic objects.

use kube::core::DynamicObject;

/// A string field by JSON pointer into the object's body (not metadata).
pub(super) fn str_at<'a>(object: &'a DynamicObject, pointer: &str) -> Option<&'a str> {
    object
        .data
        .pointer(pointer)
        .and_then(serde_json::Value::as_str)
        .filter(|s| !s.is_empty())
}

/// `Succeeded` or `Failed`: the kubelet is done with the pod.
pub(super) fn terminal_phase(pod: &DynamicObject) -> Option<&str> {
    str_at(pod, "/status/phase").filter(|phase| matches!(*phase, "Succeeded" | "Failed"))
}

/// A finalizer list in the body (e.g. a namespace's `spec.finalizers`);
/// missing or null reads as empty.
pub(super) fn finalizers(object: Option<&DynamicObject>, pointer: &str) -> Vec<String> {
    object
        .and_then(|o| o.data.pointer(pointer))
        .and_then(serde_json::Value::as_array)
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
