//! Fuzzes `mcp_runtime::wire::parse_frame` (the JSON-RPC framing every transport uses) on
//! arbitrary bytes. Invariants: it never panics; it reports -32700 exactly when the bytes
//! are not JSON and -32600 for every other rejection; a batch has one entry per array
//! element; and every message it accepts, re-encoded with the crate's own encoders, is
//! valid JSON that parses back to the same message (requests, notifications, results and
//! errors, ids keeping their JSON type). Error answers to what it rejects are valid
//! JSON-RPC responses too. Its fast path (the envelope read in place) answers exactly as the
//! general path (`parse_frame_general`, the whole frame as one `Value`) does.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_runtime::wire::{
    self, Encoded, ErrorCode, Frame, Invalid, Message, Outgoing, OutgoingKind,
};
use serde_json::Value;

/// Re-encodes an accepted message the way the runtime writes messages.
fn encode(message: &Message) -> Outgoing {
    match message {
        Message::Request {
            id,
            method,
            params,
            meta,
        } => wire::request(
            id,
            method,
            wire::params_with_meta(params.clone(), meta.clone()),
        ),
        Message::Notification { method, params } => wire::notification(method, params.clone()),
        Message::Response { id, outcome } => match outcome {
            Ok(result) => {
                let result = Encoded::of(result).expect("a Value always encodes");
                wire::result_response(id, result)
            }
            Err(error) => wire::error_response(Some(id), error),
        },
    }
}

/// The encoding is valid JSON, classified as what it is, and parses as a frame.
fn reparse(message: &Outgoing) -> Frame {
    let bytes = message.json().as_bytes();
    let value = serde_json::from_slice::<Value>(bytes)
        .unwrap_or_else(|e| panic!("the encoding {} is not JSON: {e}", message.json()));
    assert_eq!(kind_of(&value), message.kind(), "{value}");
    wire::parse_frame(bytes)
}

/// What a message is, read from its JSON members.
fn kind_of(message: &Value) -> OutgoingKind {
    if message.is_array() {
        OutgoingKind::Batch
    } else if message.get("method").is_some() {
        if message.get("id").is_some() {
            OutgoingKind::Request
        } else {
            OutgoingKind::Notification
        }
    } else if let Some(error) = message.get("error") {
        OutgoingKind::Error(error["code"].as_i64().expect("an integer error code"))
    } else {
        OutgoingKind::Result
    }
}

fn check(item: &Result<Message, Invalid>) {
    match item {
        Ok(message) => match reparse(&encode(message)) {
            Frame::Single(Ok(back)) => {
                assert_eq!(&back, message, "re-encoding changed the message")
            }
            other => panic!("re-encoded {message:?} parsed as {other:?}"),
        },
        Err(invalid) => {
            let code = invalid.error.code;
            assert!(
                code == ErrorCode::PARSE_ERROR || code == ErrorCode::INVALID_REQUEST,
                "unexpected rejection code {code:?}"
            );
            // The answer the transports send for it is a valid response carrying the same id.
            let answer = wire::error_response(invalid.id.as_ref(), &invalid.error);
            match reparse(&answer) {
                Frame::Single(Ok(Message::Response {
                    id,
                    outcome: Err(e),
                })) => {
                    assert_eq!(Some(&id), invalid.id.as_ref());
                    assert_eq!(&e, &invalid.error);
                }
                // A null id (unreadable request id) is not a response this side can parse.
                Frame::Single(Err(_)) if invalid.id.is_none() => {}
                other => panic!("error answer {} parsed as {other:?}", answer.json()),
            }
        }
    }
}

/// A frame with the wording of JSON syntax errors removed (the two paths may word them
/// differently; the code and the missing id are what a peer sees).
fn comparable(frame: &Frame) -> Frame {
    let scrub = |item: &Result<Message, Invalid>| match item {
        Err(invalid) if invalid.error.code == ErrorCode::PARSE_ERROR => {
            let mut invalid = invalid.clone();
            invalid.error.message.clear();
            Err(invalid)
        }
        other => other.clone(),
    };
    match frame {
        Frame::Single(item) => Frame::Single(scrub(item)),
        Frame::Batch(items) => Frame::Batch(items.iter().map(scrub).collect()),
    }
}

fuzz_target!(|data: &[u8]| {
    let is_json = serde_json::from_slice::<Value>(data);
    let frame = wire::parse_frame(data);
    assert_eq!(
        comparable(&frame),
        comparable(&wire::parse_frame_general(data)),
        "the fast path and the general path disagree"
    );
    match (&is_json, &frame) {
        (Err(_), Frame::Single(Err(invalid))) => {
            assert_eq!(invalid.error.code, ErrorCode::PARSE_ERROR);
            assert!(invalid.id.is_none());
        }
        (Err(_), other) => panic!("invalid JSON accepted as {other:?}"),
        (Ok(_), Frame::Single(Err(invalid))) => {
            assert_eq!(
                invalid.error.code,
                ErrorCode::INVALID_REQUEST,
                "valid JSON rejected as unparsable"
            );
        }
        (Ok(Value::Array(items)), Frame::Batch(parsed)) => assert_eq!(items.len(), parsed.len()),
        (Ok(_), Frame::Batch(_)) => panic!("a batch from a value that is not an array"),
        (Ok(v), Frame::Single(Ok(_))) => assert!(!v.is_array(), "an array parsed as one message"),
    }
    match &frame {
        Frame::Single(item) => check(item),
        Frame::Batch(items) => {
            items.iter().for_each(check);
            // The batch encoder writes one array holding each element's encoding.
            let encoded: Vec<Outgoing> = items
                .iter()
                .map(|item| match item {
                    Ok(message) => encode(message),
                    Err(invalid) => wire::error_response(invalid.id.as_ref(), &invalid.error),
                })
                .collect();
            match reparse(&wire::batch(&encoded)) {
                Frame::Batch(back) => assert_eq!(back.len(), items.len()),
                other => panic!("a re-encoded batch parsed as {other:?}"),
            }
        }
    }
});
