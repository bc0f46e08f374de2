//! Fetching from the authorization server: bounded in time and size, over https (plain
//! http only to a loopback address, for development and tests).

use std::time::Duration;

use serde_json::Value;

use super::config::UriParts;

/// Documents from an authorization server are small; a larger answer is refused.
const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;

/// The HTTP client used for metadata, key sets and introspection: no redirects (an
/// authorization server's endpoints are named exactly in its metadata), short timeouts.
pub(crate) fn client() -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(10))
        .user_agent(concat!("mcp-runtime/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("cannot build an HTTP client: {e}"))
}

/// Whether `url` may be fetched: https, or http to a loopback host.
pub(crate) fn check_url(url: &str) -> Result<(), String> {
    let parts = UriParts::parse(url).map_err(|why| format!("{url}: {why}"))?;
    let origin = parts.origin();
    if origin.starts_with("https://") {
        return Ok(());
    }
    let host = origin.trim_start_matches("http://");
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.split(':').next().unwrap_or_default(),
    };
    let loopback = host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    if loopback {
        Ok(())
    } else {
        Err(format!(
            "{url}: an authorization server must be reached over https (http only on loopback)"
        ))
    }
}

/// What a fetch came to.
pub(crate) enum Fetched {
    /// 2xx with a JSON body.
    Json(Value),
    /// Another status.
    Status(u16),
}

/// Reads a response's body, at most [`MAX_DOCUMENT_BYTES`].
async fn body(mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
        if out.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            return Err(format!(
                "the answer is larger than {MAX_DOCUMENT_BYTES} bytes"
            ));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// Sends `request` and reads its JSON answer (an error names what went wrong, never a
/// credential the request carried).
pub(crate) async fn json(request: reqwest::RequestBuilder) -> Result<Fetched, String> {
    let response = request
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| describe(&e))?;
    let status = response.status();
    if !status.is_success() {
        return Ok(Fetched::Status(status.as_u16()));
    }
    let bytes = body(response).await?;
    serde_json::from_slice(&bytes)
        .map(Fetched::Json)
        .map_err(|e| format!("the answer is not JSON: {e}"))
}

/// A request error, briefly (credentials travel in headers and bodies, never in the URLs
/// this module fetches, so the error text carries none).
fn describe(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "timed out".into()
    } else if e.is_connect() {
        "cannot connect".into()
    } else {
        e.to_string()
    }
}
