//! Enterprise-managed authorization (SEP-990): the user's ID token from the enterprise
//! identity provider is exchanged there (RFC 8693 token exchange) for an Identity
//! Assertion JWT Authorization Grant (ID-JAG) naming the authorization server and the MCP
//! server, which the client then presents with the JWT bearer grant
//! ([`OAuth::jwt_bearer`](super::OAuth::jwt_bearer)).

use std::time::Duration;

use serde_json::Value;

use super::AssertionRequest;

/// Exchanges `id_token` at the identity provider's `token_endpoint` (as its client
/// `idp_client_id`, and `idp_client_secret` when it has one) for an ID-JAG for
/// `request`'s authorization server and resource. Meant as the assertion of
/// [`OAuth::jwt_bearer`](super::OAuth::jwt_bearer).
pub async fn exchange_for_id_jag(
    token_endpoint: &str,
    idp_client_id: &str,
    idp_client_secret: Option<&str>,
    id_token: &str,
    request: &AssertionRequest,
) -> Result<String, String> {
    let endpoint = reqwest::Url::parse(token_endpoint)
        .map_err(|e| format!("the identity provider's token endpoint: {e}"))?;
    if !super::discovery::secure_enough(&endpoint) {
        return Err(format!("{token_endpoint} is not served over https"));
    }
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .map_err(|e| e.to_string())?;
    let mut form = vec![
        (
            "grant_type",
            "urn:ietf:params:oauth:grant-type:token-exchange",
        ),
        (
            "requested_token_type",
            "urn:ietf:params:oauth:token-type:id-jag",
        ),
        ("subject_token", id_token),
        (
            "subject_token_type",
            "urn:ietf:params:oauth:token-type:id_token",
        ),
        ("audience", &request.issuer),
        ("resource", &request.resource),
        ("client_id", idp_client_id),
    ];
    if !request.scope.is_empty() {
        form.push(("scope", &request.scope));
    }
    if let Some(secret) = idp_client_secret {
        form.push(("client_secret", secret));
    }
    let response = http
        .post(endpoint)
        .header("accept", "application/json")
        .form(&form)
        .send()
        .await
        .map_err(|e| format!("POST {token_endpoint}: {e}"))?;
    let status = response.status();
    let doc: Value = response
        .bytes()
        .await
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    if !status.is_success() {
        return Err(format!(
            "the identity provider refused the token exchange (HTTP {status}): {}",
            doc.get("error")
                .and_then(Value::as_str)
                .unwrap_or("no error code")
        ));
    }
    if doc.get("issued_token_type").and_then(Value::as_str)
        != Some("urn:ietf:params:oauth:token-type:id-jag")
    {
        return Err("the identity provider issued no ID-JAG".to_owned());
    }
    doc.get("access_token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| "the token exchange answer has no access_token".to_owned())
}
