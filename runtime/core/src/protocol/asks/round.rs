//! 2026-07-28: a handler's asks collected in one round, answered `input_required` with a signed `requestState`, and the retry's answers handed back.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use serde_json::{json, Value};

use super::ask::Ask;
use super::error::{AskError, AskErrorKind};
use crate::auth::Principal;
use crate::primitives::base64::{decode_url_safe, encode_url_safe};
use crate::primitives::sha256::{sha256, Hmac};
use crate::protocol::method::{self, McpMethod};
use crate::protocol::version::ProtocolVersion;
use crate::wire::RpcError;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One round of a modern (multi round-trip) request.
#[derive(Debug)]
pub(crate) struct Round {
    /// The (modern) revision the request is served at: what it asks is shaped for it.
    version: ProtocolVersion,
    /// Answers known this round: from the verified state and from `inputResponses`.
    answers: BTreeMap<String, Value>,
    /// What the handler asked so far; `None` until its first ask (most handlers never
    /// ask, and an empty map still costs its drop on every call).
    asked: Mutex<Option<Asked>>,
    counter: AtomicUsize,
    /// What the signed state is bound to: computed only when a state is verified or
    /// signed — most calls never ask, and hashing their arguments would be wasted.
    binding: Binding,
    /// The keys the state is signed (current) and verified (current, then previous) with.
    keys: Arc<StateKeys>,
}

/// The HMAC-SHA256 keys of `requestState`: states are signed with `current` and verified
/// with `current`, then `previous` (a key being rotated out). Replicas that share them
/// accept each other's states. The default is one random key per process.
pub(crate) struct StateKeys {
    current: Hmac,
    previous: Option<Hmac>,
}

impl std::fmt::Debug for StateKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the keys themselves.
        f.debug_struct("StateKeys")
            .field("previous", &self.previous.is_some())
            .finish_non_exhaustive()
    }
}

impl StateKeys {
    /// Keys from the given secrets (any length; HMAC hashes long ones).
    pub(crate) fn new(current: &[u8], previous: Option<&[u8]>) -> StateKeys {
        StateKeys {
            current: Hmac::new(current),
            previous: previous.map(Hmac::new),
        }
    }

    /// The per-process random key, shared by every server of the process that was given
    /// no keys.
    pub(crate) fn process_default() -> Arc<StateKeys> {
        static DEFAULT: OnceLock<Arc<StateKeys>> = OnceLock::new();
        Arc::clone(DEFAULT.get_or_init(|| Arc::new(StateKeys::new(secret(), None))))
    }
}

/// The request a round belongs to: its method, and the digest of method, target and
/// arguments once needed (from the request's params, which outlive the round's handler).
#[derive(Debug)]
struct Binding {
    method: &'static str,
    /// The caller, when the request was authenticated: a state minted for one principal
    /// does not verify for another (its identity enters the digest, computed only when a
    /// state is verified or signed).
    principal: Option<Arc<Principal>>,
    digest: std::sync::OnceLock<String>,
}

/// What a request's state is bound to, read from its params: its target (see
/// [`method::target`]) and the `arguments`, each `null` when absent.
pub(crate) fn binding_parts(method: McpMethod, params: Option<&Value>) -> (&Value, &Value) {
    let target = method::target(method, params).unwrap_or(&Value::Null);
    let arguments = crate::wire::member(params, "arguments").unwrap_or(&Value::Null);
    (target, arguments)
}

impl Binding {
    fn digest_of(&self, target: &Value, arguments: &Value) -> &str {
        self.digest.get_or_init(|| {
            let principal = self.principal.as_ref().map(|p| p.identity());
            binding(
                self.method,
                principal.as_deref().unwrap_or_default(),
                target,
                arguments,
            )
        })
    }
}

/// What a round's handler asked.
#[derive(Debug, Default)]
struct Asked {
    /// Answers used by the handler so far (carried to the next round's state).
    used: BTreeMap<String, Value>,
    /// What the handler asked and has no answer for.
    needed: BTreeMap<String, Value>,
}

impl Round {
    /// Reads a retry's `inputResponses` and `requestState`. A state that does not verify,
    /// or that belongs to another request, is `-32602`.
    pub(crate) fn from_params(
        version: ProtocolVersion,
        method: McpMethod,
        params: Option<&Value>,
        principal: Option<&Arc<Principal>>,
        keys: &Arc<StateKeys>,
    ) -> Result<Round, RpcError> {
        let binding = Binding {
            method: method.name(),
            principal: principal.cloned(),
            digest: std::sync::OnceLock::new(),
        };
        let mut answers = BTreeMap::new();
        // Both members found in one pass over the params (a first call has neither).
        let (mut state, mut responses) = (None, None);
        for (key, value) in params.and_then(Value::as_object).into_iter().flatten() {
            match key.as_str() {
                "requestState" => state = Some(value),
                "inputResponses" => responses = Some(value),
                _ => {}
            }
        }
        if let Some(state) = state {
            let state = state
                .as_str()
                .ok_or_else(|| RpcError::invalid_params("requestState must be a string"))?;
            let (target, arguments) = binding_parts(method, params);
            answers = verify_state(keys, state, binding.digest_of(target, arguments))?;
        }
        if let Some(Value::Object(responses)) = responses {
            for (k, v) in responses {
                answers.insert(k.clone(), v.clone());
            }
        }
        Ok(Round {
            version,
            answers,
            asked: Mutex::new(None),
            counter: AtomicUsize::new(0),
            binding,
            keys: Arc::clone(keys),
        })
    }

    /// The answer under `key`, checked against what was asked; or records the ask.
    pub(super) fn take(&self, key: &str, ask: &Ask) -> Result<Option<Value>, AskError> {
        match self.answers.get(key) {
            Some(answer) => {
                ask.check_answer(self.version, answer).map_err(|e| {
                    AskError::new(
                        AskErrorKind::InvalidRetry,
                        RpcError::invalid_params(format!(
                            "inputResponses[\"{key}\"] does not answer `{}`: {e}",
                            ask.method()
                        )),
                    )
                })?;
                lock(&self.asked)
                    .get_or_insert_with(Asked::default)
                    .used
                    .insert(key.to_owned(), answer.clone());
                Ok(Some(answer.clone()))
            }
            None => {
                let params = ask.request_params(self.version)?;
                lock(&self.asked)
                    .get_or_insert_with(Asked::default)
                    .needed
                    .insert(
                        key.to_owned(),
                        json!({"method": ask.method(), "params": params}),
                    );
                Ok(None)
            }
        }
    }

    /// The keys of the answers this round carries (the verified state's and
    /// `inputResponses`).
    pub(crate) fn answered_keys(&self) -> Vec<String> {
        self.answers.keys().cloned().collect()
    }

    pub(super) fn next_key(&self) -> String {
        format!("input-{}", self.counter.fetch_add(1, Ordering::Relaxed) + 1)
    }

    /// Whether the binding of this request to its retry is already known (a retry's
    /// state was verified against it): then [`Round::input_required`] needs no target or
    /// arguments.
    pub(crate) fn is_bound(&self) -> bool {
        self.binding.digest.get().is_some()
    }

    /// If the handler asked for something unanswered: the `inputRequests` and the signed
    /// state to send back, bound to the request's target (tool name, resource URI) and
    /// arguments as sent (see [`binding_parts`]).
    pub(crate) fn input_required(
        &self,
        target: &Value,
        arguments: &Value,
    ) -> Option<(Value, String)> {
        let asked = lock(&self.asked);
        let asked = asked.as_ref().filter(|a| !a.needed.is_empty())?;
        let requests = Value::Object(
            asked
                .needed
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        );
        Some((
            requests,
            sign_state(
                &self.keys,
                self.binding.digest_of(target, arguments),
                &asked.used,
            ),
        ))
    }
}

fn secret() -> &'static [u8; 32] {
    static SECRET: OnceLock<[u8; 32]> = OnceLock::new();
    SECRET.get_or_init(|| {
        let mut key = [0u8; 32];
        // Without an OS random source there is no safe secret; fail loudly at first use.
        #[allow(clippy::expect_used)]
        crate::primitives::random::fill(&mut key).expect("the OS random source is unavailable");
        key
    })
}

/// What a state is bound to: the method, the caller, the tool/prompt/resource and its
/// arguments.
fn binding(method: &str, principal: &str, target: &Value, arguments: &Value) -> String {
    // Canonical (sorted keys): a client that re-serializes equal arguments in another key
    // order is still the same request.
    let digest = sha256(
        format!(
            "{method}\u{0}{principal}\u{0}{}\u{0}{}",
            canonical(target),
            canonical(arguments)
        )
        .as_bytes(),
    );
    hex_lower(&digest)
}

/// JSON text with object keys sorted, at every depth.
fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let items: Vec<String> = keys
                .iter()
                .map(|k| {
                    format!(
                        "{}:{}",
                        Value::String((*k).clone()),
                        canonical(&map[k.as_str()])
                    )
                })
                .collect();
            format!("{{{}}}", items.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

fn hex_lower(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        for nibble in [b >> 4, b & 0xf] {
            out.push(char::from(
                HEX.get(usize::from(nibble)).copied().unwrap_or(b'0'),
            ));
        }
    }
    out
}

fn sign_state(keys: &StateKeys, binding: &str, answers: &BTreeMap<String, Value>) -> String {
    let payload = json!({"b": binding, "r": answers}).to_string();
    let mut m = keys.current.clone();
    m.update(payload.as_bytes());
    format!(
        "{}.{}",
        encode_url_safe(payload),
        encode_url_safe(m.finalize())
    )
}

fn verify_state(
    keys: &StateKeys,
    state: &str,
    binding: &str,
) -> Result<BTreeMap<String, Value>, RpcError> {
    let bad = || RpcError::invalid_params("requestState is invalid or was altered");
    let (payload, tag) = state.split_once('.').ok_or_else(bad)?;
    let payload = decode_url_safe(payload).map_err(|_| bad())?;
    let tag = decode_url_safe(tag).map_err(|_| bad())?;
    // A tag of any other length than SHA-256's cannot verify.
    let tag: [u8; 32] = tag.as_slice().try_into().map_err(|_| bad())?;
    let verifies = |key: &Hmac| {
        let mut m = key.clone();
        m.update(&payload);
        // Compares the tags in constant time.
        m.verify(&tag)
    };
    if !verifies(&keys.current) && !keys.previous.as_ref().is_some_and(verifies) {
        return Err(bad());
    }
    let value: Value = serde_json::from_slice(&payload).map_err(|_| bad())?;
    if value.get("b").and_then(Value::as_str) != Some(binding) {
        return Err(RpcError::invalid_params(
            "requestState belongs to another request",
        ));
    }
    let answers = value
        .get("r")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    Ok(answers.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(signer: &StateKeys, verifier: &StateKeys) -> Result<(), RpcError> {
        let answers = BTreeMap::from([("input-1".to_owned(), json!({"action": "accept"}))]);
        let state = sign_state(signer, "digest", &answers);
        verify_state(verifier, &state, "digest").map(|got| assert_eq!(got, answers))
    }

    #[test]
    fn a_shared_key_verifies_on_another_replica_and_rotation_accepts_the_previous_key() {
        let a = StateKeys::new(b"key one, shared by the replicas", None);
        let b = StateKeys::new(b"key one, shared by the replicas", None);
        assert!(round_trip(&a, &b).is_ok());
        // Another key: refused.
        let other = StateKeys::new(b"another key", None);
        assert!(round_trip(&a, &other).is_err());
        // Rotation: the new key signs, the old one still verifies what it signed.
        let rotated = StateKeys::new(b"key two", Some(b"key one, shared by the replicas"));
        assert!(round_trip(&a, &rotated).is_ok());
        assert!(round_trip(&rotated, &rotated).is_ok());
        // A replica not yet rotated does not accept the new key's states.
        assert!(round_trip(&rotated, &a).is_err());
        // The process default is one key for the whole process.
        let d = StateKeys::process_default();
        assert!(round_trip(&d, &StateKeys::process_default()).is_ok());
        assert!(round_trip(&d, &a).is_err());
    }

    /// The MAC that `StateKeys` computes, as `sign_state` and `verify_state` use it.
    fn mac(keys: &StateKeys, data: &[u8]) -> String {
        let mut m = keys.current.clone();
        m.update(data);
        hex_lower(&m.finalize())
    }

    #[test]
    fn the_state_mac_is_hmac_sha256_by_the_rfc_4231_vectors() {
        // RFC 4231 §4.2–4.8, HMAC-SHA-256 (test case 5 is truncated to 128 bits there).
        let long_key = [0xaa; 131];
        let cases: [(&[u8], &[u8], &str); 7] = [
            (&[0x0b; 20], b"Hi There",
             "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
            (b"Jefe", b"what do ya want for nothing?",
             "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
            (&[0xaa; 20], &[0xdd; 50],
             "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
            (&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25],
             &[0xcd; 50],
             "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
            (&[0x0c; 20], b"Test With Truncation", "a3b6167473100ee06e0c796c2955552b"),
            (&long_key, b"Test Using Larger Than Block-Size Key - Hash Key First",
             "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
            (&long_key,
             b"This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.",
             "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
        ];
        for (key, data, expected) in cases {
            let got = mac(&StateKeys::new(key, None), data);
            assert!(got.starts_with(expected), "key {key:02x?}: {got}");
        }
    }

    #[test]
    fn states_and_bindings_are_byte_identical_to_those_signed_before() {
        // Computed independently (Python's hmac and hashlib): a state signed by an earlier
        // build (hmac + sha2) or by another replica version still verifies, and vice versa.
        let keys = StateKeys::new(b"key one, shared by the replicas", None);
        let answers = BTreeMap::from([("input-1".to_owned(), json!({"action": "accept"}))]);
        let state = "eyJiIjoiZGlnZXN0IiwiciI6eyJpbnB1dC0xIjp7ImFjdGlvbiI6ImFjY2VwdCJ9fX0\
                     .hx2TE_XN4yaXOjm0rbQN9dWgX5dgr7NurtHazw3Su8A";
        assert_eq!(sign_state(&keys, "digest", &answers), state);
        assert_eq!(verify_state(&keys, state, "digest").ok(), Some(answers));
        assert_eq!(
            binding(
                "tools/call",
                "alice",
                &json!("add"),
                &json!({"b": [1, {"y": true, "x": null}], "a": 2})
            ),
            "abfa3d3f5a680dffb20a31a9c605e1a8b275071fdf71871263bbc9d12357cab0"
        );
    }

    #[test]
    fn a_tag_altered_or_of_another_length_does_not_verify() {
        let keys = StateKeys::new(b"key", None);
        let state = sign_state(&keys, "digest", &BTreeMap::new());
        let (payload, tag) = state.split_once('.').unwrap_or_default();
        let mut bytes = decode_url_safe(tag).unwrap_or_default();
        assert_eq!(bytes.len(), 32);
        for altered in [
            bytes[..31].to_vec(),
            [bytes.as_slice(), &[0]].concat(),
            Vec::new(),
            {
                bytes[0] ^= 1;
                bytes.clone()
            },
        ] {
            let forged = format!("{payload}.{}", encode_url_safe(&altered));
            assert!(verify_state(&keys, &forged, "digest").is_err(), "{forged}");
        }
    }
}
