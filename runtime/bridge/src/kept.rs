//! `mcp-bridge` for 2026-07-28 clients: an upstream request that asks (sampling,
//! elicitation, roots) — a tool call, a resource read, a prompt — keeps running while the
//! downstream client answers the ask as an `input_required` round, and the client's retry
//! answers the upstream request's waiting ask, instead of running it upstream again for
//! each round.
//!
//! The retry is matched to its upstream call by the key the ask was sent under:
//! `bridge-<token>-<n>`, a random token per upstream call and the ask's number. The
//! runtime returns that key among the retry's answers ([`Context::answered_keys`]); the
//! answer is checked against the ask by the runtime, and the `requestState` binds it to the
//! request (tool and arguments, resource URI, prompt and arguments) and the caller, as for
//! any handler. A request whose client does not retry within [`KEPT_FOR`] is given up: its
//! ask fails upstream.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use mcp_runtime::model::{
    Elicitation, PromptResult, ResourceContents, Root, SampledMessage, ToolResult,
};
use mcp_runtime::{Ask, AskErrorKind, Context, RpcError};
use mcp_runtime_client::{Client, ClientError, ClientHandlers, Progress};
use serde_json::{json, Map, Value};
use tokio::sync::{mpsc, oneshot, RwLock};

/// An upstream request that may ask, kept across a 2026-07-28 client's rounds.
pub(crate) enum KeptRequest {
    CallTool {
        name: String,
        args: Map<String, Value>,
    },
    ReadResource {
        uri: String,
    },
    GetPrompt {
        name: String,
        args: Vec<(String, String)>,
    },
}

/// What the upstream server answered to a [`KeptRequest`], of the same kind.
pub(crate) enum Answer {
    Tool(ToolResult),
    Resource(Vec<ResourceContents>),
    Prompt(PromptResult),
}

/// How long an upstream call waits for the downstream client's retry.
const KEPT_FOR: Duration = Duration::from_secs(300);

/// What a running upstream call tells the downstream handler.
enum Upcall {
    /// The upstream server asks; the answer goes back on `reply`.
    Ask {
        ask: Ask,
        reply: oneshot::Sender<Result<Value, RpcError>>,
    },
    Progress(Progress),
    Done(Result<Answer, ClientError>),
}

/// An upstream call waiting for the answer to its ask.
struct Waiting {
    /// The key the ask was sent downstream under.
    key: String,
    ask: Ask,
    reply: oneshot::Sender<Result<Value, RpcError>>,
    upcalls: mpsc::UnboundedReceiver<Upcall>,
    asked: usize,
}

/// The upstream calls waiting for a downstream retry, by token.
#[derive(Clone, Default)]
pub(crate) struct KeptCalls(Arc<Mutex<HashMap<String, Waiting>>>);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn rpc(e: &ClientError) -> RpcError {
    e.rpc()
        .cloned()
        .unwrap_or_else(|| RpcError::internal(format!("upstream: {e}")))
}

/// `(token, n)` of a key this module chose.
fn parse_key(key: &str) -> Option<(&str, usize)> {
    let (token, n) = key.strip_prefix("bridge-")?.rsplit_once('-')?;
    Some((token, n.parse().ok()?))
}

fn new_token() -> Result<String, RpcError> {
    let mut bytes = [0u8; 16];
    getrandom::getrandom(&mut bytes)
        .map_err(|e| RpcError::internal(format!("no random source: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl KeptCalls {
    /// Sends `request` upstream for a 2026-07-28 client, or continues the upstream request
    /// a retry of `ctx` answers. `serial`: asking requests run one at a time upstream (a
    /// link that does not relate the server's requests to calls); the turn is the upstream
    /// request's, across rounds.
    pub(crate) async fn run(
        &self,
        client: &Client,
        serial: Option<&Arc<RwLock<()>>>,
        request: KeptRequest,
        ctx: &Context,
    ) -> Result<Answer, RpcError> {
        let resumed = {
            let mut kept = lock(&self.0);
            ctx.answered_keys().iter().find_map(|key| {
                let (token, _) = parse_key(key)?;
                // Only the ask the call waits on: an earlier ask's key is in the state too.
                if kept.get(token).is_none_or(|w| &w.key != key) {
                    return None;
                }
                kept.remove(token).map(|w| (token.to_owned(), w))
            })
        };
        let (token, mut upcalls, mut asked) = match resumed {
            Some((token, waiting)) => {
                let answer = ctx
                    .ask(vec![(Some(waiting.key.clone()), waiting.ask.clone())])
                    .await;
                match answer {
                    Ok(mut answers) => {
                        let answer = answers.pop().unwrap_or(Value::Null);
                        let _ = waiting.reply.send(Ok(answer));
                    }
                    Err(e) => {
                        // The retry's answer does not fit the ask: the upstream ask fails
                        // too, and the call is not kept.
                        let _ = waiting.reply.send(Err(RpcError::from(e.clone())));
                        return Err(e.into());
                    }
                }
                (token, waiting.upcalls, waiting.asked)
            }
            None => (new_token()?, self.start(client, serial, request, ctx), 0),
        };
        loop {
            match upcalls.recv().await {
                Some(Upcall::Progress(p)) => {
                    ctx.progress(p.progress, p.total, p.message.as_deref())
                        .await;
                }
                Some(Upcall::Done(result)) => {
                    return result.map_err(|e| rpc(&e));
                }
                Some(Upcall::Ask { ask, reply }) => {
                    asked += 1;
                    let key = format!("bridge-{token}-{asked}");
                    match ctx.ask(vec![(Some(key.clone()), ask.clone())]).await {
                        Ok(mut answers) => {
                            let _ = reply.send(Ok(answers.pop().unwrap_or(Value::Null)));
                        }
                        Err(e) if e.kind() == AskErrorKind::InputRequired => {
                            self.keep(
                                token,
                                Waiting {
                                    key,
                                    ask,
                                    reply,
                                    upcalls,
                                    asked,
                                },
                            );
                            return Err(e.into());
                        }
                        // Not askable here (the client did not declare it, …): the
                        // upstream server hears why, and the call goes on.
                        Err(e) => {
                            let _ = reply.send(Err(RpcError::from(e)));
                        }
                    }
                }
                None => {
                    return Err(RpcError::internal(
                        "mcp-bridge: the upstream request ended without an answer",
                    ))
                }
            }
        }
    }

    /// Keeps a waiting call until the retry comes, or [`KEPT_FOR`].
    fn keep(&self, token: String, waiting: Waiting) {
        let key = waiting.key.clone();
        lock(&self.0).insert(token.clone(), waiting);
        let kept = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(KEPT_FOR).await;
            let mut calls = lock(&kept.0);
            if calls.get(&token).is_some_and(|w| w.key == key) {
                // Dropping the reply fails the upstream ask.
                calls.remove(&token);
            }
        });
    }

    /// Starts the upstream request; what it asks and reports comes on the returned
    /// channel, then its answer.
    fn start(
        &self,
        client: &Client,
        serial: Option<&Arc<RwLock<()>>>,
        request: KeptRequest,
        ctx: &Context,
    ) -> mpsc::UnboundedReceiver<Upcall> {
        let (tx, rx) = mpsc::unbounded_channel();
        let progress = tx.clone();
        let options = super::upstream_options(ctx)
            .handlers(asking(tx.clone()))
            .on_progress(move |p| {
                let _ = progress.send(Upcall::Progress(p));
            })
            // The call may wait on the client's rounds; [`KEPT_FOR`] bounds each.
            .timeout(Duration::ZERO);
        let (client, serial) = (client.clone(), serial.cloned());
        // In the span of the request that started it: its upstream span is that one's
        // child, though it runs on across the client's rounds.
        let span = tracing::Span::current();
        tokio::spawn(tracing::Instrument::instrument(
            async move {
                let _turn = match serial {
                    Some(lock) => Some(lock.write_owned().await),
                    None => None,
                };
                let answer = match request {
                    KeptRequest::CallTool { name, args } => client
                        .call_tool_with(&name, Value::Object(args), options)
                        .await
                        .map(Answer::Tool),
                    KeptRequest::ReadResource { uri } => client
                        .read_resource_with(&uri, options)
                        .await
                        .map(Answer::Resource),
                    KeptRequest::GetPrompt { name, args } => client
                        .get_prompt_with(&name, args, options)
                        .await
                        .map(Answer::Prompt),
                };
                let _ = tx.send(Upcall::Done(answer));
            },
            span,
        ));
        rx
    }
}

/// Sends an ask to the downstream handler and waits for the answer.
async fn ask(tx: &mpsc::UnboundedSender<Upcall>, ask: Ask) -> Result<Value, RpcError> {
    let (reply, answer) = oneshot::channel();
    tx.send(Upcall::Ask { ask, reply })
        .map_err(|_| RpcError::internal("mcp-bridge: the downstream call is gone"))?;
    answer
        .await
        .map_err(|_| RpcError::internal("mcp-bridge: the client did not answer in time"))?
}

/// The upstream call's handlers: each ask goes to the downstream handler of the moment.
fn asking(tx: mpsc::UnboundedSender<Upcall>) -> ClientHandlers {
    let (s, e, r) = (tx.clone(), tx.clone(), tx);
    ClientHandlers::new()
        .sampling(move |request| {
            let tx = s.clone();
            async move {
                let answer = ask(&tx, Ask::CreateMessage(request.to_params())).await?;
                Ok(SampledMessage::from_result(&answer))
            }
        })
        .elicitation(move |request| {
            let tx = e.clone();
            async move {
                let question = match request.url.clone() {
                    Some(url) => Ask::ElicitUrl {
                        message: request.message.clone(),
                        url,
                        elicitation_id: request.elicitation_id.clone().unwrap_or_default(),
                    },
                    None => Ask::Elicit {
                        message: request.message.clone(),
                        requested_schema: request
                            .requested_schema
                            .clone()
                            .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
                    },
                };
                let answer = ask(&tx, question).await?;
                Ok(match answer.get("action").and_then(Value::as_str) {
                    Some("accept") => Elicitation::Accept(
                        answer
                            .get("content")
                            .and_then(Value::as_object)
                            .cloned()
                            .unwrap_or_default(),
                    ),
                    Some("decline") => Elicitation::Decline,
                    _ => Elicitation::Cancel,
                })
            }
        })
        .roots(move || {
            let tx = r.clone();
            async move {
                let answer = ask(&tx, Ask::ListRoots).await?;
                Ok(Root::from_result(&answer))
            }
        })
}
