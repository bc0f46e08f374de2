//! 2026-07-28 subscriptions: `subscriptions/listen` opens a request that stays open and
//! carries the change notifications its filter asks for (list changes, resource
//! updates); they arrive on [`Client::notifications`](super::Client::notifications) like
//! every other notification. Dropping the [`Subscription`] ends it (the request is
//! cancelled: `notifications/cancelled` on stdio, its stream closed over HTTP).

use std::time::Duration;

use serde_json::{json, Map, Value};

use super::error::{ClientError, ClientErrorKind};
use super::notification::Notification;
use super::{Client, RequestOptions};
use mcp_runtime::cancel::{first, First};
use mcp_runtime::protocol::method::McpMethod;
use mcp_runtime::protocol::version::Era;

/// What a subscription asks to hear about.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListenFilter {
    /// `notifications/tools/list_changed`.
    pub tools_list_changed: bool,
    /// `notifications/prompts/list_changed`.
    pub prompts_list_changed: bool,
    /// `notifications/resources/list_changed`.
    pub resources_list_changed: bool,
    /// `notifications/resources/updated` for these URIs.
    pub resource_subscriptions: Vec<String>,
}

impl ListenFilter {
    /// Nothing yet.
    pub fn new() -> ListenFilter {
        ListenFilter::default()
    }

    /// Every list change (tools, prompts, resources).
    pub fn list_changes() -> ListenFilter {
        ListenFilter {
            tools_list_changed: true,
            prompts_list_changed: true,
            resources_list_changed: true,
            resource_subscriptions: Vec::new(),
        }
    }

    /// Also the updates of the resource at `uri`.
    #[must_use]
    pub fn resource(mut self, uri: impl Into<String>) -> Self {
        self.resource_subscriptions.push(uri.into());
        self
    }

    fn to_value(&self) -> Value {
        let mut filter = Map::new();
        for (key, on) in [
            ("toolsListChanged", self.tools_list_changed),
            ("promptsListChanged", self.prompts_list_changed),
            ("resourcesListChanged", self.resources_list_changed),
        ] {
            if on {
                filter.insert(key.into(), json!(true));
            }
        }
        if !self.resource_subscriptions.is_empty() {
            filter.insert(
                "resourceSubscriptions".into(),
                json!(self.resource_subscriptions),
            );
        }
        Value::Object(filter)
    }
}

/// An open subscription (2026-07-28); dropping it ends it.
#[derive(Debug)]
pub struct Subscription {
    /// The listen request; it finishes when the server ends the subscription.
    task: tokio::task::JoinHandle<Result<Value, ClientError>>,
    acknowledged: Value,
}

impl Subscription {
    /// What the server agreed to send (the acknowledgment's `notifications`).
    pub fn acknowledged(&self) -> &Value {
        &self.acknowledged
    }

    /// Ends the subscription.
    pub fn close(self) {}

    /// Waits until the server ends the subscription: `Ok` when it ended it with its
    /// result (a server that shuts down or stops serving the client does so), an error
    /// when the request failed or the connection was lost. Nothing arrives for it after
    /// that; listen again to go on hearing changes.
    pub async fn ended(&mut self) -> Result<(), ClientError> {
        match (&mut self.task).await {
            Ok(outcome) => outcome.map(|_| ()),
            Err(_) => Err(ClientError::closed()),
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Client {
    /// Opens a 2026-07-28 subscription and waits for the server's acknowledgment. In a
    /// legacy session there is none to open: list changes arrive on their own, and
    /// resource updates after [`Client::subscribe`].
    pub async fn listen(&self, filter: ListenFilter) -> Result<Subscription, ClientError> {
        if self.version().era() != Era::Modern {
            return Err(ClientError::unsupported(format!(
                "subscriptions/listen is not part of MCP {}: list changes arrive on their own, resource updates after subscribe",
                self.version()
            )));
        }
        let mut notifications = self.notifications();
        let mut params = Map::new();
        params.insert("notifications".into(), filter.to_value());
        let client = self.clone();
        let task = tokio::spawn(async move {
            client
                .core
                .request(
                    client.version(),
                    McpMethod::SubscriptionsListen.name(),
                    params,
                    // It stays open until dropped.
                    &RequestOptions::new().timeout(Duration::ZERO),
                )
                .await
        });
        let mut subscription = Subscription {
            task,
            acknowledged: Value::Null,
        };
        let acknowledged = async {
            while let Some(n) = notifications.recv().await {
                if let Notification::Other { method, params } = n {
                    if method == "notifications/subscriptions/acknowledged" {
                        return Some(
                            params
                                .and_then(|p| p.get("notifications").cloned())
                                .unwrap_or(Value::Null),
                        );
                    }
                }
            }
            None
        };
        let timeout = self.core.config.timeout;
        let ended = &mut subscription.task;
        match first(tokio::time::timeout(timeout, acknowledged), ended).await {
            First::A(Ok(Some(filter))) => {
                subscription.acknowledged = filter;
                Ok(subscription)
            }
            First::A(Ok(None)) => Err(ClientError::closed()),
            First::A(Err(_)) => Err(ClientError::new(
                ClientErrorKind::Timeout,
                "the server did not acknowledge the subscription",
            )),
            First::B(Ok(Err(e))) => Err(e),
            First::B(_) => Err(ClientError::invalid(
                "the subscription ended before it was acknowledged",
            )),
        }
    }
}
