//! Finding the revision to speak. A client that accepts 2026-07-28 probes with
//! `server/discover` first; a DiscoverResult or a recognized modern error
//! (`-32022` unsupported version, `-32020` header mismatch, `-32021` missing capability)
//! means a modern server — retry at a version it lists, never fall back. Any other error,
//! a transport refusal or silence means a legacy server: `initialize` with the newest
//! legacy revision the client accepts, and accept the server's counter-offer if the
//! client accepts it too.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::core::Core;
use super::error::{ClientError, ClientErrorKind};
use super::{shape, RequestOptions, ServerInfo};
use mcp_runtime::model::Implementation;
use mcp_runtime::protocol::method::McpMethod;
use mcp_runtime::protocol::version::{Era, ProtocolVersion, VersionSet, META_SERVER_INFO};
use mcp_runtime::wire::{self, ErrorCode};

/// What a probe learned.
enum Probe {
    /// A modern server, at this revision.
    Modern(Box<ServerInfo>),
    /// Not a modern server (or none we can speak to in a modern revision).
    Legacy,
}

/// Negotiates and records the revision in force.
pub(crate) async fn negotiate(core: &Arc<Core>) -> Result<ServerInfo, ClientError> {
    let versions = core.config.versions;
    if let Some(modern) = versions.of_era(Era::Modern).next_back() {
        match probe(core, modern, versions).await? {
            Probe::Modern(info) => {
                core.set_server(info.as_ref().clone());
                return Ok(*info);
            }
            Probe::Legacy => {}
        }
    }
    match versions.of_era(Era::Legacy).next_back() {
        Some(legacy) => initialize(core, legacy, versions).await,
        None => Err(ClientError::new(
            ClientErrorKind::Negotiation,
            "the server does not speak a modern revision this client accepts",
        )),
    }
}

/// Whether an error is one only a modern server sends.
fn is_modern_error(e: &ClientError) -> bool {
    e.rpc().is_some_and(|rpc| {
        matches!(
            rpc.code,
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
                | ErrorCode::HEADER_MISMATCH
                | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        )
    })
}

/// The newest modern revision in both the client's set and a server's list.
fn newest_common(ours: VersionSet, theirs: &[String]) -> Option<ProtocolVersion> {
    ours.of_era(Era::Modern)
        .rev()
        .find(|v| theirs.iter().any(|t| t == v.as_str()))
}

/// `server/discover` at `v`, retried at a version the server lists when it names others.
async fn probe(
    core: &Arc<Core>,
    mut v: ProtocolVersion,
    versions: VersionSet,
) -> Result<Probe, ClientError> {
    let options = RequestOptions::new().timeout(core.config.probe_timeout);
    // One retry per answer that names versions: enough for a server that rejects the
    // first request whatever it names, bounded against one that always does.
    for _attempt in 0..3 {
        match core
            .request(v, McpMethod::Discover.name(), Map::new(), &options)
            .await
        {
            Ok(result) => {
                let result = shape::result(v, McpMethod::Discover, result)?;
                let supported = wire::strings::<Vec<String>>(result.get("supportedVersions"));
                match newest_common(versions, &supported) {
                    Some(common) if common != v => v = common,
                    Some(_) => return Ok(Probe::Modern(Box::new(discovered(v, &result)))),
                    // A modern server that lists no modern revision we speak: maybe a
                    // legacy one.
                    None if supported.is_empty() => {
                        return Ok(Probe::Modern(Box::new(discovered(v, &result))))
                    }
                    None => return Ok(Probe::Legacy),
                }
            }
            Err(e)
                if e.rpc()
                    .is_some_and(|r| r.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION) =>
            {
                let supported = wire::strings::<Vec<String>>(
                    e.rpc()
                        .and_then(|r| r.data.as_ref())
                        .and_then(|d| d.get("supported")),
                );
                match newest_common(versions, &supported) {
                    Some(common) => v = common,
                    None if versions.of_era(Era::Legacy).next().is_some() => {
                        return Ok(Probe::Legacy)
                    }
                    None => {
                        return Err(ClientError::new(
                            ClientErrorKind::Negotiation,
                            format!(
                            "the server supports {supported:?}, none of which this client accepts"
                        ),
                        ))
                    }
                }
            }
            Err(e) if is_modern_error(&e) => return Err(e),
            Err(e)
                if matches!(
                    e.kind(),
                    ClientErrorKind::Closed | ClientErrorKind::Unauthorized
                ) =>
            {
                return Err(e)
            }
            // Anything else: a legacy server (or no server we can tell).
            Err(e) => {
                tracing::debug!("server/discover failed ({e}); trying initialize");
                return Ok(Probe::Legacy);
            }
        }
    }
    Err(ClientError::new(
        ClientErrorKind::Negotiation,
        "the server kept rejecting the protocol version it listed",
    ))
}

/// What a DiscoverResult says about the server.
fn discovered(v: ProtocolVersion, result: &Value) -> ServerInfo {
    let identity = result
        .get("_meta")
        .and_then(|m| m.get(META_SERVER_INFO))
        .or_else(|| result.get("serverInfo"))
        .and_then(|i| Implementation::from_json(i).ok());
    ServerInfo {
        version: v,
        implementation: identity,
        capabilities: result
            .get("capabilities")
            .cloned()
            .unwrap_or_else(|| json!({})),
        instructions: result
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_owned),
        supported_versions: wire::strings::<Vec<String>>(result.get("supportedVersions")),
    }
}

/// A new legacy session in place of one the server ended (HTTP 404), at the same
/// revision `v`: `initialize` without a session id (the spec's MUST), the log level the
/// caller set applied again, the resources it subscribed to subscribed again, the GET
/// stream reopened. Concurrent callers renew once. A subscription the new session refuses
/// (the resource is gone) is dropped with a warning: the request that found the session
/// ended is not failed for it.
pub(crate) async fn renew_session(core: &Arc<Core>, v: ProtocolVersion) -> Result<(), ClientError> {
    let _renewing = core.renewing.lock().await;
    if core.link().has_session() {
        // Another request renewed it while this one waited.
        return Ok(());
    }
    tracing::info!("the server ended the session; starting a new one at {v}");
    initialize(core, v, VersionSet::of(&[v])).await?;
    if let Some(level) = core.log_level() {
        let mut params = Map::new();
        params.insert("level".into(), json!(level));
        core.request(
            v,
            McpMethod::SetLevel.name(),
            params,
            &RequestOptions::new(),
        )
        .await?;
    }
    for uri in core.subscriptions() {
        let mut params = Map::new();
        params.insert("uri".into(), json!(uri));
        let subscribed = core
            .request(
                v,
                McpMethod::Subscribe.name(),
                params,
                &RequestOptions::new(),
            )
            .await;
        match subscribed {
            Ok(_) => {}
            Err(e) if e.kind() == ClientErrorKind::Rpc => {
                tracing::warn!(%uri, "the new session refused the subscription, dropped: {e}");
                core.record_subscription(&uri, false);
            }
            // The link failed: the renewal did, and the subscription is kept for the next.
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The legacy handshake: `initialize` offering `offer`, then `notifications/initialized`.
pub(crate) async fn initialize(
    core: &Arc<Core>,
    offer: ProtocolVersion,
    versions: VersionSet,
) -> Result<ServerInfo, ClientError> {
    let mut params = Map::new();
    params.insert("protocolVersion".into(), json!(offer.as_str()));
    params.insert(
        "capabilities".into(),
        shape::client_capabilities(offer, &core.config.capabilities()),
    );
    params.insert(
        "clientInfo".into(),
        shape::implementation(offer, &core.config.info),
    );
    let result = core
        .request(
            offer,
            McpMethod::Initialize.name(),
            params,
            &RequestOptions::new(),
        )
        .await?;
    let answered = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let v = ProtocolVersion::parse(&answered)
        .filter(|v| v.era() == Era::Legacy && versions.contains(*v))
        .ok_or_else(|| {
            ClientError::new(
                ClientErrorKind::Negotiation,
                format!("the server answered initialize with revision `{answered}`, which this client does not accept"),
            )
        })?;
    let result = shape::result(v, McpMethod::Initialize, result)?;
    let info = ServerInfo {
        version: v,
        implementation: result
            .get("serverInfo")
            .and_then(|i| Implementation::from_json(i).ok()),
        capabilities: result
            .get("capabilities")
            .cloned()
            .unwrap_or_else(|| json!({})),
        instructions: result
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_owned),
        supported_versions: vec![v.as_str().to_owned()],
    };
    core.set_server(info.clone());
    core.link().session_opened(v);
    core.session_began(v);
    core.notify(v, McpMethod::Initialized.name(), None).await?;
    core.link().listen().await;
    Ok(info)
}
