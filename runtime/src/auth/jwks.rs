//! The authorization server's signing keys (a JWK Set), fetched on first use, kept for a
//! while, refreshed when a token names a key not in the set (the server rotated its keys),
//! at most once per interval however many such tokens arrive.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;

use super::fetch::{self, Fetched};
use super::VerifyError;

/// One verification key.
pub(crate) struct Key {
    kid: Option<String>,
    /// The algorithm the set pins the key to (`alg`), if any.
    alg: Option<KeyAlgorithm>,
    kind: KeyKind,
    pub(crate) decoding: DecodingKey,
}

/// What a key can verify. Symmetric (`oct`) keys are never taken from a key set: a
/// resource server must not share a secret with the clients whose tokens it checks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum KeyKind {
    Rsa,
    P256,
    P384,
    Ed25519,
}

impl Key {
    fn from_jwk(value: &Value) -> Option<Key> {
        // A key meant for encryption, or restricted to other operations, is skipped.
        if value.get("use").is_some_and(|u| u != "sig") {
            return None;
        }
        if let Some(ops) = value.get("key_ops").and_then(Value::as_array) {
            if !ops.iter().any(|op| op == "verify") {
                return None;
            }
        }
        let jwk: Jwk = serde_json::from_value(value.clone()).ok()?;
        let kind = match &jwk.algorithm {
            AlgorithmParameters::RSA(_) => KeyKind::Rsa,
            AlgorithmParameters::EllipticCurve(p) => match p.curve {
                EllipticCurve::P256 => KeyKind::P256,
                EllipticCurve::P384 => KeyKind::P384,
                _ => return None,
            },
            AlgorithmParameters::OctetKeyPair(p) => match p.curve {
                EllipticCurve::Ed25519 => KeyKind::Ed25519,
                _ => return None,
            },
            // Symmetric keys, and whatever the library adds later, are not used.
            _ => return None,
        };
        let decoding = DecodingKey::from_jwk(&jwk).ok()?;
        Some(Key {
            kid: jwk.common.key_id.clone(),
            alg: jwk.common.key_algorithm,
            kind,
            decoding,
        })
    }

    /// Whether this key may verify a signature made with `alg`: the key's type and curve
    /// fit the algorithm, and the set does not pin the key to another one.
    fn fits(&self, alg: Algorithm) -> bool {
        let kind_fits = match alg {
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512 => self.kind == KeyKind::Rsa,
            Algorithm::ES256 => self.kind == KeyKind::P256,
            Algorithm::ES384 => self.kind == KeyKind::P384,
            Algorithm::EdDSA => self.kind == KeyKind::Ed25519,
            // Symmetric algorithms are refused before any key is looked up.
            _ => false,
        };
        let pinned_fits = self
            .alg
            .is_none_or(|pinned| pinned == KeyAlgorithm::from(alg));
        kind_fits && pinned_fits
    }
}

struct Snapshot {
    keys: Vec<Arc<Key>>,
    fetched: Instant,
}

/// How a key set is kept.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KeyPolicy {
    /// Refetched when older than this.
    pub(crate) ttl: Duration,
    /// Still used when a refetch fails, until this old; then tokens get 503.
    pub(crate) max_stale: Duration,
    /// At most one refetch per this interval for unknown keys or after failures.
    pub(crate) min_refresh_interval: Duration,
}

/// A JWK Set, kept up to date.
pub(crate) struct KeySet {
    uri: String,
    client: reqwest::Client,
    policy: KeyPolicy,
    current: RwLock<Option<Arc<Snapshot>>>,
    /// Held while fetching (one fetch at a time); the time of the last attempt.
    refreshing: tokio::sync::Mutex<Option<Instant>>,
}

/// What [`KeySet::find`] looks for.
enum Found {
    Key(Arc<Key>),
    /// No key has the token's `kid` (or, without a `kid`, none fits): maybe rotated.
    Unknown,
}

impl KeySet {
    pub(crate) fn new(uri: String, client: reqwest::Client, policy: KeyPolicy) -> KeySet {
        KeySet {
            uri,
            client,
            policy,
            current: RwLock::new(None),
            refreshing: tokio::sync::Mutex::new(None),
        }
    }

    fn snapshot(&self) -> Option<Arc<Snapshot>> {
        self.current
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The key to verify a token signed with `alg` and naming `kid`.
    pub(crate) async fn key(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<Arc<Key>, VerifyError> {
        let snapshot = match self.snapshot() {
            Some(s) if s.fetched.elapsed() < self.policy.ttl => s,
            // First use, or time to refetch: on failure a set not too old still serves.
            stale => self.refresh(stale, false).await?,
        };
        if let Found::Key(key) = find(&snapshot, kid, alg)? {
            return Ok(key);
        }
        // The server may have rotated its keys since the set was fetched.
        let renewed = self.refresh(Some(Arc::clone(&snapshot)), true).await?;
        match find(&renewed, kid, alg)? {
            Found::Key(key) => Ok(key),
            Found::Unknown => Err(VerifyError::Invalid(match kid {
                Some(kid) => format!("no key of the authorization server has kid {kid:?}"),
                None => format!("no key of the authorization server verifies {alg:?}"),
            })),
        }
    }

    /// Fetches the set anew, unless another task just did (then its result is used) or,
    /// for an unknown key, the last attempt was too recent. `seen` is the snapshot the
    /// caller looked at. A failed fetch leaves a set younger than `max_stale` in use.
    async fn refresh(
        &self,
        seen: Option<Arc<Snapshot>>,
        unknown_key: bool,
    ) -> Result<Arc<Snapshot>, VerifyError> {
        let mut last_attempt = self.refreshing.lock().await;
        let current = self.snapshot();
        if let Some(current) = &current {
            let newer = seen
                .as_ref()
                .is_none_or(|seen| current.fetched > seen.fetched);
            if newer {
                return Ok(Arc::clone(current));
            }
        }
        let too_soon = last_attempt.is_some_and(|t| t.elapsed() < self.policy.min_refresh_interval);
        if too_soon {
            return match current {
                Some(current)
                    if unknown_key || current.fetched.elapsed() < self.policy.max_stale =>
                {
                    Ok(current)
                }
                _ => Err(VerifyError::Unavailable(format!(
                    "the key set at {} could not be fetched recently",
                    self.uri
                ))),
            };
        }
        *last_attempt = Some(Instant::now());
        match self.fetch().await {
            Ok(keys) => {
                let fresh = Arc::new(Snapshot {
                    keys,
                    fetched: Instant::now(),
                });
                *self
                    .current
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Arc::clone(&fresh));
                Ok(fresh)
            }
            Err(why) => match current {
                Some(current) if current.fetched.elapsed() < self.policy.max_stale => {
                    tracing::warn!(uri = %self.uri, reason = %why, "key set refresh failed; using the previous set");
                    Ok(current)
                }
                _ => Err(VerifyError::Unavailable(format!(
                    "the key set at {} cannot be fetched: {why}",
                    self.uri
                ))),
            },
        }
    }

    async fn fetch(&self) -> Result<Vec<Arc<Key>>, String> {
        let doc = match fetch::json(self.client.get(&self.uri)).await? {
            Fetched::Json(doc) => doc,
            Fetched::Status(status) => return Err(format!("HTTP {status}")),
        };
        let keys = doc
            .get("keys")
            .and_then(Value::as_array)
            .ok_or("the answer is not a JWK Set (no keys array)")?;
        let usable: Vec<Arc<Key>> = keys
            .iter()
            .filter_map(Key::from_jwk)
            .map(Arc::new)
            .collect();
        if usable.is_empty() {
            return Err("the JWK Set has no usable signature key".into());
        }
        Ok(usable)
    }

    /// Fetches the set now (at start-up, so that a wrong URL shows at once).
    pub(crate) async fn prefetch(&self) -> Result<(), VerifyError> {
        self.refresh(self.snapshot(), false).await.map(|_| ())
    }
}

/// The key of `snapshot` for `kid` and `alg`. A key with the right `kid` that cannot verify
/// `alg` is an invalid token (the header lies about its key), not a reason to refetch.
fn find(snapshot: &Snapshot, kid: Option<&str>, alg: Algorithm) -> Result<Found, VerifyError> {
    match kid {
        Some(kid) => {
            let Some(key) = snapshot.keys.iter().find(|k| k.kid.as_deref() == Some(kid)) else {
                return Ok(Found::Unknown);
            };
            if key.fits(alg) {
                Ok(Found::Key(Arc::clone(key)))
            } else {
                Err(VerifyError::Invalid(format!(
                    "the key {kid:?} does not verify {alg:?} signatures"
                )))
            }
        }
        None => {
            // Without a kid, only an unambiguous key is used.
            let mut fitting = snapshot.keys.iter().filter(|k| k.fits(alg));
            match (fitting.next(), fitting.next()) {
                (Some(key), None) => Ok(Found::Key(Arc::clone(key))),
                (None, _) => Ok(Found::Unknown),
                (Some(_), Some(_)) => Err(VerifyError::Invalid(
                    "the token names no kid and several keys could have signed it".into(),
                )),
            }
        }
    }
}
