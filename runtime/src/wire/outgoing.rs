//! What leaves: messages encoded once to JSON text and shared as bytes, with their kind.

use std::fmt;

use bytes::Bytes;
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::error::RpcError;
use super::message::RequestId;

/// JSON text encoded once — a result or a whole message — and shared, not copied, by
/// whoever passes it on (the writer, an HTTP body, an SSE event store, a cached list page).
#[derive(Clone, PartialEq, Eq)]
pub struct Encoded(Bytes);

impl Encoded {
    /// Encodes `value`.
    pub fn of<T: Serialize + ?Sized>(
        value: &T,
    ) -> Result<Encoded, crate::wire::encode::EncodeError> {
        crate::wire::encode::to_vec(value).map(|v| Encoded(Bytes::from(v)))
    }

    /// Wraps JSON text this crate encoded.
    pub(crate) fn from_json(json: Vec<u8>) -> Encoded {
        Encoded(Bytes::from(json))
    }

    /// `{}`.
    pub fn empty_object() -> Encoded {
        Encoded(Bytes::from_static(b"{}"))
    }

    /// The JSON text's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        // Only serde_json's output is ever wrapped, and it is UTF-8.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }

    /// The shared bytes (a cheap clone).
    pub fn bytes(&self) -> Bytes {
        self.0.clone()
    }

    /// Decodes the text again (tests and inspection; never on the message path).
    pub fn to_value(&self) -> Value {
        serde_json::from_slice(&self.0).unwrap_or(Value::Null)
    }
}

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
        Some(RequestId::Number(n)) => out.extend_from_slice(n.to_string().as_bytes()),
        Some(RequestId::String(s)) => {
            // Writing a string into a Vec cannot fail.
            let _ = serde_json::to_writer(&mut *out, s);
        }
    }
}

/// A response with a result: the envelope is written around the already encoded result.
pub fn result_response(id: &RequestId, result: &Encoded) -> Outgoing {
    let mut out = Vec::with_capacity(result.as_bytes().len() + 48);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    write_id(&mut out, Some(id));
    out.extend_from_slice(br#","result":"#);
    out.extend_from_slice(result.as_bytes());
    out.push(b'}');
    Outgoing {
        json: Encoded(Bytes::from(out)),
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
        json: Encoded(Bytes::from(out)),
        kind: OutgoingKind::Batch,
    }
}
