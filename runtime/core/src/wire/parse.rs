//! Parsing a frame (a stdio line, an HTTP body) into messages: the fast path reads a
//! single message's envelope in place ([`super::envelope`]), the general path parses a
//! `Value` first and owns every error message; both give the same answer.

use serde_json::Value;

use super::envelope;
use super::error::{ErrorCode, RpcError};
use super::message::{split_meta, Frame, Invalid, Message, RequestId};

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
            Some(id) => {
                let (params, meta) = split_meta(params);
                Message::Request {
                    id,
                    method,
                    params,
                    meta,
                }
            }
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

/// The strings of a JSON array (its other elements skipped; nothing if `value` is absent
/// or not an array): a filter's URIs, a server's listed versions, a record's subscriptions.
pub fn strings<C: FromIterator<String>>(value: Option<&Value>) -> C {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
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
        // `_meta` is borrowed as text and parsed through the per-thread cache: first,
        // second (kept) and third (served from the cache) sightings, at and around its
        // depth limit, repeated and escaped keys, the raw-value token, invalid texts.
        let meta_cases = [
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#.to_owned(),
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":1.5e300,"k":"a\"b\u00e9"}"#.to_owned(),
            r#"{"a":1,"a":2}"#.to_owned(),
            r#""text""#.to_owned(),
            r#"null"#.to_owned(),
            r#"{"a":"\ud800"}"#.to_owned(),
            r#"{"a":tru}"#.to_owned(),
            r#"{"$serde_json::private::RawValue":"{}"}"#.to_owned(),
            format!("{}{}", "[".repeat(64), "]".repeat(64)),
            format!("{}{}", "[".repeat(65), "]".repeat(65)),
            format!("{}{}", "[".repeat(130), "]".repeat(130)),
        ];
        for meta in &meta_cases {
            for params in [
                format!(r#"{{"name":"x","_meta":{meta}}}"#),
                format!(r#"{{"_m\u0065ta":{meta},"_meta":{meta}}}"#),
                format!(r#"{{"$serde_json::private::RawValue":"{{}}","_meta":{meta}}}"#),
            ] {
                let message =
                    format!(r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{params}}}"#);
                for _ in 0..3 {
                    assert_same(message.as_bytes());
                }
            }
        }
    }

    /// A request's `_meta` is taken out of its params (by both paths), and put back where
    /// it stood: the params as sent, member for member and in order; a notification keeps
    /// its params whole.
    #[test]
    fn a_requests_meta_is_taken_out_and_put_back_where_it_stood() {
        use super::super::message::params_with_meta;
        let meta =
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","k":[1,{"b":2,"a":1}]}"#;
        let cases = [
            format!(r#"{{"_meta":{meta},"name":"x","arguments":{{"z":1,"a":2}}}}"#),
            format!(r#"{{"name":"x","_meta":{meta},"arguments":{{}}}}"#),
            format!(r#"{{"name":"x","arguments":null,"_meta":{meta}}}"#),
            format!(r#"{{"_meta":1,"name":"x","_meta":{meta},"name":"y"}}"#),
            format!(r#"{{"name":"x","b":1,"name":"y","_meta":{meta}}}"#),
            format!(r#"{{"_meta":{meta}}}"#),
            r#"{"_meta":null,"a":1}"#.to_owned(),
            r#"{"_meta":"text"}"#.to_owned(),
            r#"{"a":1}"#.to_owned(),
            format!(r#"[{meta},1]"#),
        ];
        for params in &cases {
            let sent: Value = serde_json::from_str(params).unwrap_or_default();
            let sent_text = sent.to_string();
            let has_meta = sent.get("_meta").is_some();
            for _ in 0..3 {
                let request =
                    format!(r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{params}}}"#);
                for frame in [
                    parse_frame(request.as_bytes()),
                    parse_frame_general(request.as_bytes()),
                ] {
                    let Frame::Single(Ok(Message::Request { params, meta, .. })) = frame else {
                        panic!("{request}: not a request");
                    };
                    assert_eq!(meta.is_some(), has_meta, "{request}");
                    assert!(
                        params.as_ref().and_then(|p| p.get("_meta")).is_none(),
                        "{request}"
                    );
                    let whole = params_with_meta(params, meta).unwrap_or_default();
                    assert_eq!(whole.to_string(), sent_text, "{request}");
                }
                let notification = format!(r#"{{"jsonrpc":"2.0","method":"x","params":{params}}}"#);
                for frame in [
                    parse_frame(notification.as_bytes()),
                    parse_frame_general(notification.as_bytes()),
                ] {
                    let Frame::Single(Ok(Message::Notification { params, .. })) = frame else {
                        panic!("{notification}: not a notification");
                    };
                    assert_eq!(
                        params.unwrap_or_default().to_string(),
                        sent_text,
                        "{notification}"
                    );
                }
            }
        }
    }

    /// Every input of the committed fuzz corpus of the frame decoder, through both paths.
    #[test]
    fn fast_path_agrees_on_the_fuzz_corpus() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/jsonrpc_frame");
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
