//! Request bodies read member by member.
//!
//! A record keeps a few fields of an object's `spec` and `status`. serde's
//! derive visits every member to skip the rest (a pod's containers, probes
//! and conditions), which cost more than the fields kept. These readers
//! look up only the members asked for, by serde's rules for them: absent
//! or null is `None`, a wrong type is an error naming the member.

use kube::core::DynamicObject;
use serde::de::Error as _;
use serde_json::{Error, Map, Value};

/// A JSON object's members (none at all for an absent or null object).
#[derive(Clone, Copy, Default)]
pub(super) struct Fields<'a>(Option<&'a Map<String, Value>>);

impl<'a> Fields<'a> {
    /// The body of a request object, which must be a JSON object.
    pub fn body(object: &'a DynamicObject, what: &str) -> Result<Self, Error> {
        match &object.data {
            Value::Object(members) => Ok(Fields(Some(members))),
            _ => Err(Error::custom(format!("{what} is not a JSON object"))),
        }
    }

    /// Member `key`, unless absent or null.
    fn get(&self, key: &str) -> Option<&'a Value> {
        self.0?.get(key).filter(|v| !v.is_null())
    }

    /// Member `key` as an object; `None` when absent or null.
    pub fn object(&self, key: &str) -> Result<Option<Fields<'a>>, Error> {
        self.get(key).map(|v| as_object(v, key)).transpose()
    }

    /// Member `key` as a string; `None` when absent or null.
    pub fn string(&self, key: &str) -> Result<Option<String>, Error> {
        Ok(self.str(key)?.map(str::to_owned))
    }

    /// [`Fields::string`], borrowed: for members read but not always kept.
    pub fn str(&self, key: &str) -> Result<Option<&'a str>, Error> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(wrong(key, "a string", other)),
        }
    }

    /// Whether member `key` is there and not null.
    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Call `each` with every element of list `key` (an object each); none
    /// when absent or null.
    pub fn each(
        &self,
        key: &str,
        mut each: impl FnMut(Fields<'a>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        match self.get(key) {
            None => Ok(()),
            Some(Value::Array(items)) => items.iter().try_for_each(|v| each(as_object(v, key)?)),
            Some(other) => Err(wrong(key, "a list", other)),
        }
    }
}

fn as_object<'a>(value: &'a Value, key: &str) -> Result<Fields<'a>, Error> {
    match value {
        Value::Object(members) => Ok(Fields(Some(members))),
        other => Err(wrong(key, "an object", other)),
    }
}

fn wrong(key: &str, expected: &str, found: &Value) -> Error {
    let found = match found {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    };
    Error::custom(format!("`{key}` must be {expected}, not {found}"))
}
