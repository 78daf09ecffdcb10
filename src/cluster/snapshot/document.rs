//! One YAML/JSON document of a snapshot: a single object or a `List`.
//!
//! Objects are decoded one at a time while the document is parsed, straight
//! into their typed form when `apiVersion` and `kind` come first (as kubectl
//! and the API server write them), so a 100 MB `kubectl get pods -A -o yaml`
//! never exists as one big value tree in memory. Hand-written objects with
//! other key orders go through a `serde_json::Value` first.

use std::fmt;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::storage::v1::VolumeAttachment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
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

impl<'de> Deserialize<'de> for Document {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(DocumentVisitor)
    }
}

/// The first keys of a mapping, read until both `apiVersion` and `kind` are
/// known or another key shows up.
#[derive(Default)]
struct Head {
    api_version: Option<String>,
    kind: Option<String>,
    /// Keys read before the type was known (slow path).
    rest: serde_json::Map<String, Value>,
}

impl Head {
    fn known(&self) -> bool {
        self.api_version.is_some() && self.kind.is_some()
    }
}

struct DocumentVisitor;

impl<'de> Visitor<'de> for DocumentVisitor {
    type Value = Document;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes object or List (a mapping with apiVersion and kind)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Document, A::Error> {
        let mut head = Head::default();
        let mut items: Option<Items> = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "apiVersion" => head.api_version = map.next_value()?,
                "kind" => head.kind = map.next_value()?,
                "items" => {
                    // API server JSON names the list kind before `items`;
                    // kubectl YAML sorts `items` first but gives every item a kind.
                    let item_kind = head.kind.as_deref().and_then(|k| {
                        Kind::from_list_kind(head.api_version.as_deref().unwrap_or_default(), k)
                    });
                    items = Some(map.next_value_seed(ItemsSeed { item_kind })?);
                }
                _ => {
                    head.rest.insert(key, map.next_value::<Value>()?);
                }
            }
            // Fast path: a single object whose type came first.
            if head.known() && head.rest.is_empty() && items.is_none() {
                let api_version = head.api_version.clone().unwrap_or_default();
                let kind = head.kind.clone().unwrap_or_default();
                if !kind.ends_with("List") {
                    return match Kind::from_api(&api_version, &kind) {
                        Some(known) => Ok(Document {
                            objects: vec![decode_rest(known, map, None)?],
                            ..Document::default()
                        }),
                        None => {
                            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                            Ok(Document {
                                skipped: vec![format!("{api_version}/{kind}")],
                                ..Document::default()
                            })
                        }
                    };
                }
            }
        }
        finish_document(head, items)
    }
}

fn finish_document<E: de::Error>(head: Head, items: Option<Items>) -> Result<Document, E> {
    let api_version = head.api_version.unwrap_or_default();
    let Some(kind) = head.kind.filter(|k| !k.is_empty()) else {
        return Err(E::custom(
            "document has no `kind`: expected a Kubernetes object or List",
        ));
    };
    if kind.ends_with("List") {
        let declared = Kind::from_list_kind(&api_version, &kind);
        let mut items = items.unwrap_or_default();
        for (index, item) in std::mem::take(&mut items.kindless) {
            match declared {
                Some(item_kind) => items
                    .objects
                    .push(decode_value(item_kind, item, Some(index))?),
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
            objects: vec![decode_value(known, Value::Object(head.rest), None)?],
            ..Document::default()
        }),
        _ => Ok(Document {
            skipped: vec![format!("{api_version}/{kind}")],
            ..Document::default()
        }),
    }
}

#[derive(Debug, Default)]
struct Items {
    objects: Vec<Object>,
    skipped: Vec<String>,
    /// Items without their own kind (and their position), decoded once the
    /// list kind is known.
    kindless: Vec<(usize, Value)>,
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
        while let Some(item) = seq.next_element_seed(ItemSeed {
            item_kind: self.item_kind,
            index,
        })? {
            match item {
                Item::Object(object) => items.objects.push(object),
                Item::Skipped(what) => items.skipped.push(what),
                Item::Kindless(value) => items.kindless.push((index, value)),
                Item::Null => {}
            }
            index += 1;
        }
        Ok(items)
    }
}

enum Item {
    Object(Object),
    Skipped(String),
    Kindless(Value),
    Null,
}

struct ItemSeed {
    item_kind: Option<Kind>,
    index: usize,
}

impl<'de> DeserializeSeed<'de> for ItemSeed {
    type Value = Item;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Item, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ItemSeed {
    type Value = Item;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Item, E> {
        Ok(Item::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Item, E> {
        Ok(Item::Null)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Item, A::Error> {
        let mut head = Head::default();
        while !head.known() {
            let Some(key) = map.next_key::<String>()? else {
                break;
            };
            match key.as_str() {
                "apiVersion" => head.api_version = map.next_value()?,
                "kind" => head.kind = map.next_value()?,
                _ => {
                    head.rest.insert(key, map.next_value::<Value>()?);
                }
            }
        }
        let api_version = head.api_version.clone().unwrap_or_default();
        let kind = head.kind.clone().unwrap_or_default();
        let known = if kind.is_empty() {
            self.item_kind
        } else {
            Kind::from_api(&api_version, &kind)
        };
        match known {
            Some(known) if head.rest.is_empty() => {
                decode_rest(known, map, Some(self.index)).map(Item::Object)
            }
            Some(known) => {
                let value = collect_rest(head.rest, map)?;
                decode_value(known, value, Some(self.index)).map(Item::Object)
            }
            None if kind.is_empty() => Ok(Item::Kindless(collect_rest(head.rest, map)?)),
            None => {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Item::Skipped(format!("{api_version}/{kind}")))
            }
        }
    }
}

fn collect_rest<'de, A: MapAccess<'de>>(
    mut rest: serde_json::Map<String, Value>,
    mut map: A,
) -> Result<Value, A::Error> {
    while let Some((key, value)) = map.next_entry::<String, Value>()? {
        rest.insert(key, value);
    }
    Ok(Value::Object(rest))
}

/// Metadata-only kinds: everything but `metadata` is skipped unread.
#[derive(Deserialize)]
struct MetadataOnlyObject {
    #[serde(default)]
    metadata: ObjectMeta,
}

fn describe(kind: Kind, index: Option<usize>) -> String {
    match index {
        Some(i) => format!("{kind} (item {i})"),
        None => kind.to_string(),
    }
}

/// Decode the rest of a mapping whose `apiVersion`/`kind` were just read,
/// straight into the typed object, then its record. Errors are passed through untouched: the
/// parser's line and column point at the offending field, which says more
/// than any prefix we could add (and wrapping would lose them).
fn decode_rest<'de, A: MapAccess<'de>>(
    kind: Kind,
    map: A,
    index: Option<usize>,
) -> Result<Object, A::Error> {
    fn typed<'de, T: Deserialize<'de> + Into<Object>, A: MapAccess<'de>>(
        map: A,
    ) -> Result<Object, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map)).map(Into::into)
    }
    let object = match kind {
        Kind::Pod => typed::<Pod, A>(map),
        Kind::Node => typed::<Node, A>(map),
        Kind::Lease => typed::<Lease, A>(map),
        Kind::VolumeAttachment => typed::<VolumeAttachment, A>(map),
        Kind::PersistentVolumeClaim => typed::<PersistentVolumeClaim, A>(map),
        Kind::PersistentVolume => typed::<PersistentVolume, A>(map),
        Kind::Job => typed::<Job, A>(map),
        Kind::CronJob => typed::<CronJob, A>(map),
        Kind::StatefulSet => typed::<StatefulSet, A>(map),
        Kind::ReplicaSet => typed::<ReplicaSet, A>(map),
        Kind::Deployment => typed::<Deployment, A>(map),
        Kind::EndpointSlice => typed::<EndpointSlice, A>(map),
        Kind::Namespace => typed::<Namespace, A>(map),
        Kind::ConfigMap | Kind::Endpoints => {
            MetadataOnlyObject::deserialize(MapAccessDeserializer::new(map))
                .map(|m| Object::metadata_only(kind, m.metadata))
        }
    }?;
    named(object, kind, index)
}

/// Decode a collected value (keys in an unusual order, or kindless items).
fn decode_value<E: de::Error>(kind: Kind, value: Value, index: Option<usize>) -> Result<Object, E> {
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
        (_, true) => describe(kind, index),
        (true, false) => format!("{kind} {name}"),
        (false, false) => format!("{kind} {namespace}/{name}"),
    };
    let object =
        Object::from_value(kind, value).map_err(|err| E::custom(format!("{what}: {err}")))?;
    named(object, kind, index)
}

/// Objects without a name cannot be addressed: a malformed snapshot.
fn named<E: de::Error>(object: Object, kind: Kind, index: Option<usize>) -> Result<Object, E> {
    if object.meta().name.is_empty() {
        return Err(E::custom(format!(
            "{} has no metadata.name",
            describe(kind, index)
        )));
    }
    Ok(object)
}
