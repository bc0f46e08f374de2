//! What leaves: messages encoded once to JSON text and shared as bytes, with their kind.

use std::fmt;

use bytes::Bytes;
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::error::RpcError;
use super::message::RequestId;

/// JSON text encoded once — a result or a whole message — and shared, not copied, by
/// whoever passes it on (the writer, an HTTP body, an SSE event store, a cached list page).
///
/// A result encoded for a response may sit after a few free bytes (`ENVELOPE_ROOM`) of its
/// buffer: [`result_response`] writes the JSON-RPC envelope's head there and its closing
/// brace after the text, so the result is not copied into a second buffer (for a 64 KiB
/// `resources/read`, a copy of every byte).
#[derive(Clone)]
pub struct Encoded {
    buffer: Bytes,
    /// Where the text starts in `buffer` (the free bytes before it).
    start: usize,
}

/// The free bytes kept in front of an encoded result for its envelope's head,
/// `{"jsonrpc":"2.0","id":…,"result":` (32 bytes and the id: any number, a string id of up
/// to ~30 characters; a longer id is written into a new buffer instead).
pub(crate) const ENVELOPE_ROOM: usize = 64;

impl Encoded {
    /// Encodes `value`.
    pub fn of<T: Serialize + ?Sized>(
        value: &T,
    ) -> Result<Encoded, crate::wire::encode::EncodeError> {
        crate::wire::encode::to_vec(value).map(Encoded::from_json)
    }

    /// Wraps JSON text this crate encoded.
    pub(crate) fn from_json(json: Vec<u8>) -> Encoded {
        Encoded {
            buffer: Bytes::from(json),
            start: 0,
        }
    }

    /// Wraps JSON text this crate encoded after `start` free bytes of `buffer` (see
    /// [`ENVELOPE_ROOM`]).
    pub(crate) fn after_room(buffer: Vec<u8>, start: usize) -> Encoded {
        let start = start.min(buffer.len());
        Encoded {
            buffer: Bytes::from(buffer),
            start,
        }
    }

    /// `{}`.
    pub fn empty_object() -> Encoded {
        Encoded {
            buffer: Bytes::from_static(b"{}"),
            start: 0,
        }
    }

    /// The JSON text's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.buffer.get(self.start..).unwrap_or_default()
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        // Only serde_json's output is ever wrapped, and it is UTF-8.
        std::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }

    /// The shared bytes (a cheap clone).
    pub fn bytes(&self) -> Bytes {
        if self.start == 0 {
            self.buffer.clone()
        } else {
            self.buffer.slice(self.start..)
        }
    }

    /// Decodes the text again (tests and inspection; never on the message path).
    pub fn to_value(&self) -> Value {
        serde_json::from_slice(self.as_bytes()).unwrap_or(Value::Null)
    }

    /// The whole response `{"jsonrpc":"2.0","id":ID,"result":TEXT}` written in this
    /// result's own buffer: the head in the free bytes before the text, the closing brace
    /// after it. `Err(self)` when there is no room for the head or the buffer is shared
    /// (a cached page): the caller copies instead.
    fn into_response(self, id: &RequestId) -> Result<Bytes, Encoded> {
        let mut head = [0u8; ENVELOPE_ROOM];
        let free = {
            let mut rest: &mut [u8] = &mut head;
            let written = std::io::Write::write_all(&mut rest, RESPONSE_HEAD).is_ok()
                && write_id_to(&mut rest, id).is_ok()
                && std::io::Write::write_all(&mut rest, RESULT_KEY).is_ok();
            if !written {
                return Err(self);
            }
            rest.len()
        };
        let head_len = ENVELOPE_ROOM - free;
        let (Some(from), Some(head)) = (self.start.checked_sub(head_len), head.get(..head_len))
        else {
            return Err(self);
        };
        let start = self.start;
        let mut buffer = match self.buffer.try_into_mut() {
            Ok(buffer) => buffer,
            Err(buffer) => return Err(Encoded { buffer, start }),
        };
        match buffer.get_mut(from..start) {
            Some(room) => room.copy_from_slice(head),
            None => {
                return Err(Encoded {
                    buffer: buffer.freeze(),
                    start,
                })
            }
        }
        buffer.extend_from_slice(b"}");
        let mut response = buffer.freeze();
        bytes::Buf::advance(&mut response, from);
        Ok(response)
    }
}

impl PartialEq for Encoded {
    fn eq(&self, other: &Encoded) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Encoded {}

impl fmt::Debug for Encoded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Encoded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an outgoing message is, known without decoding it again (the HTTP transport
/// chooses a status and a framing by it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutgoingKind {
    /// A response with a result.
    Result,
    /// A response with an error, and its code.
    Error(i64),
    /// A batch of responses.
    Batch,
    /// A request of this side to the peer.
    Request,
    /// A notification.
    Notification,
}

/// One message for the peer, encoded once.
#[derive(Clone, Debug)]
pub struct Outgoing {
    json: Encoded,
    kind: OutgoingKind,
}

impl Outgoing {
    /// What it is.
    pub fn kind(&self) -> OutgoingKind {
        self.kind
    }

    /// Whether it answers the peer's request(s).
    pub fn is_answer(&self) -> bool {
        matches!(
            self.kind,
            OutgoingKind::Result | OutgoingKind::Error(_) | OutgoingKind::Batch
        )
    }

    /// The error code, for an error response.
    pub fn error_code(&self) -> Option<i64> {
        match self.kind {
            OutgoingKind::Error(code) => Some(code),
            _ => None,
        }
    }

    /// The encoded message.
    pub fn json(&self) -> &Encoded {
        &self.json
    }

    /// Decodes the message again (tests and inspection; never on the message path).
    pub fn to_value(&self) -> Value {
        self.json.to_value()
    }
}

fn encode_value(value: &Value) -> Encoded {
    // A `Value` always encodes (its map keys are strings).
    Encoded::of(value).unwrap_or_else(|_| Encoded::empty_object())
}

fn write_id(out: &mut Vec<u8>, id: Option<&RequestId>) {
    match id {
        None => out.extend_from_slice(b"null"),
        // Writing into a Vec cannot fail.
        Some(id) => {
            let _ = write_id_to(out, id);
        }
    }
}

/// The id as JSON: a number as written (serde_json's `Number` keeps its text form), a
/// string escaped.
fn write_id_to<W: std::io::Write>(out: &mut W, id: &RequestId) -> Result<(), serde_json::Error> {
    match id {
        RequestId::Number(n) => serde_json::to_writer(out, n),
        RequestId::String(s) => serde_json::to_writer(out, s),
    }
}

const RESPONSE_HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
const RESULT_KEY: &[u8] = br#","result":"#;

/// A response with a result: the envelope is written around the already encoded result,
/// in the result's own buffer when it was encoded with room for it.
pub fn result_response(id: &RequestId, result: Encoded) -> Outgoing {
    let json = match result.into_response(id) {
        Ok(response) => Encoded {
            buffer: response,
            start: 0,
        },
        Err(result) => {
            let mut out = Vec::with_capacity(result.as_bytes().len() + 48);
            out.extend_from_slice(RESPONSE_HEAD);
            write_id(&mut out, Some(id));
            out.extend_from_slice(RESULT_KEY);
            out.extend_from_slice(result.as_bytes());
            out.push(b'}');
            Encoded::from_json(out)
        }
    };
    Outgoing {
        json,
        kind: OutgoingKind::Result,
    }
}

/// A response with an error; `id` is `null` when the request's id could not be read.
pub fn error_response(id: Option<&RequestId>, error: &RpcError) -> Outgoing {
    let message = json!({"jsonrpc": "2.0", "id": id.map_or(Value::Null, RequestId::to_value), "error": error.to_value()});
    Outgoing {
        json: encode_value(&message),
        kind: OutgoingKind::Error(error.code.0),
    }
}

/// A notification.
pub fn notification(method: &str, params: Option<Value>) -> Outgoing {
    let mut obj = Map::new();
    obj.insert("jsonrpc".into(), json!("2.0"));
    obj.insert("method".into(), json!(method));
    if let Some(p) = params {
        obj.insert("params".into(), p);
    }
    Outgoing {
        json: encode_value(&Value::Object(obj)),
        kind: OutgoingKind::Notification,
    }
}

/// A request (server to client).
pub fn request(id: &RequestId, method: &str, params: Option<Value>) -> Outgoing {
    let mut obj = Map::new();
    obj.insert("jsonrpc".into(), json!("2.0"));
    obj.insert("method".into(), json!(method));
    if let Some(p) = params {
        obj.insert("params".into(), p);
    }
    obj.insert("id".into(), id.to_value());
    Outgoing {
        json: encode_value(&Value::Object(obj)),
        kind: OutgoingKind::Request,
    }
}

/// The answers of a batch, as one JSON array.
pub fn batch(answers: &[Outgoing]) -> Outgoing {
    let len = answers
        .iter()
        .map(|a| a.json.as_bytes().len() + 1)
        .sum::<usize>()
        + 2;
    let mut out = Vec::with_capacity(len);
    out.push(b'[');
    for (i, answer) in answers.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(answer.json.as_bytes());
    }
    out.push(b']');
    Outgoing {
        json: Encoded::from_json(out),
        kind: OutgoingKind::Batch,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The response as written before results had room for their envelope.
    fn copied(id: &RequestId, result: &[u8]) -> Vec<u8> {
        let mut out = RESPONSE_HEAD.to_vec();
        write_id(&mut out, Some(id));
        out.extend_from_slice(RESULT_KEY);
        out.extend_from_slice(result);
        out.push(b'}');
        out
    }

    fn with_room(text: &[u8]) -> Encoded {
        let mut buffer = vec![b' '; ENVELOPE_ROOM];
        buffer.extend_from_slice(text);
        Encoded::after_room(buffer, ENVELOPE_ROOM)
    }

    #[test]
    fn responses_written_in_the_results_buffer_are_the_same_bytes() {
        let text = br#"{"content":[{"type":"text","text":"a \"quoted\" line"}]}"#;
        let long = "x".repeat(40);
        let ids = [
            RequestId::Number(7.into()),
            RequestId::Number((-12).into()),
            RequestId::Number(i64::MAX.into()),
            RequestId::Number(u64::MAX.into()),
            RequestId::Number(serde_json::Number::from_f64(1.5).expect("finite")),
            RequestId::String(String::new()),
            RequestId::String("req-1".into()),
            RequestId::String("tab\t\"quote\" é \u{1}".into()),
            // Too long for the room: written into a new buffer instead.
            RequestId::String(long),
        ];
        for id in &ids {
            let result = with_room(text);
            assert_eq!(result.as_bytes(), text);
            let at = result.as_bytes().as_ptr() as usize;
            let response = result_response(id, result);
            let expected = copied(id, text);
            assert_eq!(response.json().as_bytes(), expected.as_slice(), "{id:?}");
            assert_eq!(response.kind(), OutgoingKind::Result);
            // Written around the result where it lay, unless the id is too long.
            let head = expected.len() - text.len() - 1;
            let in_place = response.json().as_bytes().as_ptr() as usize + head == at;
            assert_eq!(in_place, head <= ENVELOPE_ROOM, "{id:?}");
        }
    }

    #[test]
    fn shared_or_roomless_results_are_copied_unchanged() {
        let text = br#"{"tools":[]}"#;
        let id = RequestId::Number(3.into());
        // A result someone else still holds (a cached page) is not written into.
        let held = with_room(text);
        let kept = held.clone();
        let response = result_response(&id, held);
        assert_eq!(response.json().as_bytes(), copied(&id, text).as_slice());
        assert_eq!(kept.as_bytes(), text);
        assert_eq!(kept.bytes().as_ref(), text);
        // Without room.
        let plain = Encoded::from_json(text.to_vec());
        let response = result_response(&id, plain);
        assert_eq!(response.json().as_bytes(), copied(&id, text).as_slice());
        let response = result_response(&id, Encoded::empty_object());
        assert_eq!(
            response.json().as_bytes(),
            br#"{"jsonrpc":"2.0","id":3,"result":{}}"#
        );
    }
}
