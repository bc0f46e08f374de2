//! The decoding of unions that try their members one after the other (best-match shapes,
//! untagged unions, batches): every member's shape, values that fit two members, and
//! invalid values give exactly these results. The expected texts were taken from the
//! generator as it was before candidates stopped being copied (each tried on a copy of
//! the value; now the last one takes the value itself), and must not change with it.

use std::fmt::Debug;

use mcp_generated::{v2025_03_26 as v2, v2025_11_25 as v4, v2026_07_28 as v5};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

/// The decode's outcome as text: the member chosen and its contents, or the error.
fn decoded<T: DeserializeOwned + Debug>(value: Value) -> String {
    match serde_json::from_value::<T>(value) {
        Ok(v) => format!("{v:?}"),
        Err(e) => format!("error: {e}"),
    }
}

/// Every case decoded; all the differences named at once.
fn check<T: DeserializeOwned + Debug>(cases: &[(Value, &str)]) {
    let differences: Vec<String> = cases
        .iter()
        .filter_map(|(value, expected)| {
            let got = decoded::<T>(value.clone());
            (got != *expected)
                .then(|| format!("{value}\n  got:      {got}\n  expected: {expected}"))
        })
        .collect();
    assert!(
        differences.is_empty(),
        "{}:\n{}",
        std::any::type_name::<T>(),
        differences.join("\n")
    );
}

/// Text or blob contents, with the cases shared by the two best-match unions of them.
fn contents_cases(text: &'static str, blob: &'static str) -> Vec<(Value, String)> {
    vec![
        // Each member's own shape.
        (
            json!({"uri": "mem://a", "text": "hello", "mimeType": "text/plain"}),
            format!(
                r#"{text}(TextResourceContents {{ meta: None, mime_type: Some("text/plain"), text: "hello", uri: "mem://a" }})"#
            ),
        ),
        (
            json!({"uri": "mem://b", "blob": "aGk="}),
            format!(
                r#"{blob}(BlobResourceContents {{ blob: "aGk=", meta: None, mime_type: None, uri: "mem://b" }})"#
            ),
        ),
        // Both fit: the first in rank decodes.
        (
            json!({"uri": "mem://c", "text": "t", "blob": "b"}),
            format!(
                r#"{text}(TextResourceContents {{ meta: None, mime_type: None, text: "t", uri: "mem://c" }})"#
            ),
        ),
        // Both fit, the first fails deeper down: the next one decodes (the value itself).
        (
            json!({"uri": "mem://d", "text": 5, "blob": "b"}),
            format!(
                r#"{blob}(BlobResourceContents {{ blob: "b", meta: None, mime_type: None, uri: "mem://d" }})"#
            ),
        ),
        // Both fit, both fail: the first one's error.
        (
            json!({"uri": "mem://e", "text": 5, "blob": 6}),
            "error: invalid type: integer `5`, expected a string".into(),
        ),
        // One fits and fails: its error.
        (
            json!({"uri": 1, "text": "t"}),
            "error: invalid type: integer `1`, expected a string".into(),
        ),
        // None fits: the closest member's error.
        (
            json!({"uri": "mem://f"}),
            "error: missing field `text`".into(),
        ),
        (json!({}), "error: missing field `text`".into()),
        // Not an object.
        (
            json!("mem://g"),
            "error: invalid type: a string, expected an object".into(),
        ),
        (
            json!(null),
            "error: invalid type: null, expected an object".into(),
        ),
        (
            json!([1]),
            "error: invalid type: an array, expected an object".into(),
        ),
    ]
}

fn check_contents<T: DeserializeOwned + Debug>(text: &'static str, blob: &'static str) {
    let cases = contents_cases(text, blob);
    let cases: Vec<(Value, &str)> = cases.iter().map(|(v, e)| (v.clone(), e.as_str())).collect();
    check::<T>(&cases);
}

#[test]
fn embedded_resource_contents_decode_as_before() {
    check_contents::<v4::EmbeddedResourceResource>("TextResourceContents", "BlobResourceContents");
    check_contents::<v5::EmbeddedResourceResource>("TextResourceContents", "BlobResourceContents");
}

#[test]
fn read_resource_contents_decode_as_before() {
    check_contents::<v4::ReadResourceResultContentsItem>(
        "TextResourceContents",
        "BlobResourceContents",
    );
    check_contents::<v5::ReadResourceResultContentsItem>(
        "TextResourceContents",
        "BlobResourceContents",
    );
}

#[test]
fn untagged_ids_and_tokens_decode_as_before() {
    let cases = [
        (json!(7), "Integer(7)"),
        (json!(-3), "Integer(-3)"),
        (json!("seven"), r#"String("seven")"#),
        (json!(""), r#"String("")"#),
        (
            json!(1.5),
            "error: data did not match any variant of untagged enum RequestId",
        ),
        (
            json!(null),
            "error: data did not match any variant of untagged enum RequestId",
        ),
        (
            json!({"id": 1}),
            "error: data did not match any variant of untagged enum RequestId",
        ),
    ];
    check::<v4::RequestId>(&cases);
    check::<v5::RequestId>(&cases);
    let cases: Vec<(Value, String)> = cases
        .iter()
        .map(|(v, e)| (v.clone(), e.replace("RequestId", "ProgressToken")))
        .collect();
    let cases: Vec<(Value, &str)> = cases.iter().map(|(v, e)| (v.clone(), e.as_str())).collect();
    check::<v4::ProgressToken>(&cases);
}

#[test]
fn batches_decode_as_before() {
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let response = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
    let decoded_as = |value: Value| {
        let text = decoded::<v2::JsonrpcMessage>(value);
        text.split('(').next().unwrap_or_default().to_owned()
    };
    // A batch of requests is the first array member, of responses the second (the last,
    // which takes the value itself); an empty array the first.
    assert_eq!(decoded_as(json!([request.clone()])), "Variant2");
    assert_eq!(decoded_as(json!([response.clone()])), "Variant5");
    assert_eq!(decoded_as(json!([])), "Variant2");
    // Neither: the last member's error.
    check::<v2::JsonrpcMessage>(&[
        (
            json!([1]),
            "error: data did not match any variant of untagged enum JsonrpcMessageVariant5Item",
        ),
        (
            json!([request, response]),
            "error: data did not match any variant of untagged enum JsonrpcMessageVariant5Item",
        ),
        (
            json!("x"),
            "error: invalid type: string \"x\", expected a sequence",
        ),
        (
            json!(null),
            "error: invalid type: null, expected a sequence",
        ),
    ]);
}
