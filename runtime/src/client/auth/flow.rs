//! The authorization itself: one [`Authorizer`] per connection holds the token in use and
//! runs, one at a time, what a `401` or a `403 insufficient_scope` calls for — discovery,
//! registration, the authorization code flow with PKCE or the client credentials grant,
//! refresh — and keeps the results in the [`TokenStore`](super::TokenStore).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use base64::Engine;
use reqwest::Url;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::challenge::Challenge;
use super::discovery::{self, ServerMetadata};
use super::dpop::DpopKey;
use super::{AuthorizationRequest, ClientCredentials, Grant, OAuth, TokenEndpointAuth, Tokens};
use crate::client::error::{ClientError, ClientErrorKind};

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

    /// The client's credentials at this authorization server, registering when needed
    /// (pre-registered, then stored, then a metadata document URL, then dynamic
    /// registration).
    async fn client_for(&self, meta: &ServerMetadata) -> Result<ClientCredentials, ClientError> {
        if let Some(pre) = &self.oauth.client {
            if let Some(issuer) = &self.oauth.client_issuer {
                if issuer != &meta.issuer {
                    return Err(denied(format!(
                        "the pre-registered credentials are for `{issuer}`, but the server's authorization server is `{}`",
                        meta.issuer
                    )));
                }
            }
            return Ok(pre.clone());
        }
        if let Some(stored) = self.oauth.store.client(&meta.issuer) {
            return Ok(stored);
        }
        if let (true, Some(url)) = (meta.client_id_metadata_documents, &self.oauth.metadata_url) {
            let parsed = Url::parse(url)
                .map_err(|e| denied(format!("the client metadata URL `{url}`: {e}")))?;
            if parsed.scheme() != "https" || parsed.path().len() <= 1 {
                return Err(denied(format!(
                    "the client metadata URL `{url}` must be https with a path"
                )));
            }
            return Ok(ClientCredentials::public(url.clone()).auth_method(TokenEndpointAuth::None));
        }
        match &meta.registration_endpoint {
            Some(endpoint) => self.register(meta, endpoint).await,
            None => Err(denied(format!(
                "the authorization server `{}` supports neither client metadata documents this client can use nor dynamic registration: configure pre-registered credentials (OAuth::client)",
                meta.issuer
            ))),
        }
    }

    /// Dynamic client registration (RFC 7591).
    async fn register(
        &self,
        meta: &ServerMetadata,
        endpoint: &Url,
    ) -> Result<ClientCredentials, ClientError> {
        let supported = meta.token_endpoint_auth_methods.as_deref();
        let method = match supported {
            Some(list) if list.iter().any(|m| m == "none") => TokenEndpointAuth::None,
            Some(list) if list.iter().any(|m| m == "client_secret_post") => {
                if list.iter().any(|m| m == "client_secret_basic") {
                    TokenEndpointAuth::ClientSecretBasic
                } else {
                    TokenEndpointAuth::ClientSecretPost
                }
            }
            // RFC 8414 §2: absent means client_secret_basic.
            _ => TokenEndpointAuth::ClientSecretBasic,
        };
        let redirect = Url::parse(&self.oauth.redirect_uri).map_err(|e| {
            denied(format!(
                "the redirect URI `{}`: {e}",
                self.oauth.redirect_uri
            ))
        })?;
        // Loopback redirects are a native application's (SEP-837).
        let application_type = if redirect.scheme() == "http" && discovery::secure_enough(&redirect)
        {
            "native"
        } else {
            "web"
        };
        let grant_types = match &self.oauth.grant {
            Grant::AuthorizationCode => json!(["authorization_code", "refresh_token"]),
            Grant::ClientCredentials => json!(["client_credentials"]),
            Grant::JwtBearer(_) => json!([JWT_BEARER]),
        };
        let body = json!({
            "client_name": self.client_name,
            "redirect_uris": [self.oauth.redirect_uri],
            "grant_types": grant_types,
            "response_types": ["code"],
            "token_endpoint_auth_method": method.as_str(),
            "application_type": application_type,
        });
        let response = self
            .http
            .post(endpoint.clone())
            .header("content-type", "application/json")
            .header("accept", "application/json")
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| denied(format!("registering at {endpoint}: {e}")))?;
        let status = response.status();
        let doc: Value = response
            .bytes()
            .await
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or(Value::Null);
        if !status.is_success() {
            return Err(denied(format!(
                "the authorization server refused the registration (HTTP {status}): {}",
                oauth_error(&doc)
            )));
        }
        let client_id = doc
            .get("client_id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
            .ok_or_else(|| denied("the registration answer has no client_id"))?;
        let client_secret = doc
            .get("client_secret")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let registered_method = doc
            .get("token_endpoint_auth_method")
            .and_then(Value::as_str)
            .and_then(TokenEndpointAuth::parse)
            .unwrap_or(method);
        let client = ClientCredentials {
            client_id: client_id.to_owned(),
            client_secret,
            auth_method: Some(registered_method),
            signing_key: None,
        };
        self.oauth.store.save_client(&meta.issuer, &client);
        Ok(client)
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

    /// A token endpoint request, the client authenticated the way it registered (or the
    /// best the server supports).
    async fn token_request(
        &self,
        meta: &ServerMetadata,
        client: &ClientCredentials,
        form: &mut Vec<(&'static str, String)>,
    ) -> Result<Tokens, ClientError> {
        let supports = |m: &str| {
            meta.token_endpoint_auth_methods
                .as_ref()
                .is_none_or(|list| list.iter().any(|l| l == m))
        };
        let method = client.auth_method.unwrap_or(match &client.client_secret {
            None if client.signing_key.is_some() => TokenEndpointAuth::PrivateKeyJwt,
            None => TokenEndpointAuth::None,
            Some(_) if supports("client_secret_basic") => TokenEndpointAuth::ClientSecretBasic,
            Some(_) => TokenEndpointAuth::ClientSecretPost,
        });
        let mut request = self
            .http
            .post(meta.token_endpoint.clone())
            .header("accept", "application/json");
        match (method, &client.client_secret) {
            (TokenEndpointAuth::ClientSecretBasic, Some(secret)) => {
                // RFC 6749 §2.3.1: each form-encoded, then joined with a colon.
                let encode = |s: &str| {
                    url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>()
                };
                let pair = format!("{}:{}", encode(&client.client_id), encode(secret));
                request = request.header(
                    "authorization",
                    format!(
                        "Basic {}",
                        base64::engine::general_purpose::STANDARD.encode(pair)
                    ),
                );
            }
            (TokenEndpointAuth::ClientSecretPost, Some(secret)) => {
                form.push(("client_id", client.client_id.clone()));
                form.push(("client_secret", secret.clone()));
            }
            (TokenEndpointAuth::PrivateKeyJwt, _) => {
                let key = client.signing_key.as_ref().ok_or_else(|| {
                    denied("private_key_jwt without a signing key (ClientCredentials::with_signing_key)")
                })?;
                // The audience is the issuer identifier (RFC 7523bis).
                let assertion = key
                    .assertion(&client.client_id, &meta.issuer)
                    .map_err(|e| denied(format!("signing the client assertion: {e}")))?;
                form.push(("client_id", client.client_id.clone()));
                form.push((
                    "client_assertion_type",
                    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_owned(),
                ));
                form.push(("client_assertion", assertion));
            }
            _ => form.push(("client_id", client.client_id.clone())),
        }
        let request = request.form(&*form);
        let dpop = self.dpop_for(meta)?;
        // One retry when the server asks for a DPoP nonce (RFC 9449 §8).
        let mut nonce_retried = false;
        let (status, doc) = loop {
            let mut attempt = request
                .try_clone()
                .ok_or_else(|| denied("a token request that cannot be re-sent"))?;
            if let Some(key) = &dpop {
                let proof = key
                    .proof("POST", &meta.token_endpoint, None)
                    .map_err(denied)?;
                attempt = attempt.header("dpop", proof);
            }
            let response = attempt
                .send()
                .await
                .map_err(|e| denied(format!("POST {}: {e}", meta.token_endpoint)))?;
            let nonce = response
                .headers()
                .get("dpop-nonce")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let status = response.status();
            let doc: Value = response
                .bytes()
                .await
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or(Value::Null);
            let (Some(key), Some(nonce)) = (&dpop, nonce) else {
                break (status, doc);
            };
            key.keep_nonce(&meta.token_endpoint, &nonce);
            let asked = doc.get("error").and_then(Value::as_str) == Some("use_dpop_nonce");
            if !asked || nonce_retried {
                break (status, doc);
            }
            nonce_retried = true;
        };
        if !status.is_success() {
            return Err(denied(format!(
                "the token endpoint refused (HTTP {status}): {}",
                oauth_error(&doc)
            )));
        }
        let access_token = doc
            .get("access_token")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| denied("the token answer has no access_token"))?;
        let token_type = doc
            .get("token_type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let dpop_bound = dpop.is_some() && token_type.eq_ignore_ascii_case("dpop");
        if !token_type.eq_ignore_ascii_case("bearer") && !dpop_bound {
            return Err(denied(format!(
                "the token endpoint issued a `{token_type}` token; this client sends Bearer tokens (and DPoP ones when it asked)"
            )));
        }
        let expires_at = doc
            .get("expires_in")
            .and_then(Value::as_u64)
            .and_then(|s| SystemTime::now().checked_add(Duration::from_secs(s)));
        Ok(Tokens {
            issuer: meta.issuer.clone(),
            resource: form
                .iter()
                .find(|(k, _)| *k == "resource")
                .map(|(_, v)| v.clone())
                .unwrap_or_default(),
            access_token: access_token.to_owned(),
            token_type: if dpop_bound { "DPoP" } else { "Bearer" }.to_owned(),
            refresh_token: doc
                .get("refresh_token")
                .and_then(Value::as_str)
                .map(str::to_owned),
            expires_at,
            requested_scope: String::new(),
            scope: doc.get("scope").and_then(Value::as_str).map(str::to_owned),
        })
    }
}

/// An OAuth error answer, for a message.
fn oauth_error(doc: &Value) -> String {
    let error = doc
        .get("error")
        .and_then(Value::as_str)
        .unwrap_or("no error code");
    match doc.get("error_description").and_then(Value::as_str) {
        Some(d) => format!("{error}: {}", d.chars().take(300).collect::<String>()),
        None => error.to_owned(),
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
