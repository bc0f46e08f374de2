//! The authorization server's signing keys (a JWK Set), fetched on first use, kept for a
//! while and refreshed in the background, refetched when a token names a key not in the
//! set (the server rotated its keys) — one fetch at a time, which every token that needs
//! it shares, at most one per interval — and signature verification with them (ring).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use ring::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey};
use serde_json::Value;
use tokio::sync::watch;

use super::fetch::{self, Fetched};
use super::VerifyError;

/// The JWS algorithms a resource server accepts: asymmetric only (RFC 7518 §3). `none` and
/// the HMAC family are not among them: a resource server must not share a secret with the
/// clients whose tokens it checks, and refusing them closes algorithm confusion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Alg {
    Rs256,
    Rs384,
    Rs512,
    Ps256,
    Ps384,
    Ps512,
    Es256,
    Es384,
    EdDsa,
}

impl Alg {
    pub(crate) fn parse(name: &str) -> Option<Alg> {
        Some(match name {
            "RS256" => Alg::Rs256,
            "RS384" => Alg::Rs384,
            "RS512" => Alg::Rs512,
            "PS256" => Alg::Ps256,
            "PS384" => Alg::Ps384,
            "PS512" => Alg::Ps512,
            "ES256" => Alg::Es256,
            "ES384" => Alg::Es384,
            "EdDSA" => Alg::EdDsa,
            _ => return None,
        })
    }
}

/// One verification key: its public material, as the JWK gave it.
pub(crate) struct Key {
    kid: Option<String>,
    /// The algorithm the set pins the key to (`alg`), if any.
    alg: Option<Alg>,
    material: Material,
}

enum Material {
    /// Modulus and exponent, big-endian.
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
    },
    /// An uncompressed SEC1 point (`04 || x || y`) on P-256 or P-384.
    P256(Vec<u8>),
    P384(Vec<u8>),
    Ed25519(Vec<u8>),
}

/// base64url, with or without padding (RFC 7515 says without; some key sets pad).
fn b64(value: &Value, member: &str) -> Option<Vec<u8>> {
    let text = value.get(member)?.as_str()?;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text.trim_end_matches('='))
        .ok()
}

impl Key {
    /// A signature key from a JWK, or `None` for what cannot verify signatures here: keys
    /// meant for encryption or other operations, symmetric (`oct`) keys, unknown types or
    /// curves, malformed members, RSA moduli under 2048 bits.
    fn from_jwk(value: &Value) -> Option<Key> {
        if value.get("use").is_some_and(|u| u != "sig") {
            return None;
        }
        if let Some(ops) = value.get("key_ops") {
            if !ops.as_array()?.iter().any(|op| op == "verify") {
                return None;
            }
        }
        let curve = value.get("crv").and_then(Value::as_str);
        let point = |len: usize| {
            let (x, y) = (b64(value, "x")?, b64(value, "y")?);
            (x.len() == len && y.len() == len).then(|| [&[4u8][..], &x, &y].concat())
        };
        let material = match (value.get("kty")?.as_str()?, curve) {
            ("RSA", _) => {
                let n = b64(value, "n")?;
                let e = b64(value, "e")?;
                let bits = n.iter().skip_while(|b| **b == 0).count() * 8;
                if bits < 2048 || e.is_empty() {
                    return None;
                }
                Material::Rsa { n, e }
            }
            ("EC", Some("P-256")) => Material::P256(point(32)?),
            ("EC", Some("P-384")) => Material::P384(point(48)?),
            ("OKP", Some("Ed25519")) => {
                let x = b64(value, "x")?;
                (x.len() == 32).then_some(())?;
                Material::Ed25519(x)
            }
            _ => return None,
        };
        let alg = match value.get("alg") {
            None => None,
            // A key pinned to an algorithm this server does not accept is of no use.
            Some(a) => Some(Alg::parse(a.as_str()?)?),
        };
        let kid = match value.get("kid") {
            None => None,
            Some(k) => Some(k.as_str()?.to_owned()),
        };
        Some(Key { kid, alg, material })
    }

    /// Whether this key may verify a signature made with `alg`: the key's type and curve
    /// fit the algorithm, and the set does not pin the key to another one.
    fn fits(&self, alg: Alg) -> bool {
        let kind_fits = match alg {
            Alg::Rs256 | Alg::Rs384 | Alg::Rs512 | Alg::Ps256 | Alg::Ps384 | Alg::Ps512 => {
                matches!(self.material, Material::Rsa { .. })
            }
            Alg::Es256 => matches!(self.material, Material::P256(_)),
            Alg::Es384 => matches!(self.material, Material::P384(_)),
            Alg::EdDsa => matches!(self.material, Material::Ed25519(_)),
        };
        kind_fits && self.alg.is_none_or(|pinned| pinned == alg)
    }

    /// Whether `signature` is `alg`'s signature of `message` by this key (ring).
    pub(crate) fn verifies(&self, alg: Alg, message: &[u8], signature: &[u8]) -> bool {
        let rsa = |params: &'static signature::RsaParameters| match &self.material {
            Material::Rsa { n, e } => RsaPublicKeyComponents { n, e }
                .verify(params, message, signature)
                .is_ok(),
            _ => false,
        };
        match (alg, &self.material) {
            (Alg::Rs256, _) => rsa(&signature::RSA_PKCS1_2048_8192_SHA256),
            (Alg::Rs384, _) => rsa(&signature::RSA_PKCS1_2048_8192_SHA384),
            (Alg::Rs512, _) => rsa(&signature::RSA_PKCS1_2048_8192_SHA512),
            (Alg::Ps256, _) => rsa(&signature::RSA_PSS_2048_8192_SHA256),
            (Alg::Ps384, _) => rsa(&signature::RSA_PSS_2048_8192_SHA384),
            (Alg::Ps512, _) => rsa(&signature::RSA_PSS_2048_8192_SHA512),
            (Alg::Es256, Material::P256(point)) => {
                UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point)
                    .verify(message, signature)
                    .is_ok()
            }
            (Alg::Es384, Material::P384(point)) => {
                UnparsedPublicKey::new(&signature::ECDSA_P384_SHA384_FIXED, point)
                    .verify(message, signature)
                    .is_ok()
            }
            (Alg::EdDsa, Material::Ed25519(x)) => UnparsedPublicKey::new(&signature::ED25519, x)
                .verify(message, signature)
                .is_ok(),
            _ => false,
        }
    }
}

struct Snapshot {
    keys: Vec<Arc<Key>>,
    fetched: Instant,
}

/// How a key set is kept.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KeyPolicy {
    /// Refreshed (in the background, the set in hand still serving) when older than this.
    pub(crate) ttl: Duration,
    /// Still used while a refresh is under way or failing, until this old; then tokens
    /// wait for a fetch, and get 503 when it fails.
    pub(crate) max_stale: Duration,
    /// At most one fetch starts per this interval (measured from the start of the last
    /// one), for unknown keys or after failures.
    pub(crate) min_refresh_interval: Duration,
    /// How long one fetch may take. Shorter than `min_refresh_interval` (the builder
    /// checks), so that a hanging authorization server is given up on before the next
    /// fetch may start: tokens arriving in between are answered from what is known.
    pub(crate) fetch_timeout: Duration,
}

/// What a fetch came to, as the tokens waiting on it see it.
type Outcome = Result<Arc<Snapshot>, String>;

/// A JWK Set, kept up to date. Cheap to clone (shared state): a fetch runs as a task of
/// its own, so that a request that gives up waiting does not abandon the others.
#[derive(Clone)]
pub(crate) struct KeySet(Arc<Shared>);

struct Shared {
    uri: String,
    client: reqwest::Client,
    policy: KeyPolicy,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    current: Option<Arc<Snapshot>>,
    /// When the last fetch started, and whether it failed (`None` while it runs).
    last_attempt: Option<(Instant, Option<bool>)>,
    /// The fetch under way, if any: every token that needs it waits on this one
    /// (single flight), never on a fetch of its own.
    flight: Option<watch::Receiver<Option<Outcome>>>,
}

/// What [`KeySet::find`] looks for.
enum Found {
    Key(Arc<Key>),
    /// No key has the token's `kid` (or, without a `kid`, none fits): maybe rotated.
    Unknown,
}

impl KeySet {
    pub(crate) fn new(uri: String, client: reqwest::Client, policy: KeyPolicy) -> KeySet {
        KeySet(Arc::new(Shared {
            uri,
            client,
            policy,
            state: Mutex::new(State::default()),
        }))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // Nothing panics while holding it; the state stays consistent if something did.
        self.0
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The key to verify a token signed with `alg` and naming `kid`.
    ///
    /// A set younger than `ttl` serves at once. An older one still serves at once while a
    /// refresh runs in the background (stale-while-revalidate), until it is `max_stale`
    /// old. A token naming a key not in the set waits for one fetch shared with every
    /// other such token; if no fetch may start yet (`min_refresh_interval`), it is
    /// answered from the last outcome: refused when the set was just fetched without its
    /// key, 503 when the set cannot be fetched (the key may be a rotated, valid one).
    pub(crate) async fn key(&self, kid: Option<&str>, alg: Alg) -> Result<Arc<Key>, VerifyError> {
        let policy = self.0.policy;
        let (snapshot, refresh) = {
            let mut state = self.state();
            match state.current.clone() {
                Some(s) if s.fetched.elapsed() < policy.ttl => (Some(s), None),
                Some(s) if s.fetched.elapsed() < policy.max_stale => {
                    // Refreshed in the background; this token is checked with `s`.
                    let _ = self.start_fetch(&mut state);
                    (Some(s), None)
                }
                _ => (None, self.start_fetch(&mut state)),
            }
        };
        let snapshot = match snapshot {
            Some(s) => s,
            None => self.wait(refresh).await?,
        };
        if let Found::Key(key) = find(&snapshot, kid, alg)? {
            return Ok(key);
        }
        // The server may have rotated its keys since the set was fetched.
        let refresh = {
            let mut state = self.state();
            match state.current.clone() {
                // Another token's fetch brought a newer set meanwhile.
                Some(newer) if newer.fetched > snapshot.fetched => Ok(newer),
                _ => Err(self.start_fetch(&mut state)),
            }
        };
        let renewed = match refresh {
            Ok(newer) => newer,
            Err(flight) => self.wait(flight).await?,
        };
        match find(&renewed, kid, alg)? {
            Found::Key(key) => Ok(key),
            Found::Unknown => Err(VerifyError::Invalid(match kid {
                Some(kid) => format!("no key of the authorization server has kid {kid:?}"),
                None => format!("no key of the authorization server verifies {alg:?}"),
            })),
        }
    }

    /// The fetch to wait for: the one under way, or a new one, unless the last one
    /// started less than `min_refresh_interval` ago (`None`: no fetch may start yet).
    fn start_fetch(&self, state: &mut State) -> Option<watch::Receiver<Option<Outcome>>> {
        if let Some(flight) = &state.flight {
            return Some(flight.clone());
        }
        let interval = self.0.policy.min_refresh_interval;
        if state
            .last_attempt
            .is_some_and(|(started, _)| started.elapsed() < interval)
        {
            return None;
        }
        let (tx, rx) = watch::channel(None);
        state.flight = Some(rx.clone());
        state.last_attempt = Some((Instant::now(), None));
        let set = self.clone();
        tokio::spawn(async move {
            let outcome = set.fetch().await.map(|keys| {
                Arc::new(Snapshot {
                    keys,
                    fetched: Instant::now(),
                })
            });
            {
                let mut state = set.state();
                state.flight = None;
                let failed = outcome.is_err();
                if let Some((started, _)) = state.last_attempt {
                    state.last_attempt = Some((started, Some(failed)));
                }
                match &outcome {
                    Ok(fresh) => state.current = Some(Arc::clone(fresh)),
                    Err(why) => {
                        tracing::warn!(uri = %set.0.uri, reason = %why, "key set fetch failed")
                    }
                }
            }
            let _ = tx.send(Some(outcome));
        });
        Some(rx)
    }

    /// The set `flight` brings, or why there is none: a failed fetch, or (`None`) none
    /// allowed yet, is "cannot decide" (503), unless a set younger than `max_stale` is in
    /// hand (a fetch that found no new key leaves the set as it was).
    async fn wait(
        &self,
        flight: Option<watch::Receiver<Option<Outcome>>>,
    ) -> Result<Arc<Snapshot>, VerifyError> {
        let unavailable = |why: &str| {
            VerifyError::Unavailable(format!(
                "the key set at {} cannot be fetched: {why}",
                self.0.uri
            ))
        };
        let Some(mut flight) = flight else {
            let state = self.state();
            return match (&state.current, state.last_attempt) {
                // The set was fetched moments ago: it is what the server publishes.
                (Some(current), Some((_, Some(false)))) => Ok(Arc::clone(current)),
                _ => Err(unavailable(
                    "it failed moments ago, and is not tried again yet",
                )),
            };
        };
        let outcome = match flight.wait_for(Option::is_some).await {
            Ok(outcome) => outcome.clone(),
            Err(_) => None,
        };
        match outcome {
            Some(Ok(fresh)) => Ok(fresh),
            Some(Err(why)) => Err(unavailable(&why)),
            None => Err(unavailable("the fetch was abandoned")),
        }
    }

    async fn fetch(&self) -> Result<Vec<Arc<Key>>, String> {
        let request = self
            .0
            .client
            .get(&self.0.uri)
            .timeout(self.0.policy.fetch_timeout);
        let doc = match fetch::json(request).await? {
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
        let flight = self.start_fetch(&mut self.state());
        self.wait(flight).await.map(|_| ())
    }
}

/// The key of `snapshot` for `kid` and `alg`. A key with the right `kid` that cannot verify
/// `alg` is an invalid token (the header lies about its key), not a reason to refetch.
fn find(snapshot: &Snapshot, kid: Option<&str>, alg: Alg) -> Result<Found, VerifyError> {
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
