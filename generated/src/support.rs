//! Helpers the generated serde impls call, kept out of the generated code so that each impl
//! stays small (compile time) and every type reports errors the same way.
//!
//! Generated types are decoded through [`FromValue`]: a plain, non-generic function per
//! type that takes a `serde_json::Value` apart. Their `Deserialize` impls read a `Value`
//! and hand it over ([`deserialize`]). Unlike derived impls, nothing per type is generic
//! over the deserializer, so a crate using these types does not instantiate (compile)
//! their decoding again, and no proc macro is needed to build them. Error messages are
//! those serde's derived impls give on a `Value` ("missing field `name`", …).

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
pub fn member<T: FromValue>(value: Value) -> Result<T, DispatchError> {
    T::from_value(value)
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

/// The value a best-match candidate decodes: a copy while a later candidate may still
/// need it, the value itself for the last (`last`), so that the usual case — one fitting
/// member — copies nothing (a resource's contents, a tool's result). Taken only once: after
/// the last candidate no other is tried.
pub fn candidate(value: &mut Option<Value>, last: bool) -> Value {
    let taken = if last { value.take() } else { value.clone() };
    taken.unwrap_or(Value::Null)
}

/// The error of a best-match decode that found no member: the first candidate's own
/// error, or, when no candidate was tried (the value is then still there), that the value
/// is not an object of any member.
pub fn first_error(error: Option<DispatchError>, value: Option<Value>) -> DispatchError {
    match error {
        Some(e) => e,
        None => not_an_object(value.as_ref().unwrap_or(&Value::Null)),
    }
}

/// A type decoded from an owned `serde_json::Value` by a plain function: every generated
/// type, and the std and serde_json types their fields use.
pub trait FromValue: Sized {
    /// Takes the value apart into `Self`.
    fn from_value(value: Value) -> Result<Self, DispatchError>;
}

/// A struct with a required `_meta` member (a 2026-07-28 request's params), decoded from
/// params whose `_meta` was taken out and decoded apart: a server reads a request's
/// `_meta` once, where it arrives, and a client sends the same one on every request.
///
/// `from_params(value, Some(meta))` is `from_value` of `value` with `_meta` put back as
/// `meta` decodes: the same struct, and the same error for the other members (a `_meta`
/// still in `value` is decoded and wins, as a later duplicate would). `from_value` is
/// `from_params(value, None)`.
pub trait FromParams: FromValue {
    /// The type of the `_meta` member.
    type Meta;
    /// Takes the value apart into `Self`, with `meta` as `_meta` unless `value` has one.
    fn from_params(value: Value, meta: Option<Self::Meta>) -> Result<Self, DispatchError>;
}

/// The body of every generated `Deserialize` impl: read a `Value`, then decode it.
pub fn deserialize<'de, D: serde::Deserializer<'de>, T: FromValue>(
    deserializer: D,
) -> Result<T, D::Error> {
    let value = <Value as serde::Deserialize>::deserialize(deserializer)?;
    T::from_value(value).map_err(serde::de::Error::custom)
}

/// Decodes through the type's own `Deserialize` (leaf types, and generated types whose
/// `Deserialize` is hand-written by typify).
pub fn via_serde<T: DeserializeOwned>(value: Value) -> Result<T, DispatchError> {
    T::deserialize(value).map_err(|e| DispatchError(e.to_string()))
}

macro_rules! leaf {
    ($($t:ty),*) => {$(
        impl FromValue for $t {
            fn from_value(value: Value) -> Result<Self, DispatchError> {
                via_serde(value)
            }
        }
    )*};
}
leaf!(String, bool, i64, u64, serde_json::Number);

impl FromValue for Value {
    fn from_value(value: Value) -> Result<Self, DispatchError> {
        Ok(value)
    }
}

impl FromValue for serde_json::Map<String, Value> {
    fn from_value(value: Value) -> Result<Self, DispatchError> {
        match value {
            Value::Object(map) => Ok(map),
            other => Err(invalid_type(&other, &"a map")),
        }
    }
}

// The generic impls below are instantiated once per element type; plain loops and
// matches keep each instantiation small (iterator adapters and `collect` into a `Result`
// would compile to several times the code in a debug build).

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(value: Value) -> Result<Self, DispatchError> {
        match value {
            Value::Null => Ok(None),
            other => match T::from_value(other) {
                Ok(v) => Ok(Some(v)),
                Err(e) => Err(e),
            },
        }
    }
}

impl<T: FromValue> FromValue for Box<T> {
    fn from_value(value: Value) -> Result<Self, DispatchError> {
        match T::from_value(value) {
            Ok(v) => Ok(Box::new(v)),
            Err(e) => Err(e),
        }
    }
}

impl<T: FromValue> FromValue for Vec<T> {
    fn from_value(value: Value) -> Result<Self, DispatchError> {
        let items = match value {
            Value::Array(items) => items,
            other => return Err(invalid_type(&other, &"a sequence")),
        };
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            match T::from_value(item) {
                Ok(v) => out.push(v),
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }
}

impl<T: FromValue> FromValue for std::collections::BTreeMap<String, T> {
    fn from_value(value: Value) -> Result<Self, DispatchError> {
        let map = match value {
            Value::Object(map) => map,
            other => return Err(invalid_type(&other, &"a map")),
        };
        let mut out = std::collections::BTreeMap::new();
        for (k, v) in map {
            match T::from_value(v) {
                Ok(v) => {
                    out.insert(k, v);
                }
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }
}

/// One member's decoding slot in a generated struct's `from_value`: the `Option` of the
/// member's type, filled when the member is present. A `dyn Slot` per member lets one
/// non-generic loop ([`fill`]) sort an object's members into them, so that each generated
/// decoder holds no loop, key match or `Result` per member (compile time: in a debug build
/// that per-member code was most of the crate's machine code).
pub trait Slot {
    /// Decodes `value` into the slot (a later value of the same key replaces it).
    fn fill(&mut self, value: Value) -> Result<(), DispatchError>;
}

impl<T: FromValue> Slot for Option<T> {
    fn fill(&mut self, value: Value) -> Result<(), DispatchError> {
        match T::from_value(value) {
            Ok(v) => {
                *self = Some(v);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }
}

/// The slot of an optional member of type `Option<T>`: the member itself, `None` when it
/// is absent or null (what `Option<T>`'s [`FromValue`] gives for null).
pub struct Member<T>(pub T);

impl<T: FromValue> Slot for Member<T> {
    fn fill(&mut self, value: Value) -> Result<(), DispatchError> {
        match T::from_value(value) {
            Ok(v) => {
                self.0 = v;
                Ok(())
            }
            Err(e) => Err(e),
        }
    }
}

/// The body of a generated struct's decoding: takes the object apart (see [`object`] for
/// `expecting` and `positional`) and decodes each member whose key is in `keys` into the
/// slot of the same index, in the object's order, stopping at the first error; other
/// members go to `rest` when the struct keeps them (flattened), and are skipped otherwise.
pub fn fill(
    value: Value,
    expecting: &'static str,
    positional: Option<&'static [&'static str]>,
    keys: &'static [&'static str],
    slots: &mut [&mut dyn Slot],
    mut rest: Option<&mut serde_json::Map<String, Value>>,
) -> Result<(), DispatchError> {
    let object = object(value, expecting, positional)?;
    for (key, value) in object {
        match keys
            .iter()
            .position(|k| *k == key)
            .and_then(|i| slots.get_mut(i))
        {
            Some(slot) => slot.fill(value)?,
            None => {
                if let Some(rest) = rest.as_deref_mut() {
                    rest.insert(key, value);
                }
            }
        }
    }
    Ok(())
}

/// The number of members a generated struct's `Serialize` writes: those always written,
/// and each optional one that is present.
pub fn present(always: usize, optional: &[bool]) -> usize {
    always + optional.iter().filter(|present| **present).count()
}

/// Decodes one field's value.
pub fn from_value<T: FromValue>(value: Value) -> Result<T, DispatchError> {
    T::from_value(value)
}

/// The error for a required field that is absent.
pub fn missing_field(key: &'static str) -> DispatchError {
    DispatchError(format!("missing field `{key}`"))
}

fn unexpected(value: &Value) -> serde::de::Unexpected<'_> {
    use serde::de::Unexpected;
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => Unexpected::Unsigned(u),
            (_, Some(i), _) => Unexpected::Signed(i),
            (_, _, Some(f)) => Unexpected::Float(f),
            _ => Unexpected::Other("number"),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

fn invalid_type(value: &Value, expected: &dyn serde::de::Expected) -> DispatchError {
    let e: serde_json::Error = serde::de::Error::invalid_type(unexpected(value), expected);
    DispatchError(e.to_string())
}

fn invalid_length(len: usize, expected: &dyn serde::de::Expected) -> DispatchError {
    let e: serde_json::Error = serde::de::Error::invalid_length(len, expected);
    DispatchError(e.to_string())
}

/// The object a struct is decoded from. `expecting` is serde's "struct Name"; `fields`
/// (declaration order) is given when the struct also accepts an array of its fields in
/// order, as serde's derived impls do (not for structs that keep unknown keys).
pub fn object(
    value: Value,
    expecting: &'static str,
    fields: Option<&'static [&'static str]>,
) -> Result<serde_json::Map<String, Value>, DispatchError> {
    match (value, fields) {
        (Value::Object(map), _) => Ok(map),
        (Value::Array(items), Some(fields)) => {
            if items.len() < fields.len() {
                let expected = format!("{expecting} with {} elements", fields.len());
                return Err(invalid_length(items.len(), &expected.as_str()));
            }
            if items.len() > fields.len() {
                return Err(invalid_length(items.len(), &"fewer elements in array"));
            }
            Ok(fields.iter().map(|f| (*f).to_owned()).zip(items).collect())
        }
        (other, _) => Err(invalid_type(&other, &expecting)),
    }
}

/// The index (in `variants`) of a unit variant written as a string (or, as serde also
/// accepts, as a map of that string to `null`).
pub fn variant(value: Value, variants: &'static [&'static str]) -> Result<usize, DispatchError> {
    let name = match value {
        Value::String(s) => s,
        Value::Object(map) => {
            if map.len() != 1 {
                let e: serde_json::Error = serde::de::Error::invalid_value(
                    serde::de::Unexpected::Map,
                    &"map with a single key",
                );
                return Err(DispatchError(e.to_string()));
            }
            let Some((key, inner)) = map.into_iter().next() else {
                return Err(invalid_length(0, &"map with a single key"));
            };
            if !inner.is_null() {
                return Err(invalid_type(&inner, &"unit variant"));
            }
            key
        }
        other => return Err(invalid_type(&other, &"string or map")),
    };
    variants.iter().position(|v| *v == name).ok_or_else(|| {
        let e: serde_json::Error = serde::de::Error::unknown_variant(&name, variants);
        DispatchError(e.to_string())
    })
}

/// The error when no member of an untagged union decodes.
pub fn no_variant(name: &str) -> DispatchError {
    DispatchError(format!(
        "data did not match any variant of untagged enum {name}"
    ))
}
