//! Map keys for the encoder: strings, and numbers and booleans written as strings, as serde_json does.

use std::fmt;

use serde::ser::{self, Serialize};

use super::json_text::{write_str, EncodeError};

/// Map keys: strings, and numbers and booleans written as strings, as serde_json does.
pub(super) struct MapKey<'a> {
    pub(super) out: &'a mut Vec<u8>,
}

impl MapKey<'_> {
    fn quoted<T: fmt::Display>(self, v: T) -> Result<(), EncodeError> {
        write_str(self.out, &v.to_string());
        Ok(())
    }
}

fn key_error() -> EncodeError {
    EncodeError("key must be a string".into())
}

impl ser::Serializer for MapKey<'_> {
    type Ok = ();
    type Error = EncodeError;
    type SerializeSeq = ser::Impossible<(), EncodeError>;
    type SerializeTuple = ser::Impossible<(), EncodeError>;
    type SerializeTupleStruct = ser::Impossible<(), EncodeError>;
    type SerializeTupleVariant = ser::Impossible<(), EncodeError>;
    type SerializeMap = ser::Impossible<(), EncodeError>;
    type SerializeStruct = ser::Impossible<(), EncodeError>;
    type SerializeStructVariant = ser::Impossible<(), EncodeError>;

    fn serialize_str(self, v: &str) -> Result<(), EncodeError> {
        write_str(self.out, v);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<(), EncodeError> {
        write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_bool(self, v: bool) -> Result<(), EncodeError> {
        self.quoted(v)
    }
    fn serialize_i8(self, v: i8) -> Result<(), EncodeError> {
        self.quoted(v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), EncodeError> {
        self.quoted(v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), EncodeError> {
        self.quoted(v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), EncodeError> {
        self.quoted(v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), EncodeError> {
        self.quoted(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), EncodeError> {
        self.quoted(v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), EncodeError> {
        self.quoted(v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), EncodeError> {
        self.quoted(v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), EncodeError> {
        self.quoted(v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), EncodeError> {
        self.quoted(v)
    }
    fn serialize_f32(self, _v: f32) -> Result<(), EncodeError> {
        Err(key_error())
    }
    fn serialize_f64(self, _v: f64) -> Result<(), EncodeError> {
        Err(key_error())
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<(), EncodeError> {
        Err(key_error())
    }
    fn serialize_none(self) -> Result<(), EncodeError> {
        Err(key_error())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<(), EncodeError> {
        Err(key_error())
    }
    fn serialize_unit(self) -> Result<(), EncodeError> {
        Err(key_error())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), EncodeError> {
        Err(key_error())
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
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), EncodeError> {
        Err(key_error())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, EncodeError> {
        Err(key_error())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, EncodeError> {
        Err(key_error())
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, EncodeError> {
        Err(key_error())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, EncodeError> {
        Err(key_error())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, EncodeError> {
        Err(key_error())
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, EncodeError> {
        Err(key_error())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, EncodeError> {
        Err(key_error())
    }
}
