//! What the generated types promise beyond round-tripping: unions pick their member by
//! the right rule, errors name the real problem, and values keep their exact form.

use mcp_generated::{
    v2024_11_05 as v1, v2025_03_26 as v2, v2025_06_18 as v3, v2025_11_25 as v4, v2026_07_28 as v5,
};
use serde_json::json;

#[test]
fn requests_are_chosen_by_method_in_every_revision() {
    let call =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo"}});
    assert!(matches!(
        serde_json::from_value::<v1::ClientRequest>(call.clone()),
        Ok(v1::ClientRequest::CallToolRequest(_))
    ));
    assert!(matches!(
        serde_json::from_value::<v3::ClientRequest>(call.clone()),
        Ok(v3::ClientRequest::CallToolRequest(_))
    ));
    assert!(matches!(
        serde_json::from_value::<v4::ClientRequest>(call),
        Ok(v4::ClientRequest::CallToolRequest(_))
    ));
    let discover = json!({"jsonrpc": "2.0", "id": "d", "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    }}});
    assert!(matches!(
        serde_json::from_value::<v5::ClientRequest>(discover),
        Ok(v5::ClientRequest::DiscoverRequest(_))
    ));
    let list_changed = json!({"method": "notifications/tools/list_changed"});
    assert!(matches!(
        serde_json::from_value::<v2::ServerNotification>(list_changed),
        Ok(v2::ServerNotification::ToolListChangedNotification(_))
    ));
}

#[test]
fn errors_name_the_real_problem() {
    let err =
        serde_json::from_value::<v3::ClientRequest>(json!({"method": "tools/call", "params": {}}))
            .unwrap_err();
    assert!(err.to_string().contains("missing field `name`"), "{err}");
    let err =
        serde_json::from_value::<v3::ClientRequest>(json!({"method": "tools/cal", "params": {}}))
            .unwrap_err();
    assert!(
        err.to_string()
            .contains("unknown `method` value `tools/cal`"),
        "{err}"
    );
    let err = serde_json::from_value::<v3::ClientRequest>(json!({"params": {}})).unwrap_err();
    assert!(err.to_string().contains("missing field `method`"), "{err}");
    let err = serde_json::from_value::<v3::ContentBlock>(json!({"type": "text"})).unwrap_err();
    assert!(err.to_string().contains("missing field `text`"), "{err}");
    // A const field checked on its own type.
    let err = serde_json::from_value::<v3::TextContent>(json!({"type": "image", "text": "x"}))
        .unwrap_err();
    assert!(err.to_string().contains("expected \"text\""), "{err}");
    // Envelope: a request without `id` but with a result-like body is not silently a notification.
    let err = serde_json::from_value::<v4::JsonrpcMessage>(json!({"jsonrpc": "2.0", "id": 3}))
        .unwrap_err();
    assert!(
        !err.to_string().contains("did not match any variant"),
        "{err}"
    );
}

#[test]
fn content_is_chosen_by_type() {
    let audio = json!({"type": "audio", "data": "AAAA", "mimeType": "audio/wav"});
    assert!(matches!(
        serde_json::from_value::<v5::ContentBlock>(audio.clone()),
        Ok(v5::ContentBlock::AudioContent(_))
    ));
    assert!(matches!(
        serde_json::from_value::<v2::CallToolResultContentItem>(audio),
        Ok(v2::CallToolResultContentItem::AudioContent(_))
    ));
    let link = json!({"type": "resource_link", "uri": "file:///a", "name": "a"});
    assert!(matches!(
        serde_json::from_value::<v3::ContentBlock>(link),
        Ok(v3::ContentBlock::ResourceLink(_))
    ));
    // 2024-11-05 has no audio: it is an error, not a mis-parse as an image.
    let err = serde_json::from_value::<v1::CallToolResultContentItem>(
        json!({"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("unknown `type` value `audio`"),
        "{err}"
    );
}

#[test]
fn the_envelope_tells_requests_notifications_responses_and_errors_apart() {
    let parse = |v| serde_json::from_value::<v4::JsonrpcMessage>(v).expect("parse");
    assert!(matches!(
        parse(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})),
        v4::JsonrpcMessage::Request(_)
    ));
    assert!(matches!(
        parse(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})),
        v4::JsonrpcMessage::Notification(_)
    ));
    assert!(matches!(
        parse(json!({"jsonrpc": "2.0", "id": 1, "result": {}})),
        v4::JsonrpcMessage::ResultResponse(_)
    ));
    assert!(matches!(
        parse(
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}})
        ),
        v4::JsonrpcMessage::ErrorResponse(_)
    ));
    // 2025-03-26 batches.
    let batch = json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "method": "notifications/initialized"}]);
    let parsed: v2::JsonrpcMessage = serde_json::from_value(batch.clone()).expect("batch");
    assert_eq!(serde_json::to_value(&parsed).expect("encode"), batch);
}

#[test]
fn results_are_parsed_by_the_method_they_answer() {
    // Same shape, different methods: tasks/get and tasks/cancel results.
    let task = json!({"taskId": "t1", "status": "working", "createdAt": "2025-11-25T00:00:00Z", "lastUpdatedAt": "2025-11-25T00:00:00Z", "ttl": null});
    assert!(matches!(
        v4::parse_result("tasks/get", task.clone()),
        Some(Ok(v4::AnyResult::GetTaskResult(_)))
    ));
    assert!(matches!(
        v4::parse_result("tasks/cancel", task),
        Some(Ok(v4::AnyResult::CancelTaskResult(_)))
    ));
    assert!(matches!(
        v3::parse_result("ping", json!({})),
        Some(Ok(v3::AnyResult::EmptyResult(_)))
    ));
    let err = v3::parse_result("tools/list", json!({}))
        .expect("request")
        .unwrap_err();
    assert!(err.to_string().contains("missing field `tools`"), "{err}");
    assert!(v3::parse_result("notifications/initialized", json!({})).is_none());
    // 2026-07-28: the answer to tools/call is a tool result or an input-required result.
    let input_required =
        json!({"resultType": "input_required", "inputRequests": {"a": {"method": "roots/list"}}});
    assert!(matches!(
        v5::parse_result("tools/call", input_required),
        Some(Ok(v5::AnyResult::CallToolResultResponseResult(
            v5::CallToolResultResponseResult::InputRequiredResult(_)
        )))
    ));
}

#[test]
fn ids_keep_their_json_type_and_numbers_their_form() {
    for id in [json!(7), json!("7")] {
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
        let back = serde_json::to_value(
            serde_json::from_value::<v3::JsonrpcRequest>(msg.clone()).expect("parse"),
        )
        .expect("encode");
        assert_eq!(back["id"], id);
    }
    let progress = json!({"method": "notifications/progress", "params": {"progressToken": 1, "progress": 50, "total": 100.5}});
    let parsed: v3::ProgressNotification = serde_json::from_value(progress.clone()).expect("parse");
    assert!(serde_json::to_string(&parsed)
        .expect("encode")
        .contains("\"progress\":50,"));
    assert_eq!(serde_json::to_value(&parsed).expect("encode"), progress);
}

#[test]
fn empty_objects_and_arrays_survive_and_absent_stays_absent() {
    let caps = json!({"logging": {}, "tools": {}});
    let parsed: v3::ServerCapabilities = serde_json::from_value(caps.clone()).expect("parse");
    assert_eq!(serde_json::to_value(&parsed).expect("encode"), caps);
    let tool = json!({"name": "t", "inputSchema": {"type": "object"}, "icons": []});
    let parsed: v4::Tool = serde_json::from_value(tool.clone()).expect("parse");
    assert_eq!(serde_json::to_value(&parsed).expect("encode"), tool);
    let bare = json!({"name": "t", "inputSchema": {"type": "object"}});
    let parsed: v4::Tool = serde_json::from_value(bare.clone()).expect("parse");
    assert_eq!(serde_json::to_value(&parsed).expect("encode"), bare);
}

#[test]
fn unknown_keys_are_kept_on_messages_and_results_and_dropped_inside() {
    // Results and messages are open: what a newer peer sent survives.
    let result = json!({"content": [], "futureField": 1});
    let parsed: v3::CallToolResult = serde_json::from_value(result.clone()).expect("parse");
    assert_eq!(serde_json::to_value(&parsed).expect("encode"), result);
    // Content is closed: an older revision's type cannot carry a newer field.
    let text = json!({"type": "text", "text": "hi", "annotations": {"priority": 1, "lastModified": "2025-01-01T00:00:00Z"}});
    let parsed: v2::TextContent = serde_json::from_value(text).expect("parse");
    let back = serde_json::to_value(&parsed).expect("encode");
    assert_eq!(
        back,
        json!({"type": "text", "text": "hi", "annotations": {"priority": 1}})
    );
    // A 2025-06-18 tool title does not exist in 2025-03-26.
    let tool = json!({"name": "t", "title": "T", "inputSchema": {"type": "object"}});
    let parsed: v2::Tool = serde_json::from_value(tool).expect("parse");
    assert!(serde_json::to_value(&parsed)
        .expect("encode")
        .get("title")
        .is_none());
}

#[test]
fn method_tables_are_typed_and_looked_up_by_string() {
    use mcp_generated::{Method, Request};
    fn method_of<M: Request>() -> &'static str {
        M::METHOD
    }
    assert_eq!(method_of::<v3::methods::CallTool>(), "tools/call");
    let params: <v3::methods::CallTool as Method>::Params =
        serde_json::from_value(json!({"name": "x"})).expect("params");
    assert_eq!(params.name, "x");
    let info = v5::method("server/discover").expect("discover");
    assert_eq!(info.result, Some("DiscoverResult"));
    assert!(
        v5::method("initialize").is_none(),
        "2026-07-28 has no initialize"
    );
    assert!(v1::method("elicitation/create").is_none());
    assert_eq!(
        mcp_generated::REVISIONS,
        [
            "2024-11-05",
            "2025-03-26",
            "2025-06-18",
            "2025-11-25",
            "2026-07-28"
        ]
    );
}

#[test]
fn tool_json_schemas_are_carried_verbatim_in_every_revision() {
    let input_schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object"}},
        "properties": {"address": {"$ref": "#/$defs/address"}},
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}},
        "then": {"required": ["phone"]},
        "additionalProperties": false
    });
    let tool = json!({"name": "t", "inputSchema": input_schema});
    macro_rules! check {
        ($($m:ident),*) => {$(
            let parsed: $m::Tool = serde_json::from_value(tool.clone()).expect("parse");
            assert_eq!(serde_json::to_value(&parsed).expect("encode")["inputSchema"], input_schema, "{}", stringify!($m));
        )*};
    }
    check!(v1, v2, v3, v4, v5);
}

/// A struct whose `_meta` is required (the 2026-07-28 request params) decodes from params
/// whose `_meta` was taken out and decoded apart exactly as from the params as sent: the
/// same value, and the same error for another member.
#[test]
fn params_decode_with_their_meta_given_apart_as_with_it_in_place() {
    use mcp_generated::support::{FromParams, FromValue};
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {"roots": {}}});
    let apart = |params: &serde_json::Value| {
        let mut rest = params.clone();
        if let Some(map) = rest.as_object_mut() {
            map.shift_remove("_meta");
        }
        let typed = v5::RequestMetaObject::from_value(meta.clone()).ok();
        v5::CallToolRequestParams::from_params(rest, typed).map_err(|e| e.to_string())
    };
    for params in [
        json!({"_meta": meta, "name": "echo", "arguments": {"a": 1}}),
        json!({"name": "echo", "_meta": meta}),
        json!({"name": 7, "_meta": meta}),
        json!({"_meta": meta, "name": "echo", "arguments": 5, "requestState": 1}),
        json!({"_meta": meta}),
    ] {
        let whole =
            v5::CallToolRequestParams::from_value(params.clone()).map_err(|e| e.to_string());
        assert_eq!(apart(&params), whole, "{params}");
    }
    // Without a `_meta` given or in place, it is missing as ever.
    let missing = v5::CallToolRequestParams::from_params(json!({"name": "echo"}), None);
    assert_eq!(
        missing.map_err(|e| e.to_string()).err().as_deref(),
        Some("missing field `_meta`")
    );
}
