//! What a handler gets besides its arguments: the revision in force, the client's
//! capabilities, and the means to report progress, log and notice cancellation. The
//! runtime routes what a handler emits to the right place for the transport and era.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use crate::cancel::CancellationToken;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::asks::{self, Ask, Asker};
use crate::auth::Principal;
use crate::jsonrpc::{self, Outgoing, RequestId, RpcError};
use crate::model::LogLevel;
use crate::server::Server;
use crate::shape;
use crate::version::ProtocolVersion;

/// A session's minimum log level, shared with its running handlers so that a
/// `logging/setLevel` takes effect at once. 0 means "not set".
#[derive(Clone, Debug, Default)]
pub struct SharedLogLevel(Arc<AtomicU8>);

impl SharedLogLevel {
    /// Sets the level.
    pub fn set(&self, level: LogLevel) {
        self.0.store(level as u8 + 1, Ordering::Relaxed);
    }

    /// The level, if set.
    pub fn get(&self) -> Option<LogLevel> {
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            n => LOG_LEVELS.get(usize::from(n - 1)).copied(),
        }
    }
}

const LOG_LEVELS: [LogLevel; 8] = [
    LogLevel::Debug,
    LogLevel::Info,
    LogLevel::Notice,
    LogLevel::Warning,
    LogLevel::Error,
    LogLevel::Critical,
    LogLevel::Alert,
    LogLevel::Emergency,
];

/// Which log messages may be sent for a request.
#[derive(Clone, Debug)]
pub enum LogFilter {
    /// Legacy session: the session's level (everything until `logging/setLevel`).
    Session(SharedLogLevel),
    /// Modern request that named a level in `_meta`.
    AtLeast(LogLevel),
    /// Modern request without a level: no log messages at all.
    Off,
}

impl LogFilter {
    fn allows(&self, level: LogLevel) -> bool {
        match self {
            LogFilter::Session(shared) => shared.get().is_none_or(|min| level >= min),
            LogFilter::AtLeast(min) => level >= *min,
            LogFilter::Off => false,
        }
    }
}

/// The context of one request.
#[derive(Clone, Debug)]
pub struct Context {
    server: Server,
    version: ProtocolVersion,
    client_capabilities: Value,
    progress_token: Option<Value>,
    log: LogFilter,
    out: mpsc::Sender<Outgoing>,
    cancel: CancellationToken,
    asker: Asker,
    request_id: Option<RequestId>,
    principal: Option<Arc<Principal>>,
}

impl Context {
    // Every field is set by the session layer at admission; a builder would only move
    // the list elsewhere.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        server: Server,
        version: ProtocolVersion,
        client_capabilities: Value,
        progress_token: Option<Value>,
        log: LogFilter,
        out: mpsc::Sender<Outgoing>,
        cancel: CancellationToken,
        asker: Asker,
    ) -> Context {
        Context {
            server,
            version,
            client_capabilities,
            progress_token,
            log,
            out,
            cancel,
            asker,
            request_id: None,
            principal: None,
        }
    }

    /// The caller, as the HTTP transport authenticated it (see [`crate::auth`]).
    pub(crate) fn with_principal(mut self, principal: Option<Arc<Principal>>) -> Context {
        self.principal = principal;
        self
    }

    /// Who sent this request: the principal its access token names, when the HTTP server
    /// is a resource server ([`crate::auth::ResourceServer`]); `None` on stdio and on an
    /// HTTP server without authorization.
    pub fn principal(&self) -> Option<&Principal> {
        self.principal.as_deref()
    }

    pub(crate) fn with_request_id(mut self, id: RequestId) -> Context {
        self.request_id = Some(id);
        self
    }

    /// The JSON-RPC id of the request being served.
    pub fn request_id(&self) -> Option<&RequestId> {
        self.request_id.as_ref()
    }

    /// Asks the user for input (`elicitation/create`, form mode; 2025-06-18+) and returns
    /// the client's `ElicitResult` (`action`, `content`). Fails without sending anything
    /// if the client did not declare `elicitation`.
    pub async fn elicit(
        &self,
        message: impl Into<String>,
        requested_schema: Value,
    ) -> Result<Value, RpcError> {
        self.ask_one(
            None,
            Ask::Elicit {
                message: message.into(),
                requested_schema,
            },
        )
        .await
    }

    /// Sends the user to a URL (`elicitation/create`, URL mode; 2025-11-25+; the client
    /// must have declared `elicitation.url`) and returns the client's `ElicitResult`.
    pub async fn elicit_url(
        &self,
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> Result<Value, RpcError> {
        self.ask_one(
            None,
            Ask::ElicitUrl {
                message: message.into(),
                url: url.into(),
                elicitation_id: elicitation_id.into(),
            },
        )
        .await
    }

    /// Tells the client that a URL-mode elicitation finished
    /// (`notifications/elicitation/complete`). Only 2025-11-25 has this notification; in
    /// other revisions nothing is sent.
    pub async fn elicitation_complete(&self, elicitation_id: &str) {
        if self.version.features().elicitation_complete {
            self.send(jsonrpc::notification(
                "notifications/elicitation/complete",
                Some(serde_json::json!({"elicitationId": elicitation_id})),
            ))
            .await;
        }
    }

    /// Asks the client's model (`sampling/createMessage`, params as the newest revision
    /// defines them) and returns its `CreateMessageResult`.
    pub async fn create_message(&self, params: Value) -> Result<Value, RpcError> {
        self.ask_one(None, Ask::CreateMessage(params)).await
    }

    /// Asks the client for its roots and returns its `ListRootsResult`.
    pub async fn list_roots(&self) -> Result<Value, RpcError> {
        self.ask_one(None, Ask::ListRoots).await
    }

    /// Asks several things at once (one round trip in 2026-07-28; concurrent requests
    /// before). Each may carry a key naming it in `inputRequests` (default `input-N`).
    pub async fn ask(&self, asks: Vec<(Option<String>, Ask)>) -> Result<Vec<Value>, RpcError> {
        asks::ask_all(self, &self.asker, asks).await
    }

    async fn ask_one(&self, key: Option<String>, ask: Ask) -> Result<Value, RpcError> {
        let mut answers = self.ask(vec![(key, ask)]).await?;
        answers.pop().ok_or_else(|| RpcError::internal("no answer"))
    }

    pub(crate) fn asker(&self) -> &Asker {
        &self.asker
    }

    pub(crate) async fn send_request(&self, id: &RequestId, method: &str, params: Value) {
        self.send(jsonrpc::request(id, method, Some(params))).await;
    }

    /// Tells the client to stop working on a server request, without waiting (it is used
    /// in `Drop`); dropped if the peer's queue is full.
    pub(crate) fn try_send_cancel(&self, id: &RequestId, reason: &str) {
        let _ = self.out.try_send(jsonrpc::notification(
            "notifications/cancelled",
            Some(serde_json::json!({"requestId": id.to_value(), "reason": reason})),
        ));
    }

    /// The server handling this request (to announce changes, for instance).
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The revision this request is served at.
    pub fn version(&self) -> ProtocolVersion {
        self.version
    }

    /// The client's declared capabilities (an object).
    pub fn client_capabilities(&self) -> &Value {
        &self.client_capabilities
    }

    /// Whether the client declared a capability (e.g. `"sampling"`).
    pub fn client_supports(&self, capability: &str) -> bool {
        self.client_capabilities
            .get(capability)
            .is_some_and(|c| !c.is_null())
    }

    /// Reports progress, if the request asked for it (it carried a `progressToken`).
    /// Numbers are written in their shortest form (`50`, not `50.0`).
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let Some(token) = &self.progress_token else {
            return;
        };
        if let Ok(params) = shape::progress(self.version, token, progress, total, message) {
            self.send(jsonrpc::notification(
                "notifications/progress",
                Some(params),
            ))
            .await;
        }
    }

    /// Sends a log message if the session's or request's level lets it through.
    pub async fn log(&self, level: LogLevel, logger: Option<&str>, data: Value) {
        if !self.log.allows(level) {
            return;
        }
        if let Ok(params) = shape::log_message(self.version, level, logger, data) {
            self.send(jsonrpc::notification("notifications/message", Some(params)))
                .await;
        }
    }

    /// Whether the client cancelled this request (its answer will not be sent).
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Resolves when the client cancels this request.
    pub async fn cancelled(&self) {
        self.cancel.cancelled().await;
    }

    /// Sends a notification on this request's channel (crate-internal: handlers use the
    /// typed helpers above).
    pub(crate) async fn notify(&self, method: &str, params: Value) {
        self.send(jsonrpc::notification(method, Some(params))).await;
    }

    async fn send(&self, message: Outgoing) {
        if !self.cancel.is_cancelled() {
            // A closed channel means the peer is gone; there is no one to tell.
            let _ = self.out.send(message).await;
        }
    }
}
