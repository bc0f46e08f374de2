//! Asking the client (sampling, elicitation, roots) through one handler API in every era.
//!
//! Legacy revisions: the runtime sends the request on the request's own channel (stdio;
//! on HTTP the request's SSE stream, or the HTTP+SSE stream), matches the answer by id,
//! applies a timeout and forwards cancellation. 2026-07-28 has no server-to-client
//! requests: the first pass of a handler collects what it asks, the runtime answers
//! `resultType: "input_required"` with those `inputRequests` and an HMAC-protected
//! `requestState`, and the client's retry re-runs the handler with the answers
//! (`inputResponses`, plus those of earlier rounds carried in the verified state).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use base64::Engine;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tokio::sync::oneshot;

use crate::cancel::{first, First};
use crate::jsonrpc::{ErrorCode, RequestId, RpcError};
use crate::shape::{by_revision, project};
use crate::version::ProtocolVersion;

/// Something a handler asks the client.
#[derive(Clone, Debug, PartialEq)]
pub enum Ask {
    /// `elicitation/create` (form mode): a message and the flat schema of what to ask.
    Elicit {
        /// What to tell the user.
        message: String,
        /// The JSON Schema (flat object of primitive properties) of the answer.
        requested_schema: Value,
    },
    /// `elicitation/create` in URL mode (2025-11-25+): send the user to a URL (for
    /// credentials or payments that must not pass through the client).
    ElicitUrl {
        /// Why the user should open the URL.
        message: String,
        /// The URL.
        url: String,
        /// An id the server later names in `notifications/elicitation/complete`
        /// (required by 2025-11-25; optional in 2026-07-28).
        elicitation_id: String,
    },
    /// `sampling/createMessage`, with its params as the newest revision defines them.
    CreateMessage(Value),
    /// `roots/list`.
    ListRoots,
}

impl Ask {
    /// The method that carries this ask.
    pub fn method(&self) -> &'static str {
        match self {
            Ask::Elicit { .. } | Ask::ElicitUrl { .. } => "elicitation/create",
            Ask::CreateMessage(_) => "sampling/createMessage",
            Ask::ListRoots => "roots/list",
        }
    }

    /// The client capability this ask needs.
    pub fn capability(&self) -> &'static str {
        match self {
            Ask::Elicit { .. } | Ask::ElicitUrl { .. } => "elicitation",
            Ask::CreateMessage(_) => "sampling",
            Ask::ListRoots => "roots",
        }
    }

    fn neutral_params(&self) -> Value {
        match self {
            Ask::Elicit {
                message,
                requested_schema,
            } => json!({"message": message, "requestedSchema": requested_schema}),
            Ask::ElicitUrl {
                message,
                url,
                elicitation_id,
            } => {
                json!({"mode": "url", "message": message, "url": url, "elicitationId": elicitation_id})
            }
            Ask::CreateMessage(params) => params.clone(),
            Ask::ListRoots => json!({}),
        }
    }

    /// The params this ask sends in revision `v` (projected through its generated type,
    /// after the downgrade rules); an error if `v` cannot express it.
    pub fn request_params(&self, v: ProtocolVersion) -> Result<Value, RpcError> {
        let mut params = self.neutral_params();
        match self {
            Ask::ElicitUrl { .. } if !v.features().url_elicitation => Err(not_in_revision(self, v)),
            Ask::Elicit { .. } | Ask::ElicitUrl { .. } => {
                if !v.features().elicitation_titled_enums {
                    titled_enums_as_enum_names(&mut params);
                }
                by_revision!(v, where elicitation, |m| project::<m::ElicitRequestParams>(
                    "an elicitation",
                    params
                ), else Err(not_in_revision(self, v)))
            }
            Ask::CreateMessage(_) => by_revision!(v, |m| project::<m::CreateMessageRequestParams>(
                "a sampling request",
                params
            )),
            Ask::ListRoots => Ok(params),
        }
    }

    /// Checks the client's answer against revision `v`'s result type.
    fn check_answer(&self, v: ProtocolVersion, answer: &Value) -> Result<(), String> {
        let decoded = match self {
            Ask::Elicit { .. } | Ask::ElicitUrl { .. } => by_revision!(v, where elicitation, |m| {
                serde_json::from_value::<m::ElicitResult>(answer.clone()).map(|_| ())
            }, else return Err(format!("elicitation does not exist in MCP {v}"))),
            Ask::CreateMessage(_) => by_revision!(v, |m| serde_json::from_value::<
                m::CreateMessageResult,
            >(answer.clone())
            .map(|_| ())),
            Ask::ListRoots => by_revision!(v, |m| serde_json::from_value::<m::ListRootsResult>(
                answer.clone()
            )
            .map(|_| ())),
        };
        decoded.map_err(|e| e.to_string())
    }
}

/// 2025-06-18 has no titled single-select (`oneOf` of `{const, title}`): it becomes the
/// `enum` + `enumNames` form that revision has, so the user still gets a choice with labels
/// (projection would otherwise read it as a free-text string and drop the choices).
/// Defaults and multi-select do not exist there either: defaults are dropped by projection,
/// a multi-select cannot be expressed and fails the ask.
fn titled_enums_as_enum_names(params: &mut Value) {
    let Some(Value::Object(props)) = params.pointer_mut("/requestedSchema/properties") else {
        return;
    };
    for prop in props.values_mut() {
        let Some(Value::Array(options)) = prop.get("oneOf").cloned() else {
            continue;
        };
        let values: Vec<Value> = options
            .iter()
            .filter_map(|o| o.get("const").cloned())
            .collect();
        let names: Vec<Value> = options
            .iter()
            .map(|o| {
                o.get("title")
                    .cloned()
                    .unwrap_or_else(|| o.get("const").cloned().unwrap_or(Value::Null))
            })
            .collect();
        if let Value::Object(p) = prop {
            p.remove("oneOf");
            p.insert("enum".into(), Value::Array(values));
            p.insert("enumNames".into(), Value::Array(names));
        }
    }
}

fn not_in_revision(ask: &Ask, v: ProtocolVersion) -> RpcError {
    RpcError::internal(format!(
        "cannot ask the client: `{}` is not part of MCP {v}",
        ask.method()
    ))
}

/// The error for asking what the client did not declare: `-32021` with
/// `data.requiredCapabilities` (the 2026-07-28 error; its shape serves every revision).
pub fn missing_capability(ask: &Ask) -> RpcError {
    RpcError::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("Missing required client capability: {}", ask.capability()),
    )
    .with_data(json!({"requiredCapabilities": {ask.capability(): {}}}))
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Server-to-client requests awaiting an answer on one connection (legacy).
#[derive(Debug, Default)]
pub struct Pending {
    next: AtomicU64,
    waiting: Mutex<HashMap<RequestId, oneshot::Sender<Result<Value, RpcError>>>>,
}

impl Pending {
    /// Registers a new request; returns its id and the receiver of its answer.
    pub fn register(&self) -> (RequestId, oneshot::Receiver<Result<Value, RpcError>>) {
        let id = RequestId::String(format!(
            "s-{}",
            self.next.fetch_add(1, Ordering::Relaxed) + 1
        ));
        let (tx, rx) = oneshot::channel();
        lock(&self.waiting).insert(id.clone(), tx);
        (id, rx)
    }

    /// Delivers an answer; false if nothing was waiting for that id.
    pub fn resolve(&self, id: &RequestId, outcome: Result<Value, RpcError>) -> bool {
        match lock(&self.waiting).remove(id) {
            Some(tx) => tx.send(outcome).is_ok(),
            None => false,
        }
    }

    /// Forgets a request (timed out or cancelled).
    pub fn forget(&self, id: &RequestId) {
        lock(&self.waiting).remove(id);
    }
}

/// One round of a modern (multi round-trip) request.
#[derive(Debug)]
pub struct Round {
    /// The (modern) revision the request is served at: what it asks is shaped for it.
    version: ProtocolVersion,
    /// Answers known this round: from the verified state and from `inputResponses`.
    answers: BTreeMap<String, Value>,
    /// Answers used by the handler so far (carried to the next round's state).
    used: Mutex<BTreeMap<String, Value>>,
    /// What the handler asked and has no answer for.
    needed: Mutex<BTreeMap<String, Value>>,
    counter: AtomicUsize,
    /// What the signed state is bound to: computed only when a state is verified or
    /// signed — most calls never ask, and hashing their arguments would be wasted.
    binding: Binding,
}

/// The request a round belongs to: its method, its caller, and the digest of method,
/// caller, target and arguments once needed (from the request's params, which outlive the
/// round's handler).
#[derive(Debug)]
struct Binding {
    method: &'static str,
    /// The caller, when the request was authenticated: a state minted for one principal
    /// does not verify for another (its identity enters the digest, computed only when a
    /// state is verified or signed).
    principal: Option<Arc<crate::auth::Principal>>,
    digest: std::sync::OnceLock<String>,
}

/// What a request's state is bound to, read from its params: the target (`name`, else
/// `uri`) and the `arguments`, each `null` when absent.
pub(crate) fn binding_parts(params: Option<&Value>) -> (&Value, &Value) {
    let field = |key: &str| params.and_then(|p| p.get(key));
    let target = field("name")
        .or_else(|| field("uri"))
        .unwrap_or(&Value::Null);
    (target, field("arguments").unwrap_or(&Value::Null))
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

impl Round {
    /// Reads a retry's `inputResponses` and `requestState`. A state that does not verify,
    /// or that belongs to another request (or was minted for another `principal`), is
    /// `-32602`.
    pub fn from_params(
        version: ProtocolVersion,
        method: &'static str,
        params: Option<&Value>,
        principal: Option<&Arc<crate::auth::Principal>>,
    ) -> Result<Round, RpcError> {
        let binding = Binding {
            method,
            principal: principal.cloned(),
            digest: std::sync::OnceLock::new(),
        };
        let mut answers = BTreeMap::new();
        if let Some(state) = crate::jsonrpc::member(params, "requestState") {
            let state = state
                .as_str()
                .ok_or_else(|| RpcError::invalid_params("requestState must be a string"))?;
            let (target, arguments) = binding_parts(params);
            answers = verify_state(state, binding.digest_of(target, arguments))?;
        }
        if let Some(Value::Object(responses)) = crate::jsonrpc::member(params, "inputResponses") {
            for (k, v) in responses {
                answers.insert(k.clone(), v.clone());
            }
        }
        Ok(Round {
            version,
            answers,
            used: Mutex::new(BTreeMap::new()),
            needed: Mutex::new(BTreeMap::new()),
            counter: AtomicUsize::new(0),
            binding,
        })
    }

    /// The answer under `key`, checked against what was asked; or records the ask.
    fn take(&self, key: &str, ask: &Ask) -> Result<Option<Value>, RpcError> {
        match self.answers.get(key) {
            Some(answer) => {
                ask.check_answer(self.version, answer).map_err(|e| {
                    RpcError::invalid_params(format!(
                        "inputResponses[\"{key}\"] does not answer `{}`: {e}",
                        ask.method()
                    ))
                })?;
                lock(&self.used).insert(key.to_owned(), answer.clone());
                Ok(Some(answer.clone()))
            }
            None => {
                let params = ask.request_params(self.version)?;
                lock(&self.needed).insert(
                    key.to_owned(),
                    json!({"method": ask.method(), "params": params}),
                );
                Ok(None)
            }
        }
    }

    fn next_key(&self) -> String {
        format!("input-{}", self.counter.fetch_add(1, Ordering::Relaxed) + 1)
    }

    /// Whether the binding of this request to its retry is already known (a retry's
    /// state was verified against it): then [`Round::input_required`] needs no target or
    /// arguments.
    pub fn is_bound(&self) -> bool {
        self.binding.digest.get().is_some()
    }

    /// If the handler asked for something unanswered: the `inputRequests` and the signed
    /// state to send back, bound to the request's target (tool name, resource URI) and
    /// arguments as sent (see [`binding_parts`]).
    pub fn input_required(&self, target: &Value, arguments: &Value) -> Option<(Value, String)> {
        let needed = lock(&self.needed);
        if needed.is_empty() {
            return None;
        }
        let requests = Value::Object(needed.iter().map(|(k, v)| (k.clone(), v.clone())).collect());
        Some((
            requests,
            sign_state(self.binding.digest_of(target, arguments), &lock(&self.used)),
        ))
    }
}

/// Where a handler's asks go.
#[derive(Clone, Debug)]
pub enum Asker {
    /// A legacy session: send requests to the peer.
    Legacy {
        /// The connection's waiting requests.
        pending: Arc<Pending>,
        /// How long to wait for an answer.
        timeout: Duration,
    },
    /// A modern request: collect, answer `input_required`.
    Modern(Arc<Round>),
    /// Nowhere (notifications, list methods): asking is an error.
    None,
}

pub(crate) async fn ask_all(
    ctx: &crate::Context,
    asker: &Asker,
    asks: Vec<(Option<String>, Ask)>,
) -> Result<Vec<Value>, RpcError> {
    let v = ctx.version();
    for (_, ask) in &asks {
        if matches!(ask, Ask::Elicit { .. } | Ask::ElicitUrl { .. }) && !v.features().elicitation {
            return Err(not_in_revision(ask, v));
        }
        if !ctx.client_supports(ask.capability()) {
            // Nothing is sent for a capability the client did not declare.
            return Err(missing_capability(ask));
        }
        if matches!(ask, Ask::ElicitUrl { .. })
            && ctx
                .client_capabilities()
                .get("elicitation")
                .and_then(|e| e.get("url"))
                .is_none()
        {
            return Err(RpcError::new(
                ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                "Missing required client capability: elicitation.url",
            )
            .with_data(json!({"requiredCapabilities": {"elicitation": {"url": {}}}})));
        }
        if let Ask::CreateMessage(params) = ask {
            let offers_tools = params.get("tools").is_some() || params.get("toolChoice").is_some();
            if offers_tools && !v.features().sampling_tools {
                // Dropping the tools would ask the client a different question.
                return Err(RpcError::internal(format!(
                    "cannot ask the client: sampling with tools is not part of MCP {v}"
                )));
            }
            if offers_tools
                && ctx
                    .client_capabilities()
                    .get("sampling")
                    .and_then(|s| s.get("tools"))
                    .is_none()
            {
                return Err(RpcError::new(
                    ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                    "Missing required client capability: sampling.tools",
                )
                .with_data(json!({"requiredCapabilities": {"sampling": {"tools": {}}}})));
            }
        }
    }
    match asker {
        Asker::None => Err(RpcError::internal(
            "this request cannot ask the client anything",
        )),
        Asker::Modern(round) => {
            let mut answers = Vec::new();
            let mut missing = false;
            for (key, ask) in &asks {
                let key = key.clone().unwrap_or_else(|| round.next_key());
                match round.take(&key, ask)? {
                    Some(a) => answers.push(a),
                    None => missing = true,
                }
            }
            if missing {
                Err(input_required_marker())
            } else {
                Ok(answers)
            }
        }
        Asker::Legacy { pending, timeout } => {
            let calls = asks
                .iter()
                .map(|(_, ask)| legacy_ask(ctx, pending, *timeout, ask));
            futures_util::future::try_join_all(calls).await
        }
    }
}

async fn legacy_ask(
    ctx: &crate::Context,
    pending: &Arc<Pending>,
    timeout: Duration,
    ask: &Ask,
) -> Result<Value, RpcError> {
    let v = ctx.version();
    let params = ask.request_params(v)?;
    let (id, rx) = pending.register();
    // If this future is dropped before the answer (the asking request was cancelled and its
    // handler dropped), the guard forgets the request and tells the client to stop.
    let mut guard = AskGuard {
        pending: Arc::clone(pending),
        id: id.clone(),
        ctx: ctx.clone(),
        reason: "the request that asked was cancelled",
        armed: true,
    };
    ctx.send_request(&id, ask.method(), params).await;
    let raced = first(rx, first(tokio::time::sleep(timeout), ctx.cancelled())).await;
    let outcome = match raced {
        First::A(r) => {
            guard.armed = false;
            r.unwrap_or_else(|_| {
                Err(RpcError::internal(
                    "the connection closed before the client answered",
                ))
            })
        }
        First::B(First::A(())) => {
            guard.reason = "timed out";
            drop(guard);
            return Err(RpcError::internal(format!(
                "the client did not answer `{}` within {:?}",
                ask.method(),
                timeout
            )));
        }
        First::B(First::B(())) => {
            drop(guard);
            return Err(RpcError::internal("cancelled"));
        }
    };
    let answer = outcome?;
    ask.check_answer(v, &answer).map_err(|e| {
        RpcError::internal(format!(
            "the client's answer to `{}` is invalid: {e}",
            ask.method()
        ))
    })?;
    Ok(answer)
}

/// Forgets an unanswered server request and sends `notifications/cancelled` for it, also
/// when the asking handler is dropped mid-wait.
struct AskGuard {
    pending: Arc<Pending>,
    id: RequestId,
    ctx: crate::Context,
    reason: &'static str,
    armed: bool,
}

impl Drop for AskGuard {
    fn drop(&mut self) {
        if self.armed {
            self.pending.forget(&self.id);
            self.ctx.try_send_cancel(&self.id, self.reason);
        }
    }
}

/// The code of the internal marker error a handler's ask returns in a modern first pass;
/// it never reaches the wire (the runtime answers `input_required` instead).
pub const INPUT_REQUIRED_MARKER: ErrorCode = ErrorCode(-32099);

fn input_required_marker() -> RpcError {
    RpcError::new(INPUT_REQUIRED_MARKER, "input required")
}

fn secret() -> &'static [u8; 32] {
    static SECRET: OnceLock<[u8; 32]> = OnceLock::new();
    SECRET.get_or_init(|| {
        let mut key = [0u8; 32];
        // Without an OS random source there is no safe secret; fail loudly at first use.
        #[allow(clippy::expect_used)]
        getrandom::getrandom(&mut key).expect("the OS random source is unavailable");
        key
    })
}

/// What a state is bound to: the method, the caller, the tool/prompt/resource and its
/// arguments.
fn binding(method: &str, principal: &str, target: &Value, arguments: &Value) -> String {
    // Canonical (sorted keys): a client that re-serializes equal arguments in another key
    // order is still the same request. The principal is JSON text (or empty), so it cannot
    // contain the separator.
    let digest = Sha256::digest(
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

fn mac() -> Hmac<Sha256> {
    // HMAC accepts keys of any length.
    #[allow(clippy::expect_used)]
    <Hmac<Sha256> as Mac>::new_from_slice(secret()).expect("HMAC takes any key length")
}

fn sign_state(binding: &str, answers: &BTreeMap<String, Value>) -> String {
    let payload = json!({"b": binding, "r": answers}).to_string();
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut m = mac();
    m.update(payload.as_bytes());
    format!(
        "{}.{}",
        engine.encode(payload),
        engine.encode(m.finalize().into_bytes())
    )
}

fn verify_state(state: &str, binding: &str) -> Result<BTreeMap<String, Value>, RpcError> {
    let bad = || RpcError::invalid_params("requestState is invalid or was altered");
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let (payload, tag) = state.split_once('.').ok_or_else(bad)?;
    let payload = engine.decode(payload).map_err(|_| bad())?;
    let tag = engine.decode(tag).map_err(|_| bad())?;
    let mut m = mac();
    m.update(&payload);
    m.verify_slice(&tag).map_err(|_| bad())?;
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
