//! The authorization server's endpoints other than the authorization page: finding or
//! making the client's registration (pre-registered, stored, a metadata document URL,
//! dynamic registration) and the token endpoint (client authentication, DPoP proofs and
//! nonces, the answer checked).

use std::time::{Duration, SystemTime};

use base64::Engine;
use reqwest::Url;
use serde_json::{json, Value};

use super::{denied, Authorizer, JWT_BEARER};
use crate::auth::discovery::{self, ServerMetadata};
use crate::auth::{ClientCredentials, Grant, TokenEndpointAuth, Tokens};
use crate::error::ClientError;

impl Authorizer {
    /// The client's credentials at this authorization server, registering when needed
    /// (pre-registered, then stored, then a metadata document URL, then dynamic
    /// registration).
    pub(super) async fn client_for(
        &self,
        meta: &ServerMetadata,
    ) -> Result<ClientCredentials, ClientError> {
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
    pub(super) async fn register(
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

    /// A token endpoint request, the client authenticated the way it registered (or the
    /// best the server supports).
    pub(super) async fn token_request(
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
