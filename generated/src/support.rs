//! Helpers the generated union `Deserialize` impls call, kept out of the generated code so
//! that each impl stays small (compile time) and every union reports errors the same way.

use std::fmt;

use serde::de::DeserializeOwned;
use serde_json::Value;

/// Why a union value could not be decoded; the message names the real problem.
#[derive(Debug)]
pub struct DispatchError(String);

impl fmt::Display for DispatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Decodes the chosen member; its own error ("missing field `name`") is kept.
pub fn member<T: DeserializeOwned>(value: Value) -> Result<T, DispatchError> {
    T::deserialize(value).map_err(|e| DispatchError(e.to_string()))
}

/// The string value of the discriminating property.
pub fn tag<'a>(value: &'a Value, key: &str) -> Result<&'a str, DispatchError> {
    match value.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(DispatchError(format!(
            "invalid type for `{key}`: expected a string, found {}",
            kind(other)
        ))),
        None => Err(DispatchError(format!("missing field `{key}`"))),
    }
}

/// Like [`tag`], but an absent property reads as `""` (it selects the default member).
pub fn tag_or_empty<'a>(value: &'a Value, key: &str) -> Result<&'a str, DispatchError> {
    match value.get(key) {
        None => Ok(""),
        Some(_) => tag(value, key),
    }
}

/// The error for a tag value no member has.
pub fn unknown_tag(key: &str, found: &str, expected: &[&str]) -> DispatchError {
    DispatchError(format!(
        "unknown `{key}` value `{found}`, expected one of: {}",
        expected.join(", ")
    ))
}

/// Whether `value` (an object) has every key.
pub fn has_keys(value: &Value, keys: &[&str]) -> bool {
    value
        .as_object()
        .is_some_and(|o| keys.iter().all(|k| o.contains_key(*k)))
}

/// The error when no member's required keys are all present.
pub fn no_member_keys(expected: &str) -> DispatchError {
    DispatchError(format!(
        "object matches no member: expected the keys of one of {expected}"
    ))
}

/// The error for a non-object value where only objects are allowed.
pub fn not_an_object(value: &Value) -> DispatchError {
    DispatchError(format!("invalid type: {}, expected an object", kind(value)))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Accepts exactly the string `expected` (a `const` discriminator).
pub fn expect_const<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
    expected: &'static str,
) -> Result<(), D::Error> {
    struct Expect(&'static str);
    impl serde::de::Visitor<'_> for Expect {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "{:?}", self.0)
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
            if v == self.0 {
                Ok(())
            } else {
                Err(E::invalid_value(serde::de::Unexpected::Str(v), &self))
            }
        }
    }
    deserializer.deserialize_str(Expect(expected))
}

/// What best-match dispatch knows of one union member.
#[derive(Debug)]
pub struct Shape {
    /// Keys the member requires.
    pub required: &'static [&'static str],
    /// Keys the member declares.
    pub declared: &'static [&'static str],
    /// Properties restricted to a set of strings, and that set.
    pub consts: &'static [(&'static str, &'static [&'static str])],
}

/// Member indices to try, best first: members whose required keys are present and whose
/// discriminators match, ranked by how many of the value's keys they declare (ties: fewer
/// declared keys, then order). When nothing fits, only the member declaring the most of
/// the value's keys, so that decoding it reports the real problem ("missing field `x`").
pub fn ranked(value: &Value, shapes: &[Shape]) -> Vec<usize> {
    let Some(object) = value.as_object() else {
        return Vec::new();
    };
    let covered = |shape: &Shape| {
        object
            .keys()
            .filter(|k| shape.declared.contains(&k.as_str()))
            .count()
    };
    let fits = |shape: &Shape| {
        shape.required.iter().all(|k| object.contains_key(*k))
            && shape.consts.iter().all(|(k, v)| match object.get(*k) {
                Some(Value::String(s)) => v.contains(&s.as_str()),
                Some(_) => false,
                None => !shape.required.contains(k),
            })
    };
    let rank = |i: usize, shape: &Shape| {
        (
            covered(shape),
            usize::MAX - shape.declared.len(),
            usize::MAX - i,
        )
    };
    let mut fitting: Vec<usize> = (0..shapes.len()).filter(|&i| fits(&shapes[i])).collect();
    if fitting.is_empty() {
        return (0..shapes.len())
            .max_by_key(|&i| rank(i, &shapes[i]))
            .into_iter()
            .collect();
    }
    fitting.sort_by_key(|&i| std::cmp::Reverse(rank(i, &shapes[i])));
    fitting
}

/// Decodes a member from a borrowed value (no clone when a later member is tried).
pub fn member_ref<T: DeserializeOwned>(value: &Value) -> Result<T, DispatchError> {
    T::deserialize(value).map_err(|e| DispatchError(e.to_string()))
}
