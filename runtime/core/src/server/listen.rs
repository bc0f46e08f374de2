//! `subscriptions/listen` (2026-07-28): a request that stays open and carries the change
//! notifications its filter asks for, and, with the tasks extension, `notifications/tasks`
//! for the tasks it names.

use serde_json::{json, Map, Value};
use tokio::sync::broadcast;

use super::router::check_params;
#[cfg(feature = "tasks")]
use super::tasks::{declares_extension, extension_required, TaskWatch};
use super::{Server, ServerEvent, SUBSCRIPTION_ID};
use crate::cancel::{first, First};
use crate::protocol::shape::{self, by_revision};
use crate::protocol::version::ProtocolVersion;
use crate::server::context::Context;
use crate::wire::{self, Encoded, RequestId, RpcError};

impl Server {
    /// `subscriptions/listen` (2026-07-28): acknowledges the filter it honours, then
    /// forwards the matching change notifications, each tagged with the subscription id,
    /// until the client cancels or goes away (then nothing more is sent), or the
    /// connection drains (then the subscription ends with its result).
    pub(super) async fn listen(
        &self,
        v: ProtocolVersion,
        params: Option<&Value>,
        ctx: Context,
    ) -> Result<Encoded, RpcError> {
        // Only modern revisions have this method (admission checked the revision's table).
        by_revision!(v, where modern, |m| check_params::<m::methods::SubscriptionsListen>(
            params
        ), else Err(RpcError::method_not_found("subscriptions/listen")))?;
        let filter = params
            .and_then(|p| p.get("notifications"))
            .cloned()
            .unwrap_or_else(|| json!({}));
        let wants = |key: &str| filter.get(key).and_then(Value::as_bool) == Some(true);
        let mut honoured = Map::new();
        if wants("toolsListChanged") && self.declares("tools") {
            honoured.insert("toolsListChanged".into(), json!(true));
        }
        if wants("promptsListChanged") && self.declares("prompts") {
            honoured.insert("promptsListChanged".into(), json!(true));
        }
        if wants("resourcesListChanged") && self.declares("resources") {
            honoured.insert("resourcesListChanged".into(), json!(true));
        }
        let uris = wire::strings::<Vec<String>>(filter.get("resourceSubscriptions"));
        let _interest = if !uris.is_empty() && self.declares("resources") {
            honoured.insert("resourceSubscriptions".into(), json!(uris));
            Some(Interest::new(self, &uris))
        } else {
            None
        };
        // The tasks extension's `taskIds` (SEP-2663): only for a client that declared the
        // extension (`-32021` otherwise, a MUST), only for tasks of its own. Without the
        // feature `tasks`, ignored as by a server that offers no tasks.
        #[cfg(feature = "tasks")]
        let task_ids = wire::strings::<Vec<String>>(filter.get("taskIds"));
        #[cfg(feature = "tasks")]
        let mut watch = None;
        #[cfg(feature = "tasks")]
        if !task_ids.is_empty() && self.offers_tasks() {
            if !declares_extension(ctx.client_capabilities()) {
                return Err(extension_required("subscriptions/listen with taskIds"));
            }
            let w = TaskWatch::new(self.tasks(), &task_ids, &ctx.task_owner()).await;
            if !w.is_empty() {
                honoured.insert("taskIds".into(), json!(w.ids()));
                watch = Some(w);
            }
        }
        // The spec names the listen request's own JSON-RPC id as the subscription id.
        let id = ctx.request_id().map_or(Value::Null, RequestId::to_value);
        let tag = json!({SUBSCRIPTION_ID: id});
        let mut events = self.events();
        ctx.notify(
            "notifications/subscriptions/acknowledged",
            json!({"_meta": tag, "notifications": honoured}),
        )
        .await;
        #[cfg(feature = "tasks")]
        let tasks = self.tasks();
        loop {
            #[cfg(feature = "tasks")]
            let woken = {
                // Registered before the tasks are read: a change meanwhile is not missed.
                let task_changed = tasks.next_change();
                if let Some(w) = &mut watch {
                    for params in w.changes(tasks, v, &tag).await {
                        match params {
                            Ok(params) => ctx.notify("notifications/tasks", params).await,
                            Err(e) => tracing::warn!("a task status notification: {e}"),
                        }
                    }
                }
                let watching = watch.as_ref().is_some_and(|w| !w.is_empty());
                async move {
                    if watching {
                        task_changed.await;
                    } else {
                        std::future::pending::<()>().await;
                    }
                }
            };
            #[cfg(not(feature = "tasks"))]
            let woken = std::future::pending::<()>();
            let event = match first(
                ctx.cancelled(),
                first(ctx.draining(), first(events.recv(), woken)),
            )
            .await
            {
                // Cancelled: nothing more is sent. Draining: the subscription ends with
                // its result, as at the end of the server's events.
                First::A(()) | First::B(First::A(())) => break,
                First::B(First::B(First::A(e))) => e,
                First::B(First::B(First::B(()))) => continue,
            };
            let (method, params) = match event {
                Ok(ServerEvent::ToolsChanged) if honoured.contains_key("toolsListChanged") => {
                    ("notifications/tools/list_changed", json!({"_meta": tag}))
                }
                Ok(ServerEvent::PromptsChanged) if honoured.contains_key("promptsListChanged") => {
                    ("notifications/prompts/list_changed", json!({"_meta": tag}))
                }
                Ok(ServerEvent::ResourcesChanged)
                    if honoured.contains_key("resourcesListChanged") =>
                {
                    (
                        "notifications/resources/list_changed",
                        json!({"_meta": tag}),
                    )
                }
                Ok(ServerEvent::ResourceUpdated(uri)) if uris.contains(&uri) => (
                    "notifications/resources/updated",
                    json!({"_meta": tag, "uri": uri}),
                ),
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => break,
            };
            ctx.notify(method, params).await;
        }
        let mut result = Map::new();
        result.insert("_meta".into(), tag);
        result.insert("resultType".into(), json!("complete"));
        by_revision!(v, where modern, |m| shape::project_open::<m::SubscriptionsListenResult>(
            "the end of a subscription",
            Value::Object(result)
        ), else Err(RpcError::method_not_found("subscriptions/listen")))
    }
}

/// The resources a listen names, counted in the server's interest while it is open
/// (however it ends: its result, a cancellation, the connection's end).
struct Interest {
    server: Server,
    uris: std::collections::BTreeSet<String>,
}

impl Interest {
    fn new(server: &Server, uris: &[String]) -> Interest {
        // A URI named twice is one subscription.
        let uris: std::collections::BTreeSet<String> = uris.iter().cloned().collect();
        for uri in &uris {
            server.interest_added(uri);
        }
        Interest {
            server: server.clone(),
            uris,
        }
    }
}

impl Drop for Interest {
    fn drop(&mut self) {
        for uri in &self.uris {
            self.server.interest_removed(uri);
        }
    }
}
