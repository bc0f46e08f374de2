//! The resource server's configuration: its canonical URI, its authorization servers, the
//! scopes it asks for, and the verifier of its tokens.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::verifier::{TokenVerifier, VerifiedTokens, VerifyError};
use mcp_runtime::auth::Principal;

/// What makes the HTTP transport an OAuth 2.1 resource server (set
/// [`HttpConfig::authorization`](crate::HttpConfig::authorization)):
/// every request to the MCP endpoints (`/mcp`, and `/sse` + `/messages` when served) needs
/// a bearer token that the verifier accepts and that grants the required scopes; the
/// Protected Resource Metadata (RFC 9728) is served at
/// `/.well-known/oauth-protected-resource` and at its path-suffixed form.
pub struct ResourceServer {
    resource: String,
    metadata_path: String,
    metadata_url: String,
    authorization_servers: Vec<String>,
    scopes_supported: Vec<String>,
    required_scopes: Vec<String>,
    tool_scopes: HashMap<String, Vec<String>>,
    implies: HashMap<String, Vec<String>>,
    resource_name: Option<String>,
    authorization_server_metadata: Option<Value>,
    max_token_bytes: usize,
    verifier: Arc<dyn TokenVerifier>,
    verified: VerifiedTokens,
}

impl fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceServer")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("scopes_supported", &self.scopes_supported)
            .field("required_scopes", &self.required_scopes)
            .field("tool_scopes", &self.tool_scopes)
            .finish_non_exhaustive()
    }
}

/// A resource server's configuration that cannot work.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// Builds a [`ResourceServer`].
pub struct ResourceServerBuilder {
    resource: String,
    verifier: Arc<dyn TokenVerifier>,
    authorization_servers: Vec<String>,
    scopes_supported: Vec<String>,
    required_scopes: Vec<String>,
    tool_scopes: HashMap<String, Vec<String>>,
    implies: HashMap<String, Vec<String>>,
    resource_name: Option<String>,
    authorization_server_metadata: Option<Value>,
    max_token_bytes: usize,
    cache_ttl: Duration,
    cache_capacity: usize,
}

impl ResourceServer {
    /// A resource server whose canonical URI is `resource` (the MCP endpoint's URL as
    /// clients reach it, e.g. `https://mcp.example.com/mcp`: tokens must name it in `aud`)
    /// and whose tokens `verifier` checks.
    pub fn builder(
        resource: impl Into<String>,
        verifier: impl TokenVerifier + 'static,
    ) -> ResourceServerBuilder {
        ResourceServerBuilder {
            resource: resource.into(),
            verifier: Arc::new(verifier),
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            required_scopes: Vec::new(),
            tool_scopes: HashMap::new(),
            implies: HashMap::new(),
            resource_name: None,
            authorization_server_metadata: None,
            max_token_bytes: 16 * 1024,
            cache_ttl: Duration::from_secs(60),
            cache_capacity: 10_000,
        }
    }

    /// The canonical resource URI.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The URL of the Protected Resource Metadata, as `WWW-Authenticate` names it.
    pub fn metadata_url(&self) -> &str {
        &self.metadata_url
    }

    /// The path-suffixed well-known path of the metadata (RFC 9728 §3.1), e.g.
    /// `/.well-known/oauth-protected-resource/mcp`.
    pub(crate) fn metadata_path(&self) -> &str {
        &self.metadata_path
    }

    /// The Protected Resource Metadata document (RFC 9728 §2).
    pub fn protected_resource_metadata(&self) -> Value {
        let mut doc = json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        if let Value::Object(map) = &mut doc {
            if !self.scopes_supported.is_empty() {
                map.insert("scopes_supported".into(), json!(self.scopes_supported));
            }
            if let Some(name) = &self.resource_name {
                map.insert("resource_name".into(), json!(name));
            }
        }
        doc
    }

    /// The authorization server metadata mirrored at `/.well-known/oauth-authorization-server`
    /// for 2025-03-26 clients, which look for it at the MCP server's origin.
    pub(crate) fn authorization_server_metadata(&self) -> Option<&Value> {
        self.authorization_server_metadata.as_ref()
    }

    /// The scopes every request needs.
    pub fn required_scopes(&self) -> &[String] {
        &self.required_scopes
    }

    /// The scopes a `tools/call` of `tool` needs besides the required ones.
    pub fn tool_scopes(&self, tool: &str) -> &[String] {
        self.tool_scopes.get(tool).map_or(&[], Vec::as_slice)
    }

    /// Whether a tool has scopes of its own (so that requests must be read to decide).
    pub(crate) fn has_tool_scopes(&self) -> bool {
        !self.tool_scopes.is_empty()
    }

    /// The scopes of `needed` that `principal` holds neither directly nor through a scope
    /// that implies them.
    pub fn missing_scopes<'a>(&self, principal: &Principal, needed: &'a [String]) -> Vec<&'a str> {
        if needed.is_empty() {
            return Vec::new();
        }
        // Everything the granted scopes reach through `implies` (a broader scope implies
        // narrower ones, transitively; cycles end because a scope is visited once).
        let mut held: BTreeSet<&str> = BTreeSet::new();
        let mut todo: Vec<&str> = principal.scopes.iter().map(String::as_str).collect();
        while let Some(scope) = todo.pop() {
            if held.insert(scope) {
                if let Some(narrower) = self.implies.get(scope) {
                    todo.extend(narrower.iter().map(String::as_str));
                }
            }
        }
        needed
            .iter()
            .map(String::as_str)
            .filter(|s| !held.contains(s))
            .collect()
    }

    /// Verifies `token` (a recently verified one comes from the cache): the principal it
    /// names, or why not. Tokens longer than the limit are refused unread.
    pub async fn authenticate(&self, token: &str) -> Result<Arc<Principal>, VerifyError> {
        if token.len() > self.max_token_bytes {
            return Err(VerifyError::Invalid(format!(
                "the token is longer than {} bytes",
                self.max_token_bytes
            )));
        }
        if !self.verified.enabled() {
            return Ok(Arc::new(
                self.with_denied_tools(self.verifier.verify(token).await?),
            ));
        }
        let key = VerifiedTokens::key(token);
        if let Some(principal) = self.verified.get(&key) {
            return Ok(principal);
        }
        let principal = Arc::new(self.with_denied_tools(self.verifier.verify(token).await?));
        self.verified.insert(key, &principal);
        Ok(principal)
    }

    /// `principal` with the tools whose scopes it lacks ([`Principal::denied_tools`]):
    /// worked out once per token, so that a list for this caller only looks names up.
    fn with_denied_tools(&self, mut principal: Principal) -> Principal {
        let mut denied: Vec<String> = self
            .tool_scopes
            .iter()
            .filter(|(_, scopes)| !self.missing_scopes(&principal, scopes).is_empty())
            .map(|(tool, _)| tool.clone())
            .collect();
        denied.sort();
        principal.denied_tools = denied;
        principal
    }
}

impl ResourceServerBuilder {
    /// Adds an authorization server (its issuer URL) to the metadata's
    /// `authorization_servers`; at least one is required.
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// The scopes the metadata lists as `scopes_supported` (what a client asks for when
    /// the challenge names none).
    pub fn scopes_supported<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Scopes every request needs (else 403 `insufficient_scope`); named in the `scope` of
    /// every challenge.
    pub fn require_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.required_scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Scopes a `tools/call` of `tool` needs besides the required ones. A caller whose
    /// token lacks them is refused the call (403 `insufficient_scope`, naming them), and
    /// is not shown the tool in `tools/list`.
    pub fn tool_scopes<S: Into<String>>(
        mut self,
        tool: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.tool_scopes
            .insert(tool.into(), scopes.into_iter().map(Into::into).collect());
        self
    }

    /// A scope hierarchy: holding `broader` counts as holding each of `narrower` (and what
    /// they imply in turn), as the specification requires servers to account for.
    pub fn scope_implies<S: Into<String>>(
        mut self,
        broader: impl Into<String>,
        narrower: impl IntoIterator<Item = S>,
    ) -> Self {
        self.implies
            .entry(broader.into())
            .or_default()
            .extend(narrower.into_iter().map(Into::into));
        self
    }

    /// A human-readable name for the metadata's `resource_name`.
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// The authorization server's metadata (RFC 8414), mirrored at
    /// `/.well-known/oauth-authorization-server` for 2025-03-26 clients (they look for it at
    /// the MCP server's origin; later revisions use the Protected Resource Metadata). Only
    /// the members of the authorization code flow are mirrored (see [`MIRRORED_MEMBERS`]).
    pub fn authorization_server_metadata(mut self, metadata: Value) -> Self {
        self.authorization_server_metadata = Some(mirror_of(&metadata));
        self
    }

    /// The authorization server found by [`AuthorizationServer::discover`](super::AuthorizationServer::discover):
    /// named in the metadata, and its metadata mirrored for 2025-03-26 clients.
    #[cfg(feature = "auth")]
    pub fn discovered_authorization_server(self, server: &super::AuthorizationServer) -> Self {
        self.authorization_server(server.issuer())
            .authorization_server_metadata(server.metadata().clone())
    }

    /// Tokens longer than this are refused without being read (default 16 KiB).
    pub fn max_token_bytes(mut self, bytes: usize) -> Self {
        self.max_token_bytes = bytes;
        self
    }

    /// How long a verified token is remembered (default 60 s, never past its expiry;
    /// `Duration::ZERO` verifies every request afresh), and for how many tokens at most
    /// (default 10,000). This bounds how long a revoked token still passes.
    pub fn verified_token_cache(mut self, ttl: Duration, capacity: usize) -> Self {
        self.cache_ttl = ttl;
        self.cache_capacity = capacity;
        self
    }

    /// The resource server, or what is wrong with its configuration.
    pub fn build(self) -> Result<ResourceServer, ConfigError> {
        let parts = UriParts::parse(&self.resource)
            .map_err(|why| ConfigError(format!("resource {:?}: {why}", self.resource)))?;
        if self.authorization_servers.is_empty() {
            return Err(ConfigError(
                "at least one authorization server is required (RFC 9728 metadata must name one)"
                    .into(),
            ));
        }
        for issuer in &self.authorization_servers {
            UriParts::parse(issuer)
                .map_err(|why| ConfigError(format!("authorization server {issuer:?}: {why}")))?;
        }
        let scopes = self
            .scopes_supported
            .iter()
            .chain(&self.required_scopes)
            .chain(self.tool_scopes.values().flatten());
        for scope in scopes {
            if scope.is_empty() || !scope.bytes().all(is_scope_char) {
                return Err(ConfigError(format!(
                    "scope {scope:?} is not a valid scope token (RFC 6749 §3.3)"
                )));
            }
        }
        let resource = parts.canonical();
        let metadata_path = match parts.path.trim_end_matches('/') {
            "" => WELL_KNOWN_RESOURCE.to_owned(),
            path => format!("{WELL_KNOWN_RESOURCE}{path}"),
        };
        let metadata_url = format!("{}{metadata_path}", parts.origin());
        Ok(ResourceServer {
            resource,
            metadata_path,
            metadata_url,
            authorization_servers: self.authorization_servers,
            scopes_supported: self.scopes_supported,
            required_scopes: self.required_scopes,
            tool_scopes: self.tool_scopes,
            implies: self.implies,
            resource_name: self.resource_name,
            authorization_server_metadata: self.authorization_server_metadata,
            max_token_bytes: self.max_token_bytes,
            verifier: self.verifier,
            verified: VerifiedTokens::new(self.cache_ttl, self.cache_capacity),
        })
    }
}

/// The members of an authorization server's metadata mirrored for 2025-03-26 clients:
/// what they use for dynamic registration and the authorization code flow with PKCE.
/// The rest stays with the authorization server, because clients of that revision model
/// the document strictly: mcp 1.9.x (Python) refuses the whole document when
/// `response_modes_supported` lists `form_post` or a `…_signing_alg_values_supported`
/// member is present, as real servers (oidc-provider) publish them.
pub const MIRRORED_MEMBERS: &[&str] = &[
    "issuer",
    "authorization_endpoint",
    "token_endpoint",
    "registration_endpoint",
    "revocation_endpoint",
    "scopes_supported",
    "response_types_supported",
    "grant_types_supported",
    "token_endpoint_auth_methods_supported",
    "code_challenge_methods_supported",
    "authorization_response_iss_parameter_supported",
    "service_documentation",
];

fn mirror_of(metadata: &Value) -> Value {
    let mut mirror = serde_json::Map::new();
    for member in MIRRORED_MEMBERS {
        if let Some(value) = metadata.get(member) {
            mirror.insert((*member).to_owned(), value.clone());
        }
    }
    Value::Object(mirror)
}

/// The root well-known path of Protected Resource Metadata (RFC 9728 §3).
pub(crate) const WELL_KNOWN_RESOURCE: &str = "/.well-known/oauth-protected-resource";

/// RFC 6749 §3.3 scope-token characters: visible ASCII except `"` and `\`.
fn is_scope_char(b: u8) -> bool {
    b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b)
}

/// An absolute http(s) URI taken apart as far as a resource identifier needs.
pub(crate) struct UriParts<'a> {
    scheme: String,
    authority: String,
    path: &'a str,
}

impl<'a> UriParts<'a> {
    pub(crate) fn parse(uri: &'a str) -> Result<UriParts<'a>, &'static str> {
        let (scheme, rest) = uri
            .split_once("://")
            .ok_or("not an absolute URI (no scheme)")?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "https" && scheme != "http" {
            return Err("the scheme must be https (or http)");
        }
        if uri.contains('#') {
            return Err("a resource identifier has no fragment");
        }
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, path) = rest.split_at(end);
        if authority.is_empty() {
            return Err("no host");
        }
        if authority.contains('@') {
            return Err("user information is not allowed");
        }
        if !authority
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~:[]%".contains(&b))
        {
            return Err("the host is not valid");
        }
        Ok(UriParts {
            scheme,
            authority: authority.to_ascii_lowercase(),
            path,
        })
    }

    /// The path (and query), as written.
    #[cfg(feature = "auth")]
    pub(crate) fn path(&self) -> &str {
        self.path
    }

    pub(crate) fn origin(&self) -> String {
        format!("{}://{}", self.scheme, self.authority)
    }

    /// Scheme and host in lower case (the canonical form), the rest as written, without a
    /// trailing slash on an empty path.
    pub(crate) fn canonical(&self) -> String {
        let path = if self.path == "/" { "" } else { self.path };
        format!("{}{path}", self.origin())
    }
}

/// Whether an audience value names the resource: equal after scheme and host are lowered
/// and one trailing slash is dropped (clients SHOULD send the canonical form, servers
/// SHOULD accept upper-case scheme and host). Only one: `/mcp//` is another path than
/// `/mcp`, which a server routing by path may serve as another resource.
pub(crate) fn names_resource(audience: &str, resource: &str) -> bool {
    let canonical = |uri: &str| {
        UriParts::parse(uri).map_or_else(
            |_| uri.to_owned(),
            |p| {
                let c = p.canonical();
                c.strip_suffix('/').map_or_else(|| c.clone(), str::to_owned)
            },
        )
    };
    audience == resource || canonical(audience) == canonical(resource)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::verifier::BoxFuture;

    struct Nobody;
    impl TokenVerifier for Nobody {
        fn verify<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Principal, VerifyError>> {
            Box::pin(async { Err(VerifyError::Invalid("no".into())) })
        }
    }

    #[test]
    fn metadata_paths_follow_the_resource_path() {
        let rs = ResourceServer::builder("HTTPS://MCP.Example.com/mcp", Nobody)
            .authorization_server("https://as.example.com")
            .build()
            .unwrap();
        assert_eq!(rs.resource(), "https://mcp.example.com/mcp");
        assert_eq!(
            rs.metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
        let root = ResourceServer::builder("https://mcp.example.com/", Nobody)
            .authorization_server("https://as.example.com")
            .build()
            .unwrap();
        assert_eq!(root.resource(), "https://mcp.example.com");
        assert_eq!(root.metadata_path(), WELL_KNOWN_RESOURCE);
    }

    #[test]
    fn bad_configurations_are_refused() {
        let build = |resource: &str, issuer: Option<&str>, scope: &str| {
            let mut b = ResourceServer::builder(resource, Nobody).require_scopes([scope]);
            if let Some(i) = issuer {
                b = b.authorization_server(i);
            }
            b.build()
        };
        assert!(build("mcp.example.com", Some("https://as"), "s").is_err());
        assert!(build("https://mcp.example.com#f", Some("https://as"), "s").is_err());
        assert!(build("ftp://mcp.example.com", Some("https://as"), "s").is_err());
        assert!(build("https://u@mcp.example.com", Some("https://as"), "s").is_err());
        assert!(build("https://mcp.example.com", None, "s").is_err());
        assert!(build("https://mcp.example.com", Some("as"), "s").is_err());
        assert!(build("https://mcp.example.com", Some("https://as"), "a b").is_err());
        assert!(build("https://mcp.example.com", Some("https://as"), "a\"").is_err());
        assert!(build("https://mcp.example.com", Some("https://as"), "mcp:read").is_ok());
    }

    #[test]
    fn implied_scopes_count_transitively() {
        let rs = ResourceServer::builder("https://mcp.example.com/mcp", Nobody)
            .authorization_server("https://as")
            .scope_implies("admin", ["write"])
            .scope_implies("write", ["read"])
            .scope_implies("read", ["admin"]) // a cycle ends
            .build()
            .unwrap();
        let needed = vec!["read".to_owned(), "other".to_owned()];
        let admin = Principal::new("i").scopes(["admin"]);
        assert_eq!(rs.missing_scopes(&admin, &needed), vec!["other"]);
        let none = Principal::new("i");
        assert_eq!(rs.missing_scopes(&none, &needed), vec!["read", "other"]);
    }

    #[test]
    fn audiences_compare_canonically() {
        let r = "https://mcp.example.com/mcp";
        assert!(names_resource("https://mcp.example.com/mcp", r));
        assert!(names_resource("HTTPS://MCP.EXAMPLE.COM/mcp", r));
        assert!(names_resource("https://mcp.example.com/mcp/", r));
        assert!(!names_resource("https://mcp.example.com/mcp//", r));
        assert!(!names_resource("https://mcp.example.com/mcp///", r));
        assert!(names_resource(
            "https://mcp.example.com/",
            "https://mcp.example.com"
        ));
        assert!(!names_resource(
            "https://mcp.example.com//",
            "https://mcp.example.com"
        ));
        assert!(!names_resource("https://mcp.example.com/MCP", r));
        assert!(!names_resource("https://mcp.example.com", r));
        assert!(!names_resource("https://evil.example.com/mcp", r));
        assert!(!names_resource("https://mcp.example.com.evil/mcp", r));
    }
}
