//! Sessions shared by replicas (an `HttpConfig::store` is set): a session is found in the
//! store on every request and its local copy brought up to date; what changed is written
//! back; and the replicas tell each other, on the store's channel, what only another may
//! act on: an answer to a server-to-client request, a cancellation, a server event for a
//! GET stream, a changed or ended session, a task's cancellation or answers for the
//! replica that runs its handler.

use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::authorize::Caller;
use super::event_store::{Mirror, SessionStreams};
use super::responses::{rpc_error, session_not_found};
use super::sessions::{lock, AppState, Session};
use super::store::{
    decode_record, encode_record, replica_key, Shared, StoreError, HEARTBEAT_EVERY, HEARTBEAT_TTL,
};
use mcp_runtime::protocol::method::McpMethod;
use mcp_runtime::server::connection::{Connection, Snapshot};
#[cfg(feature = "tasks")]
use mcp_runtime::server::tasks::TaskSignal;
use mcp_runtime::wire::{ErrorCode, Frame, Message, Outgoing, RequestId};
use mcp_runtime::ServerEvent;

/// 503 with a JSON-RPC internal error: the store failed (the client may retry).
pub(super) fn store_unavailable(e: &StoreError) -> Response {
    tracing::error!("{e}");
    let mut r = rpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        None,
        ErrorCode::INTERNAL_ERROR,
        &format!("Internal error: the session store is unavailable ({e}); retry shortly"),
    );
    r.headers_mut()
        .insert("retry-after", axum::http::HeaderValue::from_static("1"));
    r
}

fn owner_of(caller: &Caller) -> Option<String> {
    caller.principal().map(|p| p.identity())
}

/// A new local session (its connection already made): its streams, mirrored to the
/// store, filled with the session's own notifications from `rx`.
pub(super) fn local_session(
    state: &AppState,
    shared: &Shared,
    id: &str,
    conn: Arc<Connection>,
    rx: mpsc::Receiver<Outgoing>,
    caller: &Caller,
) -> Arc<Session> {
    let mirror = Mirror {
        shared: shared.clone(),
        session: id.to_owned(),
        ttl: state.config.session_idle_timeout,
    };
    let streams = SessionStreams::new(
        state.config.max_streams_per_session,
        state.config.max_stored_events,
        Some(mirror),
        state.config.polling_for(conn.version()),
    );
    streams.fill_standalone(rx);
    // The session id is a secret of its client's, the same on every replica.
    conn.own_tasks_as(format!("session:{id}"));
    Arc::new(Session {
        conn,
        streams: Some(streams),
        sse_sink: None,
        sse_inbox: None,
        last_seen: Mutex::new(Instant::now()),
        principal: caller.principal().cloned(),
    })
}

/// Writes a new session's record.
pub(super) async fn create(
    state: &AppState,
    shared: &Shared,
    id: &str,
    conn: &Connection,
    caller: &Caller,
) -> Result<(), StoreError> {
    let record = encode_record(&conn.snapshot(), owner_of(caller).as_deref());
    let ttl = state.config.session_idle_timeout;
    shared.store.save(id.to_owned(), record, ttl).await
}

/// The session `id` as the store has it (its lifetime renewed), in a local copy made or
/// brought up to date; 404 if it does not exist or belongs to another principal, 503 if
/// the store fails.
// A `Response` is the natural error of a request guard.
#[allow(clippy::result_large_err)]
pub(super) async fn find(
    state: &Arc<AppState>,
    shared: &Shared,
    id: &str,
    caller: &Caller,
) -> Result<Arc<Session>, Response> {
    let local = lock(&state.sessions).get(id).cloned();
    if let Some(s) = &local {
        // HTTP+SSE sessions (2024-11-05) stay with their stream's replica.
        if s.streams.is_none() {
            return match caller.owns(s.principal.as_ref()) {
                true => Ok(Arc::clone(s)),
                false => Err(session_not_found()),
            };
        }
    }
    let ttl = state.config.session_idle_timeout;
    let record = match shared.store.load(id.to_owned(), ttl).await {
        Ok(Some(record)) => record,
        Ok(None) => {
            // Ended or expired elsewhere: so here too.
            forget(state, id);
            return Err(session_not_found());
        }
        Err(e) => return Err(store_unavailable(&e)),
    };
    let Some((snapshot, owner)) = decode_record(&record) else {
        return Err(session_not_found());
    };
    if owner != owner_of(caller) {
        return Err(session_not_found());
    }
    let session = match local {
        Some(s) => s,
        None => {
            let (tx, rx) = mpsc::channel(state.server.limits().outbound_queue);
            let conn = Connection::new_replica(state.server.clone(), tx, &shared.replica);
            let made = local_session(state, shared, id, conn, rx, caller);
            let mut sessions = lock(&state.sessions);
            Arc::clone(sessions.entry(id.to_owned()).or_insert(made))
        }
    };
    session.conn.restore(snapshot);
    *lock(&session.last_seen) = Instant::now();
    Ok(session)
}

/// An HTTP+SSE session's record (2024-11-05): which transport, and whose. The session
/// itself lives with its stream, on one replica; the record lets every replica take its
/// POSTs. Streamable HTTP lookups (`decode_record`) do not read it as one of theirs.
fn sse_record(caller: &Caller) -> String {
    json!({"transport": "sse", "owner": owner_of(caller)}).to_string()
}

/// Writes a new HTTP+SSE session's record.
pub(super) async fn create_sse(
    state: &AppState,
    shared: &Shared,
    id: &str,
    caller: &Caller,
) -> Result<(), StoreError> {
    let ttl = state.config.session_idle_timeout;
    shared
        .store
        .save(id.to_owned(), sse_record(caller), ttl)
        .await
}

/// Removes an HTTP+SSE session's record (its stream ended), in the background.
pub(super) fn end_sse(shared: &Shared, id: &str) {
    let (store, id) = (Arc::clone(&shared.store), id.to_owned());
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async move {
            if let Err(e) = store.remove(id.clone()).await {
                tracing::warn!("HTTP+SSE session {id}: record not removed ({e}); it expires");
            }
        });
    }
}

/// A POST to an HTTP+SSE session with a session store: sent on the store's channel to
/// whichever replica holds the session's stream (202), even when that is this one — so
/// that a message POSTed here cannot overtake one POSTed to another replica before it.
/// 404 for an unknown session or another principal's, 503 when the store fails.
pub(super) async fn post_sse(
    state: &AppState,
    shared: &Shared,
    id: &str,
    caller: &Caller,
    head: &axum::http::request::Parts,
    body: &[u8],
) -> Response {
    let ttl = state.config.session_idle_timeout;
    let record = match shared.store.load(id.to_owned(), ttl).await {
        Ok(Some(record)) => record,
        Ok(None) => return session_not_found(),
        Err(e) => return store_unavailable(&e),
    };
    let ours = serde_json::from_str::<Value>(&record).is_ok_and(|r| {
        r.get("transport").and_then(Value::as_str) == Some("sse")
            && r.get("owner").and_then(Value::as_str) == owner_of(caller).as_deref()
    });
    if !ours {
        return session_not_found();
    }
    // JSON is UTF-8; the message travels as a JSON string.
    let Ok(text) = std::str::from_utf8(body) else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            None,
            ErrorCode::PARSE_ERROR,
            "Parse error: the body is not UTF-8",
        );
    };
    let note = json!({
        "kind": "sse",
        "session": id,
        "message": text,
        "head": head_json(head),
        "from": &*shared.replica,
    });
    match shared.store.publish(Bytes::from(note.to_string())).await {
        Ok(()) => StatusCode::ACCEPTED.into_response(),
        Err(e) => store_unavailable(&e),
    }
}

/// Request headers that never travel between replicas: credentials, which the replica
/// that took the POST verified, stay out of the store.
const HEADERS_KEPT_BACK: [axum::http::HeaderName; 3] = [
    axum::http::header::AUTHORIZATION,
    axum::http::header::COOKIE,
    axum::http::header::PROXY_AUTHORIZATION,
];

/// An HTTP+SSE POST's head as it travels to the stream's replica, so that the handler
/// there reads the request's headers as it would have on the replica that took it (the
/// request's extensions stay there: they are not data). Header values that are not text
/// are left out.
fn head_json(head: &axum::http::request::Parts) -> Value {
    let headers: Vec<Value> = head
        .headers
        .iter()
        .filter(|(name, _)| !HEADERS_KEPT_BACK.contains(name))
        .filter_map(|(name, value)| Some(json!([name.as_str(), value.to_str().ok()?])))
        .collect();
    json!({"method": head.method.as_str(), "uri": head.uri.to_string(), "headers": headers})
}

/// The head [`head_json`] wrote, read back; `None` if it is not one.
pub(super) fn head_of(note: &Value) -> Option<axum::http::request::Parts> {
    let head = note.get("head")?;
    let mut request = axum::http::Request::builder()
        .method(head.get("method")?.as_str()?)
        .uri(head.get("uri")?.as_str()?);
    for pair in head.get("headers")?.as_array()? {
        if let [Value::String(name), Value::String(value)] = pair.as_array()?.as_slice() {
            request = request.header(name.as_str(), value.as_str());
        }
    }
    Some(request.body(()).ok()?.into_parts().0)
}

/// Whether this replica hears the others, waiting a second for it if not yet.
pub(super) async fn hearing(shared: &Shared) -> bool {
    use std::sync::atomic::Ordering;
    let started = Instant::now();
    while !shared.listening.load(Ordering::SeqCst) {
        if started.elapsed() > Duration::from_secs(1) {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    true
}

/// Ends the HTTP+SSE sessions whose stream is here: with the replicas' channel lost, what
/// their clients POST to other replicas no longer reaches them. Their streams end, which
/// their clients see (and can connect again), instead of answers that never come.
fn end_sse_sessions(state: &AppState) {
    let ended: Vec<Arc<Session>> = {
        let mut sessions = lock(&state.sessions);
        let ids: Vec<String> = sessions
            .iter()
            .filter(|(_, s)| s.sse_inbox.is_some())
            .map(|(id, _)| id.clone())
            .collect();
        ids.iter().filter_map(|id| sessions.remove(id)).collect()
    };
    for session in ended {
        session.conn.close();
    }
}

/// Drops the local copy of a session (ended elsewhere): its connection closes, its GET
/// stream ends.
pub(super) fn forget(state: &AppState, id: &str) {
    let removed = lock(&state.sessions).remove(id);
    if let Some(session) = removed {
        session.conn.close();
        if let Some(streams) = &session.streams {
            streams.standalone().finish();
        }
    }
}

/// Ends session `id` everywhere (DELETE): its record, and every replica's copy.
pub(super) async fn end(state: &Arc<AppState>, shared: &Shared, id: &str) -> Response {
    if let Err(e) = shared.store.remove(id.to_owned()).await {
        return store_unavailable(&e);
    }
    forget(state, id);
    publish(shared, json!({"kind": "end", "session": id})).await;
    StatusCode::OK.into_response()
}

/// What a request did to a session's state, written back once it is admitted (its
/// effect on the lifecycle, log level and subscriptions is known by then).
pub(super) struct SessionSync<'a> {
    pub(super) state: &'a AppState,
    pub(super) shared: &'a Shared,
    pub(super) id: &'a str,
    pub(super) before: Snapshot,
    pub(super) caller: &'a Caller,
}

impl SessionSync<'_> {
    pub(super) async fn after_admission(self, conn: &Connection) {
        let now = conn.snapshot();
        if now == self.before {
            return;
        }
        let record = encode_record(&now, owner_of(self.caller).as_deref());
        let ttl = self.state.config.session_idle_timeout;
        let saved = self
            .shared
            .store
            .save(self.id.to_owned(), record, ttl)
            .await;
        match saved {
            Ok(()) => {
                let note = json!({"kind": "state", "session": self.id});
                publish(self.shared, note).await;
            }
            Err(e) => tracing::error!("session {} state not saved: {e}", self.id),
        }
    }
}

/// A message this replica cannot act on, sent to the one that can: an answer to a
/// server-to-client request another replica sent (answered 202 here), or a cancellation
/// of a request another replica runs (also handled here, where it changes nothing). In a
/// batch (2025-03-26) each such element is sent on, and the batch is then handled here
/// as a whole (the answers it does not await are ignored, as any unknown answer is).
pub(super) async fn relay(
    shared: &Shared,
    session: &Session,
    id: &str,
    frame: &Frame,
    body: &[u8],
) -> Option<Response> {
    match frame {
        Frame::Single(Ok(message)) => {
            let text = String::from_utf8_lossy(body);
            let kind = elsewhere(session, message)?;
            let note = json!({"kind": kind, "session": id, "message": text});
            publish(shared, note).await;
            // An answer is taken (202); a cancellation also runs its course here.
            (kind == "response").then(|| StatusCode::ACCEPTED.into_response())
        }
        Frame::Batch(items) => {
            let mut texts: Option<Vec<Value>> = None;
            for (i, item) in items.iter().enumerate() {
                let Some(kind) = item.as_ref().ok().and_then(|m| elsewhere(session, m)) else {
                    continue;
                };
                // The element as the client wrote it (the batch is read once, if needed).
                let texts = texts.get_or_insert_with(|| match serde_json::from_slice(body) {
                    Ok(Value::Array(elements)) => elements,
                    _ => Vec::new(),
                });
                let Some(element) = texts.get(i) else {
                    continue;
                };
                let note = json!({"kind": kind, "session": id, "message": element.to_string()});
                publish(shared, note).await;
            }
            None
        }
        Frame::Single(Err(_)) => None,
    }
}

/// Whether another replica must act on `message`: `"response"` for an answer to a
/// request this replica did not send, `"cancel"` for a cancellation of a request it does
/// not run.
fn elsewhere(session: &Session, message: &Message) -> Option<&'static str> {
    match message {
        Message::Response { id: answered, .. } if !session.conn.awaits(answered) => {
            Some("response")
        }
        Message::Notification { method, params }
            if McpMethod::from_name(method) == Some(McpMethod::Cancelled) =>
        {
            let target = params
                .as_ref()
                .and_then(|p| p.get("requestId"))
                .and_then(RequestId::from_value);
            target
                .is_some_and(|t| !session.conn.runs(&t))
                .then_some("cancel")
        }
        _ => None,
    }
}

/// Sends `note` to the other replicas; whether the store took it.
/// Tells the other replicas that `stream` of `session` was resumed here (`Last-Event-ID`;
/// `None`: a new GET stream was opened here): a connection still reading it there ends, as
/// a local one does (`StoredStream::reader`), and, when `get`, the session's GET stream
/// lives here from now on (see `SessionStreams::is_home`).
pub(super) async fn announce_taken_over(
    shared: &Shared,
    session: &str,
    stream: Option<u64>,
    get: bool,
) {
    let note = json!({"kind": "takeover", "session": session, "stream": stream, "get": get});
    publish(shared, note).await;
}

async fn publish(shared: &Shared, mut note: Value) -> bool {
    if let Value::Object(fields) = &mut note {
        fields.insert("from".into(), Value::String(shared.replica.to_string()));
    }
    match shared.store.publish(Bytes::from(note.to_string())).await {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!("message to the other replicas lost: {e}");
            false
        }
    }
}

fn event_json(event: &ServerEvent) -> Value {
    match event {
        ServerEvent::ToolsChanged => json!({"kind": "event", "event": "tools"}),
        ServerEvent::PromptsChanged => json!({"kind": "event", "event": "prompts"}),
        ServerEvent::ResourcesChanged => json!({"kind": "event", "event": "resources"}),
        ServerEvent::ResourceUpdated(uri) => {
            json!({"kind": "event", "event": "updated", "uri": uri})
        }
    }
}

fn event_of(note: &Value) -> Option<ServerEvent> {
    Some(match note.get("event")?.as_str()? {
        "tools" => ServerEvent::ToolsChanged,
        "prompts" => ServerEvent::PromptsChanged,
        "resources" => ServerEvent::ResourcesChanged,
        "updated" => ServerEvent::ResourceUpdated(note.get("uri")?.as_str()?.to_owned()),
        _ => return None,
    })
}

/// How long to wait before subscribing again after the store's channel was lost.
const RESUBSCRIBE: Duration = Duration::from_millis(250);

/// The replica's two tasks: its server's events published to the others, and the
/// others' messages acted on. Both end with the transport.
pub(super) fn spawn(state: &Arc<AppState>, shared: Shared) {
    // A `tasks/cancel` or `tasks/update` served here for a task whose handler runs on
    // another replica reaches it on the channel (every replica hears it; the one that
    // runs the task acts on it).
    #[cfg(feature = "tasks")]
    let relay_to = shared.clone();
    #[cfg(feature = "tasks")]
    state
        .server
        .tasks()
        .set_relay(Arc::new(move |signal: TaskSignal| {
            let shared = relay_to.clone();
            Box::pin(async move { publish(&shared, signal.to_note()).await })
        }));
    // Alive, for the others: a stream this replica writes is waited on while it is.
    let (beating, closing) = (shared.clone(), state.closing.clone());
    tokio::spawn(async move {
        let key = replica_key(&beating.replica);
        loop {
            let beat = beating
                .store
                .save(key.clone(), "alive".into(), HEARTBEAT_TTL);
            if let Err(e) = beat.await {
                tracing::debug!("heartbeat not stored: {e}");
            }
            tokio::select! {
                () = tokio::time::sleep(HEARTBEAT_EVERY) => {}
                () = closing.cancelled() => return,
            }
        }
    });
    let mut events = state.server.events();
    let out = shared.clone();
    let closing = state.closing.clone();
    tokio::spawn(async move {
        loop {
            let event = tokio::select! {
                e = events.recv() => e,
                () = closing.cancelled() => return,
            };
            match event {
                Ok(event) => {
                    // While the store is away (a restart), the event waits for it, for a
                    // few seconds at most: GET streams on other replicas would miss it.
                    let (note, started) = (event_json(&event), Instant::now());
                    while !publish(&out, note.clone()).await && started.elapsed() < HEARTBEAT_TTL {
                        tokio::time::sleep(RESUBSCRIBE).await;
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(_) => return,
            }
        }
    });
    let weak = Arc::downgrade(state);
    let closing = state.closing.clone();
    tokio::spawn(async move {
        tokio::select! {
            () = listen(weak, shared) => {}
            () = closing.cancelled() => {}
        }
    });
}

async fn listen(state: Weak<AppState>, shared: Shared) {
    use std::sync::atomic::Ordering;
    loop {
        match shared.store.subscribe().await {
            Ok(mut messages) => {
                shared.listening.store(true, Ordering::SeqCst);
                while let Some(message) = messages.next().await {
                    let Some(state) = state.upgrade() else { return };
                    on_message(&state, &shared, &message).await;
                }
                shared.listening.store(false, Ordering::SeqCst);
                tracing::warn!("lost the replicas' channel; subscribing again");
                if let Some(state) = state.upgrade() {
                    end_sse_sessions(&state);
                }
            }
            Err(e) => tracing::warn!("cannot hear the other replicas: {e}; retrying"),
        }
        if state.strong_count() == 0 {
            return;
        }
        tokio::time::sleep(RESUBSCRIBE).await;
    }
}

async fn on_message(state: &Arc<AppState>, shared: &Shared, message: &[u8]) {
    let Ok(note) = serde_json::from_slice::<Value>(message) else {
        return;
    };
    let kind = note.get("kind").and_then(Value::as_str).unwrap_or_default();
    if kind == "sse" {
        // An HTTP+SSE message, from any replica (this one included): to the session's
        // inbox, if its stream is here.
        let (Some(id), Some(text)) = (
            note.get("session").and_then(Value::as_str),
            note.get("message").and_then(Value::as_str),
        ) else {
            return;
        };
        let session = lock(&state.sessions).get(id).cloned();
        let Some(session) = session else { return };
        let Some(inbox) = &session.sse_inbox else {
            return;
        };
        let relayed = (Bytes::copy_from_slice(text.as_bytes()), head_of(&note));
        if inbox.try_send(relayed).is_err() {
            // Its client posts on and does not read its stream: the session ends (its
            // stream closes) rather than lose a message in silence.
            tracing::warn!("HTTP+SSE session {id}: its inbox is full; the session ends");
            lock(&state.sessions).remove(id);
            session.conn.close();
        }
        return;
    }
    if note.get("from").and_then(Value::as_str) == Some(&*shared.replica) {
        return;
    }
    #[cfg(feature = "tasks")]
    if kind == "task" {
        // Tasks are not a session's: any replica may run the handler.
        if let Some(signal) = TaskSignal::from_note(&note) {
            let server = &state.server;
            server.tasks().relayed(signal, server.info()).await;
        }
        return;
    }
    if kind == "event" {
        let Some(event) = event_of(&note) else { return };
        // To the sessions whose GET stream lives here (the others hear it where theirs
        // does), open now or between two of its connections.
        let open: Vec<Arc<Session>> = lock(&state.sessions)
            .values()
            .filter(|s| s.streams.as_ref().is_some_and(SessionStreams::is_home))
            .cloned()
            .collect();
        for session in open {
            session.conn.deliver(event.clone()).await;
        }
        return;
    }
    let Some(id) = note.get("session").and_then(Value::as_str) else {
        return;
    };
    let Some(session) = lock(&state.sessions).get(id).cloned() else {
        return;
    };
    match kind {
        "response" | "cancel" => {
            let Some(text) = note.get("message").and_then(Value::as_str) else {
                return;
            };
            // Neither answers anything: the sink is the closed channel of stateless
            // requests.
            session
                .conn
                .handle_frame(text.as_bytes(), &state.no_session)
                .await;
        }
        "state" => {
            let ttl = state.config.session_idle_timeout;
            match shared.store.load(id.to_owned(), ttl).await {
                Ok(Some(record)) => {
                    if let Some((snapshot, _)) = decode_record(&record) {
                        session.conn.restore(snapshot);
                    }
                }
                Ok(None) => forget(state, id),
                Err(e) => tracing::warn!("session {id} not refreshed: {e}"),
            }
        }
        "end" => forget(state, id),
        "takeover" => {
            // The client resumed this stream on another replica: the connection reading it
            // here is one it lost. A GET stream there: the session's GET stream lives
            // there now.
            let Some(streams) = session.streams.as_ref() else {
                return;
            };
            if let Some(stream) = note.get("stream").and_then(Value::as_u64) {
                streams.end_connection(stream);
            }
            if note.get("get").and_then(Value::as_bool) == Some(true) {
                streams.set_home(false);
            }
        }
        _ => {}
    }
}
