//! The set of revisions a server accepts and version negotiation as pure functions (the
//! revisions and their behaviour table are generated). No other module compares version strings.

use std::fmt;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::wire::{ErrorCode, RpcError};

// The revisions, their `Features` and `Era` are generated from `schema/revisions.toml`
// (`cargo codegen generate`): a revision added there is served without an edit here.
pub use mcp_generated::{Era, Features, ProtocolVersion};

const fn bit(v: ProtocolVersion) -> u64 {
    1 << (v as u32)
}

// A `VersionSet` is one bit per revision.
const _: () = assert!(ProtocolVersion::ALL.len() <= 64);

/// A set of revisions: the ones a server accepts.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct VersionSet(u64);

impl VersionSet {
    /// Every revision.
    pub const ALL: VersionSet = VersionSet(u64::MAX >> (64 - ProtocolVersion::ALL.len()));
    /// No revision.
    pub const EMPTY: VersionSet = VersionSet(0);

    /// The set of the given revisions.
    pub fn of(versions: &[ProtocolVersion]) -> VersionSet {
        VersionSet(versions.iter().fold(0, |acc, v| acc | bit(*v)))
    }

    /// Whether `v` is in the set.
    pub const fn contains(self, v: ProtocolVersion) -> bool {
        self.0 & bit(v) != 0
    }

    /// The set without `v`.
    pub const fn without(self, v: ProtocolVersion) -> VersionSet {
        VersionSet(self.0 & !bit(v))
    }

    /// Members, oldest first.
    pub fn iter(self) -> impl DoubleEndedIterator<Item = ProtocolVersion> {
        ProtocolVersion::ALL
            .into_iter()
            .filter(move |v| self.contains(*v))
    }

    /// Members of one era, oldest first.
    pub fn of_era(self, era: Era) -> impl DoubleEndedIterator<Item = ProtocolVersion> {
        self.iter().filter(move |v| v.era() == era)
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Debug for VersionSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set()
            .entries(self.iter().map(ProtocolVersion::as_str))
            .finish()
    }
}

/// `_meta` key carrying the revision of a modern request.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key carrying the client's capabilities on a modern request.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key carrying the client's identity on a modern request (optional).
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key carrying the requested log level on a modern request (optional).
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// Result `_meta` key carrying the server's identity (modern).
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// Legacy negotiation: the revision for an `initialize` request's params.
///
/// A supported legacy revision is echoed; an unknown or unsupported one (including a
/// modern revision, which has no `initialize`) gets the newest supported legacy revision
/// (the spec: "the server MUST respond with another protocol version it supports").
/// Malformed params (not an object, or no string `protocolVersion`) are `-32602`; a server
/// that accepts no legacy revision answers `-32602` too, naming what it does support.
pub fn negotiate_initialize(
    params: Option<&Value>,
    supported: VersionSet,
) -> Result<ProtocolVersion, RpcError> {
    let requested = params
        .and_then(Value::as_object)
        .and_then(|p| p.get("protocolVersion"))
        .and_then(Value::as_str)
        .ok_or_else(|| {
            RpcError::new(
                ErrorCode::INVALID_PARAMS,
                "initialize: params.protocolVersion must be a string",
            )
        })?;
    if let Some(v) = ProtocolVersion::parse(requested) {
        if v.era() == Era::Legacy && supported.contains(v) {
            return Ok(v);
        }
    }
    supported.of_era(Era::Legacy).next_back().ok_or_else(|| {
        RpcError::new(
            ErrorCode::INVALID_PARAMS,
            "this server supports no revision that uses initialize",
        )
        .with_data(json!({
            "supported": supported.iter().map(ProtocolVersion::as_str).collect::<Vec<_>>(),
            "requested": requested,
        }))
    })
}

/// What a modern request's `_meta` says, once validated.
#[derive(Clone, Debug, PartialEq)]
pub struct ModernRequestMeta {
    /// The revision the request is served at.
    pub version: ProtocolVersion,
    /// The client's capabilities (an object). Shared: every request that sends the same
    /// `_meta` gets these (see `wire::RequestMeta::derived`), and each request's context
    /// holds them.
    pub client_capabilities: Arc<Value>,
    /// The client's identity, if given.
    pub client_info: Option<Arc<Value>>,
    /// The requested minimum log level, if given.
    pub log_level: Option<String>,
}

/// Whether a request's params carry the modern `_meta` revision key (the request is then
/// served statelessly, whatever else it carries).
pub fn has_modern_meta(params: Option<&Value>) -> bool {
    meta_is_modern(crate::wire::member(params, "_meta"))
}

/// [`has_modern_meta`] of a request's `_meta` value (taken out of its params at parse
/// time, see `wire::RequestMeta`).
pub fn meta_is_modern(meta: Option<&Value>) -> bool {
    // Keys compared in place: the map is small, and hashing a key as long as these to
    // look it up costs more than comparing it with each key present.
    crate::wire::member(meta, META_PROTOCOL_VERSION).is_some()
}

/// Modern negotiation: validates a request's `_meta` and picks its revision.
///
/// Missing `_meta`, revision or capabilities: `-32602` (the spec's invalid-params for
/// request metadata). A revision that is not a supported modern one: `-32022` with
/// `data.supported` and `data.requested`.
pub fn negotiate_modern(
    params: Option<&Value>,
    supported: VersionSet,
) -> Result<ModernRequestMeta, RpcError> {
    negotiate_modern_meta(crate::wire::member(params, "_meta"), supported)
}

/// [`negotiate_modern`] of a request's `_meta` value (taken out of its params at parse
/// time, see `wire::RequestMeta`).
pub fn negotiate_modern_meta(
    meta: Option<&Value>,
    supported: VersionSet,
) -> Result<ModernRequestMeta, RpcError> {
    let meta = meta
        .and_then(Value::as_object)
        .ok_or_else(|| RpcError::new(ErrorCode::INVALID_PARAMS, "params._meta is required"))?;
    // One pass over the members (see `has_modern_meta`).
    let (mut requested, mut caps, mut client_info, mut log_level) = (None, None, None, None);
    for (key, value) in meta {
        match key.as_str() {
            META_PROTOCOL_VERSION => requested = Some(value),
            META_CLIENT_CAPABILITIES => caps = Some(value),
            META_CLIENT_INFO => client_info = Some(value),
            META_LOG_LEVEL => log_level = Some(value),
            _ => {}
        }
    }
    let requested = requested.ok_or_else(|| {
        RpcError::new(
            ErrorCode::INVALID_PARAMS,
            format!("params._meta[\"{META_PROTOCOL_VERSION}\"] is required"),
        )
    })?;
    let caps = caps.filter(|c| c.is_object()).ok_or_else(|| {
        RpcError::new(
            ErrorCode::INVALID_PARAMS,
            format!("params._meta[\"{META_CLIENT_CAPABILITIES}\"] must be an object"),
        )
    })?;
    let version = requested
        .as_str()
        .and_then(ProtocolVersion::parse)
        .filter(|v| v.era() == Era::Modern && supported.contains(*v))
        .ok_or_else(|| unsupported_version(requested, supported))?;
    Ok(ModernRequestMeta {
        version,
        client_capabilities: Arc::new(caps.clone()),
        client_info: client_info.cloned().map(Arc::new),
        log_level: log_level.and_then(Value::as_str).map(str::to_owned),
    })
}

/// The `-32022` error for a modern request naming a revision not served. `supported`
/// lists every revision served, newest first, legacy ones included (as the spec's example
/// does): a dual-era client may fall back to one of them.
pub fn unsupported_version(requested: &Value, supported: VersionSet) -> RpcError {
    let served: Vec<&str> = supported
        .iter()
        .rev()
        .map(ProtocolVersion::as_str)
        .collect();
    RpcError::new(
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
    )
    .with_data(json!({
        "supported": served,
        "requested": requested,
    }))
}
