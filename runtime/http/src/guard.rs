//! Checks every request passes first: Host and Origin against the allowed hosts (DNS-rebinding protection), and header reading.

use axum::http::{header, HeaderMap, HeaderName, StatusCode};
use axum::response::Response;

use super::authorize::{self, Caller};
use super::config::HttpConfig;
use super::responses::rpc_error;
use super::sessions::AppState;
use mcp_runtime::protocol::http_headers;
use mcp_runtime::wire::ErrorCode;

/// Host and Origin must name an allowed host (DNS-rebinding protection): else 403.
// A `Response` is the natural error of a request guard; it is built once per rejection.
#[allow(clippy::result_large_err)]
pub(super) fn check_host(config: &HttpConfig, headers: &HeaderMap) -> Result<(), Response> {
    // `host[:port]` exactly: anything else (user info, a path, a port that is not a
    // number) is refused rather than guessed at.
    let allowed = |authority: &str| {
        let (host, port) = if authority.starts_with('[') {
            match authority.find(']') {
                Some(end) => authority.split_at(end + 1),
                None => return false,
            }
        } else {
            match authority.find(':') {
                Some(colon) => authority.split_at(colon),
                None => (authority, ""),
            }
        };
        let port_ok = port.is_empty()
            || port
                .strip_prefix(':')
                .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        port_ok
            && config
                .allowed_hosts
                .iter()
                .any(|h| h.eq_ignore_ascii_case(host))
    };
    let forbidden = |what: &str| {
        rpc_error(
            StatusCode::FORBIDDEN,
            None,
            ErrorCode::INVALID_REQUEST,
            &format!("Forbidden: {what} not allowed"),
        )
    };
    match headers.get(header::HOST).and_then(|h| h.to_str().ok()) {
        Some(host) if allowed(host) => {}
        _ => return Err(forbidden("Host")),
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let ok = origin
            .to_str()
            .ok()
            .and_then(|o| o.split_once("://"))
            .is_some_and(|(scheme, rest)| {
                (scheme == "http" || scheme == "https") && allowed(rest.trim_end_matches('/'))
            });
        if !ok {
            return Err(forbidden("Origin"));
        }
    }
    Ok(())
}

/// The MCP headers read on every request, as header names made once: `HeaderMap::get`
/// with a `&str` parses and lower-cases the name each time.
static KNOWN: [HeaderName; 4] = [
    HeaderName::from_static(http_headers::SESSION_ID),
    HeaderName::from_static(http_headers::PROTOCOL_VERSION),
    HeaderName::from_static(http_headers::METHOD),
    HeaderName::from_static(http_headers::NAME),
];

pub(super) fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let value = match KNOWN.iter().find(|known| known.as_str() == name) {
        Some(known) => headers.get(known),
        None => headers.get(name),
    };
    value.and_then(|v| v.to_str().ok()).map(str::trim)
}

/// A request's headers, as the protocol's header rules read them.
pub(super) struct Headers<'a>(pub(super) &'a HeaderMap);

impl http_headers::HeaderLookup for Headers<'_> {
    fn header(&self, name: &str) -> Option<&str> {
        header_str(self.0, name)
    }
}

/// What every GET, DELETE and HTTP+SSE handler checks first: the bearer token when the
/// server is a resource server (401/403/503 otherwise), then Host and Origin (403).
pub(super) async fn first_checks(
    state: &AppState,
    headers: &HeaderMap,
    uri: &axum::http::Uri,
) -> Result<Caller, Response> {
    let caller = authorize::authorize(state.config.authorization.as_ref(), headers, uri).await?;
    check_host(&state.config, headers)?;
    Ok(caller)
}
