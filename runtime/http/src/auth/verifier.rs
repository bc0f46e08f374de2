//! The token verifier interface, and the cache of tokens already verified.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use mcp_runtime::auth::Principal;

/// A boxed future, as [`TokenVerifier::verify`] returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Checks an access token and says whom it names. The runtime ships
/// [`JwtVerifier`](super::JwtVerifier) and [`IntrospectionVerifier`](super::IntrospectionVerifier)
/// (feature `auth`); any other scheme implements this.
///
/// A verifier must check everything that makes the token valid *for this resource*:
/// signature or issuer's word, issuer, audience (the resource's canonical URI, RFC 8707)
/// and time. It must fail closed: when it cannot decide (the authorization server is
/// unreachable), it answers [`VerifyError::Unavailable`], never a principal.
pub trait TokenVerifier: Send + Sync {
    /// The principal `token` names, or why it is refused.
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, VerifyError>>;
}

/// Why a token was not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum VerifyError {
    /// The token is not valid here (malformed, badly signed, expired, for another audience
    /// or issuer, revoked): 401 `invalid_token`. The text is shown to the client as
    /// `error_description`, so it must not contain the token.
    Invalid(String),
    /// The verifier could not decide (the key set or introspection endpoint is
    /// unreachable or answers nonsense): 503, and the request is not served.
    Unavailable(String),
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VerifyError::Invalid(why) => write!(f, "invalid token: {why}"),
            VerifyError::Unavailable(why) => write!(f, "cannot verify tokens now: {why}"),
        }
    }
}

impl std::error::Error for VerifyError {}

/// Seconds since the Unix epoch, now.
pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Principals of tokens verified recently, keyed by the SHA-256 of the token: a client
/// sends the same token with every request until it expires, and verifying a signature
/// costs more than serving a small request (see BENCHMARKS.md). The key is a digest, so
/// the cache holds no token, and a forged token cannot collide with a verified one. An
/// entry lives until the token expires or for `ttl`, whichever comes first: `ttl` bounds
/// how long a token revoked at an introspection endpoint (or signed by a key withdrawn from
/// the key set) is still accepted.
pub(crate) struct VerifiedTokens {
    ttl: Duration,
    capacity: usize,
    entries: Mutex<HashMap<[u8; 32], Entry>>,
}

/// A verified principal and until when it may be used.
type Entry = (Arc<Principal>, Instant);

impl VerifiedTokens {
    pub(crate) fn new(ttl: Duration, capacity: usize) -> VerifiedTokens {
        VerifiedTokens {
            ttl,
            capacity,
            entries: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        !self.ttl.is_zero() && self.capacity > 0
    }

    pub(crate) fn key(token: &str) -> [u8; 32] {
        Sha256::digest(token.as_bytes()).into()
    }

    pub(crate) fn get(&self, key: &[u8; 32]) -> Option<Arc<Principal>> {
        let mut entries = lock(&self.entries);
        match entries.get(key) {
            Some((principal, until)) if Instant::now() < *until => Some(Arc::clone(principal)),
            Some(_) => {
                entries.remove(key);
                None
            }
            None => None,
        }
    }

    pub(crate) fn insert(&self, key: [u8; 32], principal: &Arc<Principal>) {
        let now = Instant::now();
        let mut lifetime = self.ttl;
        if let Some(exp) = principal.expires_at {
            lifetime = lifetime.min(Duration::from_secs(exp.saturating_sub(unix_now())));
        }
        if lifetime.is_zero() {
            return;
        }
        let mut entries = lock(&self.entries);
        if entries.len() >= self.capacity {
            entries.retain(|_, (_, until)| now < *until);
            // Still full of live entries (many clients, or someone presenting many valid
            // tokens): start over rather than track recency on every hit.
            if entries.len() >= self.capacity {
                entries.clear();
            }
        }
        entries.insert(key, (Arc::clone(principal), now + lifetime));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_with_the_token_and_the_cache_stays_bounded() {
        let cache = VerifiedTokens::new(Duration::from_secs(60), 2);
        let live = Arc::new(Principal::new("i").expires_at(unix_now() + 3600));
        let expired = Arc::new(Principal::new("i").expires_at(unix_now().saturating_sub(1)));
        cache.insert(VerifiedTokens::key("a"), &live);
        cache.insert(VerifiedTokens::key("b"), &expired);
        assert!(cache.get(&VerifiedTokens::key("a")).is_some());
        assert!(cache.get(&VerifiedTokens::key("b")).is_none(), "expired");
        cache.insert(VerifiedTokens::key("c"), &live);
        cache.insert(VerifiedTokens::key("d"), &live);
        assert!(lock(&cache.entries).len() <= 2);
        assert!(cache.get(&VerifiedTokens::key("d")).is_some());
    }
}
