//! `mcp-bridge` following the upstream lists: what is served of each (tools, resources,
//! resource templates, prompts), brought in line with the upstream server's list whenever
//! it announces a change; and the resource updates downstream clients subscribe to,
//! subscribed to upstream.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use mcp_runtime::{Era, ErrorCode, Server, ServerEvent};
use mcp_runtime_client::{Client, ClientErrorKind, ListenFilter, Notification};

use super::{prompt_handler, resource_handler, template_handler, tool_handler, Link};

/// Resources downstream clients start (`true`) or stop (`false`) wanting updates of.
pub(crate) type Interest = mpsc::UnboundedSender<(String, bool)>;

/// What the bridge serves of the upstream lists, to follow their changes.
#[derive(Default)]
pub(crate) struct Listed {
    pub(crate) tools: BTreeMap<String, mcp_runtime::model::Tool>,
    pub(crate) resources: BTreeMap<String, mcp_runtime::model::Resource>,
    pub(crate) templates: BTreeMap<String, mcp_runtime::model::ResourceTemplate>,
    pub(crate) prompts: BTreeMap<String, mcp_runtime::model::Prompt>,
}

/// Serves an upstream resource template, unless it does not parse (then it is left out,
/// not fatal: the upstream server got it wrong).
pub(crate) fn add_template(
    server: &Server,
    link: &Link,
    listed: &mut Listed,
    template: mcp_runtime::model::ResourceTemplate,
) {
    let key = template.uri_template.clone();
    if server.add_resource_template(template.clone(), template_handler(link.clone())) {
        listed.templates.insert(key, template);
    } else {
        eprintln!("mcp-bridge: the upstream resource template `{key}` does not parse; left out");
    }
}

/// Brings one served list in line with what the upstream server lists now: what is gone
/// is removed, what is new or changed is added. Whether anything differed.
fn sync_list<T: Clone + PartialEq>(
    served: &mut BTreeMap<String, T>,
    now: Vec<(String, T)>,
    mut remove: impl FnMut(&str),
    mut add: impl FnMut(T),
) -> bool {
    let now: BTreeMap<String, T> = now.into_iter().collect();
    let mut changed = false;
    for gone in served.keys().filter(|k| !now.contains_key(*k)) {
        remove(gone);
        changed = true;
    }
    for (key, item) in &now {
        if served.get(key) != Some(item) {
            add(item.clone());
            changed = true;
        }
    }
    *served = now;
    changed
}

/// Follows what the upstream server announces: list changes (tools, resources and
/// resource templates, prompts) are mirrored — the served list re-read and brought in
/// line, which tells the downstream clients — resource updates announced downstream, log
/// messages printed.
///
/// `wanted`: the resources downstream clients want updates of, subscribed to upstream
/// (legacy `resources/subscribe` when the upstream offers it; in 2026-07-28 the
/// subscription's `resourceSubscriptions`).
pub(crate) async fn follow(
    link: Link,
    server: Server,
    mut listed: Listed,
    wanted: mpsc::UnboundedReceiver<(String, bool)>,
) {
    let client = &link.client;
    let mut notifications = client.notifications();
    let _upstream = if client.version().era() == Era::Modern {
        // A 2026-07-28 upstream announces changes on a subscription only.
        let (uris, watched) = watch::channel(BTreeSet::new());
        let wanting = tokio::spawn(collect_wanted(wanted, uris));
        let listening = tokio::spawn(keep_listening(client.clone(), watched));
        (AbortOnDrop(wanting), Some(AbortOnDrop(listening)))
    } else {
        let subscribing = tokio::spawn(subscribe_upstream(client.clone(), wanted));
        (AbortOnDrop(subscribing), None)
    };
    while let Some(n) = notifications.recv().await {
        match n {
            Notification::ToolsListChanged => match client.list_all_tools().await {
                Ok(now) => {
                    let now = now.into_iter().map(|t| (t.name.clone(), t)).collect();
                    let changed = sync_list(
                        &mut listed.tools,
                        now,
                        |name| {
                            server.remove_tool(name);
                        },
                        |tool| {
                            let name = tool.name.clone();
                            server.add_tool(tool, tool_handler(link.clone(), name));
                        },
                    );
                    if !changed {
                        // Something the lists do not show changed: pass the news on.
                        server.notify(ServerEvent::ToolsChanged);
                    }
                }
                Err(e) => eprintln!("mcp-bridge: re-listing tools: {e}"),
            },
            Notification::PromptsListChanged => match client.list_all_prompts().await {
                Ok(now) => {
                    let now = now.into_iter().map(|p| (p.name.clone(), p)).collect();
                    let changed = sync_list(
                        &mut listed.prompts,
                        now,
                        |name| {
                            server.remove_prompt(name);
                        },
                        |prompt| {
                            let name = prompt.name.clone();
                            server.add_prompt(prompt, prompt_handler(link.clone(), name));
                        },
                    );
                    if !changed {
                        server.notify(ServerEvent::PromptsChanged);
                    }
                }
                Err(e) => eprintln!("mcp-bridge: re-listing prompts: {e}"),
            },
            Notification::ResourcesListChanged => {
                let resources = client.list_all_resources().await;
                // A server without templates may refuse the method: no templates.
                let templates = client
                    .list_all_resource_templates()
                    .await
                    .unwrap_or_default();
                match resources {
                    Ok(now) => {
                        let now = now.into_iter().map(|r| (r.uri.clone(), r)).collect();
                        let mut changed = sync_list(
                            &mut listed.resources,
                            now,
                            |uri| {
                                server.remove_resource(uri);
                            },
                            |resource| {
                                server.add_resource(resource, resource_handler(link.clone()));
                            },
                        );
                        let now = templates
                            .into_iter()
                            .map(|t| (t.uri_template.clone(), t))
                            .collect();
                        let mut served = std::mem::take(&mut listed.templates);
                        let mut added = Vec::new();
                        changed |= sync_list(
                            &mut served,
                            now,
                            |uri_template| {
                                server.remove_resource_template(uri_template);
                            },
                            |template| added.push(template),
                        );
                        served.retain(|k, _| !added.iter().any(|t| &t.uri_template == k));
                        listed.templates = served;
                        for template in added {
                            add_template(&server, &link, &mut listed, template);
                        }
                        if !changed {
                            server.notify(ServerEvent::ResourcesChanged);
                        }
                    }
                    Err(e) => eprintln!("mcp-bridge: re-listing resources: {e}"),
                }
            }
            Notification::ResourceUpdated { uri } => {
                server.notify(ServerEvent::ResourceUpdated(uri))
            }
            Notification::Log {
                level,
                logger,
                data,
            } => {
                eprintln!(
                    "mcp-bridge: upstream {level:?} {}: {data}",
                    logger.unwrap_or_default()
                );
            }
            _ => {}
        }
    }
}

/// A legacy upstream: each resource downstream clients want updates of is subscribed to
/// upstream while they do, if the upstream offers subscriptions.
async fn subscribe_upstream(client: Client, mut wanted: mpsc::UnboundedReceiver<(String, bool)>) {
    let offers = client
        .server_info()
        .capabilities
        .pointer("/resources/subscribe")
        .and_then(serde_json::Value::as_bool)
        == Some(true);
    while let Some((uri, on)) = wanted.recv().await {
        if !offers {
            continue;
        }
        let done = if on {
            client.subscribe(&uri).await
        } else {
            client.unsubscribe(&uri).await
        };
        if let Err(e) = done {
            eprintln!("mcp-bridge: upstream subscription to {uri}: {e}");
        }
    }
}

/// Keeps the set of resources downstream clients want updates of, for `keep_listening`.
async fn collect_wanted(
    mut wanted: mpsc::UnboundedReceiver<(String, bool)>,
    uris: watch::Sender<BTreeSet<String>>,
) {
    while let Some((uri, on)) = wanted.recv().await {
        uris.send_modify(|set| {
            if on {
                set.insert(uri);
            } else {
                set.remove(&uri);
            }
        });
    }
}

/// Keeps a 2026-07-28 subscription to the upstream's list changes (and to the updates of
/// the resources in `watched`) open: opened again when the upstream ends it (a restart, a
/// drain) or when `watched` changes — the new one before the old one ends, so that no
/// change falls between them — until the connection closes. An upstream without
/// `subscriptions/listen` (-32601) is noted once and not asked again; other failures are
/// retried after a pause that doubles, up to [`LISTEN_RETRY_MAX`].
async fn keep_listening(client: Client, mut watched: watch::Receiver<BTreeSet<String>>) {
    let mut open = None;
    let mut pause = LISTEN_RETRY_FIRST;
    loop {
        let mut filter = ListenFilter::list_changes();
        for uri in watched.borrow_and_update().iter() {
            filter = filter.resource(uri.clone());
        }
        let ended = match client.listen(filter).await {
            Ok(subscription) => {
                pause = LISTEN_RETRY_FIRST;
                let subscription = open.insert(subscription);
                tokio::select! {
                    ended = subscription.ended() => ended,
                    changed = watched.changed() => match changed {
                        Ok(()) => continue,
                        // The bridge is ending.
                        Err(_) => return,
                    },
                }
            }
            Err(e) => Err(e),
        };
        open = None;
        match ended {
            Err(e) if e.kind() == ClientErrorKind::Closed => return,
            Err(e)
                if e.rpc()
                    .is_some_and(|rpc| rpc.code == ErrorCode::METHOD_NOT_FOUND) =>
            {
                eprintln!(
                    "mcp-bridge: the upstream server has no subscriptions/listen ({e}): its \
                     list changes and resource updates are not followed"
                );
                return;
            }
            Err(e) => eprintln!(
                "mcp-bridge: the upstream subscription to changes: {e} (trying again in {}s)",
                pause.as_secs()
            ),
            Ok(()) => {}
        }
        // Not at once: an upstream that ends every subscription is not hammered.
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(LISTEN_RETRY_MAX);
    }
}

/// The first pause before a subscription to upstream changes is opened again.
const LISTEN_RETRY_FIRST: Duration = Duration::from_secs(1);
/// The longest pause between attempts to open it.
const LISTEN_RETRY_MAX: Duration = Duration::from_secs(60);

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
