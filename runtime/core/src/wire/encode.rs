//! The JSON encoder of outgoing messages: a serde `Serializer` writing compact JSON that is
//! byte-for-byte what `serde_json::to_vec` writes (tested against it), with one change of
//! method: strings are scanned eight bytes at a time. serde_json checks every byte of a
//! string against its escape table, which made escaping most of the cost of answering a
//! large `resources/read` (BENCHMARKS.md §1.2); answers are mostly long runs of text with
//! nothing to escape. Scalars other than strings are written by serde_json itself, so
//! numbers are formatted exactly as before.

use std::fmt;

use serde::ser::{self, Serialize};

pub(crate) use super::json_text::write_str;
pub use super::json_text::EncodeError;
use super::map_key::MapKey;

/// Encodes `value` as compact JSON.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, EncodeError> {
    to_vec_with_capacity(value, 128)
}

/// [`to_vec`] into a buffer of `capacity` bytes to start with: a caller that knows the
/// text will be large (a resource's contents) saves the copies of growing it.
pub fn to_vec_with_capacity<T: Serialize + ?Sized>(
    value: &T,
    capacity: usize,
) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::with_capacity(capacity);
    value.serialize(&mut Encoder { out: &mut out })?;
    Ok(out)
}

/// [`to_vec_with_capacity`], the text written after `room` free bytes at the start of the
/// buffer (a result's room for its response envelope, `Encoded::after_room`).
pub(crate) fn to_vec_after_room<T: Serialize + ?Sized>(
    value: &T,
    room: usize,
    capacity: usize,
) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::with_capacity(room + capacity);
    out.resize(room, b' ');
    value.serialize(&mut Encoder { out: &mut out })?;
    Ok(out)
}

struct Encoder<'a> {
    out: &'a mut Vec<u8>,
}

impl Encoder<'_> {
    /// A scalar other than a string, written by serde_json (same number formatting).
    fn scalar<T: Serialize>(&mut self, value: T) -> Result<(), EncodeError> {
        serde_json::to_writer(&mut *self.out, &value).map_err(EncodeError::from)
    }
}

/// A sequence or map being written: whether a separator is due.
struct Compound<'e, 'a> {
    encoder: &'e mut Encoder<'a>,
    first: bool,
    /// Closing bytes: `]`, `}`, or `}}` for a variant wrapped in an object.
    close: &'static [u8],
}

impl Compound<'_, '_> {
    fn separator(&mut self) {
        if self.first {
            self.first = false;
        } else {
            self.encoder.out.push(b',');
        }
    }

    fn key(&mut self, key: &str) {
        self.separator();
        write_str(self.encoder.out, key);
        self.encoder.out.push(b':');
    }

    fn end(self) {
        self.encoder.out.extend_from_slice(self.close);
    }
}

impl<'e, 'a> ser::Serializer for &'e mut Encoder<'a> {
    type Ok = ();
    type Error = EncodeError;
    type SerializeSeq = Compound<'e, 'a>;
    type SerializeTuple = Compound<'e, 'a>;
    type SerializeTupleStruct = Compound<'e, 'a>;
    type SerializeTupleVariant = Compound<'e, 'a>;
    type SerializeMap = Compound<'e, 'a>;
    type SerializeStruct = Compound<'e, 'a>;
    type SerializeStructVariant = Compound<'e, 'a>;

    fn serialize_bool(self, v: bool) -> Result<(), EncodeError> {
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), EncodeError> {
        self.scalar(v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), EncodeError> {
        self.scalar(v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), EncodeError> {
        self.scalar(v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), EncodeError> {
        self.scalar(v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), EncodeError> {
        self.scalar(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), EncodeError> {
        self.scalar(v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), EncodeError> {
        self.scalar(v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), EncodeError> {
        self.scalar(v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), EncodeError> {
        self.scalar(v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), EncodeError> {
        self.scalar(v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), EncodeError> {
        self.scalar(v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), EncodeError> {
        self.scalar(v)
    }
    fn serialize_char(self, v: char) -> Result<(), EncodeError> {
        write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), EncodeError> {
        write_str(self.out, v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), EncodeError> {
        self.scalar(v)
    }
    fn serialize_none(self) -> Result<(), EncodeError> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), EncodeError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), EncodeError> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), EncodeError> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), EncodeError> {
        write_str(self.out, variant);
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), EncodeError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), EncodeError> {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.push(b':');
        value.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'e, 'a>, EncodeError> {
        self.out.push(b'[');
        Ok(Compound {
            encoder: self,
            first: true,
            close: b"]",
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'e, 'a>, EncodeError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Compound<'e, 'a>, EncodeError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'e, 'a>, EncodeError> {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.extend_from_slice(b":[");
        Ok(Compound {
            encoder: self,
            first: true,
            close: b"]}",
        })
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'e, 'a>, EncodeError> {
        self.out.push(b'{');
        Ok(Compound {
            encoder: self,
            first: true,
            close: b"}",
        })
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Compound<'e, 'a>, EncodeError> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'e, 'a>, EncodeError> {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.extend_from_slice(b":{");
        Ok(Compound {
            encoder: self,
            first: true,
            close: b"}}",
        })
    }
    fn collect_str<T: fmt::Display + ?Sized>(self, value: &T) -> Result<(), EncodeError> {
        write_str(self.out, &value.to_string());
        Ok(())
    }
    // Every `Vec` and map of a message comes here, once per element type: serde's default
    // bodies ask the iterator for its length first (which this encoder does not use) and
    // go through a closure, several times the code in a debug build of every
    // crate that encodes (compile time). The same bytes as `serialize_seq`/`serialize_map`.
    fn collect_seq<I>(self, iter: I) -> Result<(), EncodeError>
    where
        I: IntoIterator,
        I::Item: Serialize,
    {
        self.out.push(b'[');
        let mut first = true;
        for item in iter {
            if first {
                first = false;
            } else {
                self.out.push(b',');
            }
            item.serialize(&mut *self)?;
        }
        self.out.push(b']');
        Ok(())
    }
    fn collect_map<K, V, I>(self, iter: I) -> Result<(), EncodeError>
    where
        K: Serialize,
        V: Serialize,
        I: IntoIterator<Item = (K, V)>,
    {
        self.out.push(b'{');
        let mut first = true;
        for (key, value) in iter {
            if first {
                first = false;
            } else {
                self.out.push(b',');
            }
            key.serialize(MapKey { out: self.out })?;
            self.out.push(b':');
            value.serialize(&mut *self)?;
        }
        self.out.push(b'}');
        Ok(())
    }
}

impl ser::SerializeSeq for Compound<'_, '_> {
    type Ok = ();
    type Error = EncodeError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), EncodeError> {
        self.separator();
        value.serialize(&mut *self.encoder)
    }
    fn end(self) -> Result<(), EncodeError> {
        Compound::end(self);
        Ok(())
    }
}

impl ser::SerializeTuple for Compound<'_, '_> {
    type Ok = ();
    type Error = EncodeError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), EncodeError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<(), EncodeError> {
        Compound::end(self);
        Ok(())
    }
}

impl ser::SerializeTupleStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = EncodeError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), EncodeError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<(), EncodeError> {
        Compound::end(self);
        Ok(())
    }
}

impl ser::SerializeTupleVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = EncodeError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), EncodeError> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<(), EncodeError> {
        Compound::end(self);
        Ok(())
    }
}

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = EncodeError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), EncodeError> {
        self.separator();
        key.serialize(MapKey {
            out: self.encoder.out,
        })?;
        self.encoder.out.push(b':');
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), EncodeError> {
        value.serialize(&mut *self.encoder)
    }
    fn end(self) -> Result<(), EncodeError> {
        Compound::end(self);
        Ok(())
    }
}

impl ser::SerializeStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = EncodeError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), EncodeError> {
        self.key(key);
        value.serialize(&mut *self.encoder)
    }
    fn end(self) -> Result<(), EncodeError> {
        Compound::end(self);
        Ok(())
    }
}

impl ser::SerializeStructVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = EncodeError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), EncodeError> {
        ser::SerializeStruct::serialize_field(self, key, value)
    }
    fn end(self) -> Result<(), EncodeError> {
        Compound::end(self);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn same(value: &serde_json::Value) {
        let ours = to_vec(value).expect("encodes");
        let theirs = serde_json::to_vec(value).expect("encodes");
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&theirs)
        );
    }

    #[test]
    fn writes_what_serde_json_writes() {
        same(&json!({"a": [1, -2, 3.5, 1e300, 0.1, null, true, false], "b": {"c": "d"}, "": []}));
        same(&json!(u64::MAX));
        same(&json!(i64::MIN));
        same(&json!(22.5));
        same(&json!([]));
        same(&json!({}));
    }

    #[test]
    fn escapes_every_byte_position_as_serde_json_does() {
        // Every ASCII byte, at every offset within an eight-byte word, among UTF-8 text.
        for b in 0u8..0x80 {
            for offset in 0..17 {
                let mut s = "é".repeat(offset / 2) + &"a".repeat(offset % 2);
                s.push(char::from(b));
                s.push_str("tail ü 😀 0123456789");
                same(&json!(s));
                same(&json!({ s.clone(): s }));
            }
        }
    }

    #[test]
    fn escapes_at_every_position_of_a_block() {
        // The scan takes 64 bytes per step: an escape anywhere in the first, second or
        // a later block, and in the 8-byte tail steps.
        for escape in ['"', '\\', '\n', '\u{1}', '\u{1f}'] {
            for at in 0..140 {
                let mut s = "a".repeat(at);
                s.push(escape);
                s.push_str(&"b".repeat(150 - at));
                same(&json!(s));
            }
        }
    }

    #[test]
    fn long_strings_and_unicode() {
        same(&json!("x".repeat(64 * 1024)));
        same(&json!(format!("{}\"{}\n", "y".repeat(1000), "z".repeat(7))));
        same(&json!("\u{7f}\u{80}\u{ff}\u{2028}\u{2029}\u{10ffff}"));
    }

    #[test]
    fn typed_values_with_flatten_and_options() {
        #[derive(serde::Serialize)]
        struct Inner {
            #[serde(rename = "type")]
            kind: &'static str,
            #[serde(skip_serializing_if = "Option::is_none")]
            missing: Option<u8>,
            present: Option<u8>,
            #[serde(flatten)]
            extra: serde_json::Map<String, serde_json::Value>,
        }
        #[derive(serde::Serialize)]
        enum E {
            Unit,
            New(u8),
            Tuple(u8, u8),
            Struct { a: u8 },
        }
        let mut extra = serde_json::Map::new();
        extra.insert("k".into(), json!([1, "two"]));
        let v = Inner {
            kind: "text",
            missing: None,
            present: None,
            extra,
        };
        assert_eq!(
            to_vec(&v).expect("encodes"),
            serde_json::to_vec(&v).expect("encodes")
        );
        for e in [E::Unit, E::New(1), E::Tuple(1, 2), E::Struct { a: 3 }] {
            assert_eq!(
                to_vec(&e).expect("encodes"),
                serde_json::to_vec(&e).expect("encodes")
            );
        }
        let mut keyed = std::collections::BTreeMap::new();
        keyed.insert(7u32, "seven");
        assert_eq!(
            to_vec(&keyed).expect("encodes"),
            serde_json::to_vec(&keyed).expect("encodes")
        );
    }

    #[test]
    fn sequences_and_maps_written_by_collect_are_serde_jsons() {
        // `Vec`s and `BTreeMap`s go through the encoder's own `collect_seq`/`collect_map`.
        let lists: Vec<Vec<u8>> = vec![vec![], vec![1], vec![2, 3]];
        let mut nested = std::collections::BTreeMap::new();
        nested.insert(
            "a".to_owned(),
            std::collections::BTreeMap::<String, u8>::new(),
        );
        nested.insert("b".to_owned(), [("c".to_owned(), 1)].into_iter().collect());
        let none: Vec<u8> = Vec::new();
        for value in [
            to_vec(&lists).map(|v| (v, serde_json::to_vec(&lists))),
            to_vec(&nested).map(|v| (v, serde_json::to_vec(&nested))),
            to_vec(&none).map(|v| (v, serde_json::to_vec(&none))),
        ] {
            let (ours, theirs) = value.expect("encodes");
            assert_eq!(ours, theirs.expect("encodes"));
        }
    }
}
