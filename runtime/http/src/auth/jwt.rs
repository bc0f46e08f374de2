//! JWT access tokens (RFC 9068) checked against the authorization server's published keys.

use std::time::Duration;

use base64::Engine;
use serde_json::{Map, Value};

use super::config::{names_resource, ConfigError};
use super::discovery::AuthorizationServer;
use super::fetch;
use super::jwks::{Alg, KeyPolicy, KeySet};
use super::verifier::{unix_now, BoxFuture, TokenVerifier};
use super::VerifyError;
use mcp_runtime::auth::Principal;

/// Verifies JWT access tokens (RFC 9068): the signature with a key of the issuer's JWK Set
/// (RS256/384/512, PS256/384/512, ES256/384, EdDSA, with ring; the algorithm must fit the
/// key: `alg: none` and HMAC — including an HMAC "signed" with the public key — are
/// refused), `iss` exactly the issuer, `aud` naming this resource (RFC 8707), `exp` and
/// `nbf` with a small leeway, and `typ` if present an access-token type. The key set is
/// fetched on first use and kept (see [`JwtVerifierBuilder::key_cache`]).
pub struct JwtVerifier {
    issuer: String,
    resource: String,
    audiences: Vec<String>,
    leeway: u64,
    strict_typ: bool,
    keys: KeySet,
}

/// Builds a [`JwtVerifier`].
pub struct JwtVerifierBuilder {
    issuer: String,
    jwks_uri: String,
    resource: String,
    audiences: Vec<String>,
    leeway: Duration,
    strict_typ: bool,
    policy: KeyPolicy,
}

impl JwtVerifier {
    /// A verifier of tokens issued by `issuer`, signed with keys of the JWK Set at
    /// `jwks_uri`, for the resource `resource` (its canonical URI).
    pub fn builder(
        issuer: impl Into<String>,
        jwks_uri: impl Into<String>,
        resource: impl Into<String>,
    ) -> JwtVerifierBuilder {
        JwtVerifierBuilder {
            issuer: issuer.into(),
            jwks_uri: jwks_uri.into(),
            resource: resource.into(),
            audiences: Vec::new(),
            leeway: Duration::from_secs(30),
            strict_typ: false,
            policy: KeyPolicy {
                ttl: Duration::from_secs(5 * 60),
                max_stale: Duration::from_secs(60 * 60),
                min_refresh_interval: Duration::from_secs(10),
            },
        }
    }

    /// A verifier for the tokens of a discovered authorization server (its `jwks_uri`).
    pub fn for_server(
        server: &AuthorizationServer,
        resource: impl Into<String>,
    ) -> Result<JwtVerifierBuilder, ConfigError> {
        let jwks_uri = server.jwks_uri().ok_or_else(|| {
            ConfigError(format!(
                "authorization server {} publishes no jwks_uri",
                server.issuer()
            ))
        })?;
        Ok(JwtVerifier::builder(server.issuer(), jwks_uri, resource))
    }

    /// Fetches the key set now, so that an unreachable or wrong `jwks_uri` shows at
    /// start-up rather than on the first request.
    pub async fn prefetch_keys(&self) -> Result<(), VerifyError> {
        self.keys.prefetch().await
    }

    async fn check(&self, token: &str) -> Result<Principal, VerifyError> {
        let invalid = |why: &str| VerifyError::Invalid(why.to_owned());
        let jws = Jws::parse(token)?;
        let alg_name = jws
            .header
            .get("alg")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if alg_name.eq_ignore_ascii_case("none") {
            return Err(invalid("unsigned tokens (alg none) are refused"));
        }
        if alg_name.starts_with("HS") {
            return Err(invalid(
                "symmetric (HMAC) signatures are refused: tokens must be signed with the authorization server's private key",
            ));
        }
        let alg = Alg::parse(alg_name)
            .ok_or_else(|| invalid("the token's algorithm is not supported"))?;
        if jws.header.contains_key("crit") {
            return Err(invalid(
                "the token has critical header extensions this server does not know",
            ));
        }
        if let Some(typ) = jws.header.get("typ") {
            let typ = typ.as_str().unwrap_or_default().to_ascii_lowercase();
            let access_token = typ == "at+jwt" || typ == "application/at+jwt";
            if !(access_token || (!self.strict_typ && typ == "jwt")) {
                return Err(invalid("the token is not an access token (typ)"));
            }
        } else if self.strict_typ {
            return Err(invalid("the token is not an access token (no typ at+jwt)"));
        }
        let kid = match jws.header.get("kid") {
            None => None,
            Some(Value::String(kid)) => Some(kid.as_str()),
            Some(_) => return Err(invalid("the token's kid is not a string")),
        };
        let key = self.keys.key(kid, alg).await?;
        if !key.verifies(alg, jws.signed, &jws.signature) {
            return Err(invalid("the signature does not verify"));
        }
        // Only a verified payload is read.
        let claims = match serde_json::from_slice(&jws.payload) {
            Ok(Value::Object(claims)) => claims,
            _ => return Err(invalid("the token's claims are not a JSON object")),
        };
        self.principal(claims)
    }

    /// The claims checked by type and value (RFC 9068 §4), and read.
    fn principal(&self, claims: Map<String, Value>) -> Result<Principal, VerifyError> {
        let invalid = |why: &str| VerifyError::Invalid(why.to_owned());
        let now = unix_now();
        let number = |name: &str| -> Result<Option<u64>, VerifyError> {
            match claims.get(name) {
                None => Ok(None),
                Some(Value::Number(n)) => n
                    .as_u64()
                    .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
                    .map(Some)
                    .ok_or_else(|| invalid(&format!("the {name} claim is not a valid time"))),
                Some(_) => Err(invalid(&format!("the {name} claim is not a number"))),
            }
        };
        let exp = number("exp")?.ok_or_else(|| invalid("the token has no exp claim"))?;
        if exp.saturating_add(self.leeway) < now {
            return Err(invalid("the token has expired"));
        }
        if number("nbf")?.is_some_and(|nbf| nbf > now.saturating_add(self.leeway)) {
            return Err(invalid("the token is not valid yet (nbf)"));
        }
        number("iat")?;
        if claims.get("iss").and_then(Value::as_str) != Some(self.issuer.as_str()) {
            return Err(invalid(
                "the token was issued by another authorization server",
            ));
        }
        let audience: Vec<String> = match claims.get("aud") {
            Some(Value::String(a)) => vec![a.clone()],
            Some(Value::Array(items)) => items
                .iter()
                .map(|a| a.as_str().map(str::to_owned))
                .collect::<Option<_>>()
                .ok_or_else(|| invalid("the aud claim is not a list of strings"))?,
            _ => return Err(invalid("the token has no audience")),
        };
        let for_us = audience.iter().any(|a| {
            names_resource(a, &self.resource) || self.audiences.iter().any(|extra| extra == a)
        });
        if !for_us {
            return Err(invalid("the token was issued for another resource (aud)"));
        }
        let string = |name: &str| -> Result<Option<String>, VerifyError> {
            match claims.get(name) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(invalid(&format!("the {name} claim is not a string"))),
            }
        };
        let subject = string("sub")?;
        let client_id = match string("client_id")? {
            Some(c) => Some(c),
            None => string("azp")?,
        };
        let scopes = scopes_of(&claims)?;
        let mut principal = Principal::new(self.issuer.clone())
            .scopes(scopes)
            .audience(audience)
            .expires_at(exp);
        principal.subject = subject;
        principal.client_id = client_id;
        principal.claims = claims;
        Ok(principal)
    }
}

/// `scope` (space-separated, RFC 9068) or `scp` (a list, or a string, as some servers write).
pub(crate) fn scopes_of(claims: &Map<String, Value>) -> Result<Vec<String>, VerifyError> {
    let bad = || VerifyError::Invalid("the scope claim is malformed".into());
    let split = |s: &str| {
        s.split(' ')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    };
    match claims.get("scope").or_else(|| claims.get("scp")) {
        None => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(split(s)),
        Some(Value::Array(items)) => items
            .iter()
            .map(|s| s.as_str().map(str::to_owned))
            .collect::<Option<_>>()
            .ok_or_else(bad),
        Some(_) => Err(bad()),
    }
}

/// A JWS in compact serialization (RFC 7515 §7.1), taken apart: three base64url parts,
/// the first a JSON object. The payload is kept as bytes until the signature is verified.
struct Jws<'a> {
    header: Map<String, Value>,
    /// `header.payload`, as signed.
    signed: &'a [u8],
    payload: Vec<u8>,
    signature: Vec<u8>,
}

impl<'a> Jws<'a> {
    fn parse(token: &'a str) -> Result<Jws<'a>, VerifyError> {
        let malformed = || VerifyError::Invalid("the token is not a well-formed JWT".into());
        let decode = |part: &str| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(part)
                .map_err(|_| malformed())
        };
        let (signed, signature) = token.rsplit_once('.').ok_or_else(malformed)?;
        let (header, payload) = signed.split_once('.').ok_or_else(malformed)?;
        if payload.contains('.') {
            return Err(malformed());
        }
        let header = match serde_json::from_slice(&decode(header)?) {
            Ok(Value::Object(map)) => map,
            _ => return Err(malformed()),
        };
        Ok(Jws {
            header,
            signed: signed.as_bytes(),
            payload: decode(payload)?,
            signature: decode(signature)?,
        })
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, VerifyError>> {
        Box::pin(self.check(token))
    }
}

impl JwtVerifierBuilder {
    /// Also accepts tokens whose `aud` is `audience` (an authorization server that names
    /// resources otherwise than by their URI).
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// Clock skew allowed on `exp` and `nbf` (default 30 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// Requires `typ: at+jwt` (RFC 9068 §4); by default a token without `typ`, or with
    /// `typ: JWT`, is accepted too, as many servers issue them (any other type is refused).
    pub fn require_access_token_type(mut self, strict: bool) -> Self {
        self.strict_typ = strict;
        self
    }

    /// The key set is refetched when older than `ttl` (default 5 min); when refetching
    /// fails, the previous set is used until it is `max_stale` old (default 1 h), then
    /// tokens are answered 503 until the set can be fetched again.
    pub fn key_cache(mut self, ttl: Duration, max_stale: Duration) -> Self {
        self.policy.ttl = ttl;
        self.policy.max_stale = max_stale;
        self
    }

    /// At most one refetch of the key set per `interval` (default 10 s) for tokens naming
    /// unknown keys, or after a failed fetch: forged `kid`s cannot make the server hammer
    /// the authorization server.
    pub fn min_refresh_interval(mut self, interval: Duration) -> Self {
        self.policy.min_refresh_interval = interval;
        self
    }

    /// The verifier, or what is wrong with its configuration.
    pub fn build(self) -> Result<JwtVerifier, ConfigError> {
        fetch::check_url(&self.jwks_uri).map_err(ConfigError)?;
        super::config::UriParts::parse(&self.resource)
            .map_err(|why| ConfigError(format!("resource {:?}: {why}", self.resource)))?;
        let client = fetch::client().map_err(ConfigError)?;
        Ok(JwtVerifier {
            issuer: self.issuer,
            resource: self.resource,
            audiences: self.audiences,
            leeway: self.leeway.as_secs(),
            strict_typ: self.strict_typ,
            keys: KeySet::new(self.jwks_uri, client, self.policy),
        })
    }
}

/// Several authorization servers for one resource (the metadata may name more than one):
/// a JWT goes to the verifier of the issuer its `iss` names. `iss` is read unverified only
/// to choose; the chosen verifier checks everything, the issuer included, so a token that
/// names one issuer and is signed by another's key is refused. A token naming no listed
/// issuer is refused without any key being fetched.
#[derive(Default)]
pub struct ByIssuer {
    verifiers: Vec<(String, Box<dyn TokenVerifier>)>,
}

impl ByIssuer {
    /// No issuer yet.
    pub fn new() -> ByIssuer {
        ByIssuer::default()
    }

    /// Tokens whose `iss` is `issuer` go to `verifier`.
    pub fn issuer(
        mut self,
        issuer: impl Into<String>,
        verifier: impl TokenVerifier + 'static,
    ) -> Self {
        self.verifiers.push((issuer.into(), Box::new(verifier)));
        self
    }

    fn named_issuer(token: &str) -> Result<String, VerifyError> {
        let jws = Jws::parse(token)?;
        let claims: Value = serde_json::from_slice(&jws.payload)
            .map_err(|_| VerifyError::Invalid("the token's claims are not JSON".into()))?;
        claims
            .get("iss")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| VerifyError::Invalid("the token names no issuer".into()))
    }
}

impl TokenVerifier for ByIssuer {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, VerifyError>> {
        Box::pin(async move {
            let issuer = ByIssuer::named_issuer(token)?;
            let verifier = self
                .verifiers
                .iter()
                .find(|(known, _)| *known == issuer)
                .map(|(_, v)| v)
                .ok_or_else(|| {
                    VerifyError::Invalid(
                        "the token was issued by an authorization server this resource does not trust"
                            .into(),
                    )
                })?;
            verifier.verify(token).await
        })
    }
}
