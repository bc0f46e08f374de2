//! What an elicitation looks like in each revision: the forms of 2025-11-25 (titled
//! enums, multi-select, defaults) downgraded or refused for 2025-06-18, URL mode only
//! where it exists.

use mcp_runtime::Ask;
use mcp_runtime::ProtocolVersion::{V2025_06_18, V2025_11_25, V2026_07_28};
use serde_json::json;

fn form(properties: serde_json::Value) -> Ask {
    Ask::Elicit {
        message: "Choose".into(),
        requested_schema: json!({"type": "object", "properties": properties}),
    }
}

#[test]
fn titled_single_select_becomes_enum_names_in_2025_06_18() {
    let ask = form(
        json!({"room": {"type": "string", "title": "Room", "oneOf": [{"const": "s", "title": "Single"}, {"const": "d", "title": "Double"}], "default": "d"}}),
    );
    let old = ask.request_params(V2025_06_18).expect("expressible");
    assert_eq!(
        old["requestedSchema"]["properties"]["room"],
        json!({"type": "string", "title": "Room", "enum": ["s", "d"], "enumNames": ["Single", "Double"]})
    );
    let new = ask.request_params(V2025_11_25).expect("expressible");
    assert_eq!(
        new["requestedSchema"]["properties"]["room"]["oneOf"][1]["title"],
        "Double"
    );
    assert_eq!(new["requestedSchema"]["properties"]["room"]["default"], "d");
}

#[test]
fn defaults_are_dropped_and_multi_select_refused_in_2025_06_18() {
    let ask = form(
        json!({"name": {"type": "string", "default": "Ada"}, "age": {"type": "integer", "default": 30}}),
    );
    let old = ask.request_params(V2025_06_18).expect("expressible");
    assert!(old["requestedSchema"]["properties"]["name"]
        .get("default")
        .is_none());
    assert_eq!(
        ask.request_params(V2025_11_25).expect("ok")["requestedSchema"]["properties"]["age"]
            ["default"],
        30
    );
    let multi =
        form(json!({"extras": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}}));
    assert!(
        multi.request_params(V2025_06_18).is_err(),
        "a multi-select cannot be expressed in 2025-06-18"
    );
    assert!(multi.request_params(V2025_11_25).is_ok());
}

#[test]
fn url_mode_exists_from_2025_11_25() {
    let ask = Ask::ElicitUrl {
        message: "Sign in".into(),
        url: "https://example.com/auth".into(),
        elicitation_id: "e-1".into(),
    };
    assert!(ask.request_params(V2025_06_18).is_err());
    let p = ask.request_params(V2025_11_25).expect("2025-11-25");
    assert_eq!(
        p,
        json!({"mode": "url", "message": "Sign in", "url": "https://example.com/auth", "elicitationId": "e-1"})
    );
    assert_eq!(
        ask.request_params(V2026_07_28).expect("2026-07-28")["mode"],
        "url"
    );
    assert_eq!(ask.method(), "elicitation/create");
    assert_eq!(ask.capability(), "elicitation");
}
