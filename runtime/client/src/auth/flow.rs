//! The authorization itself: one [`Authorizer`] per connection holds the token in use and
//! runs, one at a time, what a `401` or a `403 insufficient_scope` calls for — discovery,
//! registration, the authorization code flow with PKCE or the client credentials grant,
//! refresh — and keeps the results in the [`TokenStore`](super::TokenStore).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use base64::Engine;
use reqwest::Url;
use sha2::{Digest, Sha256};

use super::challenge::Challenge;
use super::discovery::{self, ServerMetadata};
use super::dpop::DpopKey;
use super::{AuthorizationRequest, ClientCredentials, Grant, OAuth, Tokens};
use crate::error::{ClientError, ClientErrorKind};

mod endpoints;

/// The JWT bearer grant type (RFC 7523 §2.1).
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// An authorization failure.
pub(crate) fn denied(message: impl Into<String>) -> ClientError {
    ClientError::new(ClientErrorKind::Unauthorized, message)
}

/// The authorization of one connection.
pub(crate) struct Authorizer {
    oauth: OAuth,
    server: Url,
    /// The key of the token store: the MCP server's canonical URI.
    key: String,
    client_name: String,
    /// HTTP+SSE: the resource may be another path of the server's origin (servers name
    /// their Streamable HTTP endpoint; 2024-11-05 predates resource metadata).
    same_origin_is_enough: bool,
    http: reqwest::Client,
    current: Mutex<Option<Tokens>>,
    /// The DPoP key, once both servers offered DPoP.
    dpop: Mutex<Option<Arc<DpopKey>>>,
    /// The MCP server offers DPoP (its challenge's scheme, or its resource metadata).
    dpop_offered: std::sync::atomic::AtomicBool,
    /// Held while a flow runs, so that concurrent refusals authorize once.
    flow: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("server", &self.key)
            .finish_non_exhaustive()
    }
}

fn random_token(bytes: usize) -> Result<String, ClientError> {
    let mut buf = vec![0u8; bytes];
    getrandom::getrandom(&mut buf).map_err(|e| denied(format!("no randomness for PKCE: {e}")))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buf))
}

/// The PKCE `S256` challenge of a verifier (RFC 7636 §4.2).
pub(crate) fn s256(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// Space-separated scopes, each once, in order.
fn union(a: &str, b: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for s in a.split_whitespace().chain(b.split_whitespace()) {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out.join(" ")
}

impl Authorizer {
    pub(crate) fn new(
        oauth: OAuth,
        server: &str,
        client_name: &str,
        same_origin_is_enough: bool,
    ) -> Result<Authorizer, ClientError> {
        let server = Url::parse(server)
            .map_err(|e| ClientError::transport(format!("bad URL `{server}`: {e}")))?;
        let key = discovery::canonical(&server);
        let current = oauth.store.tokens(&key);
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(30))
            .timeout(Duration::from_secs(60))
            .build()
            .map_err(|e| ClientError::transport(format!("cannot build the HTTP client: {e}")))?;
        Ok(Authorizer {
            client_name: oauth
                .client_name
                .clone()
                .unwrap_or_else(|| client_name.to_owned()),
            oauth,
            server,
            key,
            same_origin_is_enough,
            http,
            current: Mutex::new(current),
            dpop: Mutex::new(None),
            dpop_offered: std::sync::atomic::AtomicBool::new(false),
            flow: tokio::sync::Mutex::new(()),
        })
    }

    pub(crate) fn max_step_ups(&self) -> usize {
        self.oauth.max_step_ups
    }

    fn current(&self) -> Option<Tokens> {
        self.current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn keep(&self, tokens: Tokens) {
        self.oauth.store.save_tokens(&self.key, Some(&tokens));
        *self.current.lock().unwrap_or_else(PoisonError::into_inner) = Some(tokens);
    }

    /// The tokens to send, refreshed first when they have expired and can be.
    pub(crate) async fn token(&self) -> Option<Tokens> {
        let tokens = self.current()?;
        if tokens.expired() && tokens.refresh_token.is_some() {
            let _flow = self.flow.lock().await;
            if let Some(now) = self
                .current()
                .filter(|t| t.access_token != tokens.access_token)
            {
                return Some(now);
            }
            if let Some(refreshed) = self.refresh_with_stored_metadata(&tokens).await {
                self.keep(refreshed.clone());
                return Some(refreshed);
            }
        }
        Some(tokens)
    }

    /// The DPoP key, when DPoP is in use.
    pub(crate) fn dpop(&self) -> Option<Arc<DpopKey>> {
        self.dpop
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Makes the DPoP key when the MCP server offers DPoP and the authorization server
    /// advertises it with `ES256`. A resource server that offers only Bearer gets Bearer
    /// tokens even from an authorization server that could bind them (a bound token
    /// would be refused there).
    fn dpop_for(&self, meta: &ServerMetadata) -> Result<Option<Arc<DpopKey>>, ClientError> {
        let wanted = self.dpop_offered.load(std::sync::atomic::Ordering::Relaxed)
            && meta
                .dpop_algorithms
                .as_ref()
                .is_some_and(|algs| algs.iter().any(|a| a == "ES256"));
        if !wanted {
            return Ok(None);
        }
        let mut slot = self.dpop.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            *slot = Some(Arc::new(DpopKey::generate().map_err(denied)?));
        }
        Ok(slot.clone())
    }

    async fn refresh_with_stored_metadata(&self, tokens: &Tokens) -> Option<Tokens> {
        let meta = discovery::authorization_server(&self.http, &tokens.issuer)
            .await
            .ok()?;
        self.refresh(&meta, tokens).await.ok()
    }

    /// The server refused the request that carried `used` (`401`, or `403` with
    /// `insufficient_scope` when `step_up`): authorizes again, unless another request
    /// already did since.
    pub(crate) async fn authorize(
        &self,
        challenge: &Challenge,
        used: Option<&str>,
        step_up: bool,
    ) -> Result<(), ClientError> {
        let _flow = self.flow.lock().await;
        let previous = self.current();
        if previous.as_ref().map(|t| t.access_token.as_str()) != used {
            return Ok(());
        }
        let prm = discovery::protected_resource(
            &self.http,
            &self.server,
            challenge.resource_metadata.as_deref(),
        )
        .await?;
        if challenge.dpop_offered || prm.as_ref().is_some_and(|p| p.dpop_required) {
            self.dpop_offered
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        let (resource, meta, prm_scopes) = match prm {
            Some(prm) => {
                discovery::check_resource(&self.server, &prm.resource, self.same_origin_is_enough)?;
                let issuer = self.pick_issuer(&prm.authorization_servers);
                let meta = discovery::authorization_server(&self.http, issuer).await?;
                (prm.resource, meta, prm.scopes_supported)
            }
            None => {
                tracing::debug!(
                    "no protected resource metadata at {}: the 2025-03-26 discovery",
                    self.key
                );
                let meta = discovery::legacy_authorization_server(&self.http, &self.server).await?;
                (self.key.clone(), meta, None)
            }
        };
        // Tokens of another authorization server are never refreshed there or merged.
        let previous = previous.filter(|t| t.issuer == meta.issuer);
        if !step_up {
            if let Some(prev) = previous.as_ref().filter(|t| t.refresh_token.is_some()) {
                match self.refresh(&meta, prev).await {
                    Ok(tokens) => {
                        self.keep(tokens);
                        return Ok(());
                    }
                    Err(e) => tracing::debug!("refreshing failed ({e}); authorizing again"),
                }
            }
        }
        let mut scope = match (&self.oauth.scopes, &challenge.scope) {
            (Some(configured), Some(challenged)) if step_up => union(configured, challenged),
            (Some(configured), _) => configured.clone(),
            (None, Some(challenged)) => challenged.clone(),
            (None, None) => prm_scopes.map(|s| s.join(" ")).unwrap_or_default(),
        };
        if let Some(prev) = &previous {
            scope = union(&prev.requested_scope, &scope);
        }
        let tokens = match &self.oauth.grant {
            Grant::ClientCredentials => {
                let client = self.client_for(&meta).await?;
                self.client_credentials(&meta, &client, &resource, &scope)
                    .await?
            }
            Grant::AuthorizationCode => {
                let client = self.client_for(&meta).await?;
                self.code_flow(&meta, &client, &resource, &scope).await?
            }
            Grant::JwtBearer(assertion) => {
                let client = self.client_for(&meta).await?;
                let assertion = assertion(super::AssertionRequest {
                    issuer: meta.issuer.clone(),
                    resource: resource.clone(),
                    scope: scope.clone(),
                })
                .await
                .map_err(|e| denied(format!("no assertion for the JWT bearer grant: {e}")))?;
                let mut form = vec![
                    ("grant_type", JWT_BEARER.to_owned()),
                    ("assertion", assertion),
                    ("resource", resource.clone()),
                ];
                if !scope.is_empty() {
                    form.push(("scope", scope.clone()));
                }
                let tokens = self.token_request(&meta, &client, &mut form).await?;
                Tokens {
                    requested_scope: scope,
                    ..tokens
                }
            }
        };
        self.keep(tokens);
        Ok(())
    }

    /// The authorization server to use: the pre-registered credentials' one when the
    /// server lists it, else the first listed (RFC 9728 §7.6 leaves the choice to the
    /// client).
    fn pick_issuer<'a>(&self, listed: &'a [String]) -> &'a str {
        let preferred = self
            .oauth
            .client_issuer
            .as_deref()
            .and_then(|iss| listed.iter().find(|l| l.as_str() == iss));
        preferred
            .or_else(|| listed.first())
            .map_or("", String::as_str)
    }

    /// The authorization code flow with PKCE `S256`, through the user agent.
    async fn code_flow(
        &self,
        meta: &ServerMetadata,
        client: &ClientCredentials,
        resource: &str,
        scope: &str,
    ) -> Result<Tokens, ClientError> {
        let authorization_endpoint = meta.authorization_endpoint.as_ref().ok_or_else(|| {
            denied(format!(
                "the authorization server `{}` has no authorization_endpoint",
                meta.issuer
            ))
        })?;
        // PKCE support is read from the metadata; without `S256` listed the client does
        // not go on (2025-11-25+; the 2025-03-26 fallbacks have no metadata to read).
        let pkce_listed = meta
            .code_challenge_methods
            .as_ref()
            .is_some_and(|m| m.iter().any(|m| m == "S256"));
        if !pkce_listed && !meta.legacy {
            return Err(denied(format!(
                "the authorization server `{}` does not list PKCE S256 in code_challenge_methods_supported: refusing to authorize",
                meta.issuer
            )));
        }
        // Redirect URIs are https or this machine's (2025-06-18+ security considerations).
        let redirect_ok =
            Url::parse(&self.oauth.redirect_uri).is_ok_and(|u| discovery::secure_enough(&u));
        if !redirect_ok {
            return Err(denied(format!(
                "the redirect URI `{}` must be https or an http loopback URI",
                self.oauth.redirect_uri
            )));
        }
        let mut scope = scope.to_owned();
        let offline = self.oauth.offline_access
            && meta
                .scopes_supported
                .as_ref()
                .is_some_and(|s| s.iter().any(|s| s == "offline_access"));
        if offline {
            scope = union(&scope, "offline_access");
        }
        let verifier = random_token(32)?;
        let state = random_token(16)?;
        let mut url = authorization_endpoint.clone();
        {
            let mut query = url.query_pairs_mut();
            query
                .append_pair("response_type", "code")
                .append_pair("client_id", &client.client_id)
                .append_pair("redirect_uri", &self.oauth.redirect_uri)
                .append_pair("code_challenge", &s256(&verifier))
                .append_pair("code_challenge_method", "S256")
                .append_pair("state", &state)
                .append_pair("resource", resource);
            if !scope.is_empty() {
                query.append_pair("scope", &scope);
            }
            // OpenID Connect grants offline_access only with consent asked (Core §11).
            if offline {
                query.append_pair("prompt", "consent");
            }
        }
        let request = AuthorizationRequest {
            url: url.to_string(),
            redirect_uri: self.oauth.redirect_uri.clone(),
        };
        let redirected = match &self.oauth.user_agent {
            Some(agent) => agent(request).await,
            None => super::headless::follow(request).await,
        }
        .map_err(|e| denied(format!("the authorization did not complete: {e}")))?;
        let code = self.read_callback(meta, &redirected, &state)?;
        let mut form = vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code),
            ("redirect_uri", self.oauth.redirect_uri.clone()),
            ("code_verifier", verifier),
            ("resource", resource.to_owned()),
        ];
        let tokens = self.token_request(meta, client, &mut form).await?;
        Ok(Tokens {
            requested_scope: scope,
            ..tokens
        })
    }

    /// The authorization response: its `iss` checked (RFC 9207 §2.4, before anything
    /// else of it is used), its `state`, and its code or error.
    fn read_callback(
        &self,
        meta: &ServerMetadata,
        redirected: &str,
        state: &str,
    ) -> Result<String, ClientError> {
        let url = Url::parse(redirected)
            .map_err(|e| denied(format!("the user agent returned `{redirected}`: {e}")))?;
        let expected = Url::parse(&self.oauth.redirect_uri).ok();
        let same_endpoint = expected.is_some_and(|e| {
            e.scheme() == url.scheme()
                && e.host_str() == url.host_str()
                && e.port_or_known_default() == url.port_or_known_default()
                && e.path() == url.path()
        });
        if !same_endpoint {
            return Err(denied(format!(
                "the user agent returned `{redirected}`, not the redirect URI"
            )));
        }
        let param = |name: &str| {
            url.query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        match (param("iss"), meta.iss_parameter_supported) {
            // Simple string comparison, no normalization (RFC 3986 §6.2.1).
            (Some(iss), _) if iss != meta.issuer => {
                return Err(denied(format!(
                    "the authorization response comes from issuer `{iss}`, not `{}` (RFC 9207): rejected",
                    meta.issuer
                )))
            }
            (None, true) => {
                return Err(denied(format!(
                    "the authorization server `{}` promises an iss parameter, and the response has none (RFC 9207): rejected",
                    meta.issuer
                )))
            }
            _ => {}
        }
        if param("state").as_deref() != Some(state) {
            return Err(denied(
                "the authorization response's state is not the one sent: rejected",
            ));
        }
        if let Some(error) = param("error") {
            let description = param("error_description").unwrap_or_default();
            return Err(denied(format!(
                "the authorization server refused: {error} {description}"
            )));
        }
        param("code")
            .filter(|c| !c.is_empty())
            .ok_or_else(|| denied("the authorization response has no code"))
    }

    /// The client credentials grant.
    async fn client_credentials(
        &self,
        meta: &ServerMetadata,
        client: &ClientCredentials,
        resource: &str,
        scope: &str,
    ) -> Result<Tokens, ClientError> {
        let mut form = vec![
            ("grant_type", "client_credentials".to_owned()),
            ("resource", resource.to_owned()),
        ];
        if !scope.is_empty() {
            form.push(("scope", scope.to_owned()));
        }
        let tokens = self.token_request(meta, client, &mut form).await?;
        Ok(Tokens {
            requested_scope: scope.to_owned(),
            ..tokens
        })
    }

    /// A refresh (the refresh token kept when the server sends no new one).
    async fn refresh(&self, meta: &ServerMetadata, old: &Tokens) -> Result<Tokens, ClientError> {
        let refresh_token = old
            .refresh_token
            .clone()
            .ok_or_else(|| denied("no refresh token"))?;
        let client = self.client_for(meta).await?;
        let mut form = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", refresh_token.clone()),
            ("resource", old.resource.clone()),
        ];
        let tokens = self.token_request(meta, &client, &mut form).await?;
        Ok(Tokens {
            refresh_token: tokens.refresh_token.or(Some(refresh_token)),
            requested_scope: old.requested_scope.clone(),
            ..tokens
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_s256_matches_rfc_7636_appendix_b() {
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn scope_union_keeps_order_and_drops_repeats() {
        assert_eq!(union("a b", "b c"), "a b c");
        assert_eq!(union("", "x"), "x");
        assert_eq!(union("", ""), "");
    }
}
