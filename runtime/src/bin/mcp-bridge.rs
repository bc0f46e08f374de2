//! `mcp-bridge`: fronts one MCP server — a command spoken to over stdio, or a URL — and
//! serves it, through this runtime, to clients of every revision.
//!
//! ```text
//! mcp-bridge (--command "CMD" | --url URL) [--http ADDR] [--header "NAME: VALUE"]...
//!            [--bearer TOKEN] [--oauth | --oauth-headless] [--oauth-client ID[:SECRET]]
//!            [--oauth-client-credentials] [--oauth-redirect URI]
//! ```
//!
//! An upstream URL that wants authorization gets a fixed token with `--bearer`, or OAuth:
//! `--oauth` prints the authorization URL to open and waits on the loopback redirect URI
//! (`--oauth-redirect`, default `http://127.0.0.1:8976/callback`); `--oauth-headless`
//! follows the authorization server's redirects without a browser (servers that approve
//! without a user); `--oauth-client` gives pre-registered credentials (else the bridge
//! registers dynamically); `--oauth-client-credentials` uses them in the client
//! credentials grant.
//!
//! Without `--http` the bridge serves one client on its own stdin and stdout; with
//! `--http ADDR` it serves Streamable HTTP at `http://ADDR/mcp` (both eras) and HTTP+SSE
//! at `/sse` (2024-11-05). Upstream, it speaks whatever revision the server does
//! (probing `server/discover`, else `initialize`); downstream, every client gets its own
//! revision, each message re-shaped for it by the runtime.
//!
//! What the upstream server lists (tools, resources, resource templates, prompts) is
//! served under the same names and forwarded call by call; completions too. What the
//! upstream server asks while a call runs (sampling, elicitation, roots) is relayed to
//! the client whose call it is — as a server request to a legacy client, as an
//! `input_required` round to a 2026-07-28 one (the call then runs again upstream with the
//! answer, as the runtime's `Context` documents) — and its progress reports are
//! relayed too. A change of the upstream tool list is followed; resource updates and
//! list changes are announced downstream. When the upstream server goes away, the
//! bridge exits.
//!
//! Limits: an upstream server's request is matched to the downstream call it serves
//! through the HTTP response stream it arrives on, or, over stdio, when only one call is
//! in flight; otherwise it is refused. Roots are those the last downstream client
//! reported. Upstream log messages go to the bridge's stderr.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_runtime::client::auth::{wait_for_redirect, ClientCredentials};
use mcp_runtime::client::{
    Client, ClientError, ClientHandlers, CompletionRef, Notification, OAuth, RequestOptions,
};
use mcp_runtime::model::{Elicitation, Implementation, Root};
use mcp_runtime::transport::{http, stdio};
use mcp_runtime::{Context, RpcError, Server, ServerEvent, ToolError};
use serde_json::{json, Value};

const USAGE: &str =
    "usage: mcp-bridge (--command \"CMD\" | --url URL) [--http ADDR] [--header \"NAME: VALUE\"]...
       [--bearer TOKEN] [--oauth | --oauth-headless] [--oauth-client ID[:SECRET]]
       [--oauth-client-credentials] [--oauth-redirect URI]";

/// How the bridge authorizes upstream.
#[derive(Default)]
struct OAuthArgs {
    /// `--oauth` (wait on the redirect URI) or `--oauth-headless`.
    mode: Option<&'static str>,
    client: Option<ClientCredentials>,
    client_credentials: bool,
    redirect: Option<String>,
}

impl OAuthArgs {
    fn oauth(&self) -> Option<OAuth> {
        if self.client_credentials {
            return self.client.clone().map(OAuth::client_credentials);
        }
        let mut oauth = OAuth::new();
        if let Some(client) = &self.client {
            oauth = oauth.client(client.clone());
        }
        if let Some(redirect) = &self.redirect {
            oauth = oauth.redirect_uri(redirect.clone());
        }
        // Pre-registered credentials alone mean OAuth with a browser.
        match self.mode.or(self.client.as_ref().map(|_| "browser"))? {
            "headless" => Some(oauth),
            _ => Some(oauth.user_agent(|request| {
                wait_for_redirect(request, |url| {
                    eprintln!("mcp-bridge: to authorize upstream, open {url}");
                })
            })),
        }
    }
}

/// The command line.
struct Args {
    upstream: Upstream,
    http: Option<std::net::SocketAddr>,
    headers: Vec<(String, String)>,
    oauth: OAuthArgs,
}

enum Upstream {
    Command(String),
    Url(String),
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut upstream = None;
    let mut http = None;
    let mut headers = Vec::new();
    let mut oauth = OAuthArgs::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match arg.as_str() {
            "--command" => upstream = Some(Upstream::Command(value("--command")?)),
            "--url" => upstream = Some(Upstream::Url(value("--url")?)),
            "--http" => {
                let addr = value("--http")?;
                http = Some(addr.parse().map_err(|e| format!("--http {addr}: {e}"))?);
            }
            "--header" => {
                let header = value("--header")?;
                let (name, v) = header
                    .split_once(':')
                    .ok_or_else(|| format!("--header {header}: expected NAME: VALUE"))?;
                headers.push((name.trim().to_owned(), v.trim().to_owned()));
            }
            "--bearer" => headers.push((
                "authorization".to_owned(),
                format!("Bearer {}", value("--bearer")?),
            )),
            "--oauth" => oauth.mode = Some("browser"),
            "--oauth-headless" => oauth.mode = Some("headless"),
            "--oauth-client" => {
                let given = value("--oauth-client")?;
                oauth.client = Some(match given.split_once(':') {
                    Some((id, secret)) => ClientCredentials::confidential(id, secret),
                    None => ClientCredentials::public(given),
                });
            }
            "--oauth-client-credentials" => oauth.client_credentials = true,
            "--oauth-redirect" => oauth.redirect = Some(value("--oauth-redirect")?),
            "-h" | "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    if oauth.client_credentials && oauth.client.is_none() {
        return Err("--oauth-client-credentials needs --oauth-client ID:SECRET".into());
    }
    Ok(Args {
        upstream: upstream.ok_or(USAGE)?,
        http,
        headers,
        oauth,
    })
}

/// The roots the downstream clients last reported, answered to the upstream server.
type Roots = Arc<Mutex<Vec<Root>>>;

fn rpc(e: ClientError) -> RpcError {
    match e.rpc() {
        Some(rpc) => rpc.clone(),
        None => RpcError::internal(format!("upstream: {e}")),
    }
}

/// What the upstream server asks during a call, relayed to the downstream client whose
/// call it is.
fn relay(ctx: &Context) -> ClientHandlers {
    let (s, e, r) = (ctx.clone(), ctx.clone(), ctx.clone());
    ClientHandlers::new()
        .sampling(move |request| {
            let ctx = s.clone();
            async move { ctx.create_message(request).await.map_err(RpcError::from) }
        })
        .elicitation(move |request| {
            let ctx = e.clone();
            async move {
                if let Some(url) = request.url.clone() {
                    let id = request.elicitation_id.clone().unwrap_or_default();
                    return Ok(match ctx.elicit_url(request.message, url, id).await? {
                        Elicitation::Accept(()) => Elicitation::Accept(Default::default()),
                        Elicitation::Decline => Elicitation::Decline,
                        Elicitation::Cancel => Elicitation::Cancel,
                    });
                }
                let schema = request
                    .requested_schema
                    .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
                Ok(ctx.elicit_with_schema(request.message, schema).await?)
            }
        })
        .roots(move || {
            let ctx = r.clone();
            async move { Ok(ctx.list_roots().await?) }
        })
}

/// Forwards one downstream request upstream: the relay of what the upstream server asks,
/// and its progress passed on in order — all of it before the answer (the forwarder is
/// drained once the upstream request is over).
async fn forward<T, F, Fut>(ctx: &Context, request: F) -> T
where
    F: FnOnce(RequestOptions) -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<mcp_runtime::client::Progress>();
    let progress_ctx = ctx.clone();
    let relayed = tokio::spawn(async move {
        while let Some(p) = rx.recv().await {
            progress_ctx
                .progress(p.progress, p.total, p.message.as_deref())
                .await;
        }
    });
    let options = RequestOptions::new()
        .handlers(relay(ctx))
        .on_progress(move |p| {
            let _ = tx.send(p);
        })
        // The upstream call may wait on a user; the downstream client has its own timeout.
        .timeout(Duration::ZERO);
    let answer = request(options).await;
    // The options (and the progress sender in them) are gone with the request.
    let _ = relayed.await;
    answer
}

/// What a forwarded tool call returns.
type ToolAnswer = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<mcp_runtime::model::ToolResult, ToolError>> + Send>,
>;

fn tool_handler(
    client: Client,
    name: String,
) -> impl Fn(serde_json::Map<String, Value>, Context) -> ToolAnswer + Send + Sync + 'static {
    move |args, ctx| {
        let client = client.clone();
        let name = name.clone();
        Box::pin(async move {
            forward(&ctx, |options| {
                client.call_tool_with(&name, Value::Object(args), options)
            })
            .await
            .map_err(|e| ToolError::protocol(rpc(e)))
        })
    }
}

/// The downstream server: the upstream's identity and everything it lists, forwarded.
async fn front(client: &Client, roots: &Roots) -> Result<(Server, BTreeSet<String>), ClientError> {
    let info = client.server_info();
    let identity = info
        .implementation
        .clone()
        .unwrap_or_else(|| Implementation::new("mcp-bridge", env!("CARGO_PKG_VERSION")));
    let mut builder = Server::builder(identity);
    if let Some(instructions) = &info.instructions {
        builder = builder.instructions(instructions.clone());
    }
    let mut tools = BTreeSet::new();
    if info.supports("tools") {
        for tool in client.list_all_tools().await? {
            let name = tool.name.clone();
            tools.insert(name.clone());
            builder = builder.tool(tool, tool_handler(client.clone(), name));
        }
    }
    if info.supports("resources") {
        for resource in client.list_all_resources().await? {
            let c = client.clone();
            builder = builder.resource(resource, move |uri, ctx| {
                let c = c.clone();
                async move {
                    forward(&ctx, |options| c.read_resource_with(&uri, options))
                        .await
                        .map_err(rpc)
                }
            });
        }
        for template in client
            .list_all_resource_templates()
            .await
            .unwrap_or_default()
        {
            let c = client.clone();
            builder = builder.resource_template(template, move |uri, _vars, ctx| {
                let c = c.clone();
                async move {
                    forward(&ctx, |options| c.read_resource_with(&uri, options))
                        .await
                        .map_err(rpc)
                }
            });
        }
    }
    if info.supports("prompts") {
        for prompt in client.list_all_prompts().await? {
            let c = client.clone();
            let name = prompt.name.clone();
            builder = builder.prompt(prompt, move |args, ctx| {
                let (c, name) = (c.clone(), name.clone());
                async move {
                    let args = args.into_iter().map(|(k, v)| {
                        let v = match v {
                            Value::String(s) => s,
                            other => other.to_string(),
                        };
                        (k, v)
                    });
                    forward(&ctx, |options| c.get_prompt_with(&name, args, options))
                        .await
                        .map_err(rpc)
                }
            });
        }
    }
    if info.supports("completions") {
        let c = client.clone();
        builder = builder.completion(move |request, _ctx| {
            let c = c.clone();
            async move {
                let reference = if request.ref_type == "ref/resource" {
                    CompletionRef::Resource(request.ref_name)
                } else {
                    CompletionRef::Prompt(request.ref_name)
                };
                c.complete(
                    reference,
                    &request.argument,
                    &request.value,
                    request.context,
                )
                .await
                .map_err(rpc)
            }
        });
    }
    let (c, roots) = (client.clone(), roots.clone());
    builder = builder.on_roots_list_changed(move |ctx| {
        let (c, roots) = (c.clone(), roots.clone());
        async move {
            if let Ok(list) = ctx.list_roots().await {
                *roots.lock().unwrap_or_else(|e| e.into_inner()) = list;
                let _ = c.notify_roots_changed().await;
            }
        }
    });
    Ok((builder.build(), tools))
}

/// Follows what the upstream server announces: tool list changes are mirrored, other
/// changes announced downstream, log messages printed.
async fn follow(client: Client, server: Server, mut tools: BTreeSet<String>) {
    let mut notifications = client.notifications();
    while let Some(n) = notifications.recv().await {
        match n {
            Notification::ToolsListChanged => match client.list_all_tools().await {
                Ok(listed) => {
                    let names: BTreeSet<String> = listed.iter().map(|t| t.name.clone()).collect();
                    for gone in tools.difference(&names) {
                        server.remove_tool(gone);
                    }
                    for tool in listed {
                        let name = tool.name.clone();
                        server.add_tool(tool, tool_handler(client.clone(), name));
                    }
                    tools = names;
                }
                Err(e) => eprintln!("mcp-bridge: re-listing tools: {e}"),
            },
            Notification::PromptsListChanged => server.notify(ServerEvent::PromptsChanged),
            Notification::ResourcesListChanged => server.notify(ServerEvent::ResourcesChanged),
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

async fn run(args: Args) -> Result<(), String> {
    let roots: Roots = Arc::default();
    let fallback = {
        let roots = roots.clone();
        ClientHandlers::new()
            .roots(move || {
                let roots = roots.clone();
                async move { Ok(roots.lock().unwrap_or_else(|e| e.into_inner()).clone()) }
            })
            .sampling(|_| async {
                Err(RpcError::internal(
                    "mcp-bridge: no downstream call to relay this sampling request to",
                ))
            })
            .elicitation(|_| async {
                Err(RpcError::internal(
                    "mcp-bridge: no downstream call to relay this elicitation to",
                ))
            })
    };
    let mut builder = Client::builder(Implementation::new("mcp-bridge", env!("CARGO_PKG_VERSION")))
        .handlers(fallback)
        .url_elicitation(true)
        .timeout(Duration::from_secs(120));
    for (name, value) in &args.headers {
        builder = builder.header(name.clone(), value.clone());
    }
    if let Some(oauth) = args.oauth.oauth() {
        builder = builder.oauth(oauth);
    }
    let client = match &args.upstream {
        Upstream::Command(line) => builder.connect_shell(line).await,
        Upstream::Url(url) => builder.connect_url(url).await,
    }
    .map_err(|e| format!("connecting upstream: {e}"))?;
    eprintln!(
        "mcp-bridge: upstream speaks MCP {} ({})",
        client.version(),
        client
            .server_info()
            .implementation
            .as_ref()
            .map_or("unnamed", |i| i.name.as_str())
    );
    let (server, tools) = front(&client, &roots)
        .await
        .map_err(|e| format!("reading the upstream server's lists: {e}"))?;
    tokio::spawn(follow(client.clone(), server.clone(), tools));
    // The bridge ends when the upstream server does.
    let upstream_gone = {
        let mut notifications = client.notifications();
        async move { while notifications.recv().await.is_some() {} }
    };
    let served = match args.http {
        None => stdio::serve_stdio_with_shutdown(server, upstream_gone).await,
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| format!("--http {addr}: {e}"))?;
            let local = listener.local_addr().map_err(|e| e.to_string())?;
            eprintln!("listening on http://{local}/mcp (HTTP+SSE at http://{local}/sse)");
            http::serve_listener_with_shutdown(
                server,
                listener,
                http::HttpConfig::default(),
                upstream_gone,
            )
            .await
        }
    };
    client.close().await;
    served.map_err(|e| e.to_string())
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse_args(&args) {
        Ok(a) => a,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    if let Err(message) = run(args).await {
        eprintln!("mcp-bridge: {message}");
        std::process::exit(1);
    }
    // stdin may still be open (tokio reads it on a thread that cannot be interrupted).
    std::process::exit(0);
}
