//! The `Serializer` behind [`select`](super::select): it consumes path steps
//! as a value serializes itself, skipping members off the path by name and
//! handing only what the path ends at to `serde_json`.

use std::collections::BTreeMap;

use serde::ser::{self, Impossible, Serialize};
use serde_json::Value;

use super::{Step, walk};

pub(super) fn descend<T: Serialize + ?Sized>(
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
