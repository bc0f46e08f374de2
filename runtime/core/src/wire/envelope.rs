//! The fast path of frame parsing: a single message's envelope read in place.

use std::fmt;

use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use serde_json::Value;

use super::message::{params_with_meta, Invalid, Message, RequestId, RequestMeta};

/// The members as written: `Some` whenever the key is present, even with `null` (so
/// `"id": null` is not mistaken for an absent id). Strings are borrowed: one with
/// escapes does not decode as `&str`, and the message takes the general path. `id` and
/// `params` are parsed in place, in the same pass and under the same nesting limit as
/// the general path's (borrowing them as text first would scan them twice more:
/// skipping, then checking UTF-8, then parsing); `result` and `error` only send the
/// message to the general path, so they are skipped as text.
#[derive(Default)]
struct Envelope<'a> {
    jsonrpc: Option<&'a str>,
    id: Option<Value>,
    method: Option<&'a str>,
    params: Option<(Value, Option<RequestMeta>)>,
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
}

/// Written out rather than derived (serde's derive would be the only one in a minimal
/// server's build). Only an object decodes; a duplicate or unknown member is an error,
/// so the general path takes the message — skipping an unknown member here would not
/// apply the parser's nesting limit that the general path applies.
impl<'de> Deserialize<'de> for Envelope<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = Envelope<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC message object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope<'de>, A::Error> {
                fn put<T, E: serde::de::Error>(slot: &mut Option<T>, value: T) -> Result<(), E> {
                    if slot.is_some() {
                        return Err(E::custom("duplicate member"));
                    }
                    *slot = Some(value);
                    Ok(())
                }
                let mut e = Envelope::default();
                while let Some(key) = map.next_key::<&'de str>()? {
                    match key {
                        "jsonrpc" => put(&mut e.jsonrpc, map.next_value()?)?,
                        "id" => put(&mut e.id, map.next_value()?)?,
                        "method" => put(&mut e.method, map.next_value()?)?,
                        "params" => put(&mut e.params, map.next_value_seed(Params)?)?,
                        "result" => put(&mut e.result, map.next_value()?)?,
                        "error" => put(&mut e.error, map.next_value()?)?,
                        _ => return Err(A::Error::custom("unknown member")),
                    }
                }
                Ok(e)
            }
        }
        d.deserialize_map(Members)
    }
}

/// The token key by which serde_json's `Value` recognises an embedded raw value (a map
/// holding it parses as the JSON text it carries): such params are left to the general
/// path, where `Value` gives them its own meaning.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// `params` as the `Value` the general path builds, except that an object's `_meta` member
/// is borrowed as text, its value taken from [`super::meta_cache`] (a 2026-07-28 client
/// sends the same `_meta` on every request) and kept apart, with its place among the
/// members. Params that are neither an object nor an array, and `_meta` texts the cache
/// declines, are a data error: the general path takes the frame.
struct Params;

/// A member's key: `_meta` is recognised as the key is read, so it is never allocated.
enum MemberKey {
    Meta,
    Other(String),
}

impl MemberKey {
    fn of(key: &str) -> MemberKey {
        if key == "_meta" {
            MemberKey::Meta
        } else {
            MemberKey::Other(key.to_owned())
        }
    }
}

impl<'de> Deserialize<'de> for MemberKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(MemberKeyVisitor)
    }
}

struct MemberKeyVisitor;

impl Visitor<'_> for MemberKeyVisitor {
    type Value = MemberKey;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member's key")
    }

    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<Self::Value, E> {
        Ok(MemberKey::of(key))
    }

    fn visit_string<E: serde::de::Error>(self, key: String) -> Result<Self::Value, E> {
        Ok(if key == "_meta" {
            MemberKey::Meta
        } else {
            MemberKey::Other(key)
        })
    }
}

impl<'de> DeserializeSeed<'de> for Params {
    type Value = (Value, Option<RequestMeta>);

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Params {
    type Value = (Value, Option<RequestMeta>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("params: an object or an array")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        // Built as `Value`'s own visitor builds a map: keys in order, a repeated key's
        // last value kept in the first one's place (for `_meta`: its place among the
        // other members when first seen, the last value).
        let mut members = serde_json::Map::new();
        let mut meta: Option<RequestMeta> = None;
        while let Some(key) = map.next_key::<MemberKey>()? {
            match key {
                MemberKey::Meta => {
                    let text: &'de RawValue = map.next_value()?;
                    let shared = super::meta_cache::value_of(text.get())
                        .ok_or_else(|| A::Error::custom("a _meta left to the general path"))?;
                    let at = meta.as_ref().map_or(members.len(), RequestMeta::place);
                    meta = Some(RequestMeta::shared(shared, at));
                }
                MemberKey::Other(key) if key == RAW_VALUE_TOKEN => {
                    return Err(A::Error::custom("a raw value token"));
                }
                MemberKey::Other(key) => {
                    let value = map.next_value()?;
                    members.insert(key, value);
                }
            }
        }
        Ok((Value::Object(members), meta))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok((Value::Array(items), None))
    }
}

/// `Err`: the bytes are not JSON. `Ok(None)`: JSON the fast path declines (the caller
/// parses it as a `Value`). `Ok(Some(..))`: the message, or why it is invalid, exactly
/// as [`super::parse_message`] would say.
#[allow(clippy::result_large_err)]
pub(super) fn parse(bytes: &[u8]) -> Result<Option<Result<Message, Invalid>>, serde_json::Error> {
    // Checked as UTF-8 once, whole (word-wide for ASCII), then parsed as text: from bytes,
    // serde_json checks every string it reads on its own, and the raw `_meta` again,
    // several times the cost. Invalid UTF-8 takes the general path, for its error.
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Ok(None);
    };
    let envelope: Envelope<'_> = match serde_json::from_str(text) {
        Ok(e) => e,
        Err(e) if e.is_data() => return Ok(None),
        Err(e) => return Err(e),
    };
    let (Some(jsonrpc), Some(method)) = (envelope.jsonrpc, envelope.method) else {
        // Responses, and messages missing a member, keep the one general path.
        return Ok(None);
    };
    if envelope.result.is_some() || envelope.error.is_some() || jsonrpc != "2.0" {
        return Ok(None);
    }
    let id = match &envelope.id {
        None => None,
        Some(value) => match RequestId::from_value(value) {
            Some(id) => Some(id),
            None => return Ok(None),
        },
    };
    // Only an object or an array gets here: `Params` declines anything else.
    let (params, meta) = match envelope.params {
        Some((params, meta)) => (Some(params), meta),
        None => (None, None),
    };
    let method = method.to_owned();
    Ok(Some(Ok(match id {
        Some(id) => Message::Request {
            id,
            method,
            params,
            meta,
        },
        // A notification's params are kept whole.
        None => Message::Notification {
            method,
            params: params_with_meta(params, meta),
        },
    })))
}
