//! CORS for browser clients of another origin ([`HttpConfig::cors`]): preflights of the
//! MCP routes answered, and every answer to an allowed origin marked readable with the
//! protocol's headers exposed. A tower layer around the MCP routes, installed only when
//! CORS is configured.

use std::sync::Arc;
use std::task::{Context, Poll};

use axum::http::{header, HeaderMap, HeaderValue, Method, Request, StatusCode};
use axum::response::{IntoResponse, Response};

use super::config::{Cors, HttpConfig};
use super::guard::origin_allowed;

/// Request headers every MCP client may send, besides `Mcp-*` (all allowed: the
/// 2026-07-28 header rules add `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*`).
const PROTOCOL_REQUEST_HEADERS: [&str; 4] =
    ["authorization", "content-type", "accept", "last-event-id"];

/// Answer headers a browser client must be able to read: the session id, the revision,
/// and the authorization challenge (a browser client starts OAuth from it).
const PROTOCOL_EXPOSED_HEADERS: &str = "mcp-session-id, mcp-protocol-version, www-authenticate";

/// What the layer needs of the configuration, made once.
#[derive(Debug)]
pub(crate) struct CorsPolicy {
    allowed_origins: Vec<String>,
    extra_allowed_headers: Vec<String>,
    exposed: HeaderValue,
    max_age: HeaderValue,
}

impl CorsPolicy {
    /// The policy of `config`, when it asks for CORS.
    pub(crate) fn of(config: &HttpConfig) -> Option<Arc<CorsPolicy>> {
        let cors: &Cors = config.cors.as_ref()?;
        let mut exposed = PROTOCOL_EXPOSED_HEADERS.to_owned();
        for extra in &cors.extra_exposed_headers {
            exposed.push_str(", ");
            exposed.push_str(&extra.to_ascii_lowercase());
        }
        Some(Arc::new(CorsPolicy {
            allowed_origins: config.allowed_origins.clone(),
            extra_allowed_headers: cors
                .extra_allowed_headers
                .iter()
                .map(|h| h.to_ascii_lowercase())
                .collect(),
            exposed: HeaderValue::from_str(&exposed)
                .unwrap_or_else(|_| HeaderValue::from_static(PROTOCOL_EXPOSED_HEADERS)),
            max_age: HeaderValue::from(cors.max_age.as_secs()),
        }))
    }

    /// The request's origin, when it is one this policy allows.
    fn allowed_origin(&self, headers: &HeaderMap) -> Option<HeaderValue> {
        let origin = headers.get(header::ORIGIN)?;
        let text = origin.to_str().ok()?;
        origin_allowed(text, &self.allowed_origins).then(|| origin.clone())
    }

    fn header_allowed(&self, name: &str) -> bool {
        let name = name.trim().to_ascii_lowercase();
        name.starts_with("mcp-")
            || PROTOCOL_REQUEST_HEADERS.contains(&name.as_str())
            || self.extra_allowed_headers.contains(&name)
    }

    /// The answer to a preflight: 204 with what may be sent, or 403 (no CORS headers,
    /// so that the browser refuses the request) for an origin that is not allowed.
    fn preflight(&self, headers: &HeaderMap) -> Response {
        let Some(origin) = self.allowed_origin(headers) else {
            return StatusCode::FORBIDDEN.into_response();
        };
        // Only the requested headers the protocol uses are named: a preflight asking for
        // another fails in the browser, as it should.
        let requested = headers
            .get(header::ACCESS_CONTROL_REQUEST_HEADERS)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let allowed: Vec<&str> = requested
            .split(',')
            .map(str::trim)
            .filter(|h| !h.is_empty() && self.header_allowed(h))
            .collect();
        let mut response = StatusCode::NO_CONTENT.into_response();
        let out = response.headers_mut();
        out.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        out.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, POST, DELETE"),
        );
        if let Ok(value) = HeaderValue::from_str(&allowed.join(", ")) {
            if !value.is_empty() {
                out.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, value);
            }
        }
        out.insert(header::ACCESS_CONTROL_MAX_AGE, self.max_age.clone());
        out.append(
            header::VARY,
            HeaderValue::from_static(
                "origin, access-control-request-method, access-control-request-headers",
            ),
        );
        response
    }

    /// Marks an answer readable by `origin` (an allowed one), its protocol headers
    /// exposed.
    fn decorate(&self, origin: Option<HeaderValue>, response: &mut Response) {
        let headers = response.headers_mut();
        headers.append(header::VARY, HeaderValue::from_static("origin"));
        if let Some(origin) = origin {
            headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
            headers.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, self.exposed.clone());
        }
    }
}

/// Whether a request is a CORS preflight.
fn is_preflight<B>(request: &Request<B>) -> bool {
    request.method() == Method::OPTIONS
        && request
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
}

/// The layer around the MCP routes (see the module's header).
#[derive(Clone, Debug)]
pub(crate) struct CorsLayer(pub(crate) Arc<CorsPolicy>);

impl<S> tower::Layer<S> for CorsLayer {
    type Service = CorsService<S>;

    fn layer(&self, inner: S) -> CorsService<S> {
        CorsService {
            policy: Arc::clone(&self.0),
            inner,
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct CorsService<S> {
    policy: Arc<CorsPolicy>,
    inner: S,
}

impl<S, B> tower::Service<Request<B>> for CorsService<S>
where
    S: tower::Service<Request<B>, Response = Response> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = Response;
    type Error = S::Error;
    type Future = futures_util::future::BoxFuture<'static, Result<Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let policy = Arc::clone(&self.policy);
        if is_preflight(&request) {
            let answer = policy.preflight(request.headers());
            return Box::pin(async move { Ok(answer) });
        }
        let origin = policy.allowed_origin(request.headers());
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        Box::pin(async move {
            let mut response = inner.call(request).await?;
            policy.decorate(origin, &mut response);
            Ok(response)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> Arc<CorsPolicy> {
        let config = HttpConfig {
            cors: Some(Cors::default()),
            allowed_origins: vec!["https://app.example.com".into()],
            ..HttpConfig::default()
        };
        CorsPolicy::of(&config).unwrap()
    }

    fn preflight(origin: &str, headers: &str) -> Response {
        let mut h = HeaderMap::new();
        h.insert(header::ORIGIN, origin.parse().unwrap());
        h.insert(
            header::ACCESS_CONTROL_REQUEST_METHOD,
            "POST".parse().unwrap(),
        );
        h.insert(
            header::ACCESS_CONTROL_REQUEST_HEADERS,
            headers.parse().unwrap(),
        );
        policy().preflight(&h)
    }

    #[test]
    fn a_preflight_allows_the_protocol_headers_and_no_others() {
        let answer = preflight(
            "https://app.example.com",
            "authorization, content-type, mcp-protocol-version, mcp-session-id, mcp-method, last-event-id, x-other",
        );
        assert_eq!(answer.status(), StatusCode::NO_CONTENT);
        let h = answer.headers();
        assert_eq!(
            h[header::ACCESS_CONTROL_ALLOW_ORIGIN],
            "https://app.example.com"
        );
        assert_eq!(
            h[header::ACCESS_CONTROL_ALLOW_HEADERS],
            "authorization, content-type, mcp-protocol-version, mcp-session-id, mcp-method, last-event-id"
        );
        assert_eq!(h[header::ACCESS_CONTROL_ALLOW_METHODS], "GET, POST, DELETE");
        assert_eq!(h[header::ACCESS_CONTROL_MAX_AGE], "600");
    }

    #[test]
    fn a_preflight_from_another_origin_is_refused() {
        let answer = preflight("https://evil.example", "content-type");
        assert_eq!(answer.status(), StatusCode::FORBIDDEN);
        assert!(!answer
            .headers()
            .contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN));
    }
}
