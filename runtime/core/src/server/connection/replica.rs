//! What a connection shares with the other replicas of a server (HTTP with a session
//! store): a snapshot of its state to save and restore, and the lookups that route a
//! message to the replica that can take it.

use super::*;

impl Connection {
    /// A session's connection on one replica of a group: its server-to-client request
    /// ids carry `replica` (so that ids asked by two replicas of one session never meet).
    #[doc(hidden)]
    pub fn new_replica(
        server: Server,
        out: mpsc::Sender<Outgoing>,
        replica: &str,
    ) -> Arc<Connection> {
        let mut conn = Connection::stateless(server, out);
        if let Some(c) = Arc::get_mut(&mut conn) {
            c.pending = Arc::new(Pending::prefixed(replica));
            c.tasks_end_with_it = true;
        }
        Connection::forward_events(&conn);
        conn
    }

    /// Names the owner of the tasks a legacy client creates through this connection: a
    /// session shared by replicas owns them by its id, so that its `tasks/*` requests
    /// find them on any replica.
    #[doc(hidden)]
    pub fn own_tasks_as(&self, owner: String) {
        *lock(&self.task_owner) = owner;
    }

    /// The session's state, as replicas share it.
    #[doc(hidden)]
    pub fn snapshot(&self) -> Snapshot {
        let state = lock(&self.state);
        Snapshot {
            lifecycle: state.lifecycle,
            client_capabilities: Value::clone(&state.client_capabilities),
            log_level: self.log_level.get(),
            subscriptions: state.subscriptions.clone(),
        }
    }

    /// Takes the state another replica stored.
    #[doc(hidden)]
    pub fn restore(&self, snapshot: Snapshot) {
        let before = {
            let mut state = lock(&self.state);
            state.lifecycle = snapshot.lifecycle;
            state.client_capabilities = Arc::new(snapshot.client_capabilities);
            std::mem::replace(&mut state.subscriptions, snapshot.subscriptions.clone())
        };
        if let Some(level) = snapshot.log_level {
            self.log_level.set(level);
        }
        // This copy's part in the server's interest counts follows the session's.
        for uri in snapshot.subscriptions.difference(&before) {
            self.server.interest_added(uri);
        }
        for uri in before.difference(&snapshot.subscriptions) {
            self.server.interest_removed(uri);
        }
    }

    /// Cancelled when the connection is closed (an HTTP+SSE stream ends with it).
    #[doc(hidden)]
    pub fn closed_token(&self) -> CancellationToken {
        self.closed.clone()
    }

    /// Whether a server-to-client request with this id waits for its answer here.
    #[doc(hidden)]
    pub fn awaits(&self, id: &RequestId) -> bool {
        self.pending.contains(id)
    }

    /// Whether a request with this id runs here.
    #[doc(hidden)]
    pub fn runs(&self, id: &RequestId) -> bool {
        lock(&self.in_flight).contains_key(id)
    }

    /// Sends a server event that happened on another replica to this peer (as if it
    /// had happened here).
    #[doc(hidden)]
    pub async fn deliver(&self, event: ServerEvent) {
        if let Some(message) = self.message_for(event) {
            self.send(message).await;
        }
    }
}
