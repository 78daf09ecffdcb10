//! Objects of a request (`object`, `oldObject`) read as their typed kinds.

use kube::core::DynamicObject;
use serde::de::value::MapDeserializer;
use serde_json::Value;

/// A request object without type information is taken to be the kind asked.
pub(super) fn is_kind(object: &DynamicObject, kind: &str) -> bool {
    object.types.as_ref().is_none_or(|t| t.kind == kind)
}

/// Decode a request object of `kind` into its k8s-openapi type; `None` when
/// absent or another kind.
pub(super) fn request_object<T>(object: Option<&DynamicObject>, kind: &str) -> Option<T>
where
    T: kube::Resource + serde::de::DeserializeOwned,
{
    let object = object.filter(|o| is_kind(o, kind))?;
    // Deserialize straight from the borrowed fields: `try_parse` would clone
    // the whole object and re-serialize it into a fresh `Value` first.
    let Value::Object(fields) = &object.data else {
        return None;
    };
    let metadata = serde_json::to_value(&object.metadata).ok()?;
    let types: Vec<(&str, Value)> = object
        .types
        .iter()
        .flat_map(|t| {
            [
                ("apiVersion", Value::String(t.api_version.clone())),
                ("kind", Value::String(t.kind.clone())),
            ]
        })
        .collect();
    let entries = fields
        .iter()
        .filter(|(key, _)| !matches!(key.as_str(), "apiVersion" | "kind" | "metadata"))
        .map(|(key, value)| (key.as_str(), value))
        .chain(types.iter().map(|(key, value)| (*key, value)))
        .chain(std::iter::once(("metadata", &metadata)));
    T::deserialize(MapDeserializer::<_, serde_json::Error>::new(entries)).ok()
}
