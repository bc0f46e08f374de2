//! A user agent for command-line applications: the user opens the authorization URL in a
//! browser of their own, and the client waits on its loopback redirect URI (RFC 8252 §7.3)
//! for the browser to come back with the answer.

use std::time::Duration;

use reqwest::Url;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::AuthorizationRequest;

/// How long the client waits for the user.
const PATIENCE: Duration = Duration::from_secs(300);

/// Listens on `request.redirect_uri` (an `http` loopback URI with a port), has `show`
/// tell the user to open `request.url`, and resolves to the URL the browser was
/// redirected to (or an error after five minutes).
pub async fn wait_for_redirect(
    request: AuthorizationRequest,
    show: impl FnOnce(&str),
) -> Result<String, String> {
    let redirect = Url::parse(&request.redirect_uri)
        .map_err(|e| format!("bad redirect URI `{}`: {e}", request.redirect_uri))?;
    let host = redirect.host_str().unwrap_or_default();
    if redirect.scheme() != "http" || !super::discovery::secure_enough(&redirect) {
        return Err(format!(
            "the redirect URI `{}` is not an http loopback URI to listen on",
            request.redirect_uri
        ));
    }
    let port = redirect
        .port()
        .ok_or_else(|| format!("the redirect URI `{}` names no port", request.redirect_uri))?;
    let bind_host = if host.eq_ignore_ascii_case("localhost") {
        "127.0.0.1"
    } else {
        host.trim_start_matches('[').trim_end_matches(']')
    };
    let listener = tokio::net::TcpListener::bind((bind_host, port))
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", request.redirect_uri))?;
    show(&request.url);
    tokio::time::timeout(PATIENCE, async {
        loop {
            let (mut stream, _) = listener
                .accept()
                .await
                .map_err(|e| format!("accepting the browser: {e}"))?;
            let mut buf = vec![0u8; 8192];
            let mut read = 0;
            // The request line is all that is needed; stop at the end of the head.
            while read < buf.len() {
                match stream.read(buf.get_mut(read..).unwrap_or_default()).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => read += n,
                }
                if buf.get(..read).is_some_and(|b| b.windows(4).any(|w| w == b"\r\n\r\n")) {
                    break;
                }
            }
            let head = String::from_utf8_lossy(buf.get(..read).unwrap_or_default()).into_owned();
            let target = head
                .lines()
                .next()
                .and_then(|line| line.strip_prefix("GET "))
                .and_then(|rest| rest.split(' ').next())
                .unwrap_or_default()
                .to_owned();
            let came_back = redirect
                .join(&target)
                .ok()
                .filter(|u| target.starts_with('/') && u.path() == redirect.path());
            let (status, text) = if came_back.is_some() {
                ("200 OK", "The authorization is done: you can close this page.")
            } else {
                ("404 Not Found", "Not the redirect URI.")
            };
            let _ = stream
                .write_all(
                    format!(
                        "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                        text.len()
                    )
                    .as_bytes(),
                )
                .await;
            if let Some(url) = came_back {
                return Ok(url.to_string());
            }
        }
    })
    .await
    .map_err(|_| "nobody came back to the redirect URI within five minutes".to_owned())?
}
