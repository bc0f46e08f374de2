//! Sending one HTTP request of a transport with authorization: the token in use goes in
//! `Authorization: Bearer`; a `401` authorizes (once per request) and a `403
//! insufficient_scope` steps up (at most [`OAuth::max_step_ups`](super::OAuth::max_step_ups)
//! times), each followed by the request again.

use std::sync::Arc;

use reqwest::StatusCode;

use super::challenge::Challenge;
use super::flow::denied;
use super::Authorizer;
use crate::error::ClientError;

/// Sends `request` (its body must be cloneable: bytes, never a stream), authorized by
/// `auth` when there is one. What fails to send is described with `what`.
pub(crate) async fn send(
    auth: Option<&Arc<Authorizer>>,
    request: reqwest::RequestBuilder,
    what: &str,
) -> Result<reqwest::Response, ClientError> {
    let Some(auth) = auth else {
        let response = request
            .send()
            .await
            .map_err(|e| ClientError::transport(format!("{what}: {e}")))?;
        if response.status() == StatusCode::UNAUTHORIZED {
            return Err(denied(format!(
                "{what}: the server requires authorization (HTTP 401); give the client OAuth (ClientBuilder::oauth) or a valid token (ClientBuilder::header)"
            )));
        }
        return Ok(response);
    };
    let mut reauthorized = false;
    let mut step_ups = 0;
    let mut nonce_retries = 0;
    loop {
        let attempt = request.try_clone().ok_or_else(|| {
            ClientError::transport(format!("{what}: a body that cannot be re-sent"))
        })?;
        let tokens = auth.token().await;
        let token = tokens.as_ref().map(|t| t.access_token.clone());
        let (http, built) = attempt.build_split();
        let mut built = built.map_err(|e| ClientError::transport(format!("{what}: {e}")))?;
        let dpop = auth.dpop();
        if let Some(tokens) = &tokens {
            let key = dpop
                .as_ref()
                .filter(|_| tokens.token_type.eq_ignore_ascii_case("dpop"));
            let scheme = if key.is_some() { "DPoP" } else { "Bearer" };
            put(
                &mut built,
                "authorization",
                &format!("{scheme} {}", tokens.access_token),
            )?;
            if let Some(key) = key {
                let proof = key
                    .proof(
                        built.method().as_str(),
                        built.url(),
                        Some(&tokens.access_token),
                    )
                    .map_err(denied)?;
                put(&mut built, "dpop", &proof)?;
            }
        }
        let url = built.url().clone();
        let response = http
            .execute(built)
            .await
            .map_err(|e| ClientError::transport(format!("{what}: {e}")))?;
        let nonce = response
            .headers()
            .get("dpop-nonce")
            .and_then(|v| v.to_str().ok());
        if let (Some(key), Some(nonce)) = (&dpop, nonce) {
            key.keep_nonce(&url, nonce);
            let challenge = Challenge::of(response.headers());
            // RFC 9449 §9: the server wants its nonce in the proof; once more with it.
            if response.status() == StatusCode::UNAUTHORIZED
                && challenge.error.as_deref() == Some("use_dpop_nonce")
                && nonce_retries < 2
            {
                nonce_retries += 1;
                continue;
            }
        }
        let challenge = Challenge::of(response.headers());
        match response.status() {
            StatusCode::UNAUTHORIZED if !reauthorized => {
                reauthorized = true;
                auth.authorize(&challenge, token.as_deref(), false).await?;
            }
            StatusCode::FORBIDDEN
                if challenge.insufficient_scope() && step_ups < auth.max_step_ups() =>
            {
                step_ups += 1;
                auth.authorize(&challenge, token.as_deref(), true).await?;
            }
            StatusCode::UNAUTHORIZED => {
                return Err(denied(format!(
                    "{what}: the server still refuses the token it had the client get (HTTP 401)"
                )))
            }
            StatusCode::FORBIDDEN if challenge.insufficient_scope() => {
                return Err(denied(format!(
                    "{what}: the server still wants more scope ({}) after {step_ups} step-up authorizations (HTTP 403)",
                    challenge.scope.as_deref().unwrap_or("unnamed")
                )))
            }
            _ => return Ok(response),
        }
    }
}

/// Sets a header on a built request.
fn put(request: &mut reqwest::Request, name: &'static str, value: &str) -> Result<(), ClientError> {
    let value = reqwest::header::HeaderValue::from_str(value)
        .map_err(|_| denied(format!("a token that cannot be sent as a header ({name})")))?;
    request.headers_mut().insert(name, value);
    Ok(())
}
