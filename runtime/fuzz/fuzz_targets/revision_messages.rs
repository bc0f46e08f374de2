//! Fuzzes the generated types of every MCP revision (mcp-generated): the bytes, when they
//! are JSON, are decoded as each revision's message unions (`ClientRequest`,
//! `ClientNotification`, `ClientResult`, `ServerRequest`, `ServerNotification`,
//! `ServerResult`, `JsonrpcMessage`, `JsonrpcResponse`, where the revision has them), as
//! the other unions the generator writes a decoder for (content blocks, elicitation
//! schemas, 2026-07-28 input requests/responses and `…ResultResponse`), and as the result of
//! each of its request methods (`parse_result`). Invariants: decoding never panics, and whatever
//! decodes re-encodes to JSON that decodes again to an equal value and re-encodes to the
//! same JSON (the generated union dispatch picks the same member the second time).
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::fmt::Debug;

fn roundtrip<T>(value: &Value, what: &str)
where
    T: DeserializeOwned + Serialize + PartialEq + Debug,
{
    let Ok(decoded) = T::deserialize(value) else {
        return;
    };
    let encoded = serde_json::to_value(&decoded).expect("a decoded value encodes");
    let again: T = serde_json::from_value(encoded.clone())
        .unwrap_or_else(|e| panic!("{what}: re-encoded {encoded} does not decode: {e}"));
    assert_eq!(
        decoded, again,
        "{what}: decode(encode(x)) != x for {encoded}"
    );
    let encoded_again = serde_json::to_value(&again).expect("encodes");
    assert_eq!(
        encoded, encoded_again,
        "{what}: the second encoding differs"
    );
}

macro_rules! revision {
    ($value:expr, $rev:ident, [$($ty:ident),*]) => {{
        use mcp_generated::$rev as r;
        $( roundtrip::<r::$ty>($value, concat!(stringify!($rev), "::", stringify!($ty))); )*
        // Once per result type (many methods share one, e.g. the empty result); a result is
        // an object (a struct also decodes from an array, so arrays are tried too).
        let mut tried = std::collections::BTreeSet::new();
        let candidates = r::METHODS.iter().filter(|m| m.result.is_some_and(|t| tried.insert(t)));
        for info in candidates.filter(|_| $value.is_object() || $value.is_array()) {
            let Some(Ok(decoded)) = r::parse_result(info.name, $value.clone()) else { continue };
            let encoded = serde_json::to_value(&decoded).expect("a decoded result encodes");
            let again = match r::parse_result(info.name, encoded.clone()) {
                Some(Ok(again)) => again,
                other => panic!("{} {}: re-encoded result {encoded} gives {other:?}", stringify!($rev), info.name),
            };
            assert_eq!(decoded, again, "{} {}: result changed through {encoded}", stringify!($rev), info.name);
            assert_eq!(encoded, serde_json::to_value(&again).expect("encodes"));
        }
    }};
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let value = &value;
    revision!(
        value,
        v2024_11_05,
        [
            ClientRequest,
            ClientNotification,
            ClientResult,
            ServerRequest,
            ServerNotification,
            ServerResult,
            JsonrpcMessage,
            CallToolResultContentItem,
            PromptMessageContent
        ]
    );
    revision!(
        value,
        v2025_03_26,
        [
            ClientRequest,
            ClientNotification,
            ClientResult,
            ServerRequest,
            ServerNotification,
            ServerResult,
            JsonrpcMessage,
            JsonrpcBatchRequestItem,
            JsonrpcBatchResponseItem
        ]
    );
    revision!(
        value,
        v2025_06_18,
        [
            ClientRequest,
            ClientNotification,
            ClientResult,
            ServerRequest,
            ServerNotification,
            ServerResult,
            JsonrpcMessage,
            ContentBlock,
            PrimitiveSchemaDefinition
        ]
    );
    revision!(
        value,
        v2025_11_25,
        [
            ClientRequest,
            ClientNotification,
            ClientResult,
            ServerRequest,
            ServerNotification,
            ServerResult,
            JsonrpcMessage,
            JsonrpcResponse,
            ContentBlock,
            ElicitRequestParams,
            PrimitiveSchemaDefinition,
            EnumSchema,
            SamplingMessageContent
        ]
    );
    // 2026-07-28 has no server requests (asks travel inside results: InputRequest).
    revision!(
        value,
        v2026_07_28,
        [
            ClientRequest,
            ClientNotification,
            ClientResult,
            ServerNotification,
            ServerResult,
            JsonrpcMessage,
            JsonrpcResponse,
            InputRequest,
            InputResponse,
            CallToolResultResponse,
            GetPromptResultResponse,
            ReadResourceResultResponse,
            ContentBlock,
            ElicitRequestParams,
            PrimitiveSchemaDefinition,
            EnumSchema
        ]
    );
});
