//! Authorization server metadata discovery (RFC 8414 §3, OpenID Connect Discovery 1.0),
//! in the order the MCP specification gives, with the issuer check of RFC 8414 §3.3.

use serde_json::Value;

use super::config::UriParts;
use super::fetch::{self, Fetched};

/// An authorization server, known by its metadata.
#[derive(Clone, Debug)]
pub struct AuthorizationServer {
    issuer: String,
    metadata: Value,
}

/// Why an authorization server's metadata could not be had.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiscoveryError(pub String);

impl std::fmt::Display for DiscoveryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DiscoveryError {}

impl AuthorizationServer {
    /// Fetches the metadata of the authorization server `issuer`: for an issuer with a
    /// path, `/.well-known/oauth-authorization-server{path}`, then
    /// `/.well-known/openid-configuration{path}`, then `{issuer}/.well-known/openid-configuration`;
    /// without a path, the first two at the root. The first document found must name
    /// `issuer` exactly, else it is refused (a mix-up defence).
    pub async fn discover(issuer: &str) -> Result<AuthorizationServer, DiscoveryError> {
        let err = |m: String| DiscoveryError(format!("authorization server {issuer}: {m}"));
        fetch::check_url(issuer).map_err(err)?;
        if issuer.contains('?') {
            return Err(err("an issuer has no query".into()));
        }
        let parts = UriParts::parse(issuer).map_err(|e| err(e.into()))?;
        let origin = parts.origin();
        let path = parts.path().trim_end_matches('/').to_owned();
        let mut candidates = vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
        ];
        if !path.is_empty() {
            candidates.push(format!("{origin}{path}/.well-known/openid-configuration"));
        }
        let client = fetch::client().map_err(err)?;
        let mut tried = Vec::new();
        for url in candidates {
            match fetch::json(client.get(&url)).await {
                Ok(Fetched::Json(doc)) => return AuthorizationServer::from_metadata(issuer, doc),
                Ok(Fetched::Status(status)) => tried.push(format!("{url}: HTTP {status}")),
                Err(e) => tried.push(format!("{url}: {e}")),
            }
        }
        Err(err(format!("no metadata found ({})", tried.join("; "))))
    }

    /// An authorization server from metadata obtained otherwise; `issuer` must be the
    /// document's `issuer`, exactly.
    pub fn from_metadata(
        issuer: &str,
        metadata: Value,
    ) -> Result<AuthorizationServer, DiscoveryError> {
        let err = |m: &str| DiscoveryError(format!("authorization server {issuer}: {m}"));
        if !metadata.is_object() {
            return Err(err("the metadata is not a JSON object"));
        }
        match metadata.get("issuer").and_then(Value::as_str) {
            Some(named) if named == issuer => {}
            Some(_) => return Err(err("the metadata names another issuer (RFC 8414 §3.3)")),
            None => return Err(err("the metadata has no issuer")),
        }
        for endpoint in ["jwks_uri", "introspection_endpoint"] {
            if let Some(url) = metadata.get(endpoint) {
                let url = url
                    .as_str()
                    .ok_or_else(|| err(&format!("{endpoint} is not a string")))?;
                fetch::check_url(url).map_err(|e| err(&format!("{endpoint}: {e}")))?;
            }
        }
        Ok(AuthorizationServer {
            issuer: issuer.to_owned(),
            metadata,
        })
    }

    /// The issuer identifier.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The metadata document.
    pub fn metadata(&self) -> &Value {
        &self.metadata
    }

    /// `jwks_uri`, if the server publishes its keys.
    pub fn jwks_uri(&self) -> Option<&str> {
        self.metadata.get("jwks_uri").and_then(Value::as_str)
    }

    /// `introspection_endpoint` (RFC 7662), if any.
    pub fn introspection_endpoint(&self) -> Option<&str> {
        self.metadata
            .get("introspection_endpoint")
            .and_then(Value::as_str)
    }
}
