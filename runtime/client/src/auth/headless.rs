//! The default user agent: follows the authorization server's redirects, keeping its
//! cookies, until one leads to the redirect URI. It works with a server that approves
//! without a user (a test or trusted setup); at a page that waits for a user it stops with
//! an error that says so.

use std::collections::HashMap;
use std::time::Duration;

use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};
use reqwest::Url;

use super::AuthorizationRequest;

/// How many redirects one authorization may take.
const MAX_HOPS: usize = 20;

/// Follows `request.url` to the redirect URI; the URL it was sent to.
pub(crate) async fn follow(request: AuthorizationRequest) -> Result<String, String> {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(30))
        .timeout(Duration::from_secs(60))
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
    let redirect = Url::parse(&request.redirect_uri)
        .map_err(|e| format!("bad redirect URI `{}`: {e}", request.redirect_uri))?;
    // Cookies by host: enough for one authorization server's session.
    let mut jar: HashMap<String, HashMap<String, String>> = HashMap::new();
    let mut next = Url::parse(&request.url).map_err(|e| format!("bad authorization URL: {e}"))?;
    for _ in 0..MAX_HOPS {
        if is_redirect_uri(&next, &redirect) {
            return Ok(next.to_string());
        }
        if !super::discovery::secure_enough(&next) {
            return Err(format!(
                "refusing to follow a redirect to {next} (not https)"
            ));
        }
        let host = next.host_str().unwrap_or_default().to_owned();
        let mut get = http.get(next.clone());
        if let Some(cookies) = jar.get(&host).filter(|c| !c.is_empty()) {
            let header = cookies
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join("; ");
            get = get.header(COOKIE, header);
        }
        let response = get.send().await.map_err(|e| format!("GET {next}: {e}"))?;
        for set in response.headers().get_all(SET_COOKIE) {
            let Ok(set) = set.to_str() else { continue };
            let pair = set.split(';').next().unwrap_or_default();
            if let Some((name, value)) = pair.split_once('=') {
                jar.entry(host.clone())
                    .or_default()
                    .insert(name.trim().to_owned(), value.trim().to_owned());
            }
        }
        let status = response.status();
        let location = response
            .headers()
            .get(LOCATION)
            .and_then(|l| l.to_str().ok())
            .map(str::to_owned);
        match location {
            Some(location) if status.is_redirection() => {
                next = next
                    .join(&location)
                    .map_err(|e| format!("bad redirect `{location}`: {e}"))?;
            }
            _ => {
                return Err(format!(
                    "the authorization server answered HTTP {status} at {next} instead of redirecting back: it waits for a user; give OAuth::user_agent a browser"
                ))
            }
        }
    }
    Err(format!("more than {MAX_HOPS} redirects"))
}

fn is_redirect_uri(url: &Url, redirect: &Url) -> bool {
    url.scheme() == redirect.scheme()
        && url.host_str() == redirect.host_str()
        && url.port_or_known_default() == redirect.port_or_known_default()
        && url.path() == redirect.path()
}
