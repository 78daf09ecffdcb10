//! Reading a simple path (`facts.node.ready`, `facts.leader.leases[*].name`)
//! straight out of typed values, without building their JSON first.
//!
//! Building the whole evaluation context as a `serde_json::Value` for every
//! request, then walking it with a general JSONPath engine, was over a third
//! of a decision's time. A [`Path`] instead drives the value's own
//! `Serialize` impl: fields off the path are skipped by name, and only what
//! the path ends at is turned into JSON. The result is exactly what the same
//! JSONPath would select from `serde_json::to_value` of the value, which the
//! tests check against jsonpath-rust itself.

use std::collections::BTreeMap;

use jsonpath_rust::parser::model::{JpQuery, Segment, Selector};
use serde::ser::{self, Impossible, Serialize};
use serde_json::Value;

/// One step of a simple path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// `.name` or `['name']`: an object member.
    Key(String),
    /// `[n]` (n ≥ 0): an array element.
    Index(usize),
    /// `[*]`: every array element or object member value.
    All,
}

/// Append the values at `steps` inside `value` to `out`, in JSON order
/// (object members sorted by key, as `serde_json::Map` keeps them).
pub fn select<T: Serialize + ?Sized>(value: &T, steps: &[Step], out: &mut Vec<Value>) {
    // A value whose serialization fails has no JSON, so nothing to select
    // (`serde_json::to_value` would have failed for it too).
    let _ = descend(value, steps, out);
}

/// The same over a JSON document (tests, and values built by hand).
pub fn walk<'v>(value: &'v Value, steps: &[Step], out: &mut Vec<&'v Value>) {
    let Some((step, rest)) = steps.split_first() else {
        out.push(value);
        return;
    };
    match (step, value) {
        (Step::Key(key), Value::Object(map)) => {
            if let Some(v) = map.get(key) {
                walk(v, rest, out);
            }
        }
        (Step::Index(i), Value::Array(items)) => {
            if let Some(v) = items.get(*i) {
                walk(v, rest, out);
            }
        }
        (Step::All, Value::Array(items)) => items.iter().for_each(|v| walk(v, rest, out)),
        (Step::All, Value::Object(map)) => map.values().for_each(|v| walk(v, rest, out)),
        _ => {}
    }
}

/// How a compiled JSONPath is run.
#[derive(Clone, Debug)]
pub enum Plan {
    /// Names, non-negative indexes and wildcards only: walked without JSON.
    Walk(Vec<Step>),
    /// A walkable prefix of names/indexes (one node at most), then the rest
    /// (a filter, say) run by the JSONPath engine on that node's JSON.
    Rooted { prefix: Vec<Step>, rest: JpQuery },
    /// Anything else (`$..x`, or a filter that refers to `$`): the engine
    /// on the whole document.
    Whole(JpQuery),
}

impl Plan {
    pub fn new(query: JpQuery) -> Plan {
        let steps: Vec<Option<Step>> = query.segments.iter().map(simple_step).collect();
        if let Some(steps) = steps.iter().cloned().collect::<Option<Vec<Step>>>() {
            return Plan::Walk(steps);
        }
        let prefix: Vec<Step> = steps
            .into_iter()
            .map_while(|s| s.filter(|s| *s != Step::All))
            .collect();
        let rest = &query.segments[prefix.len()..];
        // Re-rooting is only sound when nothing in the rest refers back to
        // the document root (a `$` inside a filter).
        if prefix.is_empty() || rest.iter().any(|s| s.to_string().contains('$')) {
            return Plan::Whole(query);
        }
        let rest = JpQuery::new(rest.to_vec());
        Plan::Rooted { prefix, rest }
    }
}

/// One segment as a step: a single name, non-negative index or wildcard.
fn simple_step(segment: &Segment) -> Option<Step> {
    let selector = match segment {
        Segment::Selector(selector) => selector,
        Segment::Selectors(selectors) if selectors.len() == 1 => &selectors[0],
        Segment::Selectors(_) | Segment::Descendant(_) => return None,
    };
    match selector {
        Selector::Name(name) => Some(Step::Key(name.clone())),
        Selector::Index(i) => usize::try_from(*i).ok().map(Step::Index),
        Selector::Wildcard => Some(Step::All),
        Selector::Slice(..) | Selector::Filter(_) => None,
    }
}

/// The values `plan` selects in `value`; `whole` gives `value`'s JSON, asked
/// for only by [`Plan::Whole`].
pub fn run<'w, T: Serialize + ?Sized>(
    plan: &Plan,
    value: &T,
    whole: impl FnOnce() -> &'w Value,
) -> Vec<Value> {
    match plan {
        Plan::Walk(steps) => {
            let mut out = Vec::new();
            select(value, steps, &mut out);
            out
        }
        Plan::Rooted { prefix, rest } => {
            let mut nodes = Vec::new();
            select(value, prefix, &mut nodes);
            nodes.iter().flat_map(|node| query(rest, node)).collect()
        }
        Plan::Whole(q) => query(q, whole()),
    }
}

fn query(query: &JpQuery, value: &Value) -> Vec<Value> {
    jsonpath_rust::query::js_path_process(query, value)
        .map(|refs| refs.into_iter().map(|r| r.val.clone()).collect())
        .unwrap_or_default()
}

fn descend<T: Serialize + ?Sized>(
    value: &T,
    steps: &[Step],
    out: &mut Vec<Value>,
) -> Result<(), serde_json::Error> {
    if steps.is_empty() {
        out.push(serde_json::to_value(value)?);
        Ok(())
    } else {
        value.serialize(Extract { steps, out })
    }
}

/// A `Serializer` that consumes `steps` (never empty) as it goes.
struct Extract<'s, 'o> {
    steps: &'s [Step],
    out: &'o mut Vec<Value>,
}

type Error = serde_json::Error;
type JsonSerializer = serde_json::value::Serializer;

/// Shapes a path rarely goes through (enum variants with data) are turned
/// into JSON whole and walked there.
struct Materialize<'s, 'o, C> {
    inner: C,
    steps: &'s [Step],
    out: &'o mut Vec<Value>,
}

fn walk_built(
    value: Result<Value, Error>,
    steps: &[Step],
    out: &mut Vec<Value>,
) -> Result<(), Error> {
    let value = value?;
    let mut found = Vec::new();
    walk(&value, steps, &mut found);
    out.extend(found.into_iter().cloned());
    Ok(())
}

macro_rules! nothing_inside {
    ($($method:ident($($ty:ty),*);)*) => {
        $(fn $method(self, $(_: $ty),*) -> Result<(), Error> { Ok(()) })*
    };
}

impl<'s, 'o> ser::Serializer for Extract<'s, 'o> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Elements<'s, 'o>;
    type SerializeTuple = Elements<'s, 'o>;
    type SerializeTupleStruct = Elements<'s, 'o>;
    type SerializeTupleVariant =
        Materialize<'s, 'o, <JsonSerializer as ser::Serializer>::SerializeTupleVariant>;
    type SerializeMap = Members<'s, 'o>;
    type SerializeStruct = Members<'s, 'o>;
    type SerializeStructVariant =
        Materialize<'s, 'o, <JsonSerializer as ser::Serializer>::SerializeStructVariant>;

    // Scalars have nothing inside: a path that goes on selects nothing.
    nothing_inside! {
        serialize_bool(bool); serialize_i8(i8); serialize_i16(i16); serialize_i32(i32);
        serialize_i64(i64); serialize_i128(i128); serialize_u8(u8); serialize_u16(u16);
        serialize_u32(u32); serialize_u64(u64); serialize_u128(u128); serialize_f32(f32);
        serialize_f64(f64); serialize_char(char); serialize_str(&str); serialize_bytes(&[u8]);
        serialize_none(); serialize_unit(); serialize_unit_struct(&'static str);
        serialize_unit_variant(&'static str, u32, &'static str);
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }

    /// `{"variant": value}` in JSON.
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        match &self.steps[0] {
            Step::Key(key) if key == variant => descend(value, &self.steps[1..], self.out),
            Step::All => descend(value, &self.steps[1..], self.out),
            _ => Ok(()),
        }
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Elements<'s, 'o>, Error> {
        Ok(Elements {
            steps: self.steps,
            out: self.out,
            next: 0,
        })
    }

    fn serialize_tuple(self, len: usize) -> Result<Elements<'s, 'o>, Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        len: usize,
    ) -> Result<Elements<'s, 'o>, Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Ok(Materialize {
            inner: serde_json::value::Serializer
                .serialize_tuple_variant(name, index, variant, len)?,
            steps: self.steps,
            out: self.out,
        })
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Members<'s, 'o>, Error> {
        Ok(Members {
            steps: self.steps,
            out: self.out,
            key: None,
            all: BTreeMap::new(),
        })
    }

    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Members<'s, 'o>, Error> {
        self.serialize_map(Some(len))
    }

    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Ok(Materialize {
            inner: serde_json::value::Serializer
                .serialize_struct_variant(name, index, variant, len)?,
            steps: self.steps,
            out: self.out,
        })
    }
}

/// Array elements: `[n]` picks one, `[*]` all, a name none.
struct Elements<'s, 'o> {
    steps: &'s [Step],
    out: &'o mut Vec<Value>,
    next: usize,
}

impl Elements<'_, '_> {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let index = self.next;
        self.next += 1;
        match &self.steps[0] {
            Step::All => descend(value, &self.steps[1..], self.out),
            Step::Index(i) if *i == index => descend(value, &self.steps[1..], self.out),
            _ => Ok(()),
        }
    }
}

impl ser::SerializeSeq for Elements<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

impl ser::SerializeTuple for Elements<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

impl ser::SerializeTupleStruct for Elements<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

/// Object members (maps and structs): a name picks one, `[*]` all of them,
/// in key order.
struct Members<'s, 'o> {
    steps: &'s [Step],
    out: &'o mut Vec<Value>,
    /// The key of the map entry whose value comes next.
    key: Option<String>,
    /// For `[*]`: what each member yielded, by key (JSON object order).
    all: BTreeMap<String, Vec<Value>>,
}

impl Members<'_, '_> {
    fn member<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Error> {
        match &self.steps[0] {
            Step::Key(wanted) if wanted == key => descend(value, &self.steps[1..], self.out),
            Step::All => {
                let mut found = Vec::new();
                descend(value, &self.steps[1..], &mut found)?;
                self.all.insert(key.to_owned(), found);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn finish(self) -> Result<(), Error> {
        self.out.extend(self.all.into_values().flatten());
        Ok(())
    }
}

impl ser::SerializeMap for Members<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.key = Some(key.serialize(KeyText)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let key = self.key.take().unwrap_or_default();
        self.member(&key, value)
    }
    fn end(self) -> Result<(), Error> {
        self.finish()
    }
}

impl ser::SerializeStruct for Members<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.member(key, value)
    }
    fn end(self) -> Result<(), Error> {
        self.finish()
    }
}

impl ser::SerializeTupleVariant
    for Materialize<'_, '_, <JsonSerializer as ser::Serializer>::SerializeTupleVariant>
{
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.inner.serialize_field(value)
    }
    fn end(self) -> Result<(), Error> {
        walk_built(self.inner.end(), self.steps, self.out)
    }
}

impl ser::SerializeStructVariant
    for Materialize<'_, '_, <JsonSerializer as ser::Serializer>::SerializeStructVariant>
{
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.inner.serialize_field(key, value)
    }
    fn end(self) -> Result<(), Error> {
        walk_built(self.inner.end(), self.steps, self.out)
    }
}

/// A map key as JSON writes it: strings as they are, numbers and bools as
/// their text.
struct KeyText;

fn key_error() -> Error {
    ser::Error::custom("map key is not a string, number or bool")
}

macro_rules! key_to_string {
    ($($method:ident($ty:ty);)*) => {
        $(fn $method(self, v: $ty) -> Result<String, Error> { Ok(v.to_string()) })*
    };
}

impl ser::Serializer for KeyText {
    type Ok = String;
    type Error = Error;
    type SerializeSeq = Impossible<String, Error>;
    type SerializeTuple = Impossible<String, Error>;
    type SerializeTupleStruct = Impossible<String, Error>;
    type SerializeTupleVariant = Impossible<String, Error>;
    type SerializeMap = Impossible<String, Error>;
    type SerializeStruct = Impossible<String, Error>;
    type SerializeStructVariant = Impossible<String, Error>;

    key_to_string! {
        serialize_bool(bool); serialize_i8(i8); serialize_i16(i16); serialize_i32(i32);
        serialize_i64(i64); serialize_i128(i128); serialize_u8(u8); serialize_u16(u16);
        serialize_u32(u32); serialize_u64(u64); serialize_u128(u128); serialize_char(char);
        serialize_str(&str);
    }

    fn serialize_f32(self, _: f32) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_f64(self, _: f64) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_none(self) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_unit(self) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<String, Error> {
        Ok(variant.to_owned())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<String, Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(key_error())
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        Err(key_error())
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(key_error())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(key_error())
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(key_error())
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Error> {
        Err(key_error())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(key_error())
    }
}

#[cfg(test)]
mod tests;
