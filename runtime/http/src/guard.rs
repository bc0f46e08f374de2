//! Checks every request passes first: Host and Origin against the allowed hosts (DNS-rebinding protection), and header reading.

use axum::http::{header, HeaderMap, HeaderName, StatusCode};
use axum::response::Response;

use super::authorize::{self, Caller};
use super::config::HttpConfig;
use super::responses::rpc_error;
use super::sessions::AppState;
use mcp_runtime::protocol::http_headers;
use mcp_runtime::wire::ErrorCode;

/// `host[:port]` exactly, its host in `allowed` (port ignored): anything else (user info,
/// a path, a port that is not a number) is refused rather than guessed at.
fn authority_allowed(authority: &str, allowed: &[String]) -> bool {
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
    port_ok && allowed.iter().any(|h| h.eq_ignore_ascii_case(host))
}

/// Whether an `Origin` header names an origin of `allowed`
/// ([`HttpConfig::allowed_origins`]): `*`, an exact origin (`https://app.example.com`,
/// `http://localhost:5173`), or a host name, which allows that host over http and https
/// on any port.
pub(super) fn origin_allowed(origin: &str, allowed: &[String]) -> bool {
    let origin = origin.trim_end_matches('/');
    let Some((scheme, authority)) = origin.split_once("://") else {
        return false;
    };
    if scheme != "http" && scheme != "https" {
        return false;
    }
    let mut hosts = Vec::new();
    for entry in allowed {
        let entry = entry.trim_end_matches('/');
        if entry == "*" || (entry.contains("://") && entry.eq_ignore_ascii_case(origin)) {
            return true;
        }
        if !entry.contains("://") {
            hosts.push(entry.to_owned());
        }
    }
    authority_allowed(authority, &hosts)
}

fn forbidden(what: &str) -> Response {
    rpc_error(
        StatusCode::FORBIDDEN,
        None,
        ErrorCode::INVALID_REQUEST,
        &format!("Forbidden: {what} not allowed"),
    )
}

/// `Host` must name an allowed host ([`HttpConfig::allowed_hosts`]: DNS-rebinding
/// protection) and `Origin`, when there is one, an allowed origin
/// ([`HttpConfig::allowed_origins`]: a web page of another site may not drive the
/// server from a user's browser): else 403.
// A `Response` is the natural error of a request guard; it is built once per rejection.
#[allow(clippy::result_large_err)]
pub(super) fn check_host(config: &HttpConfig, headers: &HeaderMap) -> Result<(), Response> {
    match headers.get(header::HOST).and_then(|h| h.to_str().ok()) {
        Some(host) if authority_allowed(host, &config.allowed_hosts) => {}
        _ => return Err(forbidden("Host")),
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let ok = origin
            .to_str()
            .is_ok_and(|o| origin_allowed(o, &config.allowed_origins));
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
    parts: &axum::http::request::Parts,
) -> Result<Caller, Response> {
    let caller = authorize::authorize(state.config.authorization.as_ref(), parts).await?;
    check_host(&state.config, &parts.headers)?;
    Ok(caller)
}

/// The most of an unread body a refusal reads (and drops) to keep the connection open.
const DRAINED_AT_MOST: u64 = 64 * 1024;

/// `refusal`, answered to a request whose `body` was not read. hyper closes a connection
/// whose request body is left unread, without saying so: a client that sent the body
/// after the head finds its next request on that connection (a retry with a token, after
/// a 401) refused by a reset. A short body is read and dropped, so the connection stays
/// usable; a longer or unknown one gets `Connection: close`, so the client opens another.
pub(super) async fn refuse_unread(body: axum::body::Body, mut refusal: Response) -> Response {
    use axum::body::HttpBody;
    if body
        .size_hint()
        .exact()
        .is_some_and(|length| length <= DRAINED_AT_MOST)
    {
        let mut body = body;
        loop {
            match std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await {
                Some(Ok(_)) => {}
                None => return refusal,
                Some(Err(_)) => break,
            }
        }
    }
    refusal.headers_mut().insert(
        header::CONNECTION,
        axum::http::HeaderValue::from_static("close"),
    );
    refusal
}

/// `response`, with `Connection: close` when it refuses a body over the limit: hyper
/// closes such a connection, the body being left unread, and the header says so.
pub(super) fn closing_when_too_large(mut response: Response) -> Response {
    if response.status() == StatusCode::PAYLOAD_TOO_LARGE {
        response.headers_mut().insert(
            header::CONNECTION,
            axum::http::HeaderValue::from_static("close"),
        );
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: &[&str]) -> Vec<String> {
        entries.iter().map(|e| (*e).to_owned()).collect()
    }

    #[test]
    fn origins_match_by_exact_origin_by_host_or_by_wildcard() {
        let allowed = list(&["localhost", "https://app.example.com"]);
        assert!(origin_allowed("http://localhost:5173", &allowed));
        assert!(origin_allowed("https://localhost", &allowed));
        assert!(origin_allowed("https://app.example.com", &allowed));
        assert!(origin_allowed("https://APP.example.com/", &allowed));
        assert!(
            !origin_allowed("http://app.example.com", &allowed),
            "scheme"
        );
        assert!(
            !origin_allowed("https://app.example.com:8443", &allowed),
            "port"
        );
        assert!(!origin_allowed("https://evil.example", &allowed));
        assert!(!origin_allowed("null", &allowed));
        assert!(!origin_allowed("file://localhost", &allowed));
        assert!(!origin_allowed("http://localhost:80x", &allowed));
        assert!(origin_allowed("https://anything.example", &list(&["*"])));
    }

    #[test]
    fn hosts_and_origins_are_separate_lists() {
        let config = HttpConfig {
            allowed_hosts: list(&["api.example.com"]),
            allowed_origins: list(&["https://app.example.com"]),
            ..HttpConfig::default()
        };
        let headers = |host: &str, origin: Option<&str>| {
            let mut h = HeaderMap::new();
            h.insert(header::HOST, host.parse().unwrap());
            if let Some(o) = origin {
                h.insert(header::ORIGIN, o.parse().unwrap());
            }
            h
        };
        assert!(check_host(&config, &headers("api.example.com", None)).is_ok());
        assert!(check_host(
            &config,
            &headers("api.example.com", Some("https://app.example.com"))
        )
        .is_ok());
        // Allowing the browser's origin does not allow that name as a Host, nor the
        // reverse.
        assert!(check_host(&config, &headers("app.example.com", None)).is_err());
        assert!(check_host(
            &config,
            &headers("api.example.com", Some("https://api.example.com"))
        )
        .is_err());
    }
}
