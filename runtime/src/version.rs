//! The protocol revisions, the one table of what differs between them, and version
//! negotiation as pure functions. No other module compares version strings.

use std::fmt;

use serde_json::{json, Value};

use crate::jsonrpc::{ErrorCode, RpcError};

/// An MCP protocol revision this runtime can serve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProtocolVersion {
    /// 2024-11-05: the first revision (HTTP+SSE transport).
    V2024_11_05,
    /// 2025-03-26: Streamable HTTP, batching, audio, tool annotations.
    V2025_03_26,
    /// 2025-06-18: structured output, elicitation, resource links, titles.
    V2025_06_18,
    /// 2025-11-25: icons, tasks, sampling with tools, URL elicitation.
    V2025_11_25,
    /// 2026-07-28: stateless; per-request `_meta`, `server/discover`.
    V2026_07_28,
}

/// How a client of a revision opens a conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    /// An `initialize` handshake starts a session at the negotiated revision.
    Legacy,
    /// Every request carries the revision in `_meta`; there is no session.
    Modern,
}

/// What differs between revisions, as data. Shaping, routing and transports read this
/// table instead of comparing versions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Features {
    /// How clients of this revision open a conversation.
    pub era: Era,
    /// JSON-RPC batches must be accepted (2025-03-26 only).
    pub batching: bool,
    /// `AudioContent` exists.
    pub audio_content: bool,
    /// Tool annotations (`readOnlyHint`, …) exist.
    pub tool_annotations: bool,
    /// The `completions` server capability exists (before it, `completion/complete`
    /// was served without a capability).
    pub completions_capability: bool,
    /// `message` on progress notifications.
    pub progress_message: bool,
    /// `outputSchema` and `structuredContent`.
    pub structured_output: bool,
    /// `structuredContent` may be any JSON value and `outputSchema` any schema (before
    /// 2026-07-28 both must be objects).
    pub structured_any_json: bool,
    /// `resource_link` content blocks.
    pub resource_links: bool,
    /// `title` on tools, resources, prompts, implementations.
    pub titles: bool,
    /// `elicitation/create`.
    pub elicitation: bool,
    /// `icons` on tools, resources, prompts, implementations.
    pub icons: bool,
    /// Sampling requests may offer tools (`tools`, `toolChoice`).
    pub sampling_tools: bool,
    /// URL-mode elicitation.
    pub url_elicitation: bool,
    /// `notifications/elicitation/complete` (2025-11-25 only).
    pub elicitation_complete: bool,
    /// Experimental tasks.
    pub tasks: bool,
    /// Results carry `resultType`.
    pub result_type: bool,
    /// List and read results carry `ttlMs` and `cacheScope`.
    pub cache_hints: bool,
    /// Server identity in result `_meta` (`io.modelcontextprotocol/serverInfo`).
    pub server_info_in_meta: bool,
    /// `ping` exists.
    pub ping: bool,
    /// `logging/setLevel` exists (else the level comes per request in `_meta`).
    pub set_level: bool,
    /// `resources/subscribe` and `resources/unsubscribe` exist.
    pub resource_subscriptions: bool,
    /// Error code for an unknown resource on `resources/read`.
    pub resource_not_found_code: i64,
}

const LEGACY_BASE: Features = Features {
    era: Era::Legacy,
    batching: false,
    audio_content: false,
    tool_annotations: false,
    completions_capability: false,
    progress_message: false,
    structured_output: false,
    structured_any_json: false,
    resource_links: false,
    titles: false,
    elicitation: false,
    icons: false,
    sampling_tools: false,
    url_elicitation: false,
    elicitation_complete: false,
    tasks: false,
    result_type: false,
    cache_hints: false,
    server_info_in_meta: false,
    ping: true,
    set_level: true,
    resource_subscriptions: true,
    resource_not_found_code: -32002,
};

const F_2024_11_05: Features = LEGACY_BASE;
const F_2025_03_26: Features = Features {
    batching: true,
    audio_content: true,
    tool_annotations: true,
    completions_capability: true,
    progress_message: true,
    ..F_2024_11_05
};
const F_2025_06_18: Features = Features {
    batching: false,
    structured_output: true,
    resource_links: true,
    titles: true,
    elicitation: true,
    ..F_2025_03_26
};
const F_2025_11_25: Features = Features {
    icons: true,
    sampling_tools: true,
    url_elicitation: true,
    elicitation_complete: true,
    tasks: true,
    ..F_2025_06_18
};
const F_2026_07_28: Features = Features {
    era: Era::Modern,
    elicitation_complete: false,
    structured_any_json: true,
    tasks: false,
    result_type: true,
    cache_hints: true,
    server_info_in_meta: true,
    ping: false,
    set_level: false,
    resource_subscriptions: false,
    resource_not_found_code: -32602,
    ..F_2025_11_25
};

impl ProtocolVersion {
    /// Every revision, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The revision id as sent on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a revision id; anything else (unknown, malformed) is `None`.
    pub fn parse(s: &str) -> Option<ProtocolVersion> {
        ProtocolVersion::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// What this revision supports.
    pub const fn features(self) -> &'static Features {
        match self {
            ProtocolVersion::V2024_11_05 => &F_2024_11_05,
            ProtocolVersion::V2025_03_26 => &F_2025_03_26,
            ProtocolVersion::V2025_06_18 => &F_2025_06_18,
            ProtocolVersion::V2025_11_25 => &F_2025_11_25,
            ProtocolVersion::V2026_07_28 => &F_2026_07_28,
        }
    }

    /// How clients of this revision open a conversation.
    pub const fn era(self) -> Era {
        self.features().era
    }

    const fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set of revisions: the ones a server accepts.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct VersionSet(u8);

impl VersionSet {
    /// Every revision.
    pub const ALL: VersionSet = VersionSet(0b1_1111);
    /// No revision.
    pub const EMPTY: VersionSet = VersionSet(0);

    /// The set of the given revisions.
    pub fn of(versions: &[ProtocolVersion]) -> VersionSet {
        VersionSet(versions.iter().fold(0, |acc, v| acc | v.bit()))
    }

    /// Whether `v` is in the set.
    pub const fn contains(self, v: ProtocolVersion) -> bool {
        self.0 & v.bit() != 0
    }

    /// The set without `v`.
    pub const fn without(self, v: ProtocolVersion) -> VersionSet {
        VersionSet(self.0 & !v.bit())
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
    /// The client's capabilities (an object).
    pub client_capabilities: Value,
    /// The client's identity, if given.
    pub client_info: Option<Value>,
    /// The requested minimum log level, if given.
    pub log_level: Option<String>,
}

/// Whether a request's params carry the modern `_meta` revision key (the request is then
/// served statelessly, whatever else it carries).
pub fn has_modern_meta(params: Option<&Value>) -> bool {
    // Keys compared in place: the map is small, and hashing a key as long as these to
    // look it up costs more than comparing it with each key present.
    crate::jsonrpc::member(
        crate::jsonrpc::member(params, "_meta"),
        META_PROTOCOL_VERSION,
    )
    .is_some()
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
    let meta = crate::jsonrpc::member(params, "_meta")
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
        client_capabilities: caps.clone(),
        client_info: client_info.cloned(),
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
