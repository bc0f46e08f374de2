//! JWT access tokens (RFC 9068) checked against the authorization server's published keys.

use std::time::Duration;

use serde_json::Value;

use super::config::ConfigError;
use super::discovery::AuthorizationServer;
use super::fetch;
use super::jwks::{Alg, KeyPolicy, KeySet};
use super::jws::{check_claims, ClaimRules, Jws};
use super::verifier::{unix_now, BoxFuture, TokenVerifier};
use super::VerifyError;
use mcp_runtime::auth::Principal;

/// Verifies JWT access tokens (RFC 9068): the signature with a key of the issuer's JWK Set
/// (RS256/384/512, PS256/384/512, ES256/384, EdDSA, with ring; the algorithm must fit the
/// key: `alg: none` and HMAC — including an HMAC "signed" with the public key — are
/// refused), `iss` exactly the issuer, `aud` naming this resource (RFC 8707), `exp` and
/// `nbf` with a small leeway, `iat` not in the future beyond it, `typ` if present an
/// access-token type, and the caller named (`sub`, or `client_id`/`azp`: a token naming
/// neither is refused, since all such tokens would be one caller). The key set is
/// fetched on first use and kept (see [`JwtVerifierBuilder::key_cache`]); tokens signed
/// with a key it does not hold wait for one shared refetch, and get 503 rather than 401
/// while the set cannot be fetched.
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
                fetch_timeout: Duration::from_secs(5),
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
        let rules = ClaimRules {
            issuer: &self.issuer,
            resource: &self.resource,
            audiences: &self.audiences,
            leeway: self.leeway,
        };
        check_claims(&rules, claims, unix_now())
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

    /// Clock skew allowed on `exp`, `nbf` and `iat` (default 30 s).
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

    /// At most one fetch of the key set starts per `interval` (default 10 s) for tokens
    /// naming unknown keys, or after a failed fetch: forged `kid`s cannot make the server
    /// hammer the authorization server. Tokens naming an unknown key within the interval
    /// are refused (401) when the last fetch succeeded, and answered 503 when it failed.
    /// `Duration::ZERO` removes the limit. Must be longer than
    /// [`fetch_timeout`](Self::fetch_timeout).
    pub fn min_refresh_interval(mut self, interval: Duration) -> Self {
        self.policy.min_refresh_interval = interval;
        self
    }

    /// How long one fetch of the key set may take (default 5 s; shorter than the refresh
    /// interval, which [`build`](Self::build) checks). Tokens waiting for a key the set
    /// does not hold wait at most this long, all of them on the same fetch.
    pub fn fetch_timeout(mut self, timeout: Duration) -> Self {
        self.policy.fetch_timeout = timeout;
        self
    }

    /// The verifier, or what is wrong with its configuration.
    pub fn build(self) -> Result<JwtVerifier, ConfigError> {
        fetch::check_url(&self.jwks_uri).map_err(ConfigError)?;
        let KeyPolicy {
            min_refresh_interval: interval,
            fetch_timeout: timeout,
            ..
        } = self.policy;
        if timeout.is_zero() || (!interval.is_zero() && timeout >= interval) {
            // A fetch that may last as long as the interval lets a hanging authorization
            // server hold every unknown-key token for a whole timeout, one after the other.
            return Err(ConfigError(format!(
                "the key set's fetch timeout ({timeout:?}) must be non-zero and shorter than its minimum refresh interval ({interval:?})"
            )));
        }
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
