//! The generated `io.modelcontextprotocol/tasks` types (`mcp_generated::ext::tasks`):
//! messages of every shape SEP-2663 shows decode into them and encode back unchanged, the
//! task unions pick their member by `status`, the method table names the extension's
//! methods, and (where the extension schema is available) each message is valid against
//! the official schema.
#![cfg(feature = "v2026_07_28")]

use mcp_generated::ext::tasks;
use mcp_generated::{Method, Request};
use serde_json::{json, Value};

/// The official extension schema, if available offline (cache, MCP_EXTENSION_SCHEMA_DIR,
/// or $MCP_SCHEMA_DIR/extensions/): CI's shared mirror does not hold it.
fn schema_doc() -> Option<Value> {
    let layout = mcp_codegen::Layout::workspace();
    let manifest = mcp_codegen::Manifest::load(&layout.manifest_path()).expect("manifest");
    let ext = manifest
        .extension(tasks::ID)
        .expect("tasks in the manifest");
    let source = mcp_codegen::extension::ExtensionSource::for_schema_source(
        &mcp_codegen::SchemaSource::offline(layout.cache_dir()),
        None,
    );
    match mcp_codegen::extension::load(ext, &source) {
        Ok(loaded) => Some(loaded.json),
        Err(e @ mcp_codegen::Error::ExtensionSchemaMissing { .. }) => {
            eprintln!("note: not validated against the official schema: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

fn assert_valid(doc: &Value, def: &str, instance: &Value) {
    let mut root = doc.clone();
    root["$ref"] = json!(format!("#/$defs/{def}"));
    let validator =
        jsonschema::validator_for(&root).unwrap_or_else(|e| panic!("validator for {def}: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "not a valid {def}: {errors:#?}\n{instance:#}"
    );
}

fn roundtrip<T: serde::de::DeserializeOwned + serde::Serialize>(value: &Value) -> T {
    let typed: T =
        serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("decode: {e}\n{value:#}"));
    let back = serde_json::to_value(&typed).expect("encode");
    assert_eq!(&back, value, "re-encoded value differs");
    typed
}

fn task(status: &str) -> Value {
    json!({
        "taskId": "task-1",
        "status": status,
        "createdAt": "2026-07-28T10:00:00Z",
        "lastUpdatedAt": "2026-07-28T10:00:05Z",
        "ttlMs": 60000,
        "pollIntervalMs": 1000,
    })
}

fn with(mut base: Value, extra: Value) -> Value {
    if let (Value::Object(b), Value::Object(e)) = (&mut base, extra) {
        b.extend(e);
    }
    base
}

/// `(definition, instance)`: one of each message and shape of the extension.
fn examples() -> Vec<(&'static str, Value)> {
    let input_requests = json!({
        "confirm": {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "Delete the file?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"ok": {"type": "boolean"}},
                    "required": ["ok"],
                },
            },
        },
    });
    let result = json!({"content": [{"type": "text", "text": "done"}], "isError": false});
    let error = json!({"code": -32603, "message": "the job crashed"});
    vec![
        (
            "CreateTaskResult",
            with(task("working"), json!({"resultType": "task"})),
        ),
        (
            "GetTaskRequest",
            json!({"jsonrpc": "2.0", "id": 7, "method": "tasks/get", "params": {"taskId": "task-1"}}),
        ),
        (
            "GetTaskResult",
            with(task("working"), json!({"resultType": "complete"})),
        ),
        (
            "GetTaskResult",
            with(
                task("input_required"),
                json!({"resultType": "complete", "inputRequests": input_requests}),
            ),
        ),
        (
            "GetTaskResult",
            with(
                task("completed"),
                json!({"resultType": "complete", "result": result}),
            ),
        ),
        (
            "GetTaskResult",
            with(
                task("failed"),
                json!({"resultType": "complete", "error": error}),
            ),
        ),
        (
            "GetTaskResult",
            with(
                task("cancelled"),
                json!({"resultType": "complete", "ttlMs": null, "statusMessage": "cancelled by the client"}),
            ),
        ),
        (
            "UpdateTaskRequest",
            json!({
                "jsonrpc": "2.0", "id": "u-1", "method": "tasks/update",
                "params": {
                    "taskId": "task-1",
                    "inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}},
                },
            }),
        ),
        ("UpdateTaskResult", json!({"resultType": "complete"})),
        (
            "CancelTaskRequest",
            json!({"jsonrpc": "2.0", "id": 9, "method": "tasks/cancel", "params": {"taskId": "task-1"}}),
        ),
        ("CancelTaskResult", json!({"resultType": "complete"})),
        (
            "TaskStatusNotification",
            json!({
                "jsonrpc": "2.0", "method": "notifications/tasks",
                "params": with(task("completed"), json!({"result": result})),
            }),
        ),
        (
            "DetailedTask",
            with(task("failed"), json!({"error": error})),
        ),
        ("TasksExtensionCapability", json!({})),
    ]
}

fn roundtrip_as(def: &str, value: &Value) {
    match def {
        "CreateTaskResult" => drop(roundtrip::<tasks::CreateTaskResult>(value)),
        "GetTaskRequest" => drop(roundtrip::<tasks::GetTaskRequest>(value)),
        "GetTaskResult" => drop(roundtrip::<tasks::GetTaskResult>(value)),
        "UpdateTaskRequest" => drop(roundtrip::<tasks::UpdateTaskRequest>(value)),
        "UpdateTaskResult" => drop(roundtrip::<tasks::UpdateTaskResult>(value)),
        "CancelTaskRequest" => drop(roundtrip::<tasks::CancelTaskRequest>(value)),
        "CancelTaskResult" => drop(roundtrip::<tasks::CancelTaskResult>(value)),
        "TaskStatusNotification" => drop(roundtrip::<tasks::TaskStatusNotification>(value)),
        "DetailedTask" => drop(roundtrip::<tasks::DetailedTask>(value)),
        "TasksExtensionCapability" => drop(roundtrip::<tasks::TasksExtensionCapability>(value)),
        other => panic!("no type for {other}"),
    }
}

#[test]
fn every_shape_decodes_and_encodes_back_unchanged_and_is_valid() {
    let doc = schema_doc();
    for (def, value) in examples() {
        roundtrip_as(def, &value);
        if let Some(doc) = &doc {
            assert_valid(doc, def, &value);
        }
    }
}

#[test]
fn task_unions_pick_their_member_by_status() {
    let completed = with(
        task("completed"),
        json!({"resultType": "complete", "result": {"content": []}}),
    );
    match serde_json::from_value::<tasks::GetTaskResult>(completed).expect("decode") {
        tasks::GetTaskResult::CompletedTask(t) => {
            assert_eq!(t.task_id, "task-1");
            assert_eq!(t.ttl_ms, Some(60000));
            assert!(t.result.contains_key("content"));
        }
        other => panic!("not the completed member: {other:?}"),
    }
    let waiting = with(
        task("input_required"),
        json!({"inputRequests": {"r": {"method": "roots/list"}}}),
    );
    match serde_json::from_value::<tasks::DetailedTask>(waiting).expect("decode") {
        tasks::DetailedTask::InputRequiredTask(t) => {
            assert!(matches!(
                t.input_requests.get("r"),
                Some(tasks::InputRequest::ListRootsRequest(_))
            ));
        }
        other => panic!("not the input_required member: {other:?}"),
    }
    // A status the extension does not define, or a shape missing what its status needs.
    assert!(serde_json::from_value::<tasks::DetailedTask>(task("running")).is_err());
    assert!(serde_json::from_value::<tasks::DetailedTask>(task("completed")).is_err());
    // `ttlMs` is required, and may be null (no expiry).
    let mut no_ttl = task("working");
    no_ttl.as_object_mut().expect("object").remove("ttlMs");
    assert!(serde_json::from_value::<tasks::WorkingTask>(no_ttl).is_err());
    let unlimited = with(task("working"), json!({"ttlMs": null}));
    let t: tasks::WorkingTask = roundtrip(&unlimited);
    assert_eq!(t.ttl_ms, None);
}

#[test]
fn the_method_table_names_the_extension_methods() {
    assert_eq!(tasks::ID, "io.modelcontextprotocol/tasks");
    assert_eq!(tasks::EXTENDS, ["2026-07-28"]);
    let names: Vec<&str> = tasks::METHODS.iter().map(|m| m.name).collect();
    assert_eq!(
        names,
        [
            "notifications/tasks",
            "tasks/cancel",
            "tasks/get",
            "tasks/update"
        ]
    );
    assert_eq!(<tasks::methods::GetTask as Method>::METHOD, "tasks/get");
    let info = tasks::method("tasks/update").expect("tasks/update");
    assert_eq!(info.kind, mcp_generated::Kind::Request);
    assert_eq!(info.result, Some("UpdateTaskResult"));
    assert!(
        tasks::method("tasks/result").is_none(),
        "removed by SEP-2663"
    );
    // The typed result of tasks/get is the generated union.
    let result: <tasks::methods::GetTask as Request>::Result =
        serde_json::from_value(with(task("working"), json!({"resultType": "complete"})))
            .expect("decode");
    assert!(matches!(result, tasks::GetTaskResult::WorkingTask(_)));
}
