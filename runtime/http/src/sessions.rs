//! The table of live sessions (Streamable HTTP and HTTP+SSE), the state every route shares, idle expiry and session ids.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use axum::response::Response;
use tokio::sync::mpsc;

use super::authorize::Caller;
use super::config::HttpConfig;
use super::event_store::SessionStreams;
use super::responses::{rpc_error, session_not_found, shutting_down};
use mcp_runtime::auth::Principal;
use mcp_runtime::cancel::CancellationToken;
use mcp_runtime::server::connection::Connection;
use mcp_runtime::wire::{ErrorCode, Outgoing};
use mcp_runtime::Server;

pub(super) struct Session {
    pub(super) conn: Arc<Connection>,
    /// Streamable HTTP sessions: every SSE stream's events, kept for `Last-Event-ID`.
    pub(super) streams: Option<SessionStreams>,
    /// HTTP+SSE sessions: answers go to the stream, not to the POST.
    pub(super) sse_sink: Option<mpsc::Sender<Outgoing>>,
    /// HTTP+SSE sessions of replicas sharing a store: the messages POSTed for it to any
    /// replica, in the order the store's channel relayed them, handled one at a time.
    pub(super) sse_inbox: Option<mpsc::Sender<bytes::Bytes>>,
    pub(super) last_seen: Mutex<Instant>,
    /// Who opened the session (when the server is a resource server): only the same
    /// principal may use it.
    pub(super) principal: Option<Arc<Principal>>,
}

pub(super) struct AppState {
    /// The store replicas share sessions through, if any (`HttpConfig::store`).
    pub(super) shared: Option<super::store::Shared>,
    pub(super) server: Server,
    pub(super) config: HttpConfig,
    pub(super) sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// Shutdown began: no new sessions or stateless requests (503).
    pub(super) stopping: CancellationToken,
    /// The grace period is over: whatever still runs is cancelled and every stream ends.
    pub(super) closing: CancellationToken,
    /// Stateless requests being answered (their connections are not in `sessions`).
    pub(super) stateless_active: AtomicUsize,
    /// The session channel of every stateless connection: there is no session to carry
    /// its notifications, so the receiver is gone and a send fails at once. One shared
    /// channel instead of one per request (each allocated a 1.6 KiB block).
    pub(super) no_session: mpsc::Sender<Outgoing>,
}

impl AppState {
    /// What every SSE answer of this server follows.
    pub(super) fn stream_rules(&self) -> super::responses::StreamRules {
        super::responses::StreamRules {
            keep_alive: self.config.keep_alive,
            closing: Some(self.closing.clone()),
            stream_after: self.config.keep_alive.filter(|period| !period.is_zero()),
        }
    }

    /// Waits until no request is running (in sessions or stateless), or `deadline`.
    pub(super) async fn drained(&self, deadline: tokio::time::Instant) {
        let sessions: Vec<Arc<Session>> = lock(&self.sessions).values().cloned().collect();
        let grace = deadline.saturating_duration_since(tokio::time::Instant::now());
        futures_util::future::join_all(sessions.iter().map(|s| s.conn.drain(grace))).await;
        while self.stateless_active.load(Ordering::SeqCst) > 0
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Ends every session and stateless request: running handlers are cancelled, their
    /// answers dropped, and every SSE stream ends.
    pub(super) fn close_all(&self) {
        self.closing.cancel();
        let sessions: Vec<Arc<Session>> = lock(&self.sessions).drain().map(|(_, s)| s).collect();
        for session in sessions {
            session.conn.close();
            if let Some(streams) = &session.streams {
                streams.standalone().finish();
            }
        }
    }
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(super) fn spawn_reaper(state: std::sync::Weak<AppState>, idle_timeout: Duration) {
    // Look twice per timeout (at most every 30 s), so a session outlives its idle time by
    // at most half of it.
    let period = (idle_timeout / 2).clamp(Duration::from_millis(10), Duration::from_secs(30));
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(period).await;
            let Some(state) = state.upgrade() else { return };
            let timeout = state.config.session_idle_timeout;
            // Shared sessions idle here are asked about (below): they may be busy on
            // another replica.
            let mut idle_shared = Vec::new();
            lock(&state.sessions).retain(|id, s| {
                let alive = lock(&s.last_seen).elapsed() < timeout;
                if alive {
                    return true;
                }
                if state.shared.is_some() && s.streams.is_some() {
                    idle_shared.push((id.clone(), Arc::clone(s)));
                    return true;
                }
                s.conn.close();
                false
            });
            if let Some(shared) = &state.shared {
                for (id, session) in idle_shared {
                    match shared.store.exists(id.clone()).await {
                        // Used elsewhere: the copy stays, its GET stream open.
                        Ok(true) => *lock(&session.last_seen) = Instant::now(),
                        // Expired (idle on every replica): it ends here too.
                        Ok(false) => super::replicas::forget(&state, &id),
                        // Asked again next time.
                        Err(e) => tracing::warn!("session {id}: {e}"),
                    }
                }
            }
        }
    });
}

/// The live session with this id, or the 404 for an unknown or ended one — or for one
/// another principal opened (see ARCHITECTURE.md, "Authorization").
// A `Response` is the natural error of a request guard; it is built once per rejection.
#[allow(clippy::result_large_err)]
pub(super) fn find_session(
    state: &AppState,
    id: &str,
    caller: &Caller,
) -> Result<Arc<Session>, Response> {
    lock(&state.sessions)
        .get(id)
        .filter(|s| caller.owns(s.principal.as_ref()))
        .cloned()
        .ok_or_else(session_not_found)
}

/// A session id: 128 bits from the OS CSPRNG, as 32 hex digits (visible ASCII).
pub(super) fn new_session_id() -> String {
    let mut bytes = [0u8; 16];
    // Without an OS random source no session id is safe to issue.
    #[allow(clippy::expect_used)]
    getrandom::getrandom(&mut bytes).expect("the OS random source is unavailable");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether a new session may open: not while shutting down (503), nor beyond
/// `HttpConfig::max_sessions` (503).
// A `Response` is the natural error of a request guard; it is built once per rejection.
#[allow(clippy::result_large_err)]
pub(super) fn room_for_a_session(state: &AppState) -> Result<(), Response> {
    if state.stopping.is_cancelled() {
        return Err(shutting_down());
    }
    if lock(&state.sessions).len() >= state.config.max_sessions {
        return Err(rpc_error(
            StatusCode::SERVICE_UNAVAILABLE,
            None,
            ErrorCode::INTERNAL_ERROR,
            "Too many sessions",
        ));
    }
    Ok(())
}
