//! What of the evaluation context the loaded policies read, and each root
//! turned into JSON with only that.
//!
//! Every path is known when policies load, so the set of members it can
//! reach is too: `$.facts.node.ready` reads `facts.node.ready`, a filter or
//! `[*]` reads everything under the names before it, `$..uid` reads every
//! root whole. A root then becomes JSON through serde with the members no
//! policy reads left out, which is most of the facts on a gated request.
//! A path selects the same values from that JSON as from the full one
//! (tests: `policy::tests`).

use std::collections::BTreeMap;

use jsonpath_rust::parser::model::{Segment, Selector};
use serde::Serialize;
use serde::ser;
use serde_json::value::Serializer as Json;
use serde_json::{Map, Value};

use super::path::{Plan, Root, Step};

/// The members of one JSON value that are read.
#[derive(Clone, Debug, PartialEq)]
pub enum Members {
    /// The value whole.
    All,
    /// Only these members of an object, each read as given.
    Some(BTreeMap<String, Members>),
}

impl Default for Members {
    fn default() -> Self {
        Members::Some(BTreeMap::new())
    }
}

impl Members {
    /// Read everything under the member names `keys`.
    fn add<'k>(&mut self, mut keys: impl Iterator<Item = &'k str>) {
        match self {
            Members::All => {}
            Members::Some(members) => match keys.next() {
                None => *self = Members::All,
                Some(key) => members.entry(key.to_owned()).or_default().add(keys),
            },
        }
    }
}

/// The members read of each root, in [`Root::ALL`] order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reads {
    roots: [Members; Root::ALL.len()],
}

impl Reads {
    /// Every root whole: what a path over the whole document (`$..uid`) reads.
    pub fn all() -> Reads {
        Reads {
            roots: std::array::from_fn(|_| Members::All),
        }
    }

    /// Add what `plan` may read.
    pub fn plan(&mut self, plan: &Plan) {
        match plan {
            Plan::Walk { root, steps } => {
                let keys = steps.iter().map_while(|step| match step {
                    Step::Key(key) => Some(key.as_str()),
                    Step::Index(_) | Step::All => None,
                });
                self.roots[*root as usize].add(keys);
            }
            Plan::Query { root, rest } => {
                // Everything under the names before the first filter or slice.
                let keys = rest.segments.iter().map_while(|segment| match segment {
                    Segment::Selector(Selector::Name(key)) => Some(key.as_str()),
                    _ => None,
                });
                self.roots[*root as usize].add(keys);
            }
            Plan::Whole(_) => *self = Reads::all(),
        }
    }

    /// Add the member names `keys` inside `root`.
    pub fn names(&mut self, root: Root, keys: &[&str]) {
        self.roots[root as usize].add(keys.iter().copied());
    }

    /// `value` as JSON, with only the members of `root` that are read.
    pub fn to_json(&self, root: Root, value: &impl Serialize) -> Value {
        to_json(value, &self.roots[root as usize])
    }
}

/// `value` as `serde_json::to_value` gives it, less the object members
/// `members` leaves out. Strings, numbers, bools and string-keyed maps
/// cannot fail to serialize; a failure reads as an absent value.
fn to_json(value: &impl Serialize, members: &Members) -> Value {
    let json = match members {
        Members::All => serde_json::to_value(value),
        Members::Some(members) => value.serialize(Projecting(members)),
    };
    json.unwrap_or_default()
}

/// serde_json's value serializer, but structs and maps keep only the
/// members read. Anything else (strings, lists, enums) is read whole.
struct Projecting<'m>(&'m BTreeMap<String, Members>);

/// An object in the making: the members kept so far and the key of the
/// map entry whose value comes next.
struct Object<'m> {
    members: &'m BTreeMap<String, Members>,
    map: Map<String, Value>,
    key: Option<String>,
}

impl Object<'_> {
    fn insert(&mut self, key: &str, value: &(impl Serialize + ?Sized)) {
        if let Some(members) = self.members.get(key) {
            self.map.insert(key.to_owned(), to_json(&value, members));
        }
    }
}

/// Forward serializer calls that carry no members to serde_json's.
macro_rules! whole {
    ($($method:ident($($arg:ident: $ty:ty),*) -> $out:ty;)*) => {
        $(fn $method(self, $($arg: $ty),*) -> Result<$out, Self::Error> {
            Json.$method($($arg),*)
        })*
    };
}

impl<'m> ser::Serializer for Projecting<'m> {
    type Ok = Value;
    type Error = serde_json::Error;
    type SerializeSeq = <Json as ser::Serializer>::SerializeSeq;
    type SerializeTuple = <Json as ser::Serializer>::SerializeTuple;
    type SerializeTupleStruct = <Json as ser::Serializer>::SerializeTupleStruct;
    type SerializeTupleVariant = <Json as ser::Serializer>::SerializeTupleVariant;
    type SerializeMap = Object<'m>;
    type SerializeStruct = Object<'m>;
    type SerializeStructVariant = <Json as ser::Serializer>::SerializeStructVariant;

    whole! {
        serialize_bool(v: bool) -> Value;
        serialize_i8(v: i8) -> Value;
        serialize_i16(v: i16) -> Value;
        serialize_i32(v: i32) -> Value;
        serialize_i64(v: i64) -> Value;
        serialize_i128(v: i128) -> Value;
        serialize_u8(v: u8) -> Value;
        serialize_u16(v: u16) -> Value;
        serialize_u32(v: u32) -> Value;
        serialize_u64(v: u64) -> Value;
        serialize_u128(v: u128) -> Value;
        serialize_f32(v: f32) -> Value;
        serialize_f64(v: f64) -> Value;
        serialize_char(v: char) -> Value;
        serialize_str(v: &str) -> Value;
        serialize_bytes(v: &[u8]) -> Value;
        serialize_none() -> Value;
        serialize_unit() -> Value;
        serialize_unit_struct(name: &'static str) -> Value;
        serialize_unit_variant(name: &'static str, index: u32, variant: &'static str) -> Value;
        serialize_seq(len: Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(len: usize) -> Self::SerializeTuple;
        serialize_tuple_struct(name: &'static str, len: usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(
            name: &'static str, index: u32, variant: &'static str, len: usize
        ) -> Self::SerializeTupleVariant;
        serialize_struct_variant(
            name: &'static str, index: u32, variant: &'static str, len: usize
        ) -> Self::SerializeStructVariant;
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Value, Self::Error> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Value, Self::Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Value, Self::Error> {
        Json.serialize_newtype_variant(name, index, variant, value)
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Object<'m>, Self::Error> {
        Ok(Object {
            members: self.0,
            map: Map::new(),
            key: None,
        })
    }

    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Object<'m>, Self::Error> {
        self.serialize_map(Some(len))
    }
}

impl ser::SerializeMap for Object<'_> {
    type Ok = Value;
    type Error = serde_json::Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Self::Error> {
        self.key = Some(key_text(key)?);
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Self::Error> {
        let key = self.key.take().unwrap_or_default();
        self.insert(&key, value);
        Ok(())
    }

    fn end(self) -> Result<Value, Self::Error> {
        Ok(Value::Object(self.map))
    }
}

impl ser::SerializeStruct for Object<'_> {
    type Ok = Value;
    type Error = serde_json::Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Self::Error> {
        self.insert(key, value);
        Ok(())
    }

    fn end(self) -> Result<Value, Self::Error> {
        Ok(Value::Object(self.map))
    }
}

/// A map key as the text serde_json uses for it.
fn key_text(key: &(impl Serialize + ?Sized)) -> Result<String, serde_json::Error> {
    Ok(match serde_json::to_value(key)? {
        Value::String(text) => text,
        other => other.to_string(),
    })
}
