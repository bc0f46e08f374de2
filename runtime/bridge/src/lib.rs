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
//! `input_required` round to a 2026-07-28 one — and its progress reports are relayed
//! too. Changes of the upstream lists (tools, resources and resource templates,
//! prompts) are followed: the list is read again and what is served brought in line,
//! which the downstream clients hear as a list change; resource updates are announced
//! downstream. When the upstream server goes away, the bridge exits.
//!
//! Which downstream call an upstream server's request serves: over Streamable HTTP, the
//! call whose response stream it arrives on. Over stdio the wire does not say (no
//! related-request id; progress tokens are not echoed), so the bridge makes it
//! unambiguous: a call whose downstream client can be asked (it declared sampling,
//! elicitation or roots) runs upstream alone, while calls of clients that cannot be
//! asked run side by side — then an upstream request belongs to the one asking call in
//! flight, or, with none, is refused (sampling, elicitation) or answered with the roots
//! the last downstream client reported. The price: over stdio, asking calls wait for
//! each other and for the calls in flight (a downstream client that calls the bridge
//! again from inside its own sampling handler waits until the first call is over).
//!
//! A 2026-07-28 client answers an ask by retrying its request: the bridge keeps the
//! upstream request (tool call, resource read, prompt) running between the rounds and
//! hands the retry's answer to the waiting ask (`kept.rs`), so it runs upstream
//! once, however many rounds it takes; a client that does not retry within five minutes
//! fails the ask upstream.
//! Upstream log messages go to the bridge's stderr.

mod kept;
mod lists;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kept::{Answer, KeptCalls, KeptRequest};
use lists::{add_template, follow, Interest, Listed};

use mcp_runtime::model::{Elicitation, Implementation, Root};
use mcp_runtime::transport::stdio;
use mcp_runtime::{Context, Era, RpcError, Server, ToolError};
use mcp_runtime_client::auth::{wait_for_redirect, ClientCredentials};
use mcp_runtime_client::{
    Client, ClientError, ClientHandlers, CompletionRef, OAuth, RequestOptions,
};
use mcp_runtime_http as http;
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

/// The upstream server as the forwarding handlers reach it.
#[derive(Clone)]
struct Link {
    client: Client,
    /// When the upstream link does not tell which call a server request serves (stdio;
    /// Streamable HTTP carries it on the call's own response stream): a call whose
    /// downstream client can be asked runs upstream alone (write), the others side by
    /// side (read). While an asking call runs, every upstream request is its own; while
    /// only calls of clients that cannot be asked run, an upstream request is refused
    /// (sampling, elicitation) or answered from the last reported roots.
    serial: Option<Arc<tokio::sync::RwLock<()>>>,
    /// 2026-07-28 tool calls, resource reads and prompts kept running across
    /// `input_required` rounds.
    kept: KeptCalls,
}

/// Whether the downstream client of `ctx` can be asked anything the upstream server may
/// ask.
fn askable(ctx: &Context) -> bool {
    ["sampling", "elicitation", "roots"]
        .iter()
        .any(|c| ctx.client_supports(c))
}

/// Forwards one downstream request upstream: the relay of what the upstream server asks
/// (when the downstream client can be asked), and its progress passed on in order — all
/// of it before the answer (the forwarder is drained once the upstream request is over).
async fn forward<T, F, Fut>(link: &Link, ctx: &Context, request: F) -> T
where
    F: FnOnce(RequestOptions) -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let asking = askable(ctx);
    // Held until the upstream request is over.
    let _turn = match &link.serial {
        Some(lock) if asking => Turn::Alone(lock.write().await),
        Some(lock) => Turn::Shared(lock.read().await),
        None => Turn::Any,
    };
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<mcp_runtime_client::Progress>();
    let progress_ctx = ctx.clone();
    let relayed = tokio::spawn(async move {
        while let Some(p) = rx.recv().await {
            progress_ctx
                .progress(p.progress, p.total, p.message.as_deref())
                .await;
        }
    });
    let mut options = RequestOptions::new()
        .on_progress(move |p| {
            let _ = tx.send(p);
        })
        // The upstream call may wait on a user; the downstream client has its own timeout.
        .timeout(Duration::ZERO);
    if asking {
        options = options.handlers(relay(ctx));
    }
    // Without a tracing backend the trace passes through as it came; with one, the
    // upstream request's span (a child of this request's) is the parent sent on.
    if let Some(trace) = ctx.remote_trace() {
        options = options.trace_context(trace.clone());
    }
    let answer = request(options).await;
    // The options (and the progress sender in them) are gone with the request.
    let _ = relayed.await;
    answer
}

/// A turn on a serial upstream link (see [`Link::serial`]).
enum Turn<'a> {
    Alone(#[allow(dead_code)] tokio::sync::RwLockWriteGuard<'a, ()>),
    Shared(#[allow(dead_code)] tokio::sync::RwLockReadGuard<'a, ()>),
    Any,
}

/// Whether the upstream request `ctx` serves is kept across the client's
/// `input_required` rounds (`kept.rs`): a 2026-07-28 client that can be asked.
fn keeps(ctx: &Context) -> bool {
    ctx.version().era() == Era::Modern && askable(ctx)
}

/// An upstream answer of another kind than the request (cannot happen: `kept.rs` answers
/// each request with its own kind).
fn mismatched() -> RpcError {
    RpcError::internal("mcp-bridge: the upstream answer is not of the request's kind")
}

/// What a forwarded tool call returns.
type ToolAnswer = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<mcp_runtime::model::ToolResult, ToolError>> + Send>,
>;

/// A tool call, forwarded. A 2026-07-28 client that can be asked gets the upstream call
/// kept across its `input_required` rounds (see `kept.rs`): the upstream tool runs once.
fn tool_handler(
    link: Link,
    name: String,
) -> impl Fn(serde_json::Map<String, Value>, Context) -> ToolAnswer + Send + Sync + 'static {
    move |args, ctx| {
        let link = link.clone();
        let name = name.clone();
        Box::pin(async move {
            if keeps(&ctx) {
                let request = KeptRequest::CallTool { name, args };
                return match link
                    .kept
                    .run(&link.client, link.serial.as_ref(), request, &ctx)
                    .await
                {
                    Ok(Answer::Tool(result)) => Ok(result),
                    Ok(_) => Err(ToolError::protocol(mismatched())),
                    Err(e) => Err(ToolError::protocol(e)),
                };
            }
            let client = &link.client;
            forward(&link, &ctx, |options| {
                client.call_tool_with(&name, Value::Object(args), options)
            })
            .await
            .map_err(|e| ToolError::protocol(rpc(e)))
        })
    }
}

/// What a forwarded resource read returns.
type ReadAnswer = std::pin::Pin<
    Box<
        dyn std::future::Future<
                Output = Result<Vec<mcp_runtime::model::ResourceContents>, RpcError>,
            > + Send,
    >,
>;

/// A resource read, forwarded; kept across a 2026-07-28 client's rounds as a tool call is.
fn resource_handler(link: Link) -> impl Fn(String, Context) -> ReadAnswer + Send + Sync + 'static {
    move |uri, ctx| {
        let link = link.clone();
        Box::pin(async move {
            if keeps(&ctx) {
                let request = KeptRequest::ReadResource { uri };
                return match link
                    .kept
                    .run(&link.client, link.serial.as_ref(), request, &ctx)
                    .await?
                {
                    Answer::Resource(contents) => Ok(contents),
                    _ => Err(mismatched()),
                };
            }
            let c = &link.client;
            forward(&link, &ctx, |options| c.read_resource_with(&uri, options))
                .await
                .map_err(rpc)
        })
    }
}

fn template_handler(
    link: Link,
) -> impl Fn(String, std::collections::BTreeMap<String, String>, Context) -> ReadAnswer
       + Send
       + Sync
       + 'static {
    let read = resource_handler(link);
    move |uri, _vars, ctx| read(uri, ctx)
}

/// What a forwarded prompt returns.
type PromptAnswer = std::pin::Pin<
    Box<
        dyn std::future::Future<Output = Result<mcp_runtime::model::PromptResult, RpcError>> + Send,
    >,
>;

/// A prompt, forwarded; kept across a 2026-07-28 client's rounds as a tool call is.
fn prompt_handler(
    link: Link,
    name: String,
) -> impl Fn(serde_json::Map<String, Value>, Context) -> PromptAnswer + Send + Sync + 'static {
    move |args, ctx| {
        let (link, name) = (link.clone(), name.clone());
        Box::pin(async move {
            let c = &link.client;
            let args: Vec<(String, String)> = args
                .into_iter()
                .map(|(k, v)| {
                    let v = match v {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    (k, v)
                })
                .collect();
            if keeps(&ctx) {
                let request = KeptRequest::GetPrompt { name, args };
                return match link
                    .kept
                    .run(c, link.serial.as_ref(), request, &ctx)
                    .await?
                {
                    Answer::Prompt(prompt) => Ok(prompt),
                    _ => Err(mismatched()),
                };
            }
            forward(&link, &ctx, |options| {
                c.get_prompt_with(&name, args, options)
            })
            .await
            .map_err(rpc)
        })
    }
}

/// The downstream server: the upstream's identity and everything it lists, forwarded.
/// `interest`: the resources downstream clients want updates of (and no longer want),
/// to pass upstream (`lists::follow`).
async fn front(
    link: &Link,
    roots: &Roots,
    interest: Interest,
) -> Result<(Server, Listed), ClientError> {
    let client = &link.client;
    let info = client.server_info();
    let identity = info
        .implementation
        .clone()
        .unwrap_or_else(|| Implementation::new("mcp-bridge", env!("CARGO_PKG_VERSION")));
    let mut builder = Server::builder(identity);
    if let Some(instructions) = &info.instructions {
        builder = builder.instructions(instructions.clone());
    }
    let mut listed = Listed::default();
    if info.supports("tools") {
        for tool in client.list_all_tools().await? {
            let name = tool.name.clone();
            listed.tools.insert(name.clone(), tool.clone());
            builder = builder.tool(tool, tool_handler(link.clone(), name));
        }
    }
    let mut templates = Vec::new();
    if info.supports("resources") {
        for resource in client.list_all_resources().await? {
            listed
                .resources
                .insert(resource.uri.clone(), resource.clone());
            builder = builder.resource(resource, resource_handler(link.clone()));
        }
        templates = client
            .list_all_resource_templates()
            .await
            .unwrap_or_default();
    }
    if info.supports("prompts") {
        for prompt in client.list_all_prompts().await? {
            let name = prompt.name.clone();
            listed.prompts.insert(name.clone(), prompt.clone());
            builder = builder.prompt(prompt, prompt_handler(link.clone(), name));
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
    builder = builder.on_resource_interest(move |uri, wanted| {
        // The upstream is told by `follow`, which owns the other end.
        let _ = interest.send((uri.to_owned(), wanted));
    });
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
    let server = builder.build();
    // Templates join after the build: one the upstream server got wrong (not RFC 6570)
    // is left out, not fatal.
    for template in templates {
        add_template(&server, link, &mut listed, template);
    }
    Ok((server, listed))
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
    let link = Link {
        client: client.clone(),
        // Streamable HTTP relates each server request to its call (its response stream).
        serial: matches!(args.upstream, Upstream::Command(_))
            .then(|| Arc::new(tokio::sync::RwLock::new(()))),
        kept: KeptCalls::default(),
    };
    let (interest, wanted) = tokio::sync::mpsc::unbounded_channel();
    let (server, listed) = front(&link, &roots, interest)
        .await
        .map_err(|e| format!("reading the upstream server's lists: {e}"))?;
    tokio::spawn(follow(link, server.clone(), listed, wanted));
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

/// Runs the bridge with this process's command line, and exits the process: with status 2
/// on a bad command line, 1 when the bridge failed, 0 when the upstream server went away.
/// The `mcp-bridge` binary is this function (a library only so that the workspace's
/// tests can build the same program as an example).
#[tokio::main]
pub async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse_args(&args) {
        Ok(a) => a,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    // Exports when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (mcp-runtime-otel); flushed
    // before the process exits.
    let telemetry = mcp_runtime_otel::init("mcp-bridge");
    let outcome = run(args).await;
    telemetry.shutdown();
    if let Err(message) = outcome {
        eprintln!("mcp-bridge: {message}");
        std::process::exit(1);
    }
    // stdin may still be open (tokio reads it on a thread that cannot be interrupted).
    std::process::exit(0);
}
