//! Sending one HTTP request of a transport with authorization: the token in use goes in
//! `Authorization: Bearer`; a `401` authorizes (once per request) and a `403
//! insufficient_scope` steps up (at most [`OAuth::max_step_ups`](super::OAuth::max_step_ups)
//! times), each followed by the request again.

use std::sync::Arc;

use reqwest::StatusCode;

use super::challenge::Challenge;
use super::flow::denied;
use super::Authorizer;
use crate::client::error::ClientError;

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
    loop {
        let attempt = request.try_clone().ok_or_else(|| {
            ClientError::transport(format!("{what}: a body that cannot be re-sent"))
        })?;
        let token = auth.token().await;
        let attempt = match &token {
            Some(token) => attempt.bearer_auth(token),
            None => attempt,
        };
        let response = attempt
            .send()
            .await
            .map_err(|e| ClientError::transport(format!("{what}: {e}")))?;
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
