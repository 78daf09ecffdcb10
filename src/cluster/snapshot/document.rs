//! One YAML/JSON document of a snapshot: a single object or a `List`.
//!
//! List items are decoded and slimmed one at a time while the document is
//! being parsed, so a 100 MB `kubectl get pods -A -o yaml` never exists as
//! one big value tree in memory.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::cluster::kind::Kind;
use crate::cluster::object::Object;

/// What one document contributed to the snapshot.
#[derive(Debug, Default)]
pub struct Document {
    pub objects: Vec<Object>,
    /// The item kind a typed list (`PodList`, `VolumeAttachmentList`, ...)
    /// declares present, even when it has no items.
    pub declared: Option<Kind>,
    /// `apiVersion/kind` of objects skipped because no fact reads them.
    pub skipped: Vec<String>,
}

impl<'de> serde::Deserialize<'de> for Document {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(DocumentVisitor)
    }
}

struct DocumentVisitor;

impl<'de> Visitor<'de> for DocumentVisitor {
    type Value = Document;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes object or List (a mapping with apiVersion and kind)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Document, A::Error> {
        let mut api_version: Option<String> = None;
        let mut kind: Option<String> = None;
        let mut items: Option<Items> = None;
        let mut rest = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "apiVersion" => api_version = map.next_value()?,
                "kind" => kind = map.next_value()?,
                "items" => {
                    // API server JSON names the list kind before `items`;
                    // kubectl YAML sorts `items` first but gives every item a kind.
                    let item_kind = kind.as_deref().and_then(|k| {
                        Kind::from_list_kind(api_version.as_deref().unwrap_or_default(), k)
                    });
                    items = Some(map.next_value_seed(ItemsSeed { item_kind })?);
                }
                _ => {
                    rest.insert(key, map.next_value::<Value>()?);
                }
            }
        }
        let api_version = api_version.unwrap_or_default();
        let Some(kind) = kind.filter(|k| !k.is_empty()) else {
            return Err(de::Error::custom(
                "document has no `kind`: expected a Kubernetes object or List",
            ));
        };
        if kind.ends_with("List") {
            let declared = Kind::from_list_kind(&api_version, &kind);
            let mut items = items.unwrap_or_default();
            for (index, item) in std::mem::take(&mut items.kindless).into_iter().enumerate() {
                match declared {
                    Some(item_kind) => items.objects.push(decode(item_kind, item, index)?),
                    None => items
                        .skipped
                        .push(format!("{api_version}/{kind} item without kind")),
                }
            }
            return Ok(Document {
                objects: items.objects,
                declared,
                skipped: items.skipped,
            });
        }
        match Kind::from_api(&api_version, &kind) {
            // No known kind has a top-level `items`; such a document is not ours.
            Some(known) if items.is_none() => Ok(Document {
                objects: vec![decode(known, Value::Object(rest), 0)?],
                ..Document::default()
            }),
            _ => Ok(Document {
                skipped: vec![format!("{api_version}/{kind}")],
                ..Document::default()
            }),
        }
    }
}

#[derive(Debug, Default)]
struct Items {
    objects: Vec<Object>,
    skipped: Vec<String>,
    /// Items without their own kind, decoded once the list kind is known.
    kindless: Vec<Value>,
}

struct ItemsSeed {
    /// Kind for items that carry none, when the list named it already.
    item_kind: Option<Kind>,
}

impl<'de> DeserializeSeed<'de> for ItemsSeed {
    type Value = Items;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Items, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ItemsSeed {
    type Value = Items;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a sequence of objects")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Items, E> {
        Ok(Items::default())
    }

    fn visit_none<E: de::Error>(self) -> Result<Items, E> {
        Ok(Items::default())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Items, A::Error> {
        let mut items = Items::default();
        let mut index = 0usize;
        while let Some(item) = seq.next_element::<Value>()? {
            let position = index;
            index += 1;
            if item.is_null() {
                continue;
            }
            let api_version = item
                .get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let kind = item.get("kind").and_then(Value::as_str).unwrap_or_default();
            if kind.is_empty() {
                match self.item_kind {
                    Some(item_kind) => items.objects.push(decode(item_kind, item, position)?),
                    None => items.kindless.push(item),
                }
                continue;
            }
            match Kind::from_api(api_version, kind) {
                Some(known) => items.objects.push(decode(known, item, position)?),
                None => items.skipped.push(format!("{api_version}/{kind}")),
            }
        }
        Ok(items)
    }
}

/// Decode and slim one object, naming it in the error when it is malformed.
fn decode<E: de::Error>(kind: Kind, value: Value, index: usize) -> Result<Object, E> {
    let name = value
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let namespace = value
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let what = match (namespace.is_empty(), name.is_empty()) {
        (_, true) => format!("{kind} (item {index})"),
        (true, false) => format!("{kind} {name}"),
        (false, false) => format!("{kind} {namespace}/{name}"),
    };
    if name.is_empty() {
        let message = match value.pointer("/metadata/name") {
            Some(other) if !other.is_null() => {
                format!("{what}: metadata.name is not a string: {other}")
            }
            _ => format!("{what} has no metadata.name"),
        };
        return Err(E::custom(message));
    }
    Object::from_value(kind, value).map_err(|err| E::custom(format!("{what}: {err}")))
}
