//! Inputs the fuzz targets (runtime/fuzz, see RELIABILITY.md) found to break an invariant,
//! replayed through the same API so that they stay fixed.
//!
//! jsonrpc_frame, artifact crash-58ef36c69b436e3c7f863730f90e1fdc3983d060: a numeric id with a
//! long mantissa was read one unit in the last place off by serde_json's default (fast,
//! approximate) float parser, so what the runtime echoed was not the id the client sent, and
//! parsing the runtime's own encoding gave yet another number. Fixed by serde_json's
//! `float_roundtrip` feature (root Cargo.toml). Under `cargo test` a dev-dependency
//! (jsonschema) enables that feature anyway, so the behaviour tests below pass either way;
//! `the_shipped_build_parses_numbers_exactly` checks the manifest that the shipped build
//! (no dev-dependencies) gets it from, and the fuzz smoke run replays the input there.

mod kit;

use kit::stdio::Stdio;
use mcp_runtime::model::Implementation;
use mcp_runtime::wire::{self, Encoded, Frame, Message};
use mcp_runtime::Server;
use serde_json::Value;

/// The crash input of the jsonrpc_frame target, verbatim.
const LONG_ID_RESPONSE: &[u8] =
    br#"{"jsonrpc":"2.0","id":172222222222222222222222222222222222222222222222222,"result":{}}"#;

/// Numbers as a client (JavaScript, Python) writes a double: shortest round-trip form.
const FLOAT_LITERALS: &[&str] = &[
    "172222222222222222222222222222222222222222222222222",
    "1.7222222222222221e50",
    "123456789.12345679",
    "0.30000000000000004",
];

#[test]
fn a_parsed_message_re_encodes_to_the_same_message() {
    let Frame::Single(Ok(message)) = wire::parse_frame(LONG_ID_RESPONSE) else {
        panic!("the input is a valid response");
    };
    let Message::Response {
        id,
        outcome: Ok(result),
    } = &message
    else {
        panic!("a response with a result: {message:?}");
    };
    let encoded = wire::result_response(id, Encoded::of(result).expect("encodes"));
    let Frame::Single(Ok(again)) = wire::parse_frame(encoded.json().as_bytes()) else {
        panic!("the re-encoding parses");
    };
    assert_eq!(again, message, "re-encoded as {}", encoded.json());
}

#[test]
fn the_shipped_build_parses_numbers_exactly() {
    let manifest =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml"))
            .expect("the workspace manifest");
    let line = manifest
        .lines()
        .find(|l| l.trim_start().starts_with("serde_json ="))
        .expect("a workspace serde_json dependency");
    assert!(
        line.contains("\"float_roundtrip\""),
        "serde_json needs float_roundtrip: {line}"
    );
}

#[test]
fn numbers_are_read_exactly() {
    for literal in FLOAT_LITERALS {
        let exact: f64 = literal.parse().expect("a number");
        let value: Value = serde_json::from_str(literal).expect("JSON");
        assert_eq!(value.as_f64(), Some(exact), "{literal}");
        let again: Value = serde_json::from_str(&value.to_string()).expect("JSON");
        assert_eq!(again, value, "{literal} written as {value}");
    }
}

#[tokio::test]
async fn a_float_request_id_is_echoed_as_sent_over_stdio() {
    let server = Server::builder(Implementation::new("fuzz-regressions", "1.0.0")).build();
    let mut client = Stdio::serve(server);
    for literal in FLOAT_LITERALS {
        // `ping` is answered before `initialize`.
        let request = format!(r#"{{"jsonrpc":"2.0","id":{literal},"method":"ping"}}"#);
        client.send_raw(&request).await;
        let line = client.recv_text().await;
        // The id as written on the wire, read as a client would (a correctly rounding parser).
        let id_text = line
            .split(r#""id":"#)
            .nth(1)
            .and_then(|rest| rest.split([',', '}']).next())
            .unwrap_or_else(|| panic!("no id in {line}"));
        let echoed: f64 = id_text
            .parse()
            .unwrap_or_else(|_| panic!("id {id_text} in {line}"));
        assert_eq!(
            echoed,
            literal.parse::<f64>().expect("a number"),
            "{literal} answered {line}"
        );
    }
    client.finish().await;
}
