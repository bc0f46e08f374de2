//! A cancellation flag that tasks can wait on: set once, seen by every clone. The runtime
//! needs only this much of `tokio_util::sync::CancellationToken` (no child tokens, no drop
//! guards); having it here keeps a stdio-only server at two crates fewer to build
//! (tokio-util and futures-sink; see the build cost in BENCHMARKS.md).

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::Poll;

use tokio::sync::Notify;

/// A cancellation flag shared by its clones.
#[derive(Clone, Debug, Default)]
pub struct CancellationToken(Arc<Inner>);

#[derive(Debug, Default)]
struct Inner {
    cancelled: AtomicBool,
    notify: Notify,
}

impl CancellationToken {
    /// A token not yet cancelled.
    #[doc(hidden)]
    pub fn new() -> CancellationToken {
        CancellationToken::default()
    }

    /// Cancels: every waiter wakes, and every later wait returns at once.
    #[doc(hidden)]
    pub fn cancel(&self) {
        if !self.0.cancelled.swap(true, Ordering::SeqCst) {
            self.0.notify.notify_waiters();
        }
    }

    /// Whether `other` is this token (not a copy of its state: the same token).
    pub(crate) fn same_as(&self, other: &CancellationToken) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Whether it was cancelled.
    #[doc(hidden)]
    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::SeqCst)
    }

    /// Waits until it is cancelled.
    #[doc(hidden)]
    pub async fn cancelled(&self) {
        loop {
            let notified = self.0.notify.notified();
            tokio::pin!(notified);
            // Registered before the flag is read: a cancel in between still wakes us.
            notified.as_mut().enable();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }

    /// Waits until it is cancelled (a future that owns the token).
    #[doc(hidden)]
    pub async fn cancelled_owned(self) {
        self.cancelled().await;
    }
}

/// Which of two futures finished first.
pub enum First<A, B> {
    /// The first one.
    A(A),
    /// The second one.
    B(B),
}

/// Polls `a`, then `b`, until one is ready; the other is dropped. This is `tokio::select!`
/// with `biased;` for two branches, all the runtime needs of it: `select!` needs tokio's
/// `macros` feature, which builds tokio-macros and syn for a stdio-only server that has
/// no other use for them (see the build cost in BENCHMARKS.md).
pub async fn first<A: Future, B: Future>(a: A, b: B) -> First<A::Output, B::Output> {
    let mut a = std::pin::pin!(a);
    let mut b = std::pin::pin!(b);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(v) = a.as_mut().poll(cx) {
            return Poll::Ready(First::A(v));
        }
        if let Poll::Ready(v) = b.as_mut().poll(cx) {
            return Poll::Ready(First::B(v));
        }
        Poll::Pending
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::CancellationToken;
    use std::time::Duration;

    #[tokio::test]
    async fn wakes_every_waiter_and_later_waits_return_at_once() {
        let token = CancellationToken::new();
        let waiters: Vec<_> = (0..8)
            .map(|_| {
                let t = token.clone();
                tokio::spawn(async move { t.cancelled().await })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!token.is_cancelled());
        token.cancel();
        for w in waiters {
            tokio::time::timeout(Duration::from_secs(5), w)
                .await
                .expect("woken")
                .expect("joined");
        }
        tokio::time::timeout(Duration::from_millis(100), token.clone().cancelled_owned())
            .await
            .expect("already cancelled");
        assert!(token.is_cancelled());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cancel_racing_the_wait_is_never_missed() {
        for _ in 0..2000 {
            let token = CancellationToken::new();
            let t = token.clone();
            let waiter = tokio::spawn(async move { t.cancelled().await });
            token.cancel();
            tokio::time::timeout(Duration::from_secs(5), waiter)
                .await
                .expect("woken")
                .expect("joined");
        }
    }
}
