//! JSON-RPC 2.0 framing, independent of any MCP revision: what arrives (requests,
//! notifications, responses, batches), error codes, and encoding of what leaves.

use std::fmt;

use bytes::Bytes;
use serde::Serialize;
use serde_json::{json, Map, Value};

/// A JSON-RPC error code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// Invalid JSON.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// Not a valid request object.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// Unknown method (or a method not available now).
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// Params that do not decode.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// The handler failed.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// Resource not found (legacy revisions).
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// HTTP header and body disagree (2026-07-28).
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// A client capability the request needs was not declared (2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// The requested protocol revision is not served (2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
}

/// An error answer: code, message, optional data.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcError {
    /// The code.
    pub code: ErrorCode,
    /// A short description.
    pub message: String,
    /// Structured details.
    pub data: Option<Value>,
}

impl RpcError {
    /// An error without data.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Adds data.
    pub fn with_data(mut self, data: Value) -> RpcError {
        self.data = Some(data);
        self
    }

    /// `-32601` naming the method.
    pub fn method_not_found(method: &str) -> RpcError {
        RpcError::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    /// `-32602` with a message.
    pub fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError::new(ErrorCode::INVALID_PARAMS, message)
    }

    /// `-32603` with a message.
    pub fn internal(message: impl Into<String>) -> RpcError {
        RpcError::new(ErrorCode::INTERNAL_ERROR, message)
    }

    /// The `error` member of a response.
    pub fn to_value(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("code".into(), json!(self.code.0));
        obj.insert("message".into(), json!(self.message));
        if let Some(data) = &self.data {
            obj.insert("data".into(), data.clone());
        }
        Value::Object(obj)
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code.0)
    }
}

impl std::error::Error for RpcError {}

/// A request id, kept with its JSON type (a string stays a string, a number a number).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// A numeric id, as written.
    Number(serde_json::Number),
    /// A string id.
    String(String),
}

impl RequestId {
    /// The id as JSON.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Number(n) => Value::Number(n.clone()),
            RequestId::String(s) => Value::String(s.clone()),
        }
    }

    /// The id in `v`, if it is a string or a number.
    pub fn from_value(v: &Value) -> Option<RequestId> {
        match v {
            Value::Number(n) => Some(RequestId::Number(n.clone())),
            Value::String(s) => Some(RequestId::String(s.clone())),
            _ => None,
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

/// One incoming JSON-RPC message.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    /// A request (has `id` and `method`).
    Request {
        /// Its id.
        id: RequestId,
        /// The method.
        method: String,
        /// The params, if any.
        params: Option<Value>,
    },
    /// A notification (has `method`, no `id`).
    Notification {
        /// The method.
        method: String,
        /// The params, if any.
        params: Option<Value>,
    },
    /// A response to a request this side sent.
    Response {
        /// The id it answers.
        id: RequestId,
        /// The result or the error.
        outcome: Result<Value, RpcError>,
    },
}

/// A message that cannot be processed, with the id to answer it with (if any could be
/// read) and the error.
#[derive(Clone, Debug, PartialEq)]
pub struct Invalid {
    /// The id, if one was readable.
    pub id: Option<RequestId>,
    /// What is wrong.
    pub error: RpcError,
}

/// What one frame (a line on stdio, a body on HTTP) holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Frame {
    /// One message.
    Single(Result<Message, Invalid>),
    /// A batch (a JSON array): each element parsed on its own.
    Batch(Vec<Result<Message, Invalid>>),
}

/// Parses a frame. Malformed JSON is `-32700` with no id; an empty batch or a value that
/// is not a message is `-32600`.
///
/// A well-formed single message takes the fast path: its envelope is read in place
/// (`jsonrpc` and `method` borrowed from `bytes`, `id` and `params` parsed in the same
/// pass), so the envelope object itself is never built as a `Value`. Anything the fast path does
/// not accept as-is (a wrong type, a duplicate member, a non-object) is parsed again as a
/// `Value` by [`parse_message`], which owns every error message, so both paths give the
/// same answer.
pub fn parse_frame(bytes: &[u8]) -> Frame {
    let parse_error = |e: serde_json::Error| {
        Frame::Single(Err(Invalid {
            id: None,
            error: RpcError::new(ErrorCode::PARSE_ERROR, format!("Parse error: {e}")),
        }))
    };
    match first_byte(bytes) {
        Some(b'{') => match envelope::parse(bytes) {
            Ok(Some(message)) => Frame::Single(message),
            Ok(None) => match serde_json::from_slice::<Value>(bytes) {
                Ok(value) => Frame::Single(parse_message(value)),
                Err(e) => parse_error(e),
            },
            Err(e) => parse_error(e),
        },
        // Batches take the general path: parsed one by one, a batch's elements would each
        // get the whole nesting limit, while inside the frame they have one level less (an
        // element nested 127 deep parses alone but not within a batch). Batches are rare
        // (one revision allows them); the single message is the path worth the speed.
        _ => parse_frame_general(bytes),
    }
}

/// The first byte that is not JSON whitespace.
fn first_byte(bytes: &[u8]) -> Option<u8> {
    bytes
        .iter()
        .copied()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}

/// The general path of [`parse_frame`]: the frame parsed as one `Value` first. It is what
/// `parse_frame` falls back to for every frame its fast path declines, and gives the same
/// answer for any input (only the wording of JSON syntax errors may differ); public so that
/// tests and the fuzzer can check that.
#[doc(hidden)]
pub fn parse_frame_general(bytes: &[u8]) -> Frame {
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => {
            return Frame::Single(Err(Invalid {
                id: None,
                error: RpcError::new(ErrorCode::PARSE_ERROR, format!("Parse error: {e}")),
            }))
        }
    };
    match value {
        Value::Array(items) if items.is_empty() => Frame::Single(Err(Invalid {
            id: None,
            error: RpcError::new(ErrorCode::INVALID_REQUEST, "Invalid Request: empty batch"),
        })),
        Value::Array(items) => Frame::Batch(items.into_iter().map(parse_message).collect()),
        other => Frame::Single(parse_message(other)),
    }
}

/// The envelope read in place.
mod envelope {
    use std::fmt;

    use serde::de::{Error as _, MapAccess, Visitor};
    use serde::{Deserialize, Deserializer};
    use serde_json::value::RawValue;
    use serde_json::Value;

    use super::{Invalid, Message, RequestId};

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
        params: Option<Value>,
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

                fn visit_map<A: MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<Envelope<'de>, A::Error> {
                    fn put<T, E: serde::de::Error>(
                        slot: &mut Option<T>,
                        value: T,
                    ) -> Result<(), E> {
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
                            "params" => put(&mut e.params, map.next_value()?)?,
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

    /// `Err`: the bytes are not JSON. `Ok(None)`: JSON the fast path declines (the caller
    /// parses it as a `Value`). `Ok(Some(..))`: the message, or why it is invalid, exactly
    /// as [`super::parse_message`] would say.
    #[allow(clippy::result_large_err)]
    pub(super) fn parse(
        bytes: &[u8],
    ) -> Result<Option<Result<Message, Invalid>>, serde_json::Error> {
        let envelope: Envelope<'_> = match serde_json::from_slice(bytes) {
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
        let params = match envelope.params {
            None => None,
            Some(p @ (Value::Object(_) | Value::Array(_))) => Some(p),
            Some(_) => return Ok(None),
        };
        let method = method.to_owned();
        Ok(Some(Ok(match id {
            Some(id) => Message::Request { id, method, params },
            None => Message::Notification { method, params },
        })))
    }
}

/// Parses one message value.
// `Invalid` carries an `RpcError` by value on purpose: it is answered at once.
#[allow(clippy::result_large_err)]
pub fn parse_message(value: Value) -> Result<Message, Invalid> {
    let Value::Object(mut obj) = value else {
        return Err(Invalid {
            id: None,
            error: RpcError::new(ErrorCode::INVALID_REQUEST, "Invalid Request: not an object"),
        });
    };
    let raw_id = obj.remove("id");
    let id = match &raw_id {
        None => None,
        Some(v) => match RequestId::from_value(v) {
            Some(id) => Some(id),
            None => {
                return Err(Invalid {
                    id: None,
                    error: RpcError::new(
                        ErrorCode::INVALID_REQUEST,
                        "Invalid Request: id must be a string or a number",
                    ),
                })
            }
        },
    };
    let invalid = |id: Option<RequestId>, msg: &str| Invalid {
        id,
        error: RpcError::new(
            ErrorCode::INVALID_REQUEST,
            format!("Invalid Request: {msg}"),
        ),
    };
    if obj.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return Err(invalid(id, "jsonrpc must be \"2.0\""));
    }
    let params = obj.remove("params");
    if let Some(p) = &params {
        if !p.is_object() && !p.is_array() {
            return Err(invalid(id, "params must be an object or an array"));
        }
    }
    match obj.remove("method") {
        Some(Value::String(method)) => Ok(match id {
            Some(id) => Message::Request { id, method, params },
            None => Message::Notification { method, params },
        }),
        Some(_) => Err(invalid(id, "method must be a string")),
        None => {
            let Some(id) = id else {
                return Err(invalid(None, "no method and no id"));
            };
            if let Some(result) = obj.remove("result") {
                Ok(Message::Response {
                    id,
                    outcome: Ok(result),
                })
            } else if let Some(Value::Object(err)) = obj.remove("error") {
                let code = err
                    .get("code")
                    .and_then(Value::as_i64)
                    .unwrap_or(ErrorCode::INTERNAL_ERROR.0);
                let message = err
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let mut e = RpcError::new(ErrorCode(code), message);
                e.data = err.get("data").cloned();
                Ok(Message::Response {
                    id,
                    outcome: Err(e),
                })
            } else {
                Err(invalid(Some(id), "a response needs result or error"))
            }
        }
    }
}

/// JSON text encoded once — a result or a whole message — and shared, not copied, by
/// whoever passes it on (the writer, an HTTP body, an SSE event store, a cached list page).
#[derive(Clone, PartialEq, Eq)]
pub struct Encoded(Bytes);

impl Encoded {
    /// Encodes `value`.
    pub fn of<T: Serialize + ?Sized>(value: &T) -> Result<Encoded, crate::encode::EncodeError> {
        crate::encode::to_vec(value).map(|v| Encoded(Bytes::from(v)))
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

/// `value[key]` when `value` is an object. Small objects (request params, `_meta`) are
/// searched by comparing keys: hashing a key to look it up (SipHash, as serde_json's map
/// does) costs more than comparing it with the few keys present.
pub fn member<'a>(value: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    let map = value?.as_object()?;
    if map.len() <= 8 {
        map.iter().find(|(k, _)| k.as_str() == key).map(|(_, v)| v)
    } else {
        map.get(key)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path must answer exactly as the general one: same messages, same error
    /// codes, ids and (but for the wording of JSON syntax errors) messages.
    #[allow(clippy::result_large_err)]
    fn assert_same(bytes: &[u8]) {
        let fast = parse_frame(bytes);
        let slow = parse_frame_general(bytes);
        let comparable = |frame: Frame| -> Frame {
            let scrub = |item: Result<Message, Invalid>| match item {
                Err(mut invalid) if invalid.error.code == ErrorCode::PARSE_ERROR => {
                    invalid.error.message.clear();
                    Err(invalid)
                }
                other => other,
            };
            match frame {
                Frame::Single(item) => Frame::Single(scrub(item)),
                Frame::Batch(items) => Frame::Batch(items.into_iter().map(scrub).collect()),
            }
        };
        assert_eq!(
            comparable(fast),
            comparable(slow),
            "{:?}",
            String::from_utf8_lossy(bytes)
        );
    }

    #[test]
    fn fast_path_agrees_with_the_general_parse() {
        let cases: &[&str] = &[
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"  {"jsonrpc":"2.0","id":"a\"b","method":"tools/call","params":{"name":"x","arguments":{"n":1.5e300}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1.0000000000000002,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":3}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1,2]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"pi\u006eg"}"#,
            r#"{"jsonrpc":"2\u002e0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":2,"id":1,"method":"ping"}"#,
            r#"{"id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m","data":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0"}"#,
            r#"{}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","extra":{"deep":[[[]]]}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"},5,[],{"id":2}]"#,
            r#"[["2.0",1,"ping"]]"#,
            r#"[]"#,
            r#" [ ] "#,
            r#"5"#,
            r#""text""#,
            r#"null"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping""#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},"#,
            "",
            "   ",
        ];
        for case in cases {
            assert_same(case.as_bytes());
        }
        assert_same(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffng\"}");
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_same(deep.as_bytes());
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{}{}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        assert_same(deep.as_bytes());
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"x","extra":{}{}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        assert_same(deep.as_bytes());
        // Around the parser's nesting limit (128), in params and in id, alone and in a
        // batch: the fast path parses them in place, under the same count.
        for depth in 120..=132 {
            let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            for message in [
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{nested}}}"#),
                format!(r#"{{"jsonrpc":"2.0","id":{nested},"method":"x"}}"#),
            ] {
                assert_same(message.as_bytes());
                assert_same(format!("[{message}]").as_bytes());
            }
        }
    }

    /// Every input of the committed fuzz corpus of the frame decoder, through both paths.
    #[test]
    fn fast_path_agrees_on_the_fuzz_corpus() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/jsonrpc_frame");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if let Ok(bytes) = std::fs::read(entry.path()) {
                assert_same(&bytes);
                seen += 1;
            }
        }
        assert!(
            seen > 100,
            "the corpus in {} has {seen} inputs",
            dir.display()
        );
    }
}
