//! `mcp-bridge`: fronts one MCP server — a command spoken to over stdio, or a URL — and
//! serves it, through this runtime, to clients of every revision.
//!
//! ```text
//! mcp-bridge (--command "CMD" | --url URL | -- PROGRAM ARGS…) [--http ADDR]
//!            [--revision REV] [--header "NAME: VALUE"]... [--bearer TOKEN]
//!            [--oauth | --oauth-headless] [--oauth-client ID[:SECRET]]
//!            [--oauth-client-credentials] [--oauth-redirect URI] [--drain-timeout SECS]
//!            [--max-sessions N] [--session-idle-timeout SECS]
//! ```
//!
//! The flags that name the upstream server and how to reach it are `mcp`'s
//! (`mcp_cli::target`): `--command` runs a shell command line with `sh -c`, `-- PROGRAM
//! ARGS…` runs a program without a shell, either in a process group of its own that the
//! bridge ends whole when it exits, whatever the cause; `--url` speaks Streamable HTTP or
//! HTTP+SSE, with `--header`, `--bearer` or OAuth; `--revision` pins the upstream revision
//! (no `server/discover` probe).
//!
//! Without `--http` the bridge serves one client on its own stdin and stdout; with
//! `--http ADDR` it serves Streamable HTTP at `http://ADDR/mcp` (both eras) and HTTP+SSE
//! at `/sse` (2024-11-05). Downstream, every client gets its own revision, each message
//! re-shaped for it by the runtime.
//!
//! What the upstream server lists (tools, resources, resource templates, prompts) is
//! served under the same names and forwarded call by call; completions too. What the
//! upstream server asks while a call runs (sampling, elicitation, roots) is relayed to
//! the client whose call it is — as a server request to a legacy client, as an
//! `input_required` round to a 2026-07-28 one — and its progress reports are relayed
//! too. A 2026-07-28 upstream sees, on each forwarded request, the capabilities the
//! downstream client declared; a legacy upstream session is shared, so it sees the
//! capabilities the bridge can relay, and an ask a client cannot answer is refused with
//! the reason (the client did not declare it). Changes of the upstream lists are
//! followed: the list is read again and what is served brought in line, which the
//! downstream clients hear as a list change; resource updates are announced downstream.
//! An upstream without an optional method (`subscriptions/listen`) is noted once.
//!
//! Which downstream call an upstream server's request serves: over Streamable HTTP, the
//! call whose response stream it arrives on. Over stdio the wire does not say (no
//! related-request id; progress tokens are not echoed), so the bridge makes it
//! unambiguous: a call whose downstream client can be asked (it declared sampling,
//! elicitation or roots) runs upstream alone, while calls of clients that cannot be
//! asked run side by side — then an upstream request belongs to the one asking call in
//! flight, or, with none, is refused (sampling, elicitation) or answered with the roots
//! the last downstream client reported (refused while no client has reported any, so
//! that the upstream asks again during a call instead of keeping an empty list). The
//! price: over stdio, asking calls wait for each other and for the calls in flight.
//!
//! A 2026-07-28 client answers an ask by retrying its request: the bridge keeps the
//! upstream request (tool call, resource read, prompt) running between the rounds and
//! hands the retry's answer to the waiting ask (`kept.rs`), so it runs upstream
//! once, however many rounds it takes; a client that does not retry within five minutes
//! fails the ask upstream.
//!
//! **Ending.** The bridge exits 0 when the upstream server goes away, when its stdio
//! client does (stdin or stdout closed), or at SIGTERM, SIGINT or SIGHUP: then it stops
//! taking requests, gives those in flight `--drain-timeout` to finish, answers the rest
//! with an error saying so, and ends the upstream server's process group. Upstream log
//! messages go to the bridge's stderr.

mod kept;
mod lists;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Parser;
use kept::{Answer, KeptCalls, KeptRequest};
use lists::{add_template, follow, Interest, Listed};

use mcp_cli::target::{self, Server as Upstream, TargetArgs};
use mcp_runtime::cancel::CancellationToken;
use mcp_runtime::model::{is_reserved_meta_key, Elicitation, Implementation, Root};
use mcp_runtime::transport::stdio;
use mcp_runtime::{Context, Era, Limits, RpcError, Server, ToolError};
use mcp_runtime_client::{Client, ClientError, ClientHandlers, CompletionRef, RequestOptions};
use mcp_runtime_http as http;
use serde_json::{json, Value};

const EXAMPLES: &str = "\
Examples:
  mcp-bridge --command \"python server.py\"                        serves it on stdio
  mcp-bridge --url https://example.com/mcp --http 127.0.0.1:3000  serves /mcp and /sse
  mcp-bridge --http 127.0.0.1:3000 -- npx -y @modelcontextprotocol/server-everything
  mcp-bridge --command \"MEMORY_FILE_PATH=/tmp/m.json npx -y @modelcontextprotocol/server-memory\"

Exit status: 0 when the upstream server or the stdio client goes away, or at SIGTERM,
SIGINT or SIGHUP (after draining); 1 when the bridge fails (the upstream server
unreachable, a refused authorization); 2 on a bad command line.";

/// Puts one MCP server, of any revision, in front of clients of every revision.
#[derive(Parser, Debug)]
#[command(
    name = "mcp-bridge",
    bin_name = "mcp-bridge",
    version,
    about,
    long_about = "Puts one Model Context Protocol server (any server, speaking any revision) \
        in front of clients of every revision (2024-11-05 … 2026-07-28): upstream it is a \
        client that speaks the server's revision; downstream a server of every revision, on \
        its own stdin and stdout or, with --http, over Streamable HTTP and HTTP+SSE.\n\n\
        Name the upstream server with --command \"CMD\" (a shell command line), -- PROGRAM \
        ARGS… (run without a shell) or --url URL.",
    after_help = EXAMPLES
)]
struct Cli {
    #[command(flatten)]
    target: TargetArgs,

    /// Serves over HTTP on ADDR (e.g. 127.0.0.1:3000): Streamable HTTP at /mcp (both
    /// eras) and HTTP+SSE at /sse. Without it the bridge serves one client on its own
    /// stdin and stdout.
    #[arg(long, value_name = "ADDR")]
    http: Option<std::net::SocketAddr>,

    /// At SIGTERM, SIGINT or SIGHUP, how long calls in flight get to finish, in seconds;
    /// what has not finished then is answered with an error.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    drain_timeout: u64,

    /// With --http: at most this many live legacy sessions; a further `initialize` gets
    /// 503.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    max_sessions: usize,

    /// With --http: a legacy session unused for this long ends, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 1800)]
    session_idle_timeout: u64,

    /// The upstream server program and its arguments, run without a shell (instead of
    /// --command or --url).
    #[arg(last = true, value_name = "PROGRAM ARGS")]
    program: Vec<String>,
}

/// The roots the downstream clients last reported, answered to the upstream server
/// (`None` until a client reports some).
type Roots = Arc<Mutex<Option<Vec<Root>>>>;

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
            async move {
                undeclared(&ctx, "sampling")?;
                ctx.create_message(request).await.map_err(RpcError::from)
            }
        })
        .elicitation(move |request| {
            let ctx = e.clone();
            async move {
                undeclared(&ctx, "elicitation")?;
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
            async move {
                undeclared(&ctx, "roots")?;
                Ok(ctx.list_roots().await?)
            }
        })
}

/// Refuses an upstream ask the downstream client of `ctx` did not declare, saying so.
fn undeclared(ctx: &Context, capability: &str) -> Result<(), RpcError> {
    if ctx.client_supports(capability) {
        return Ok(());
    }
    Err(RpcError::internal(format!(
        "mcp-bridge: the upstream server asked for {capability}, but the client whose \
         call this is did not declare {capability}"
    )))
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
    /// Cancelled when the drain after a signal is over: what is still forwarded is
    /// answered with an error.
    give_up: CancellationToken,
}

impl Link {
    /// `request`, or the error of a call cut short by the end of the drain.
    async fn unless_shut_down<T>(
        &self,
        request: impl std::future::Future<Output = Result<T, RpcError>>,
    ) -> Result<T, RpcError> {
        tokio::select! {
            answer = request => answer,
            () = self.give_up.cancelled() => Err(RpcError::internal(
                "mcp-bridge is shutting down: the upstream call did not finish within the \
                 drain timeout (--drain-timeout)",
            )),
        }
    }
}

/// The options a forwarded request of `ctx`'s client starts from: a 2026-07-28 upstream
/// sees the capabilities that client declared.
fn upstream_options(ctx: &Context) -> RequestOptions {
    let options = RequestOptions::new().client_capabilities(ctx.client_capabilities().clone());
    // The downstream request's `_meta` goes on upstream (the protocol's own keys aside).
    match passed_meta(ctx) {
        Some(meta) => options.meta(meta),
        None => options,
    }
}

/// Whether the downstream client of `ctx` can be asked anything the upstream server may
/// ask.
fn askable(ctx: &Context) -> bool {
    ["sampling", "elicitation", "roots"]
        .iter()
        .any(|c| ctx.client_supports(c))
}

/// Forwards one downstream request upstream: the relay of what the upstream server asks
/// (refused with the reason when the downstream client did not declare it), and its
/// progress passed on in order — all
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
    let options = upstream_options(ctx)
        .on_progress(move |p| {
            let _ = tx.send(p);
        })
        // The upstream call may wait on a user; the downstream client has its own timeout.
        .timeout(Duration::ZERO)
        // A client that cannot be asked gets its asks refused with the reason.
        .handlers(relay(ctx));
    let answer = request(options).await;
    // The options (and the progress sender in them) are gone with the request.
    let _ = relayed.await;
    answer
}

/// The downstream request's `_meta` that goes upstream with it: everything but what each
/// side's runtime writes for itself (`progressToken`, which the bridge sets to relay
/// progress, and the protocol's reserved keys: revision, capabilities, identity, log
/// level). The W3C trace context and an application's own keys pass through untouched.
pub(crate) fn passed_meta(ctx: &Context) -> Option<serde_json::Map<String, Value>> {
    let passed: serde_json::Map<String, Value> = ctx
        .meta()
        .iter()
        .filter(|(key, _)| key.as_str() != "progressToken" && !is_reserved_meta_key(key))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    (!passed.is_empty()).then_some(passed)
}

/// A result's `_meta` as the bridge serves it: the upstream's, without the keys the
/// protocol reserves (the upstream's `io.modelcontextprotocol/serverInfo` names the
/// upstream, and the bridge's runtime writes its own where the revision has one).
pub(crate) fn served_result_meta(
    meta: Option<serde_json::Map<String, Value>>,
) -> Option<serde_json::Map<String, Value>> {
    let mut meta = meta?;
    meta.retain(|key, _| !is_reserved_meta_key(key));
    (!meta.is_empty()).then_some(meta)
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
                let kept = link
                    .kept
                    .run(&link.client, link.serial.as_ref(), request, &ctx);
                return match link.unless_shut_down(kept).await {
                    Ok(Answer::Tool(mut result)) => {
                        result.meta =
                            served_result_meta(result.meta.take().map(|m| *m)).map(Box::new);
                        Ok(result)
                    }
                    Ok(_) => Err(ToolError::protocol(mismatched())),
                    Err(e) => Err(ToolError::protocol(e)),
                };
            }
            let client = &link.client;
            let forwarded = async {
                forward(&link, &ctx, |options| {
                    client.call_tool_with(&name, Value::Object(args), options)
                })
                .await
                .map(|mut result| {
                    result.meta = served_result_meta(result.meta.take().map(|m| *m)).map(Box::new);
                    result
                })
                .map_err(rpc)
            };
            link.unless_shut_down(forwarded)
                .await
                .map_err(ToolError::protocol)
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
                let kept = link
                    .kept
                    .run(&link.client, link.serial.as_ref(), request, &ctx);
                return match link.unless_shut_down(kept).await? {
                    Answer::Resource(contents) => Ok(contents),
                    _ => Err(mismatched()),
                };
            }
            let c = &link.client;
            let forwarded = async {
                forward(&link, &ctx, |options| c.read_resource_with(&uri, options))
                    .await
                    .map_err(rpc)
            };
            link.unless_shut_down(forwarded).await
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
                let kept = link.kept.run(c, link.serial.as_ref(), request, &ctx);
                return match link.unless_shut_down(kept).await? {
                    Answer::Prompt(mut prompt) => {
                        prompt.meta = served_result_meta(prompt.meta.take());
                        Ok(prompt)
                    }
                    _ => Err(mismatched()),
                };
            }
            let forwarded = async {
                forward(&link, &ctx, |options| {
                    c.get_prompt_with(&name, args, options)
                })
                .await
                .map(|mut prompt| {
                    prompt.meta = served_result_meta(prompt.meta.take());
                    prompt
                })
                .map_err(rpc)
            };
            link.unless_shut_down(forwarded).await
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
    limits: Limits,
) -> Result<(Server, Listed), ClientError> {
    let client = &link.client;
    let info = client.server_info();
    let identity = info
        .implementation
        .clone()
        .unwrap_or_else(|| Implementation::new("mcp-bridge", env!("CARGO_PKG_VERSION")));
    let mut builder = Server::builder(identity).limits(limits);
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
                *roots.lock().unwrap_or_else(|e| e.into_inner()) = Some(list);
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

/// What the shared upstream connection answers when no call is there to relay an ask to.
fn fallback_handlers(roots: &Roots) -> ClientHandlers {
    let roots = roots.clone();
    ClientHandlers::new()
        .roots(move || {
            let roots = roots.clone();
            async move {
                let reported = roots.lock().unwrap_or_else(|e| e.into_inner()).clone();
                // Refused rather than answered empty: an upstream that stores the answer
                // would keep "no roots" even after a client reports its own.
                reported.ok_or_else(|| {
                    RpcError::internal(
                        "mcp-bridge: no downstream client has reported its roots yet (they \
                         are asked for during a call of a client that declared roots)",
                    )
                })
            }
        })
        .sampling(|_| async {
            Err(RpcError::internal(
                "mcp-bridge: the upstream server asked for sampling outside any call of a \
                 client that declared sampling",
            ))
        })
        .elicitation(|_| async {
            Err(RpcError::internal(
                "mcp-bridge: the upstream server asked for elicitation outside any call of a \
                 client that declared elicitation",
            ))
        })
}

/// Resolves at SIGTERM, SIGINT or SIGHUP (never where they cannot be listened to).
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
            signal(SignalKind::hangup()),
        ) {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
                _ = hup.recv() => {}
            }
            return;
        }
    }
    std::future::pending::<()>().await;
}

async fn run(cli: Cli, upstream: Upstream) -> Result<(), String> {
    let roots: Roots = Arc::default();
    let builder = Client::builder(Implementation::new("mcp-bridge", env!("CARGO_PKG_VERSION")))
        .handlers(fallback_handlers(&roots))
        .url_elicitation(true)
        .timeout(Duration::from_secs(120));
    let builder = cli.target.configure(builder, "mcp-bridge");
    let client = target::connect(builder, &upstream)
        .await
        .map_err(|e| format!("connecting upstream to {upstream}: {e}"))?;
    eprintln!(
        "mcp-bridge: upstream speaks MCP {} ({})",
        client.version(),
        client
            .server_info()
            .implementation
            .as_ref()
            .map_or("unnamed", |i| i.name.as_str())
    );
    let served = serve(&cli, &upstream, &client, &roots).await;
    // The upstream server, and everything it started, ends with the bridge.
    client.close().await;
    served
}

/// Serves the front until the upstream server or the stdio client goes away, or a signal
/// (then after the drain).
async fn serve(
    cli: &Cli,
    upstream: &Upstream,
    client: &Client,
    roots: &Roots,
) -> Result<(), String> {
    let drain = Duration::from_secs(cli.drain_timeout);
    let link = Link {
        client: client.clone(),
        // Streamable HTTP relates each server request to its call (its response stream).
        serial: (!matches!(upstream, Upstream::Url(_)))
            .then(|| Arc::new(tokio::sync::RwLock::new(()))),
        kept: KeptCalls::default(),
        give_up: CancellationToken::new(),
    };
    let mut limits = Limits::default();
    // Calls cut short at the end of the drain are answered; the answers need a moment.
    limits.shutdown_grace = drain + Duration::from_secs(1);
    let (interest, wanted) = tokio::sync::mpsc::unbounded_channel();
    let (server, listed) = front(&link, roots, interest, limits)
        .await
        .map_err(|e| format!("reading the upstream server's lists: {e}"))?;
    let give_up = link.give_up.clone();
    tokio::spawn(follow(link, server.clone(), listed, wanted));
    let shutdown = {
        let mut notifications = client.notifications();
        async move {
            tokio::select! {
                // The bridge ends when the upstream server does.
                () = async { while notifications.recv().await.is_some() {} } => {}
                () = stop_signal() => {
                    eprintln!(
                        "mcp-bridge: stopping; calls in flight get {}s to finish",
                        drain.as_secs()
                    );
                    tokio::spawn(async move {
                        tokio::time::sleep(drain).await;
                        give_up.cancel();
                    });
                }
            }
        }
    };
    let served = match cli.http {
        None => stdio::serve_stdio_with_shutdown(server, shutdown).await,
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| format!("--http {addr}: {e}"))?;
            let local = listener.local_addr().map_err(|e| e.to_string())?;
            eprintln!("listening on http://{local}/mcp (HTTP+SSE at http://{local}/sse)");
            let mut config = http::HttpConfig::default();
            config.max_sessions = cli.max_sessions;
            config.session_idle_timeout = Duration::from_secs(cli.session_idle_timeout);
            http::serve_listener_with_shutdown(server, listener, config, shutdown).await
        }
    };
    served.map_err(|e| e.to_string())
}

/// Runs the bridge with this process's command line, and exits the process: with status 2
/// on a bad command line, 1 when the bridge failed, 0 when the upstream server or the
/// stdio client went away or a signal stopped it. The upstream server's process group is
/// ended in every case. The `mcp-bridge` binary is this function (a library only so that
/// the workspace's tests can build the same program as an example).
#[tokio::main]
pub async fn main() {
    let cli = Cli::parse();
    let upstream = match cli.target.server(&cli.program) {
        Ok(upstream) => upstream,
        Err(message) => {
            use clap::CommandFactory;
            Cli::command()
                .error(clap::error::ErrorKind::ArgumentConflict, message)
                .exit()
        }
    };
    if let Err(message) = run(cli, upstream).await {
        eprintln!("mcp-bridge: {message}");
        std::process::exit(1);
    }
    // stdin may still be open (tokio reads it on a thread that cannot be interrupted).
    std::process::exit(0);
}
