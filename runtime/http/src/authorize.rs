//! The resource server on the wire: the bearer-token check in front of the MCP routes,
//! the challenges of RFC 6750 / RFC 9728, the per-tool scope check, and the well-known
//! metadata documents.

use std::sync::Arc;

use axum::http::{header, HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde_json::{json, Value};

use crate::auth::{ResourceServer, VerifyError};
use mcp_runtime::auth::Principal;
use mcp_runtime::observe::{self, TraceContext, Transport};
use mcp_runtime::protocol::method::McpMethod;
use mcp_runtime::wire::{Frame, Message};

/// Who sent an HTTP request: the principal its bearer token named and the resource
/// server that verified it (whose per-tool scopes apply), or nobody when the server is
/// not a resource server.
#[derive(Clone, Debug, Default)]
pub(crate) struct Caller {
    principal: Option<Arc<Principal>>,
    verified_by: Option<Arc<ResourceServer>>,
}

/// The peer's address, put into a request's extensions by the server's accept loop while
/// spans are recorded.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PeerAddr(pub(crate) std::net::SocketAddr);

impl Caller {
    pub(crate) fn principal(&self) -> Option<&Arc<Principal>> {
        self.principal.as_ref()
    }

    /// The resource server that verified the caller's token, if any.
    pub(crate) fn resource_server(&self) -> Option<&Arc<ResourceServer>> {
        self.verified_by.as_ref()
    }

    /// Whether this caller may use a session opened by `owner`: the same principal
    /// (issuer, subject, client), or no authorization at all on either side.
    pub(crate) fn owns(&self, owner: Option<&Arc<Principal>>) -> bool {
        match (self.principal.as_ref(), owner) {
            (None, None) => true,
            (Some(me), Some(owner)) => me.identity() == owner.identity(),
            _ => false,
        }
    }

    /// What a handler serving this caller's request sees of it: the principal, and the
    /// HTTP request's head (`transport`), when there is one; and, only while someone
    /// records spans (`mcp_runtime::observe`), what the request's span says of its
    /// transport: the HTTP version, the peer, the session, the `traceparent` header.
    pub(crate) fn origin(
        &self,
        transport: Option<Arc<axum::http::request::Parts>>,
    ) -> mcp_runtime::server::connection::RequestOrigin {
        let mut origin = mcp_runtime::server::connection::RequestOrigin::default();
        origin.principal.clone_from(&self.principal);
        if let Some(parts) = transport.as_deref() {
            if observe::spans_enabled() {
                observed(parts, &mut origin);
            }
        }
        origin.transport = transport.map(|parts| parts as Arc<dyn std::any::Any + Send + Sync>);
        origin
    }
}

/// Fills in what the spans of the request `parts` is the head of record of its transport.
fn observed(
    parts: &axum::http::request::Parts,
    origin: &mut mcp_runtime::server::connection::RequestOrigin,
) {
    let version = match parts.version {
        axum::http::Version::HTTP_10 => "1.0",
        axum::http::Version::HTTP_2 => "2",
        axum::http::Version::HTTP_3 => "3",
        _ => "1.1",
    };
    let text = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok());
    origin.network = Transport::Http {
        version,
        peer: parts.extensions.get::<PeerAddr>().map(|p| p.0),
    };
    origin.session_id = text(mcp_runtime::protocol::http_headers::SESSION_ID).map(str::to_owned);
    origin.trace = text(observe::TRACEPARENT).and_then(|parent| {
        TraceContext::from_headers(parent, text(observe::TRACESTATE), text(observe::BAGGAGE))
    });
}

/// The caller of a request to an MCP route, which every such handler asks first.
///
/// When an [`AuthorizationLayer`] in front of the route verified the request, its verdict
/// is taken (the layer put it in the request's extensions): unless the server's own
/// resource server (`rs`) is another one, which then verifies the token too. Otherwise,
/// with a resource server, the principal the bearer token names, holding the scopes
/// every request needs — or the answer refusing the request (RFC 6750 §2.1, header field
/// only: OAuth 2.1 forbids tokens in the query string, and MCP requires the header on
/// every request); without one, nobody. A call rather than a middleware layer of our own
/// routes: axum's `from_fn` layer cost ~0.9 µs per request (a boxed service clone and
/// future), more than the check itself.
pub(crate) async fn authorize(
    rs: Option<&Arc<ResourceServer>>,
    parts: &axum::http::request::Parts,
) -> Result<Caller, Response> {
    if let Some(Authorized(caller)) = parts.extensions.get::<Authorized>() {
        let same = match (rs, caller.resource_server()) {
            (None, _) => true,
            (Some(mine), Some(layer)) => Arc::ptr_eq(mine, layer),
            (Some(_), None) => false,
        };
        if same {
            return Ok(caller.clone());
        }
    }
    let Some(rs) = rs else {
        return Ok(Caller::default());
    };
    verify(rs, &parts.headers, &parts.uri).await
}

/// Checks a request's bearer token against `rs` (see [`authorize`]).
async fn verify(
    rs: &Arc<ResourceServer>,
    headers: &HeaderMap,
    uri: &Uri,
) -> Result<Caller, Response> {
    let token = bearer_of(rs, headers, uri)?;
    let principal = match rs.authenticate(token).await {
        Ok(p) => p,
        Err(VerifyError::Invalid(why)) => {
            tracing::debug!(reason = %why, "bearer token refused");
            return Err(challenge(
                rs,
                StatusCode::UNAUTHORIZED,
                Some(("invalid_token", &why)),
                None,
            ));
        }
        Err(VerifyError::Unavailable(why)) => {
            tracing::warn!(reason = %why, "cannot verify bearer tokens");
            return Err(unavailable(&why));
        }
    };
    let missing = rs.missing_scopes(&principal, rs.required_scopes());
    if !missing.is_empty() {
        return Err(insufficient_scope(
            rs,
            rs.required_scopes().iter().map(String::as_str),
            &format!("this server needs the scope(s) {}", missing.join(" ")),
        ));
    }
    Ok(Caller {
        principal: Some(principal),
        verified_by: Some(Arc::clone(rs)),
    })
}

/// What an [`AuthorizationLayer`] leaves in a request's extensions once it verified it.
#[derive(Clone, Debug)]
struct Authorized(Caller);

/// Authorization as a tower [`Layer`](tower::Layer): every request through it needs a
/// bearer token its [`ResourceServer`] accepts, with the scopes the server requires, or
/// it is refused as the MCP routes refuse it (401 with `WWW-Authenticate: Bearer
/// resource_metadata=…`, 403 `insufficient_scope`, 400 `invalid_request`, 503 when tokens
/// cannot be verified now).
///
/// Put it in front of the MCP routes of an [`McpService`](crate::McpService) (their
/// handlers then see the caller as
/// [`Context::principal`](mcp_runtime::Context::principal);
/// sessions, tasks and `requestState` are bound to it; per-tool scopes apply), or in
/// front of routes of your own, whose handlers find the verified
/// [`Principal`] in the request's extensions (`Extension<Arc<Principal>>`). A request
/// the layer verified is not verified again by the MCP routes when
/// [`HttpConfig::authorization`](crate::HttpConfig::authorization) names the same
/// resource server (or none).
///
/// ```no_run
/// # async fn example(server: mcp_runtime::Server, rs: mcp_runtime_http::auth::ResourceServer) {
/// use std::sync::Arc;
/// use mcp_runtime_http::{auth::AuthorizationLayer, HttpConfig, McpService};
/// let rs = Arc::new(rs);
/// let mcp = McpService::new(server, HttpConfig::default());
/// let app = axum::Router::new()
///     .nest("/api/mcp", mcp.router().layer(AuthorizationLayer::new(Arc::clone(&rs))))
///     // RFC 9728: the metadata lives at the host's root, the resource's path appended.
///     .merge(mcp_runtime_http::auth::metadata_router(&rs));
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct AuthorizationLayer {
    rs: Arc<ResourceServer>,
}

impl AuthorizationLayer {
    /// A layer that verifies every request with `rs`.
    pub fn new(rs: Arc<ResourceServer>) -> AuthorizationLayer {
        AuthorizationLayer { rs }
    }
}

impl<S> tower::Layer<S> for AuthorizationLayer {
    type Service = RequireAuthorization<S>;

    fn layer(&self, inner: S) -> RequireAuthorization<S> {
        RequireAuthorization {
            rs: Arc::clone(&self.rs),
            inner,
        }
    }
}

/// The service of an [`AuthorizationLayer`].
#[derive(Clone, Debug)]
pub struct RequireAuthorization<S> {
    rs: Arc<ResourceServer>,
    inner: S,
}

impl<S, B> tower::Service<axum::http::Request<B>> for RequireAuthorization<S>
where
    S: tower::Service<axum::http::Request<B>, Response = Response> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = Response;
    type Error = S::Error;
    type Future = futures_util::future::BoxFuture<'static, Result<Response, S::Error>>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: axum::http::Request<B>) -> Self::Future {
        // The clone that was made ready is the one called (tower's usual dance).
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let rs = Arc::clone(&self.rs);
        Box::pin(async move {
            match verify(&rs, request.headers(), request.uri()).await {
                Ok(caller) => {
                    if let Some(principal) = caller.principal() {
                        request.extensions_mut().insert(Arc::clone(principal));
                    }
                    request.extensions_mut().insert(Authorized(caller));
                    inner.call(request).await
                }
                Err(mut refused) => {
                    // The body is left unread, so hyper closes the connection after the
                    // answer: say so, or a client's next request on it meets a reset.
                    if carries_a_body(request.headers()) {
                        refused.headers_mut().insert(
                            axum::http::header::CONNECTION,
                            axum::http::HeaderValue::from_static("close"),
                        );
                    }
                    Ok(refused)
                }
            }
        })
    }
}

/// Whether a request's head announces a body.
fn carries_a_body(headers: &HeaderMap) -> bool {
    headers.contains_key(axum::http::header::TRANSFER_ENCODING)
        || headers
            .get(axum::http::header::CONTENT_LENGTH)
            .is_some_and(|length| length.as_bytes() != b"0")
}

/// The well-known documents of `rs` as routes to merge at the root of an application
/// (not under the MCP service's mount: RFC 9728 §3.1 puts a resource's metadata at
/// `/.well-known/oauth-protected-resource` followed by the resource's path, e.g.
/// `/.well-known/oauth-protected-resource/api/mcp` for `https://host/api/mcp`): the
/// Protected Resource Metadata at that path and at the bare well-known path, and the
/// mirrored authorization server metadata if configured.
pub fn metadata_router(rs: &Arc<ResourceServer>) -> Router {
    metadata_routes(rs)
}

/// The well-known documents: Protected Resource Metadata at the root and path-suffixed
/// forms, and the mirrored authorization server metadata if configured. Public (no token),
/// and readable cross-origin, as browser-based clients discover with them.
pub(crate) fn metadata_routes(rs: &Arc<ResourceServer>) -> Router {
    let prm = Arc::new(rs.protected_resource_metadata().to_string());
    let serve_prm = {
        let prm = Arc::clone(&prm);
        move || {
            let prm = Arc::clone(&prm);
            async move { json_document(prm.as_str().to_owned()) }
        }
    };
    let mut routes = Router::new().route(crate::auth::WELL_KNOWN_RESOURCE, get(serve_prm.clone()));
    if rs.metadata_path() != crate::auth::WELL_KNOWN_RESOURCE {
        routes = routes.route(rs.metadata_path(), get(serve_prm));
    }
    if let Some(metadata) = rs.authorization_server_metadata() {
        let doc = Arc::new(metadata.to_string());
        routes = routes.route(
            "/.well-known/oauth-authorization-server",
            get(move || {
                let doc = Arc::clone(&doc);
                async move { json_document(doc.as_str().to_owned()) }
            }),
        );
    }
    routes
}

fn json_document(body: String) -> Response {
    (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "public, max-age=300"),
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
        ],
        body,
    )
        .into_response()
}

/// The bearer token of a request, or the answer refusing it.
// A `Response` is the natural error of a request guard; it is built once per rejection.
#[allow(clippy::result_large_err)]
fn bearer_of<'h>(
    rs: &ResourceServer,
    headers: &'h HeaderMap,
    uri: &Uri,
) -> Result<&'h str, Response> {
    let token_in_query = uri.query().is_some_and(|q| {
        q.split('&')
            .any(|pair| pair.split('=').next() == Some("access_token"))
    });
    if token_in_query {
        return Err(invalid_request(
            rs,
            "access tokens are not accepted in the query string; send an Authorization header",
        ));
    }
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Err(challenge(rs, StatusCode::UNAUTHORIZED, None, None));
    };
    if values.next().is_some() {
        return Err(invalid_request(rs, "more than one Authorization header"));
    }
    match bearer_token(value) {
        Bearer::Token(token) => Ok(token),
        // Another scheme (Basic, …) is no bearer authentication: the plain challenge.
        Bearer::OtherScheme => Err(challenge(rs, StatusCode::UNAUTHORIZED, None, None)),
        Bearer::Malformed(why) => Err(invalid_request(rs, why)),
    }
}

enum Bearer<'a> {
    Token(&'a str),
    OtherScheme,
    Malformed(&'static str),
}

/// The characters of a b64token (RFC 6750 §2.1), `=` aside.
// Evaluated at compile time: an index out of bounds would fail the build, not a request.
#[allow(clippy::indexing_slicing)]
const B64TOKEN: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric()
            || c == b'-'
            || c == b'.'
            || c == b'_'
            || c == b'~'
            || c == b'+'
            || c == b'/';
        b += 1;
    }
    table
};

/// `Bearer <b64token>` (scheme case-insensitive, RFC 6750 §2.1).
fn bearer_token(value: &HeaderValue) -> Bearer<'_> {
    let bytes = value.as_bytes();
    let (scheme, rest) = match bytes.iter().position(|b| *b == b' ') {
        Some(space) => bytes.split_at(space),
        None => (bytes, &[][..]),
    };
    if !scheme.eq_ignore_ascii_case(b"bearer") {
        return Bearer::OtherScheme;
    }
    let start = rest.iter().position(|b| *b != b' ').unwrap_or(rest.len());
    let token = rest.get(start..).unwrap_or_default();
    if token.is_empty() {
        return Bearer::Malformed("the Bearer credentials carry no token");
    }
    let end = token.iter().rposition(|b| *b != b'=').map_or(0, |i| i + 1);
    let body = token.get(..end).unwrap_or_default();
    // A `u8` always indexes a 256-entry table (and the loop stays free of bounds checks).
    #[allow(clippy::indexing_slicing)]
    let well_formed = !body.is_empty() && body.iter().all(|b| B64TOKEN[usize::from(*b)]);
    // Only ASCII passed the table, so the text is valid UTF-8.
    match std::str::from_utf8(token) {
        Ok(token) if well_formed => Bearer::Token(token),
        _ => Bearer::Malformed("the bearer token is not a b64token (RFC 6750 §2.1)"),
    }
}

/// A 401/403 with the RFC 6750 / RFC 9728 challenge: `resource_metadata` always, `scope`
/// when scopes are needed (the required ones, or `scope`), and the error if there is one.
fn challenge(
    rs: &ResourceServer,
    status: StatusCode,
    error: Option<(&str, &str)>,
    scope: Option<String>,
) -> Response {
    let mut params = Vec::new();
    if let Some((code, _)) = error {
        params.push(format!("error=\"{code}\""));
    }
    params.push(format!(
        "resource_metadata=\"{}\"",
        quoted(rs.metadata_url())
    ));
    let scope = scope.unwrap_or_else(|| rs.required_scopes().join(" "));
    if !scope.is_empty() {
        params.push(format!("scope=\"{scope}\""));
    }
    if let Some((_, description)) = error {
        params.push(format!("error_description=\"{}\"", quoted(description)));
    }
    let www = format!("Bearer {}", params.join(", "));
    let body = match error {
        Some((code, description)) => json!({"error": code, "error_description": description}),
        None => json!({"error": "unauthorized", "error_description": "a bearer token is required"}),
    };
    let mut response = (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response();
    if let Ok(value) = HeaderValue::from_str(&www) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// The characters RFC 6750 §3 allows inside a quoted challenge value; anything else (a
/// quote, a backslash, a control character, non-ASCII) becomes `?`.
fn quoted(text: &str) -> String {
    text.chars()
        .take(300)
        .map(|c| match c {
            '\x20'..='\x21' | '\x23'..='\x5b' | '\x5d'..='\x7e' => c,
            _ => '?',
        })
        .collect()
}

fn invalid_request(rs: &ResourceServer, why: &str) -> Response {
    tracing::debug!(reason = why, "malformed authorization");
    challenge(
        rs,
        StatusCode::BAD_REQUEST,
        Some(("invalid_request", why)),
        None,
    )
}

fn unavailable(why: &str) -> Response {
    let body = json!({
        "error": "temporarily_unavailable",
        "error_description": format!("the server cannot verify access tokens now: {}", quoted(why)),
    });
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::RETRY_AFTER, "5"),
        ],
        body.to_string(),
    )
        .into_response()
}

/// 403 `insufficient_scope` naming every scope the operation needs (RFC 6750 §3.1; the
/// specification asks for all of them in one challenge).
fn insufficient_scope<'a>(
    rs: &ResourceServer,
    needed: impl Iterator<Item = &'a str>,
    why: &str,
) -> Response {
    let mut scopes: Vec<&str> = Vec::new();
    for s in needed {
        if !scopes.contains(&s) {
            scopes.push(s);
        }
    }
    tracing::debug!(reason = why, "insufficient scope");
    challenge(
        rs,
        StatusCode::FORBIDDEN,
        Some(("insufficient_scope", why)),
        Some(scopes.join(" ")),
    )
}

/// The 403 for a frame calling a tool whose scopes the caller lacks, or `None`. Every
/// `tools/call` of the frame (a batch may hold several) is checked before any is served.
pub(crate) fn frame_refusal(caller: &Caller, frame: &Frame) -> Option<Response> {
    let rs = caller.resource_server().filter(|rs| rs.has_tool_scopes())?;
    let principal = caller.principal()?;
    let messages: Vec<&Message> = match frame {
        Frame::Single(Ok(m)) => vec![m],
        Frame::Single(Err(_)) => Vec::new(),
        Frame::Batch(items) => items.iter().filter_map(|i| i.as_ref().ok()).collect(),
    };
    let mut needed: Vec<String> = Vec::new();
    let mut tools: Vec<&str> = Vec::new();
    for message in messages {
        if let Message::Request { method, params, .. } = message {
            let name = params
                .as_ref()
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str);
            let calls_a_tool = McpMethod::from_name(method) == Some(McpMethod::CallTool);
            if let (true, Some(tool)) = (calls_a_tool, name) {
                if !rs.tool_scopes(tool).is_empty() {
                    tools.push(tool);
                    needed.extend(rs.tool_scopes(tool).iter().cloned());
                }
            }
        }
    }
    let missing = rs.missing_scopes(principal, &needed);
    if missing.is_empty() {
        return None;
    }
    let all = rs
        .required_scopes()
        .iter()
        .chain(&needed)
        .map(String::as_str);
    Some(insufficient_scope(
        rs,
        all,
        &format!(
            "calling {} needs the scope(s) {}",
            tools.join(", "),
            missing.join(" ")
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_credentials_are_parsed_strictly() {
        let parse = |v: &str| match bearer_token(&HeaderValue::from_str(v).unwrap()) {
            Bearer::Token(t) => Ok(t.to_owned()),
            Bearer::OtherScheme => Err("other"),
            Bearer::Malformed(_) => Err("malformed"),
        };
        assert_eq!(parse("Bearer abc.def-_~+/=="), Ok("abc.def-_~+/==".into()));
        assert_eq!(parse("bearer  abc"), Ok("abc".into()));
        assert_eq!(parse("Basic dXNlcjpwdw=="), Err("other"));
        assert_eq!(parse("Bearer"), Err("malformed"));
        assert_eq!(parse("Bearer "), Err("malformed"));
        assert_eq!(parse("Bearer a b"), Err("malformed"));
        assert_eq!(parse("Bearer a\"b"), Err("malformed"));
        assert_eq!(parse("Bearer ==="), Err("malformed"));
        assert_eq!(parse("Bearer a=b"), Err("malformed"));
    }

    #[test]
    fn challenge_values_cannot_break_out_of_their_quotes() {
        assert_eq!(quoted("a\"b\\c\nd é"), "a?b?c?d ?");
    }
}
