//! Future combinators: `join_all`, `try_join_all` and `catch_unwind`, all the runtime's
//! stdio path needs of futures-util. Having them here keeps a stdio-only server at four
//! crates fewer to build (futures-util, futures-core, futures-task, slab; BENCHMARKS.md
//! §4.1 has the build costs). The HTTP transport, on axum, builds
//! futures-util anyway and uses it directly.
//!
//! The joins poll every unfinished future on each wake-up, as futures-util does for small
//! sets: the runtime joins a batch's requests or one handler's asks, a handful of futures.

use std::future::Future;
use std::panic::{AssertUnwindSafe, UnwindSafe};
use std::pin::Pin;
use std::task::Poll;

/// A boxed future that can move between threads (futures-util's `BoxFuture`).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Runs every future concurrently and yields their outputs in the order given.
pub(crate) async fn join_all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let result: Result<Vec<F::Output>, std::convert::Infallible> =
        try_join_outputs(futures, Ok).await;
    match result {
        Ok(all) => all,
        Err(never) => match never {},
    }
}

/// Runs every future concurrently; yields their outputs in the order given once all
/// succeeded, or the first error as soon as one fails (the others are dropped).
pub(crate) async fn try_join_all<T, E, F: Future<Output = Result<T, E>>>(
    futures: Vec<F>,
) -> Result<Vec<T>, E> {
    try_join_outputs(futures, |r| r).await
}

/// The loop of both: `check` turns each output into a value to keep or an error to stop
/// at.
async fn try_join_outputs<F: Future, T, E>(
    futures: Vec<F>,
    check: impl Fn(F::Output) -> Result<T, E>,
) -> Result<Vec<T>, E> {
    // Boxed so that each can be polled in place while the vector is not moved.
    let mut pending: Vec<Option<Pin<Box<F>>>> =
        futures.into_iter().map(|f| Some(Box::pin(f))).collect();
    let mut outputs: Vec<Option<T>> = Vec::new();
    outputs.resize_with(pending.len(), || None);
    let mut left = pending.len();
    std::future::poll_fn(|cx| {
        for (slot, output) in pending.iter_mut().zip(outputs.iter_mut()) {
            let Some(future) = slot else { continue };
            if let Poll::Ready(value) = future.as_mut().poll(cx) {
                *slot = None;
                left -= 1;
                match check(value) {
                    Ok(value) => *output = Some(value),
                    Err(e) => return Poll::Ready(Err(e)),
                }
            }
        }
        if left == 0 {
            Poll::Ready(Ok(()))
        } else {
            Poll::Pending
        }
    })
    .await?;
    Ok(outputs.into_iter().flatten().collect())
}

/// Runs `future`, catching a panic in any of its polls as `Err` (the future is not polled
/// again after one).
pub(crate) async fn catch_unwind<F: Future + UnwindSafe>(
    future: F,
) -> std::thread::Result<F::Output> {
    let mut future = std::pin::pin!(future);
    std::future::poll_fn(|cx| {
        // The future is unwind-safe (the bound) and is dropped, never polled again, after
        // a panic.
        match std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::{catch_unwind, join_all, try_join_all};
    use std::time::Duration;

    #[tokio::test]
    async fn outputs_come_in_the_order_given_whatever_finishes_first() {
        let delays = [30u64, 0, 10];
        let futures = delays
            .iter()
            .map(|&ms| async move {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                ms
            })
            .collect();
        assert_eq!(join_all(futures).await, vec![30, 0, 10]);
        assert!(join_all(Vec::<std::future::Ready<u8>>::new())
            .await
            .is_empty());
    }

    #[tokio::test]
    async fn the_futures_run_concurrently() {
        // Each waits for the next one's signal: run one after the other, they would hang.
        let (tx1, rx1) = tokio::sync::oneshot::channel::<()>();
        let (tx2, rx2) = tokio::sync::oneshot::channel::<()>();
        let first = Box::pin(async move {
            rx1.await.ok();
            1
        }) as super::BoxFuture<'static, i32>;
        let second = Box::pin(async move {
            tx1.send(()).ok();
            rx2.await.ok();
            2
        });
        let third = Box::pin(async move {
            tx2.send(()).ok();
            3
        });
        let all =
            tokio::time::timeout(Duration::from_secs(5), join_all(vec![first, second, third]))
                .await
                .expect("joined");
        assert_eq!(all, vec![1, 2, 3]);
    }

    #[tokio::test]
    async fn the_first_error_ends_the_wait_at_once() {
        let slow_ok = Box::pin(async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok::<u8, &str>(1)
        }) as super::BoxFuture<'static, Result<u8, &str>>;
        let fails = Box::pin(async { Err::<u8, &str>("declined") });
        let answer =
            tokio::time::timeout(Duration::from_secs(5), try_join_all(vec![slow_ok, fails]))
                .await
                .expect("did not wait for the slow one");
        assert_eq!(answer, Err("declined"));
        let all_ok: Vec<std::future::Ready<Result<u8, ()>>> =
            vec![std::future::ready(Ok(1)), std::future::ready(Ok(2))];
        assert_eq!(try_join_all(all_ok).await, Ok(vec![1, 2]));
    }

    #[tokio::test]
    async fn a_panic_in_a_later_poll_is_caught() {
        let panics = std::panic::AssertUnwindSafe(async {
            tokio::task::yield_now().await;
            if std::hint::black_box(true) {
                panic!("the handler failed");
            }
            1
        });
        assert!(catch_unwind(panics).await.is_err());
        assert_eq!(catch_unwind(async { 2 }).await.ok(), Some(2));
    }
}
