//! Opaque (or any) access tokens checked by asking the authorization server (RFC 7662).

use std::time::Duration;

use base64::Engine;
use serde_json::{Map, Value};

use super::config::{names_resource, ConfigError};
use super::discovery::AuthorizationServer;
use super::fetch::{self, Fetched};
use super::jws::scopes_of;
use super::verifier::{unix_now, BoxFuture, TokenVerifier};
use super::VerifyError;
use mcp_runtime::auth::Principal;

/// Verifies tokens at the authorization server's introspection endpoint (RFC 7662), as
/// a client of it (`client_secret_basic`): the token must be `active`, of type bearer,
/// from the issuer, for this resource (`aud`, RFC 8707), and within `exp`/`nbf`. An
/// endpoint that cannot be reached, refuses our credentials or answers nonsense is a 503,
/// never a pass. The resource server's verified-token cache bounds how often it is asked.
pub struct IntrospectionVerifier {
    endpoint: String,
    issuer: String,
    resource: String,
    audiences: Vec<String>,
    credentials: Option<(String, String)>,
    leeway: u64,
    client: reqwest::Client,
}

/// Builds an [`IntrospectionVerifier`].
pub struct IntrospectionVerifierBuilder {
    endpoint: String,
    issuer: String,
    resource: String,
    audiences: Vec<String>,
    credentials: Option<(String, String)>,
    leeway: Duration,
}

impl IntrospectionVerifier {
    /// A verifier asking `endpoint`, of tokens issued by `issuer` for `resource`.
    pub fn builder(
        endpoint: impl Into<String>,
        issuer: impl Into<String>,
        resource: impl Into<String>,
    ) -> IntrospectionVerifierBuilder {
        IntrospectionVerifierBuilder {
            endpoint: endpoint.into(),
            issuer: issuer.into(),
            resource: resource.into(),
            audiences: Vec::new(),
            credentials: None,
            leeway: Duration::from_secs(30),
        }
    }

    /// A verifier asking a discovered authorization server (its `introspection_endpoint`).
    pub fn for_server(
        server: &AuthorizationServer,
        resource: impl Into<String>,
    ) -> Result<IntrospectionVerifierBuilder, ConfigError> {
        let endpoint = server.introspection_endpoint().ok_or_else(|| {
            ConfigError(format!(
                "authorization server {} has no introspection_endpoint",
                server.issuer()
            ))
        })?;
        Ok(IntrospectionVerifier::builder(
            endpoint,
            server.issuer(),
            resource,
        ))
    }

    async fn check(&self, token: &str) -> Result<Principal, VerifyError> {
        let unavailable = |why: String| {
            VerifyError::Unavailable(format!("introspection at {}: {why}", self.endpoint))
        };
        let body = format!("token={}&token_type_hint=access_token", form_encode(token));
        let mut request = self
            .client
            .post(&self.endpoint)
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(body);
        if let Some((id, secret)) = &self.credentials {
            // RFC 6749 §2.3.1: both form-encoded, then Basic.
            let basic = base64::engine::general_purpose::STANDARD.encode(format!(
                "{}:{}",
                form_encode(id),
                form_encode(secret)
            ));
            request = request.header(reqwest::header::AUTHORIZATION, format!("Basic {basic}"));
        }
        let answer = match fetch::json(request).await.map_err(unavailable)? {
            Fetched::Json(Value::Object(answer)) => answer,
            Fetched::Json(_) => return Err(unavailable("the answer is not a JSON object".into())),
            Fetched::Status(status @ (401 | 403)) => {
                return Err(unavailable(format!(
                    "HTTP {status}: the endpoint refuses this resource server's credentials"
                )))
            }
            Fetched::Status(status) => return Err(unavailable(format!("HTTP {status}"))),
        };
        self.principal(answer)
    }

    fn principal(&self, answer: Map<String, Value>) -> Result<Principal, VerifyError> {
        let invalid = |why: &str| VerifyError::Invalid(why.to_owned());
        match answer.get("active") {
            Some(Value::Bool(true)) => {}
            Some(Value::Bool(false)) => return Err(invalid("the token is not active")),
            _ => {
                return Err(VerifyError::Unavailable(
                    "introspection answered without a boolean active".into(),
                ))
            }
        }
        if let Some(kind) = answer.get("token_type") {
            let kind = kind.as_str().unwrap_or_default().to_ascii_lowercase();
            if kind != "bearer" && kind != "access_token" {
                return Err(invalid("the token is not a bearer access token"));
            }
        }
        match answer.get("iss") {
            None => {}
            Some(Value::String(iss)) if *iss == self.issuer => {}
            Some(_) => {
                return Err(invalid(
                    "the token was issued by another authorization server",
                ))
            }
        }
        let now = unix_now();
        let time = |name: &str| -> Result<Option<u64>, VerifyError> {
            match answer.get(name) {
                None => Ok(None),
                Some(v) => v
                    .as_u64()
                    .map(Some)
                    .ok_or_else(|| invalid(&format!("the {name} member is not a time"))),
            }
        };
        let exp = time("exp")?;
        if exp.is_some_and(|exp| exp.saturating_add(self.leeway) < now) {
            return Err(invalid("the token has expired"));
        }
        if time("nbf")?.is_some_and(|nbf| nbf > now.saturating_add(self.leeway)) {
            return Err(invalid("the token is not valid yet (nbf)"));
        }
        if time("iat")?.is_some_and(|iat| iat > now.saturating_add(self.leeway)) {
            return Err(invalid("the token was issued in the future (iat)"));
        }
        let audience: Vec<String> = match answer.get("aud") {
            Some(Value::String(a)) => vec![a.clone()],
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|a| a.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        };
        let for_us = audience.iter().any(|a| {
            names_resource(a, &self.resource) || self.audiences.iter().any(|extra| extra == a)
        });
        if !for_us {
            return Err(invalid("the token was issued for another resource (aud)"));
        }
        let text = |name: &str| answer.get(name).and_then(Value::as_str).map(str::to_owned);
        let mut principal = Principal::new(self.issuer.clone())
            .scopes(scopes_of(&answer)?)
            .audience(audience);
        principal.subject = text("sub");
        principal.client_id = text("client_id");
        // As for JWTs (see `jws::check_claims`): a token naming no caller would make all
        // such callers one.
        if principal.subject.is_none() && principal.client_id.is_none() {
            return Err(invalid(
                "the token names neither its subject (sub) nor its client (client_id)",
            ));
        }
        principal.expires_at = exp;
        principal.claims = answer;
        Ok(principal)
    }
}

/// `application/x-www-form-urlencoded` of one value.
fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, VerifyError>> {
        Box::pin(self.check(token))
    }
}

impl IntrospectionVerifierBuilder {
    /// This resource server's client credentials at the authorization server (sent as
    /// `client_secret_basic`); most servers require them.
    pub fn client_credentials(
        mut self,
        client_id: impl Into<String>,
        secret: impl Into<String>,
    ) -> Self {
        self.credentials = Some((client_id.into(), secret.into()));
        self
    }

    /// Also accepts tokens whose `aud` is `audience`.
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// Clock skew allowed on `exp` and `nbf` (default 30 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// The verifier, or what is wrong with its configuration.
    pub fn build(self) -> Result<IntrospectionVerifier, ConfigError> {
        fetch::check_url(&self.endpoint).map_err(ConfigError)?;
        super::config::UriParts::parse(&self.resource)
            .map_err(|why| ConfigError(format!("resource {:?}: {why}", self.resource)))?;
        Ok(IntrospectionVerifier {
            endpoint: self.endpoint,
            issuer: self.issuer,
            resource: self.resource,
            audiences: self.audiences,
            credentials: self.credentials,
            leeway: self.leeway.as_secs(),
            client: fetch::client().map_err(ConfigError)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_encoding_escapes_everything_but_unreserved() {
        assert_eq!(form_encode("a-b._~Z9"), "a-b._~Z9");
        assert_eq!(form_encode("a b+c/=&é"), "a%20b%2Bc%2F%3D%26%C3%A9");
    }
}
