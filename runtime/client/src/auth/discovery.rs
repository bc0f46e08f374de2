//! Finding the authorization server: the MCP server's Protected Resource Metadata
//! (RFC 9728, 2025-06-18+), the authorization server's metadata (RFC 8414 and OpenID
//! Connect Discovery, in the order the specification gives, the `issuer` checked), and the
//! 2025-03-26 fallbacks (the metadata at the MCP server's origin, then default paths).

use reqwest::Url;
use serde_json::Value;

use super::flow::denied;
use crate::error::ClientError;

/// The largest metadata document read (1 MiB).
const MAX_DOCUMENT: u64 = 1 << 20;

/// What the MCP server says of itself (RFC 9728 §2).
#[derive(Clone, Debug)]
pub(crate) struct ResourceMetadata {
    pub(crate) resource: String,
    pub(crate) authorization_servers: Vec<String>,
    pub(crate) scopes_supported: Option<Vec<String>>,
    /// `dpop_bound_access_tokens_required` (RFC 9449 §5.2).
    pub(crate) dpop_required: bool,
}

/// What the client uses of an authorization server's metadata (RFC 8414 §2).
#[derive(Clone, Debug)]
pub(crate) struct ServerMetadata {
    pub(crate) issuer: String,
    pub(crate) authorization_endpoint: Option<Url>,
    pub(crate) token_endpoint: Url,
    pub(crate) registration_endpoint: Option<Url>,
    pub(crate) scopes_supported: Option<Vec<String>>,
    pub(crate) code_challenge_methods: Option<Vec<String>>,
    pub(crate) token_endpoint_auth_methods: Option<Vec<String>>,
    pub(crate) client_id_metadata_documents: bool,
    pub(crate) iss_parameter_supported: bool,
    /// `dpop_signing_alg_values_supported` (RFC 9449 §5.1).
    pub(crate) dpop_algorithms: Option<Vec<String>>,
    /// Found by the 2025-03-26 rules (no Protected Resource Metadata).
    pub(crate) legacy: bool,
}

/// Whether `url` may carry OAuth traffic: `https`, or `http` to this machine.
pub(crate) fn secure_enough(url: &Url) -> bool {
    match url.scheme() {
        "https" => true,
        "http" => is_loopback(url),
        _ => false,
    }
}

fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || bare
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// `scheme://host[:port]`, as an issuer or resource identifier (no trailing slash).
pub(crate) fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// The canonical URI of an MCP server (RFC 8707 §2): no fragment, no query, no trailing
/// slash on an empty path.
pub(crate) fn canonical(url: &Url) -> String {
    let mut url = url.clone();
    url.set_fragment(None);
    url.set_query(None);
    let text = url.to_string();
    if url.path() == "/" {
        text.trim_end_matches('/').to_owned()
    } else {
        text
    }
}

/// A JSON document at `url`: `None` when it is not there (any non-success status, or an
/// answer that is not a JSON object), an error when it cannot be fetched.
async fn fetch_json(http: &reqwest::Client, url: &Url) -> Option<serde_json::Map<String, Value>> {
    let response = match http
        .get(url.clone())
        .header("accept", "application/json")
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
    {
        Ok(r) => r,
        Err(e) => {
            tracing::debug!("GET {url}: {e}");
            return None;
        }
    };
    if !response.status().is_success() {
        tracing::debug!("GET {url}: HTTP {}", response.status());
        return None;
    }
    // Metadata documents are small; a server that sends more is not one to trust.
    if response.content_length().is_some_and(|n| n > MAX_DOCUMENT) {
        return None;
    }
    let body = response.bytes().await.ok()?;
    if body.len() as u64 > MAX_DOCUMENT {
        return None;
    }
    match serde_json::from_slice(&body) {
        Ok(Value::Object(map)) => Some(map),
        _ => {
            tracing::debug!("GET {url}: not a JSON object");
            None
        }
    }
}

fn strings(doc: &serde_json::Map<String, Value>, name: &str) -> Option<Vec<String>> {
    doc.get(name).and_then(Value::as_array).map(|a| {
        a.iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    })
}

/// The Protected Resource Metadata of the MCP server at `server`: from the challenge's
/// `resource_metadata`, else the path-inserted well-known URI, else the root one. `None`
/// when there is none (a 2025-03-26 server).
pub(crate) async fn protected_resource(
    http: &reqwest::Client,
    server: &Url,
    from_challenge: Option<&str>,
) -> Result<Option<ResourceMetadata>, ClientError> {
    let mut candidates = Vec::new();
    if let Some(url) = from_challenge {
        match server.join(url) {
            Ok(u) if secure_enough(&u) || u.origin() == server.origin() => candidates.push(u),
            _ => tracing::warn!("ignoring the challenge's resource_metadata `{url}`"),
        }
    }
    let path = server.path().trim_end_matches('/');
    for suffix in [path, ""] {
        if let Ok(u) = server.join(&format!("/.well-known/oauth-protected-resource{suffix}")) {
            if !candidates.contains(&u) {
                candidates.push(u);
            }
        }
    }
    for url in candidates {
        let Some(doc) = fetch_json(http, &url).await else {
            continue;
        };
        let resource = doc
            .get("resource")
            .and_then(Value::as_str)
            .ok_or_else(|| denied(format!("the resource metadata at {url} names no resource")))?
            .to_owned();
        let authorization_servers = strings(&doc, "authorization_servers").unwrap_or_default();
        if authorization_servers.is_empty() {
            return Err(denied(format!(
                "the resource metadata at {url} names no authorization server"
            )));
        }
        return Ok(Some(ResourceMetadata {
            resource,
            authorization_servers,
            scopes_supported: strings(&doc, "scopes_supported"),
            dpop_required: doc
                .get("dpop_bound_access_tokens_required")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        }));
    }
    Ok(None)
}

/// Checks that the metadata's `resource` is the MCP server the client talks to (the same
/// origin, and a path that is the server's or one of its parents), as RFC 9728 §3.3
/// requires before anything is sent to its authorization server; with
/// `same_origin_is_enough`, any path of the origin.
pub(crate) fn check_resource(
    server: &Url,
    resource: &str,
    same_origin_is_enough: bool,
) -> Result<(), ClientError> {
    let mismatch = || {
        denied(format!(
            "the resource metadata is for `{resource}`, not for this server ({}): refusing to authorize",
            canonical(server)
        ))
    };
    let named = Url::parse(resource).map_err(|_| mismatch())?;
    if named.origin() != server.origin() || named.fragment().is_some() {
        return Err(mismatch());
    }
    let named_path = named.path().trim_end_matches('/');
    let server_path = server.path().trim_end_matches('/');
    let within = same_origin_is_enough
        || server_path == named_path
        || server_path
            .strip_prefix(named_path)
            .is_some_and(|rest| rest.starts_with('/'));
    if within {
        Ok(())
    } else {
        Err(mismatch())
    }
}

/// The authorization server `issuer`'s metadata, from the well-known URIs in the order
/// the specification gives; the document's `issuer` must be `issuer`, exactly.
pub(crate) async fn authorization_server(
    http: &reqwest::Client,
    issuer: &str,
) -> Result<ServerMetadata, ClientError> {
    let base = Url::parse(issuer).map_err(|e| {
        denied(format!(
            "the authorization server `{issuer}` is not a URL: {e}"
        ))
    })?;
    if !secure_enough(&base) {
        return Err(denied(format!(
            "the authorization server `{issuer}` is not served over https"
        )));
    }
    if base.query().is_some() || base.fragment().is_some() {
        return Err(denied(format!(
            "the authorization server `{issuer}` has a query or fragment (RFC 8414 §2)"
        )));
    }
    let path = base.path().trim_end_matches('/');
    let paths = if path.is_empty() {
        vec![
            "/.well-known/oauth-authorization-server".to_owned(),
            "/.well-known/openid-configuration".to_owned(),
        ]
    } else {
        vec![
            format!("/.well-known/oauth-authorization-server{path}"),
            format!("/.well-known/openid-configuration{path}"),
            format!("{path}/.well-known/openid-configuration"),
        ]
    };
    for p in paths {
        let Ok(url) = base.join(&p) else { continue };
        let Some(doc) = fetch_json(http, &url).await else {
            continue;
        };
        let found = doc
            .get("issuer")
            .and_then(Value::as_str)
            .unwrap_or_default();
        // RFC 8414 §3.3: identical, no normalization.
        if found != issuer {
            return Err(denied(format!(
                "the authorization server metadata at {url} is for issuer `{found}`, not `{issuer}`: not using it"
            )));
        }
        return parse_server_metadata(&doc, issuer, &url, false);
    }
    Err(denied(format!(
        "no authorization server metadata found for `{issuer}`"
    )))
}

/// The 2025-03-26 rules: the metadata at the MCP server's origin, else the default
/// endpoints there.
pub(crate) async fn legacy_authorization_server(
    http: &reqwest::Client,
    server: &Url,
) -> Result<ServerMetadata, ClientError> {
    let base = origin(server);
    if let Ok(url) = server.join("/.well-known/oauth-authorization-server") {
        if let Some(doc) = fetch_json(http, &url).await {
            // 2025-03-26 names the MCP server's origin as where the metadata is, not the
            // issuer: the document's own issuer is recorded.
            let issuer = doc
                .get("issuer")
                .and_then(Value::as_str)
                .unwrap_or(&base)
                .to_owned();
            return parse_server_metadata(&doc, &issuer, &url, true);
        }
    }
    let endpoint = |path: &str| {
        server
            .join(path)
            .map_err(|e| denied(format!("cannot form the default endpoint {path}: {e}")))
    };
    Ok(ServerMetadata {
        issuer: base,
        authorization_endpoint: Some(endpoint("/authorize")?),
        token_endpoint: endpoint("/token")?,
        registration_endpoint: Some(endpoint("/register")?),
        scopes_supported: None,
        code_challenge_methods: None,
        token_endpoint_auth_methods: None,
        client_id_metadata_documents: false,
        iss_parameter_supported: false,
        dpop_algorithms: None,
        legacy: true,
    })
}

fn parse_server_metadata(
    doc: &serde_json::Map<String, Value>,
    issuer: &str,
    from: &Url,
    legacy: bool,
) -> Result<ServerMetadata, ClientError> {
    let endpoint = |name: &str| -> Result<Option<Url>, ClientError> {
        let Some(value) = doc.get(name) else {
            return Ok(None);
        };
        let text = value
            .as_str()
            .ok_or_else(|| denied(format!("`{name}` in {from} is not a string")))?;
        let url = Url::parse(text)
            .map_err(|e| denied(format!("`{name}` in {from} is not a URL: {e}")))?;
        if !secure_enough(&url) {
            return Err(denied(format!(
                "`{name}` in {from} ({text}) is not served over https"
            )));
        }
        Ok(Some(url))
    };
    Ok(ServerMetadata {
        issuer: issuer.to_owned(),
        authorization_endpoint: endpoint("authorization_endpoint")?,
        token_endpoint: endpoint("token_endpoint")?
            .ok_or_else(|| denied(format!("the metadata at {from} has no token_endpoint")))?,
        registration_endpoint: endpoint("registration_endpoint")?,
        scopes_supported: strings(doc, "scopes_supported"),
        code_challenge_methods: strings(doc, "code_challenge_methods_supported"),
        token_endpoint_auth_methods: strings(doc, "token_endpoint_auth_methods_supported"),
        client_id_metadata_documents: doc
            .get("client_id_metadata_document_supported")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        iss_parameter_supported: doc
            .get("authorization_response_iss_parameter_supported")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        dpop_algorithms: strings(doc, "dpop_signing_alg_values_supported"),
        legacy,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn a_resource_is_the_server_or_a_parent() {
        let server = url("http://localhost:3000/mcp");
        assert!(check_resource(&server, "http://localhost:3000/mcp", false).is_ok());
        assert!(check_resource(&server, "http://localhost:3000", false).is_ok());
        assert!(check_resource(&server, "http://localhost:3000/", false).is_ok());
        assert!(check_resource(&server, "https://evil.example.com/mcp", false).is_err());
        assert!(check_resource(&server, "http://localhost:3001/mcp", false).is_err());
        assert!(check_resource(&server, "http://localhost:3000/mc", false).is_err());
        assert!(check_resource(&server, "http://localhost:3000/mcp/x", false).is_err());
        assert!(check_resource(&server, "not a url", false).is_err());
        assert!(check_resource(&server, "http://localhost:3000/other", true).is_ok());
        assert!(check_resource(&server, "http://localhost:3001/mcp", true).is_err());
    }

    #[test]
    fn only_https_or_loopback() {
        assert!(secure_enough(&url("https://as.example.com/token")));
        assert!(secure_enough(&url("http://localhost:9/token")));
        assert!(secure_enough(&url("http://127.0.0.1:9/token")));
        assert!(secure_enough(&url("http://[::1]:9/token")));
        assert!(!secure_enough(&url("http://as.example.com/token")));
        assert!(!secure_enough(&url("http://10.0.0.1/token")));
        assert!(!secure_enough(&url("ftp://localhost/token")));
    }

    #[test]
    fn canonical_uris() {
        assert_eq!(
            canonical(&url("HTTP://Example.COM/mcp#x")),
            "http://example.com/mcp"
        );
        assert_eq!(
            canonical(&url("https://example.com/")),
            "https://example.com"
        );
        assert_eq!(origin(&url("http://localhost:80/a")), "http://localhost");
    }
}
