//! The accept loop of [`super::serve_listener_with_shutdown`]: each connection served by
//! hyper's HTTP/1 server with a service of our own, which hands `POST /mcp` with a body of
//! known length within the limit straight to its handler and everything else (GET and
//! DELETE `/mcp`, `/sse`, `/messages`, the authorization metadata, longer or chunked
//! bodies, unknown paths) to the axum router, unchanged. Through `axum::serve`, the router,
//! its layers and the service wrappers around it cost ~5–6k instructions of a ~57k
//! request (BENCHMARKS.md §8.3.1); the handler does every check itself (authorization,
//! Host and Origin, the body limit for a known length), so skipping the router changes
//! nothing a client sees. [`super::router`] stays for users who mount us in their own app.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, HttpBody};
use axum::extract::State;
use axum::http::{Method, Request};
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tower::ServiceExt;

use super::sessions::AppState;
use super::streamable;
use mcp_runtime::cancel::CancellationToken;

/// Accepts connections until `stop` is cancelled, then asks every connection to end
/// gracefully (hyper finishes the request in progress and closes) and returns once all
/// have ended — what `axum::serve(...).with_graceful_shutdown(...)` did.
pub(super) async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    state: Arc<AppState>,
    stop: CancellationToken,
) -> std::io::Result<()> {
    // Every connection's task holds a receiver; `closed()` resolves when all are gone.
    let (open_tx, open_rx) = tokio::sync::watch::channel(());
    let limit = u64::try_from(state.server.limits().max_message_bytes).unwrap_or(u64::MAX);
    // CORS is a layer of the router: with it, every request goes through the router.
    let direct_path = state.config.cors.is_none();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stop.clone().cancelled_owned() => break,
        };
        let (tcp, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) if is_connection_error(&e) => continue,
            Err(e) => {
                // Out of file descriptors, say: wait instead of spinning (as axum does).
                tracing::error!("accept: {e}");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        // Nagle's algorithm stalls small SSE writes by ~40 ms per request with some clients.
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::warn!("TCP_NODELAY: {e}");
        }
        let (router, state, stop, open) = (
            router.clone(),
            Arc::clone(&state),
            stop.clone(),
            open_rx.clone(),
        );
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                let direct = direct_path
                    && request.method() == Method::POST
                    && request.uri().path() == "/mcp"
                    && request
                        .body()
                        .size_hint()
                        .exact()
                        .is_some_and(|length| length <= limit);
                let mut request = request.map(Body::new);
                if mcp_runtime::observe::spans_enabled() {
                    request
                        .extensions_mut()
                        .insert(crate::authorize::PeerAddr(peer));
                }
                let (router, state) = (router.clone(), Arc::clone(&state));
                async move {
                    if direct {
                        Ok::<_, Infallible>(streamable::post_mcp(State(state), request).await)
                    } else {
                        router.oneshot(request).await
                    }
                }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tcp), service)
                .with_upgrades();
            tokio::pin!(connection);
            let stopping = stop.cancelled_owned();
            tokio::pin!(stopping);
            let mut asked = false;
            loop {
                tokio::select! {
                    result = connection.as_mut() => {
                        if let Err(e) = result {
                            tracing::trace!("connection: {e}");
                        }
                        break;
                    }
                    () = &mut stopping, if !asked => {
                        asked = true;
                        connection.as_mut().graceful_shutdown();
                    }
                }
            }
            drop(open);
        });
    }
    drop(listener);
    drop(open_rx);
    open_tx.closed().await;
    Ok(())
}

/// Errors of one connection, not of the listener: the next accept may succeed at once.
fn is_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        e.kind(),
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset
    )
}
