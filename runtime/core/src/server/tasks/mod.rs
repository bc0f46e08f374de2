//! Tasks: a tool call answered at once with a task handle while its handler runs on,
//! polled and fetched later — 2025-11-25's experimental tasks and the 2026-07-28
//! `io.modelcontextprotocol/tasks` extension (SEP-2663), each offered only to a client
//! that declared it. State lives in a [`TaskStore`] (in memory by default); the running
//! handlers, their cancellation and the answers they wait for live here, in the process
//! that runs them.

pub(crate) mod call;
mod link;
pub(crate) mod methods;
mod relay;
mod store;
mod watch;
mod wire_shape;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot, Notify};

use crate::cancel::{first, CancellationToken, First};
use crate::model::Implementation;
use crate::protocol::asks::{AskError, AskErrorKind};
use crate::protocol::version::ProtocolVersion;
use crate::wire::{Outgoing, RpcError};

pub(crate) use link::TaskLink;
pub use relay::{TaskRelay, TaskSignal};
pub use store::now_ms;
pub use store::{MemoryTaskStore, TaskChange, TaskRecord, TaskStatus, TaskStore, TaskStoreError};
pub(crate) use watch::TaskWatch;

/// The 2026-07-28 extension's identifier, in capabilities (`extensions`).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// How tasks are kept; set with [`ServerBuilder::task_options`](crate::ServerBuilder::task_options).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskOptions {
    /// How long a task (and its result) is kept after creation; the handler is cancelled
    /// if it is still running then. A 2025-11-25 client may ask for less, never more.
    /// `None`: unlimited. Default: one hour.
    pub ttl: Option<Duration>,
    /// The polling interval suggested to clients. Default: 500 ms.
    pub poll_interval: Duration,
    /// Tasks one client may have at once, running or ended but not yet expired (their
    /// results take room until then): per principal when the HTTP server authenticates
    /// callers; per session for legacy clients; otherwise all unauthenticated 2026-07-28
    /// callers count as one client. Beyond it a call that would become a task is refused
    /// (`-32600`, saying why). Default: 1000.
    pub max_tasks_per_client: usize,
}

impl Default for TaskOptions {
    fn default() -> TaskOptions {
        TaskOptions {
            ttl: Some(Duration::from_secs(3600)),
            poll_interval: Duration::from_millis(500),
            max_tasks_per_client: 1000,
        }
    }
}

/// What the process knows of a task it runs (the store knows the rest).
struct Live {
    /// Cancels the handler (`tasks/cancel`, expiry).
    cancel: CancellationToken,
    /// Answers the handler waits for, by `inputRequests` key (2026-07-28).
    waiting: HashMap<String, oneshot::Sender<Value>>,
    /// The next `inputRequests` key's number: keys are never reused within a task.
    next_key: u64,
    /// Where a legacy client hears `notifications/tasks/status` (its session).
    status_to: Option<mpsc::Sender<Outgoing>>,
    /// Wakes `tasks/result` waiters when the task ends.
    ended: Arc<Notify>,
}

/// The tasks of one server.
pub struct Tasks {
    store: std::sync::RwLock<Arc<dyn TaskStore>>,
    /// The author chose the store ([`ServerBuilder::task_store`]): a session store
    /// configured on the HTTP transport does not replace it.
    store_chosen: bool,
    options: TaskOptions,
    live: Mutex<HashMap<String, Live>>,
    /// Ids are random; the counter only makes two ids of one process differ for sure.
    minted: AtomicU64,
    /// Reaches the handler of a task another replica runs (see [`TaskSignal`]).
    relay: std::sync::RwLock<Option<TaskRelay>>,
    /// Wakes `subscriptions/listen` streams watching tasks when one of this process's
    /// tasks changed (see [`TaskWatch`]).
    changed: Notify,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn store_error(e: &TaskStoreError) -> RpcError {
    RpcError::internal(format!("Internal error: {e}"))
}

impl Tasks {
    pub(crate) fn new(store: Option<Arc<dyn TaskStore>>, options: TaskOptions) -> Tasks {
        Tasks {
            store_chosen: store.is_some(),
            store: std::sync::RwLock::new(
                store.unwrap_or_else(|| Arc::new(MemoryTaskStore::new())),
            ),
            options,
            live: Mutex::new(HashMap::new()),
            minted: AtomicU64::new(0),
            relay: std::sync::RwLock::new(None),
            changed: Notify::new(),
        }
    }

    fn store(&self) -> Arc<dyn TaskStore> {
        Arc::clone(&self.store.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Keeps task state in the store replicas share (the HTTP transport's session store,
    /// when it can hold tasks), unless the author chose a store.
    #[doc(hidden)]
    pub fn share_store(&self, store: Arc<dyn TaskStore>) {
        if !self.store_chosen {
            *self.store.write().unwrap_or_else(PoisonError::into_inner) = store;
        }
    }

    fn mint_id(&self) -> String {
        let mut bytes = [0u8; 16];
        if crate::primitives::random::fill(&mut bytes).is_err() {
            // No OS randomness: the counter and the clock still make the id unique here.
            bytes[..8].copy_from_slice(&store::now_ms().to_be_bytes());
        }
        let n = self.minted.fetch_add(1, Ordering::Relaxed);
        bytes[8..]
            .iter_mut()
            .zip(n.to_be_bytes())
            .for_each(|(b, c)| *b ^= c);
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Creates a task (status `working`) for `owner`, stored before this returns, so a
    /// `tasks/get` right after the answer finds it. `requested_ttl` (a 2025-11-25
    /// client's `task.ttl`) may shorten the configured time to live, never lengthen it.
    pub(crate) async fn create(
        &self,
        owner: &str,
        v: ProtocolVersion,
        requested_ttl: Option<u64>,
        status_to: Option<mpsc::Sender<Outgoing>>,
        cancel: CancellationToken,
    ) -> Result<TaskRecord, RpcError> {
        let now = store::now_ms();
        let configured = self.options.ttl.map(store::millis);
        let ttl_ms = match (configured, requested_ttl) {
            (Some(c), Some(r)) => Some(c.min(r.max(1))),
            (None, Some(r)) => Some(r.max(1)),
            (c, None) => c,
        };
        let record = TaskRecord {
            id: self.mint_id(),
            owner: owner.to_owned(),
            version: v.as_str().to_owned(),
            status: TaskStatus::Working,
            status_message: None,
            created_at_ms: now,
            updated_at_ms: now,
            ttl_ms,
            poll_interval_ms: store::millis(self.options.poll_interval).max(1),
            result: None,
            error: None,
            input_requests: Map::new(),
        };
        lock(&self.live).insert(
            record.id.clone(),
            Live {
                cancel: cancel.clone(),
                waiting: HashMap::new(),
                next_key: 0,
                status_to,
                ended: Arc::new(Notify::new()),
            },
        );
        if let Err(e) = self
            .store()
            .insert(record.clone(), self.options.max_tasks_per_client)
            .await
        {
            lock(&self.live).remove(&record.id);
            return Err(match e {
                TaskStoreError::TooMany(_) => RpcError::new(
                    crate::wire::ErrorCode::INVALID_REQUEST,
                    format!("Invalid Request: {e}"),
                ),
                other => store_error(&other),
            });
        }
        Ok(record)
    }

    /// The record of `id` if `owner` owns it; `-32602` otherwise (an unknown, expired or
    /// foreign task look the same).
    pub(crate) async fn owned(&self, id: &str, owner: &str) -> Result<TaskRecord, RpcError> {
        match self.store().get(id).await {
            Ok(Some(r)) if r.owner == owner => Ok(r),
            Ok(_) => Err(RpcError::invalid_params(format!(
                "Failed to retrieve task: Task not found (unknown or expired task id {id:?})"
            ))),
            Err(e) => Err(store_error(&e)),
        }
    }

    pub(crate) async fn list(&self, owner: &str) -> Result<Vec<TaskRecord>, RpcError> {
        self.store().list(owner).await.map_err(|e| store_error(&e))
    }

    /// Applies a change unless the task is terminal; tells a legacy client's session
    /// when the status changed; wakes `tasks/result` waiters when it ended.
    async fn change(
        &self,
        id: &str,
        info: &Implementation,
        change: impl Fn(&mut TaskRecord) -> bool + Send + Sync + 'static,
    ) -> Option<TaskRecord> {
        let before = Arc::new(Mutex::new(None));
        let seen = Arc::clone(&before);
        let updated = self
            .store()
            .update(
                id,
                Box::new(move |r: &mut TaskRecord| {
                    *lock(&seen) = Some(r.status);
                    if r.status.is_terminal() {
                        return false;
                    }
                    change(r)
                }),
            )
            .await
            .ok()
            .flatten()?;
        self.changed.notify_waiters();
        let old = *lock(&before);
        let (status_to, ended) = {
            let mut live = lock(&self.live);
            let entry = live.get(id);
            let status_to = entry.and_then(|l| l.status_to.clone());
            let ended = entry.map(|l| Arc::clone(&l.ended));
            if updated.status.is_terminal() {
                if let Some(l) = live.remove(id) {
                    // Nothing more will be answered: drop what the handler waits for.
                    drop(l.waiting);
                }
            }
            (status_to, ended)
        };
        if old != Some(updated.status) {
            if let Some(out) = status_to {
                if let Some(note) = wire_shape::status_notification(&updated, info) {
                    let _ = out.try_send(note);
                }
            }
        }
        if updated.status.is_terminal() {
            if let Some(ended) = ended {
                ended.notify_waiters();
            }
        }
        Some(updated)
    }

    /// Sets the status message (and, between `working` and `input_required`, the status).
    pub(crate) async fn set_status(
        &self,
        id: &str,
        info: &Implementation,
        status: Option<TaskStatus>,
        message: Option<String>,
    ) {
        self.change(id, info, move |r| {
            let mut changed = false;
            if let Some(s) = status.filter(|s| !s.is_terminal()) {
                changed |= r.status != s;
                r.status = s;
            }
            if let Some(m) = &message {
                changed |= r.status_message.as_deref() != Some(m.as_str());
                r.status_message = Some(m.clone());
            }
            changed
        })
        .await;
    }

    /// Ends a task with its outcome: `completed` with the result as the request would
    /// have been answered, or `failed` with the protocol error. A cancelled task stays
    /// cancelled.
    pub(crate) async fn finish(
        &self,
        id: &str,
        info: &Implementation,
        outcome: Result<Value, RpcError>,
    ) {
        self.change(id, info, move |r| {
            match &outcome {
                Ok(result) => {
                    r.status = TaskStatus::Completed;
                    r.result = Some(result.clone());
                }
                Err(e) => {
                    r.status = TaskStatus::Failed;
                    if r.status_message.is_none() {
                        r.status_message = Some(e.message.clone());
                    }
                    r.error = Some(e.to_value());
                }
            }
            r.input_requests.clear();
            true
        })
        .await;
    }

    /// Cancels a task: the status becomes `cancelled` (unless it already ended) and the
    /// handler is told through its context. The record after it.
    pub(crate) async fn cancel(&self, id: &str, info: &Implementation) -> Option<TaskRecord> {
        let token = lock(&self.live).get(id).map(|l| l.cancel.clone());
        let after = self
            .change(id, info, |r| {
                r.status = TaskStatus::Cancelled;
                r.status_message = Some("The task was cancelled by request.".into());
                r.input_requests.clear();
                true
            })
            .await;
        if let Some(t) = token {
            t.cancel();
        } else if after.is_some()
            // Cancelled here now, and run on another replica if anywhere: its handler is
            // told there. (A task that had ended, or expired, needs no word.)
            && self.relay(TaskSignal::Cancel(id.to_owned())).await == Some(false)
        {
            tracing::warn!("task {id}: cancelled, but its handler may run on");
        }
        match after {
            Some(r) => Some(r),
            None => self.store().get(id).await.ok().flatten(),
        }
    }

    /// 2026-07-28: publishes the handler's asks as `inputRequests` (status
    /// `input_required`) and waits until the client answered each with `tasks/update`.
    pub(crate) async fn request_input(
        &self,
        id: &str,
        info: &Implementation,
        requests: Vec<(Option<String>, Value)>,
    ) -> Result<Vec<Value>, AskError> {
        let cancelled = || {
            AskError::new(
                AskErrorKind::Cancelled,
                RpcError::internal("the task ended before the client answered"),
            )
        };
        let (token, mut keyed, receivers) = {
            let mut live = lock(&self.live);
            let Some(l) = live.get_mut(id) else {
                return Err(cancelled());
            };
            let mut keyed = Map::new();
            let mut receivers = Vec::new();
            for (key, request) in requests {
                l.next_key += 1;
                let key = key.unwrap_or_else(|| format!("input-{}", l.next_key));
                let (tx, rx) = oneshot::channel();
                l.waiting.insert(key.clone(), tx);
                keyed.insert(key, request);
                receivers.push(rx);
            }
            (l.cancel.clone(), keyed, receivers)
        };
        let published = std::mem::take(&mut keyed);
        self.change(id, info, move |r| {
            r.input_requests.extend(published.clone());
            r.status = TaskStatus::InputRequired;
            true
        })
        .await;
        let all = crate::combine::join_all(receivers);
        match first(token.cancelled(), all).await {
            First::A(()) => Err(cancelled()),
            First::B(answers) => answers
                .into_iter()
                .map(|a| a.map_err(|_| cancelled()))
                .collect(),
        }
    }

    /// 2026-07-28 `tasks/update`: hands each answer to the ask waiting under its key;
    /// keys not outstanding are ignored. The answered keys leave `inputRequests` before
    /// this returns; the task is `working` again once none is left. A task another
    /// replica runs gets its answers through the replicas' channel (an error, the record
    /// unchanged, if they cannot be sent).
    pub(crate) async fn answer(
        &self,
        id: &str,
        info: &Implementation,
        responses: Map<String, Value>,
    ) -> Result<(), RpcError> {
        let mut answered = Vec::new();
        let mut elsewhere = None;
        {
            let mut live = lock(&self.live);
            match live.get_mut(id) {
                Some(l) => {
                    for (key, response) in responses {
                        if let Some(tx) = l.waiting.remove(&key) {
                            // The handler may have stopped waiting (cancelled).
                            let _ = tx.send(response);
                            answered.push(key);
                        }
                    }
                }
                None => elsewhere = Some(responses),
            }
        }
        if let Some(responses) = elsewhere {
            if !self.relays() {
                // No other replica: no handler waits for them.
                return Ok(());
            }
            // Outstanding keys are those the record lists.
            let record = self.store().get(id).await.map_err(|e| store_error(&e))?;
            let Some(record) = record.filter(|r| !r.status.is_terminal()) else {
                return Ok(());
            };
            let outstanding: Map<String, Value> = responses
                .into_iter()
                .filter(|(key, _)| record.input_requests.contains_key(key))
                .collect();
            if outstanding.is_empty() {
                return Ok(());
            }
            answered = outstanding.keys().cloned().collect();
            let signal = TaskSignal::Answers(id.to_owned(), outstanding);
            match self.relay(signal).await {
                Some(true) => {}
                // No other replica: no handler waits for them.
                None => return Ok(()),
                Some(false) => {
                    return Err(RpcError::internal(
                        "Internal error: the answers could not reach the task's handler; retry",
                    ))
                }
            }
        }
        if answered.is_empty() {
            return Ok(());
        }
        self.change(id, info, move |r| {
            for key in &answered {
                r.input_requests.remove(key);
            }
            if r.input_requests.is_empty() && r.status == TaskStatus::InputRequired {
                r.status = TaskStatus::Working;
            }
            true
        })
        .await;
        Ok(())
    }

    /// Waits until the task is terminal (2025-11-25 `tasks/result`), or `stop` fires.
    pub(crate) async fn wait_terminal(
        &self,
        id: &str,
        owner: &str,
        stop: &CancellationToken,
    ) -> Result<TaskRecord, RpcError> {
        loop {
            let ended = lock(&self.live).get(id).map(|l| Arc::clone(&l.ended));
            let notified = ended.as_ref().map(|n| n.notified());
            let mut notified = notified.map(Box::pin);
            if let Some(n) = notified.as_mut() {
                n.as_mut().enable();
            }
            let record = self.owned(id, owner).await?;
            if record.status.is_terminal() {
                return Ok(record);
            }
            let wait = async {
                match notified {
                    Some(n) => n.await,
                    // Run elsewhere (another replica): poll the store.
                    None => tokio::time::sleep(self.options.poll_interval).await,
                }
            };
            if let First::A(()) = first(stop.cancelled(), wait).await {
                return Err(RpcError::internal("cancelled"));
            }
        }
    }

    /// Cancels the handler of an expired task.
    pub(crate) fn expire_later(
        self: &Arc<Self>,
        id: String,
        ttl_ms: Option<u64>,
        info: Implementation,
    ) {
        let Some(ttl) = ttl_ms else { return };
        let tasks = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(ttl)).await;
            if let Some(tasks) = tasks.upgrade() {
                tasks.cancel(&id, &info).await;
                // The record may be gone already (expired in the store): the live part
                // goes too, so that nothing of the task outlives its time to live.
                lock(&tasks.live).remove(&id);
            }
        });
    }
}

/// Whether a 2026-07-28 request declared the tasks extension in its capabilities.
pub(crate) fn declares_extension(client_capabilities: &Value) -> bool {
    client_capabilities
        .get("extensions")
        .and_then(|e| e.get(TASKS_EXTENSION))
        .is_some_and(|c| !c.is_null())
}

/// `-32021` naming the tasks extension.
pub(crate) fn extension_required(what: &str) -> RpcError {
    RpcError::new(
        crate::wire::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("Missing required client capability: extension {TASKS_EXTENSION} ({what})"),
    )
    .with_data(serde_json::json!({
        "requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}
    }))
}
