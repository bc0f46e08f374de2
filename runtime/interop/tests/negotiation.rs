//! Version negotiation, exhaustively: every requested value (each revision, unknown,
//! malformed, missing) against every set of supported revisions (all 32).

use mcp_runtime::protocol::version::{
    negotiate_initialize, negotiate_modern, Era, ProtocolVersion, VersionSet,
};
use mcp_runtime::ErrorCode;
use serde_json::{json, Value};

fn all_sets() -> impl Iterator<Item = VersionSet> {
    (0u8..32).map(|bits| {
        let members: Vec<ProtocolVersion> = ProtocolVersion::ALL
            .into_iter()
            .enumerate()
            .filter(|(i, _)| bits & (1 << i) != 0)
            .map(|(_, v)| v)
            .collect();
        VersionSet::of(&members)
    })
}

fn requested_values() -> Vec<Option<Value>> {
    let mut values: Vec<Option<Value>> = ProtocolVersion::ALL
        .iter()
        .map(|v| Some(json!(v.as_str())))
        .collect();
    values.extend([
        Some(json!("2099-01-01")),
        Some(json!("")),
        Some(json!("2025-06-18 ")),
        Some(json!(20250618)),
        Some(Value::Null),
        None,
    ]);
    values
}

#[test]
fn initialize_negotiation_for_every_pair() {
    let mut checked = 0;
    for supported in all_sets() {
        for requested in requested_values() {
            let params = match &requested {
                Some(v) => {
                    json!({"protocolVersion": v, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}})
                }
                None => json!({"capabilities": {}}),
            };
            let got = negotiate_initialize(Some(&params), supported);
            let requested_str = requested.as_ref().and_then(Value::as_str);
            let newest_legacy = supported.of_era(Era::Legacy).next_back();
            match requested_str {
                None => assert_eq!(
                    got.map_err(|e| e.code),
                    Err(ErrorCode::INVALID_PARAMS),
                    "{requested:?} {supported:?}"
                ),
                Some(s) => {
                    let exact = ProtocolVersion::parse(s)
                        .filter(|v| v.era() == Era::Legacy && supported.contains(*v));
                    match (exact, newest_legacy) {
                        (Some(v), _) => assert_eq!(got, Ok(v), "{s} {supported:?}"),
                        (None, Some(newest)) => assert_eq!(
                            got,
                            Ok(newest),
                            "{s} {supported:?}: unknown or unsupported gets the newest legacy"
                        ),
                        (None, None) => {
                            let err = got.expect_err("no legacy revision served");
                            assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
                            assert_eq!(
                                err.data.as_ref().and_then(|d| d.get("requested")),
                                Some(&json!(s))
                            );
                        }
                    }
                    // Never a modern revision, never a disabled one.
                    if let Ok(v) = negotiate_initialize(Some(&params), supported) {
                        assert_eq!(v.era(), Era::Legacy);
                        assert!(supported.contains(v));
                    }
                }
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 32 * 11);
    for malformed in [
        json!(null),
        json!([]),
        json!("2025-06-18"),
        json!({"protocolVersion": {"v": 1}}),
    ] {
        assert_eq!(
            negotiate_initialize(Some(&malformed), VersionSet::ALL).map_err(|e| e.code),
            Err(ErrorCode::INVALID_PARAMS)
        );
    }
    assert_eq!(
        negotiate_initialize(None, VersionSet::ALL).map_err(|e| e.code),
        Err(ErrorCode::INVALID_PARAMS)
    );
}

fn modern_params(version: Option<&Value>) -> Value {
    let mut meta = serde_json::Map::new();
    if let Some(v) = version {
        meta.insert("io.modelcontextprotocol/protocolVersion".into(), v.clone());
    }
    meta.insert(
        "io.modelcontextprotocol/clientCapabilities".into(),
        json!({"sampling": {}}),
    );
    json!({"_meta": meta})
}

#[test]
fn modern_negotiation_for_every_pair() {
    for supported in all_sets() {
        for requested in requested_values() {
            let params = modern_params(requested.as_ref());
            let got = negotiate_modern(Some(&params), supported);
            let ok = requested
                .as_ref()
                .and_then(Value::as_str)
                .and_then(ProtocolVersion::parse)
                .filter(|v| v.era() == Era::Modern && supported.contains(*v));
            match (requested.as_ref(), ok) {
                (None, _) => assert_eq!(got.map_err(|e| e.code), Err(ErrorCode::INVALID_PARAMS)),
                (Some(_), Some(v)) => {
                    let meta = got.expect("served");
                    assert_eq!(meta.version, v);
                    assert_eq!(*meta.client_capabilities, json!({"sampling": {}}));
                }
                (Some(req), None) => {
                    let err = got.expect_err("unsupported");
                    assert_eq!(
                        err.code,
                        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
                        "{req} {supported:?}"
                    );
                    let data = err.data.expect("data");
                    assert_eq!(data["requested"], *req);
                    let listed: Vec<&str> = data["supported"]
                        .as_array()
                        .expect("array")
                        .iter()
                        .filter_map(Value::as_str)
                        .collect();
                    let expected: Vec<&str> = supported
                        .iter()
                        .rev()
                        .map(ProtocolVersion::as_str)
                        .collect();
                    assert_eq!(listed, expected);
                }
            }
        }
    }
}

#[test]
fn modern_request_metadata_is_required() {
    let caps_key = "io.modelcontextprotocol/clientCapabilities";
    let version_key = "io.modelcontextprotocol/protocolVersion";
    let cases = [
        (None, "missing params"),
        (Some(json!({})), "missing _meta"),
        (Some(json!({"_meta": {caps_key: {}}})), "missing version"),
        (
            Some(json!({"_meta": {version_key: "2026-07-28"}})),
            "missing capabilities",
        ),
        (
            Some(json!({"_meta": {version_key: "2026-07-28", caps_key: []}})),
            "capabilities not an object",
        ),
    ];
    for (params, what) in cases {
        let err = negotiate_modern(params.as_ref(), VersionSet::ALL).expect_err(what);
        assert_eq!(err.code, ErrorCode::INVALID_PARAMS, "{what}");
    }
    // clientInfo and logLevel are optional and carried through.
    let params = json!({"_meta": {version_key: "2026-07-28", caps_key: {}, "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"}, "io.modelcontextprotocol/logLevel": "info"}});
    let meta = negotiate_modern(Some(&params), VersionSet::ALL).expect("ok");
    assert_eq!(meta.log_level.as_deref(), Some("info"));
    assert_eq!(
        meta.client_info.as_deref(),
        Some(&json!({"name": "c", "version": "1"}))
    );
}

#[test]
fn the_feature_table_matches_the_revisions() {
    use ProtocolVersion::*;
    let has = |f: fn(&mcp_runtime::Features) -> bool| -> Vec<ProtocolVersion> {
        ProtocolVersion::ALL
            .into_iter()
            .filter(|v| f(v.features()))
            .collect()
    };
    assert_eq!(has(|f| f.batching), vec![V2025_03_26]);
    assert_eq!(
        has(|f| f.audio_content),
        vec![V2025_03_26, V2025_06_18, V2025_11_25, V2026_07_28]
    );
    assert_eq!(
        has(|f| f.structured_output),
        vec![V2025_06_18, V2025_11_25, V2026_07_28]
    );
    assert_eq!(has(|f| f.url_elicitation), vec![V2025_11_25, V2026_07_28]);
    assert_eq!(has(|f| f.result_type), vec![V2026_07_28]);
    assert_eq!(has(|f| f.elicitation_complete), vec![V2025_11_25]);
    assert_eq!(has(|f| f.tasks), vec![V2025_11_25]);
    assert_eq!(
        has(|f| f.era == mcp_runtime::Era::Legacy),
        vec![V2024_11_05, V2025_03_26, V2025_06_18, V2025_11_25]
    );
    assert_eq!(V2026_07_28.features().resource_not_found_code, -32602);
    assert_eq!(V2025_11_25.features().resource_not_found_code, -32002);
    for v in ProtocolVersion::ALL {
        assert_eq!(ProtocolVersion::parse(v.as_str()), Some(v));
        // The generated crate has exactly these revisions.
        assert!(mcp_generated::REVISIONS.contains(&v.as_str()));
    }
    assert_eq!(mcp_generated::REVISIONS.len(), ProtocolVersion::ALL.len());
}

/// Every behaviour flag of `schema/revisions.toml` is read by the runtime: a flag nothing
/// reads would be data that describes nothing (its effect would come from projection or
/// the method tables instead, and the flag should go).
#[test]
fn every_behaviour_flag_is_read_by_the_runtime() {
    fn sources(dir: &std::path::Path, out: &mut String) {
        for entry in std::fs::read_dir(dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push_str(&std::fs::read_to_string(&path).expect("read"));
            }
        }
    }
    let mut code = String::new();
    // Every crate of the runtime: the core, and the transports and client built on it.
    for krate in ["core", "http", "redis", "client", "bridge"] {
        sources(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join(krate)
                .join("src"),
            &mut code,
        );
    }
    // `.name` as a whole word (not the prefix of a longer field), or a dispatch on it.
    let reads = |name: &str| {
        let field = format!(".{name}");
        code.match_indices(&field).any(|(at, _)| {
            !code[at + field.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        }) || code.contains(&format!("where {name},"))
    };
    for flag in mcp_codegen::behaviour::FLAGS {
        let read = reads(flag.name);
        assert!(
            read,
            "behaviour flag `{}` is read nowhere in runtime/src",
            flag.name
        );
    }
}
