//! The server's change announcements forwarded to one peer, in its revision, once its
//! session operates; only what the server declared and the peer subscribed to.

use super::*;

impl Connection {
    /// Forwards the server's change announcements to this peer, in its revision, once
    /// the session is operating (legacy) — only what the server declared.
    pub(super) fn forward_events(conn: &Arc<Connection>) {
        let mut events = conn.server.events();
        let weak = Arc::downgrade(conn);
        let closed = conn.closed.clone();
        tokio::spawn(async move {
            loop {
                let event = match first(closed.cancelled(), events.recv()).await {
                    First::A(()) => return,
                    First::B(e) => e,
                };
                let batch = match event {
                    Ok(e) => vec![e],
                    // Announcements were missed (the server changed things faster than
                    // this peer took them): announce everything that may have changed,
                    // so that no change a client relies on goes unannounced.
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        let Some(conn) = weak.upgrade() else { return };
                        let server = &conn.server;
                        let mut all: Vec<ServerEvent> = [
                            ("tools", ServerEvent::ToolsChanged),
                            ("prompts", ServerEvent::PromptsChanged),
                            ("resources", ServerEvent::ResourcesChanged),
                        ]
                        .into_iter()
                        .filter(|(capability, _)| server.declares(capability))
                        .map(|(_, event)| event)
                        .collect();
                        let subscribed = lock(&conn.state).subscriptions.clone();
                        all.extend(subscribed.into_iter().map(ServerEvent::ResourceUpdated));
                        all
                    }
                    Err(_) => return,
                };
                let Some(conn) = weak.upgrade() else { return };
                for event in batch {
                    let Some(message) = conn.message_for(event) else {
                        continue;
                    };
                    conn.send(message).await;
                }
            }
        });
    }

    /// The notification announcing `event` to this peer: only once the session is
    /// operating (legacy), only what the server declared (with `listChanged`), and an
    /// update only of a resource the peer subscribed to.
    pub(super) fn message_for(&self, event: ServerEvent) -> Option<Outgoing> {
        let (lifecycle, subscribed) = {
            let state = lock(&self.state);
            let subscribed = matches!(&event, ServerEvent::ResourceUpdated(uri) if state.subscriptions.contains(uri));
            (state.lifecycle, subscribed)
        };
        let Lifecycle::Operating(_) = lifecycle else {
            return None;
        };
        let server = &self.server;
        // A client must not hear of lists it was told do not exist.
        Some(match event {
            ServerEvent::ToolsChanged if server.declares("tools") => {
                wire::notification("notifications/tools/list_changed", None)
            }
            ServerEvent::PromptsChanged if server.declares("prompts") => {
                wire::notification("notifications/prompts/list_changed", None)
            }
            ServerEvent::ResourcesChanged if server.declares("resources") => {
                wire::notification("notifications/resources/list_changed", None)
            }
            ServerEvent::ToolsChanged
            | ServerEvent::PromptsChanged
            | ServerEvent::ResourcesChanged => return None,
            ServerEvent::ResourceUpdated(uri) if subscribed => {
                wire::notification("notifications/resources/updated", Some(json!({"uri": uri})))
            }
            ServerEvent::ResourceUpdated(_) => return None,
        })
    }
}
