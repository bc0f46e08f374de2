//! Who is calling: the principal an access token names, as a verifier read it.

use serde_json::{Map, Value};

/// The authenticated caller of an HTTP request: what the access token says about who sent
/// it and what it may do. Handlers read it with [`Context::principal`](crate::Context::principal);
/// the token itself is never kept here (it is neither logged nor forwarded).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Principal {
    /// The authorization server that issued the token (`iss`).
    pub issuer: String,
    /// The resource owner (`sub`), if the token names one (a `client_credentials` token
    /// may not).
    pub subject: Option<String>,
    /// The OAuth client the token was issued to (`client_id`, else `azp`).
    pub client_id: Option<String>,
    /// The granted scopes (`scope`, space-separated, or `scp`).
    pub scopes: Vec<String>,
    /// The audiences the token names (`aud`).
    pub audience: Vec<String>,
    /// When the token expires (`exp`, seconds since the Unix epoch).
    pub expires_at: Option<u64>,
    /// Every claim of the token (or of the introspection answer), for what the fields above
    /// do not cover.
    pub claims: Map<String, Value>,
    /// The tools whose own scopes this token does not grant, as the resource server that
    /// verified it found (`mcp-runtime-http`'s per-tool scopes, `tool_scopes`): they are
    /// not listed for this caller, and a call of one is refused (403
    /// `insufficient_scope` over HTTP, before any handler runs). Filled in by the
    /// resource server; a verifier leaves it empty.
    pub denied_tools: Vec<String>,
}

impl Principal {
    /// A principal issued by `issuer`, with nothing else known yet (custom verifiers fill
    /// it in with the setters).
    pub fn new(issuer: impl Into<String>) -> Principal {
        Principal {
            issuer: issuer.into(),
            subject: None,
            client_id: None,
            scopes: Vec::new(),
            audience: Vec::new(),
            expires_at: None,
            claims: Map::new(),
            denied_tools: Vec::new(),
        }
    }

    /// Sets the subject.
    pub fn subject(mut self, subject: impl Into<String>) -> Principal {
        self.subject = Some(subject.into());
        self
    }

    /// Sets the client id.
    pub fn client_id(mut self, client_id: impl Into<String>) -> Principal {
        self.client_id = Some(client_id.into());
        self
    }

    /// Sets the granted scopes.
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Principal {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the audiences.
    pub fn audience<S: Into<String>>(mut self, audience: impl IntoIterator<Item = S>) -> Principal {
        self.audience = audience.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the expiry (seconds since the Unix epoch).
    pub fn expires_at(mut self, exp: u64) -> Principal {
        self.expires_at = Some(exp);
        self
    }

    /// Sets the claims.
    pub fn claims(mut self, claims: Map<String, Value>) -> Principal {
        self.claims = claims;
        self
    }

    /// Whether the token grants `scope` itself (the resource server also counts the scopes
    /// a granted one implies, see `ResourceServerBuilder::scope_implies`).
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// Who this is, for binding a session or a `requestState` to it: issuer, subject and
    /// client. Two tokens of the same user and client (a refreshed one, one with other
    /// scopes) are the same principal; another user, another client or another issuer is
    /// not. JSON text of the three, so that no choice of values can make two different
    /// triples read the same.
    #[doc(hidden)]
    pub fn identity(&self) -> String {
        Value::Array(vec![
            Value::String(self.issuer.clone()),
            self.subject.clone().map_or(Value::Null, Value::String),
            self.client_id.clone().map_or(Value::Null, Value::String),
        ])
        .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_tells_issuer_subject_and_client_apart() {
        let a = Principal::new("https://as").subject("u").client_id("c");
        let refreshed = a.clone().scopes(["more"]).expires_at(5);
        assert_eq!(a.identity(), refreshed.identity());
        for other in [
            Principal::new("https://other").subject("u").client_id("c"),
            Principal::new("https://as").subject("v").client_id("c"),
            Principal::new("https://as").subject("u").client_id("d"),
            Principal::new("https://as").subject("u"),
            // A separator inside a value cannot forge another triple.
            Principal::new("https://as\",\"u").client_id("c"),
        ] {
            assert_ne!(a.identity(), other.identity(), "{other:?}");
        }
    }
}
