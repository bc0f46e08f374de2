//! The client's legacy Streamable HTTP sessions against this runtime's own server: a
//! session the server ended (HTTP 404 for its `Mcp-Session-Id`) is replaced by a new one
//! — `initialize` without a session id, as the specification requires — and the failed
//! request is sent once more on it (it never ran), a request made meanwhile waiting for
//! the new session; and a server that polls its SSE
//! streams (2025-11-25) closes the connection of a long call's stream, which the client
//! resumes with `GET` + `Last-Event-ID` after the advised `retry`, as often as it takes,
//! until the answer comes. The renewed session is subscribed again to the resources the
//! caller subscribed to.

// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::Request;
use axum::middleware::{self, Next};
use mcp_runtime::model::{Implementation, LogLevel, Resource, Tool, ToolResult};
use mcp_runtime::{ProtocolVersion, Server, ServerEvent, ToolError};
use mcp_runtime_client::{Client, Notification, Notifications};
use mcp_runtime_http::{router, HttpConfig, SsePolling};
use serde_json::json;
use tokio::sync::Semaphore;

mod kit;

/// What the server saw of the HTTP exchanges: every `(method, had a session id, its
/// Last-Event-ID)`.
type Seen = Arc<Mutex<Vec<(String, bool, Option<String>)>>>;

/// Serves `server` over HTTP with `config`, recording each request in `seen`.
async fn serve(server: Server, config: HttpConfig, seen: &Seen) -> String {
    let seen = Arc::clone(seen);
    let app =
        router(server, config).layer(middleware::from_fn(move |request: Request, next: Next| {
            let seen = Arc::clone(&seen);
            async move {
                let headers = request.headers();
                seen.lock().unwrap().push((
                    request.method().to_string(),
                    headers.contains_key("mcp-session-id"),
                    headers
                        .get("last-event-id")
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned),
                ));
                next.run(request).await
            }
        }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}/mcp")
}

/// `count` answers how often it ran (and logs it at debug level); `gate` answers when the
/// test opens the gate.
fn server(runs: &Arc<AtomicUsize>, gate: &Arc<Semaphore>) -> Server {
    let (runs, gate) = (Arc::clone(runs), Arc::clone(gate));
    Server::builder(Implementation::new("sessions", "1"))
        .tool(Tool::new("count", "Counts its runs"), move |_, ctx| {
            let runs = Arc::clone(&runs);
            async move {
                let n = runs.fetch_add(1, Ordering::SeqCst) + 1;
                ctx.log(LogLevel::Debug, None, json!(format!("run {n}")))
                    .await;
                Ok::<_, ToolError>(ToolResult::text(n.to_string()))
            }
        })
        .tool(
            Tool::new("gate", "Answers when let through"),
            move |_, _| {
                let gate = Arc::clone(&gate);
                async move {
                    gate.acquire().await.unwrap().forget();
                    Ok::<_, ToolError>(ToolResult::text("through"))
                }
            },
        )
        .build()
}

fn text(result: &ToolResult) -> String {
    match result.content.first() {
        Some(mcp_runtime::model::Content::Text { text, .. }) => text.clone(),
        other => panic!("not text: {other:?}"),
    }
}

fn initializes(seen: &Seen) -> usize {
    // An initialize is the only POST without a session id in a legacy session.
    seen.lock()
        .unwrap()
        .iter()
        .filter(|(method, session, _)| method == "POST" && !session)
        .count()
}

#[tokio::test]
async fn a_session_the_server_ended_is_replaced_and_the_request_sent_again() {
    for revision in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let runs = Arc::new(AtomicUsize::new(0));
        let gate = Arc::new(Semaphore::new(0));
        let seen: Seen = Arc::default();
        let mut config = HttpConfig::default();
        config.session_idle_timeout = Duration::from_millis(200);
        let url = serve(server(&runs, &gate), config, &seen).await;
        let client = Client::builder(Implementation::new("sessions-test", "1"))
            .timeout(kit::patience())
            .pin(ProtocolVersion::parse(revision).unwrap())
            .connect_url(&url)
            .await
            .unwrap();
        client.set_log_level(LogLevel::Debug).await.unwrap();
        let mut notifications = client.notifications();
        assert_eq!(
            text(&client.call_tool("count", json!({})).await.unwrap()),
            "1"
        );
        assert_eq!(initializes(&seen), 1, "{revision}");

        // Idle expiry is the subject here: the server ends the idle session (time is what
        // this waits for), then answers 404 for it.
        tokio::time::sleep(Duration::from_millis(800)).await;
        let result = client.call_tool("count", json!({})).await;
        let result = result.unwrap_or_else(|e| panic!("{revision}: {e}"));
        // Run once on the new session: the 404'd attempt never ran.
        assert_eq!(text(&result), "2", "{revision}");
        assert_eq!(runs.load(Ordering::SeqCst), 2, "{revision}");
        assert_eq!(
            initializes(&seen),
            2,
            "{revision}: {:?}",
            seen.lock().unwrap()
        );
        // The new session has the log level the caller set on the old one.
        let mut logged = Vec::new();
        while let Some(n) = notifications.try_recv() {
            if let Notification::Log { data, .. } = n {
                logged.push(data);
            }
        }
        assert_eq!(logged, vec![json!("run 1"), json!("run 2")], "{revision}");
        client.close().await;
    }
}

#[tokio::test]
async fn a_polled_stream_is_resumed_until_its_answer() {
    let runs = Arc::new(AtomicUsize::new(0));
    let gate = Arc::new(Semaphore::new(0));
    let seen: Seen = Arc::default();
    let mut config = HttpConfig::default();
    config.sse_polling =
        Some(SsePolling::new(Duration::from_millis(100)).close_after(Duration::from_millis(200)));
    let url = serve(server(&runs, &gate), config, &seen).await;
    let client = Client::builder(Implementation::new("polling-test", "1"))
        .timeout(kit::patience())
        .pin(ProtocolVersion::parse("2025-11-25").unwrap())
        .connect_url(&url)
        .await
        .unwrap();
    assert_eq!(client.version().as_str(), "2025-11-25");
    let resumptions = || {
        seen.lock()
            .unwrap()
            .iter()
            // Stream 0 is the session's GET stream (it polls too); the others are POSTs'.
            .filter(|(method, _, last)| {
                method == "GET" && last.as_ref().is_some_and(|id| !id.starts_with("0-"))
            })
            .count()
    };
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("gate", json!({})).await }
    });
    // Let the call be polled more often than the client's limit of reconnections that
    // bring nothing new (five): each connection carries a `retry` field, so it counts
    // as progress.
    kit::eventually("the call's stream was resumed eight times", || {
        resumptions() >= 8
    })
    .await;
    gate.add_permits(1);
    let result = call.await.unwrap().unwrap();
    assert_eq!(text(&result), "through");
    client.close().await;
}

/// Notifies `uri`'s update until the client hears of it (the session's GET stream may not
/// be open yet when the first one goes out); fails after the test's patience.
async fn hears_of_update(server: &Server, notifications: &mut Notifications, uri: &str) {
    let deadline = tokio::time::Instant::now() + kit::patience();
    while tokio::time::Instant::now() < deadline {
        server.notify(ServerEvent::ResourceUpdated(uri.to_owned()));
        let heard = tokio::time::timeout(Duration::from_millis(200), async {
            loop {
                match notifications.recv().await {
                    Some(Notification::ResourceUpdated { uri: updated }) if updated == uri => {
                        return true
                    }
                    Some(_) => continue,
                    None => return false,
                }
            }
        })
        .await;
        match heard {
            Ok(true) => return,
            Ok(false) => panic!("the client closed before hearing of {uri}"),
            Err(_) => continue,
        }
    }
    panic!("no notifications/resources/updated for {uri}");
}

#[tokio::test]
async fn a_renewed_session_subscribes_again_to_what_the_caller_subscribed() {
    for revision in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let runs = Arc::new(AtomicUsize::new(0));
        let seen: Seen = Arc::default();
        let server = Server::builder(Implementation::new("subscriptions", "1"))
            .tool(Tool::new("count", "Counts its runs"), {
                let runs = Arc::clone(&runs);
                move |_, _| {
                    let n = runs.fetch_add(1, Ordering::SeqCst) + 1;
                    async move { n.to_string() }
                }
            })
            .resource(Resource::new("mem://kept", "kept"), |_, _| async { "kept" })
            .resource(Resource::new("mem://ended", "ended"), |_, _| async {
                "ended"
            })
            .build();
        let mut config = HttpConfig::default();
        config.session_idle_timeout = Duration::from_millis(200);
        let url = serve(server.clone(), config, &seen).await;
        let client = Client::builder(Implementation::new("subscriptions-test", "1"))
            .timeout(kit::patience())
            .pin(ProtocolVersion::parse(revision).unwrap())
            .connect_url(&url)
            .await
            .unwrap();
        let mut notifications = client.notifications();
        client.subscribe("mem://kept").await.unwrap();
        client.subscribe("mem://ended").await.unwrap();
        client.unsubscribe("mem://ended").await.unwrap();
        hears_of_update(&server, &mut notifications, "mem://kept").await;

        // The server ends the idle session; the next call renews it.
        tokio::time::sleep(Duration::from_millis(800)).await;
        client.call_tool("count", json!({})).await.unwrap();
        assert_eq!(initializes(&seen), 2, "{revision}");
        // The new session sends the subscribed resource's updates, and only its.
        hears_of_update(&server, &mut notifications, "mem://kept").await;
        server.notify(ServerEvent::ResourceUpdated("mem://ended".into()));
        hears_of_update(&server, &mut notifications, "mem://kept").await;
        while let Some(n) = notifications.try_recv() {
            assert!(
                !matches!(&n, Notification::ResourceUpdated { uri } if uri == "mem://ended"),
                "{revision}: an update of a resource the caller unsubscribed from"
            );
        }
        client.close().await;
    }
}

#[tokio::test]
async fn a_request_made_while_the_session_is_renewed_waits_for_the_new_one() {
    let runs = Arc::new(AtomicUsize::new(0));
    let gate = Arc::new(Semaphore::new(0));
    // Once armed, every initialize (the only POST without a session id) is held a while,
    // so that a second request is made while the first one renews the session.
    let armed = Arc::new(AtomicBool::new(false));
    let held = Arc::new(AtomicUsize::new(0));
    let app = router(server(&runs, &gate), {
        let mut config = HttpConfig::default();
        config.session_idle_timeout = Duration::from_millis(200);
        config
    })
    .layer(middleware::from_fn({
        let (armed, held) = (Arc::clone(&armed), Arc::clone(&held));
        move |request: Request, next: Next| {
            let (armed, held) = (Arc::clone(&armed), Arc::clone(&held));
            async move {
                let initialize = request.method() == axum::http::Method::POST
                    && !request.headers().contains_key("mcp-session-id");
                if initialize && armed.load(Ordering::SeqCst) {
                    held.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                next.run(request).await
            }
        }
    }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let client = Client::builder(Implementation::new("renewal-test", "1"))
        .timeout(kit::patience())
        .pin(ProtocolVersion::parse("2025-11-25").unwrap())
        .connect_url(&url)
        .await
        .unwrap();
    client.call_tool("count", json!({})).await.unwrap();
    armed.store(true, Ordering::SeqCst);
    // The server ends the idle session.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let first = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("count", json!({})).await }
    });
    kit::eventually("the first request renews the session", || {
        held.load(Ordering::SeqCst) >= 1
    })
    .await;
    let second = client.call_tool("count", json!({})).await;
    let first = first.await.unwrap();
    assert!(first.is_ok(), "{first:?}");
    assert!(second.is_ok(), "{second:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    assert_eq!(held.load(Ordering::SeqCst), 1, "one renewal for both");
    client.close().await;
}
