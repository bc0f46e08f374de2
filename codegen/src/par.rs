//! Spreading per-revision work over the cores with `std::thread::scope`: a parallel map,
//! and a two-phase map for work whose intermediate values (syn trees, which are not
//! `Send`) must stay on the thread that made them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, OnceLock};

/// Threads worth starting for `jobs` jobs: one per core, no more than there are jobs.
pub(crate) fn threads(jobs: usize) -> usize {
    std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(jobs)
        .max(1)
}

/// Job indices, costliest first (ties in input order): the big revisions dominate, and
/// starting them first keeps one thread from being left with a big one at the end.
fn costliest_first<T>(items: &[T], cost: impl Fn(&T) -> usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(cost(&items[i])));
    order
}

fn join_all<R>(handles: Vec<std::thread::ScopedJoinHandle<'_, R>>) -> Vec<R> {
    handles
        .into_iter()
        .map(|h| {
            h.join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
        .collect()
}

/// `items.iter().map(f).collect()`, the calls spread over threads; results in input order.
pub(crate) fn map<T: Sync, R: Send>(
    items: &[T],
    cost: impl Fn(&T) -> usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let threads = threads(items.len());
    if threads == 1 {
        return items.iter().map(f).collect();
    }
    let order = costliest_first(items, cost);
    let next = AtomicUsize::new(0);
    let done = std::thread::scope(|s| {
        let handles = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                        done.push((i, f(&items[i])));
                    }
                    done
                })
            })
            .collect();
        join_all(handles)
    });
    let mut out: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    for (i, r) in done.into_iter().flatten() {
        out[i] = Some(r);
    }
    out.into_iter().flatten().collect()
}

/// Two passes over `items` on `threads` threads.
///
/// `first` runs on every item (costliest first, whichever thread is free) and returns a
/// value `L` that stays on its thread and a `Send` value `M`. Once every item is done,
/// `plan` sees all the `M`s (in input order) on the calling thread; then `second` runs on
/// each `L`, on the thread that made it, with the plan. Returns the plan and the outputs of
/// `second` in input order.
///
/// Every item goes through `first` even after one fails, so that the error returned is
/// that of the first failing item in input order, as a sequential loop would report.
pub(crate) fn two_phase<T, L, M, P, O, E>(
    threads: usize,
    items: &[T],
    cost: impl Fn(&T) -> usize,
    first: impl Fn(usize, &T) -> Result<(L, M), E> + Sync,
    plan: impl FnOnce(Vec<M>) -> Result<P, E>,
    second: impl Fn(usize, L, &P) -> O + Sync,
) -> Result<(P, Vec<O>), E>
where
    T: Sync,
    M: Send,
    P: Send + Sync,
    O: Send,
    E: Send,
{
    let threads = threads.clamp(1, items.len().max(1));
    let order = costliest_first(items, cost);
    let next = AtomicUsize::new(0);
    let agreed: OnceLock<P> = OnceLock::new();
    let outputs = std::thread::scope(|s| -> Result<Vec<O>, E> {
        let (first_tx, first_rx) = mpsc::channel::<(usize, Result<M, E>)>();
        let (out_tx, out_rx) = mpsc::channel::<(usize, O)>();
        let mut go = Vec::new();
        for _ in 0..threads {
            let (go_tx, go_rx) = mpsc::channel::<()>();
            go.push(go_tx);
            let first_tx = first_tx.clone();
            let out_tx = out_tx.clone();
            let (order, next, agreed, first, second) = (&order, &next, &agreed, &first, &second);
            s.spawn(move || {
                let mut kept = Vec::new();
                while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let sent = match first(i, &items[i]) {
                        Ok((l, m)) => {
                            kept.push((i, l));
                            first_tx.send((i, Ok(m)))
                        }
                        Err(e) => first_tx.send((i, Err(e))),
                    };
                    if sent.is_err() {
                        return;
                    }
                }
                drop(first_tx);
                // A closed channel means the plan was not made (an error): nothing to do.
                if go_rx.recv().is_err() {
                    return;
                }
                let Some(plan) = agreed.get() else { return };
                for (i, l) in kept {
                    if out_tx.send((i, second(i, l, plan))).is_err() {
                        return;
                    }
                }
            });
        }
        drop(first_tx);
        drop(out_tx);
        let mut firsts: Vec<Option<Result<M, E>>> = (0..items.len()).map(|_| None).collect();
        for (i, m) in first_rx {
            firsts[i] = Some(m);
        }
        let mut ms = Vec::with_capacity(items.len());
        for m in firsts {
            match m {
                Some(Ok(m)) => ms.push(m),
                Some(Err(e)) => return Err(e),
                // A thread panicked: the scope re-raises the panic on return.
                None => return Ok(Vec::new()),
            }
        }
        let made = plan(ms)?;
        if agreed.set(made).is_err() {
            unreachable!("the plan is made once");
        }
        for g in &go {
            // A thread that is gone panicked; the scope re-raises that.
            let _ = g.send(());
        }
        drop(go);
        let mut outs: Vec<Option<O>> = (0..items.len()).map(|_| None).collect();
        for (i, o) in out_rx {
            outs[i] = Some(o);
        }
        Ok(outs.into_iter().flatten().collect())
    })?;
    let plan = agreed
        .into_inner()
        .unwrap_or_else(|| unreachable!("the plan is made before any output"));
    Ok((plan, outputs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_keeps_input_order() {
        let items: Vec<usize> = (0..50).collect();
        assert_eq!(
            map(&items, |&x| x % 7, |&x| x * 2),
            items.iter().map(|x| x * 2).collect::<Vec<_>>()
        );
    }

    #[test]
    fn two_phase_plans_over_all_and_keeps_order() {
        let items: Vec<usize> = (0..9).collect();
        for threads in 1..4 {
            let (sum, out) = two_phase(
                threads,
                &items,
                |&x| x,
                |i, &x| Ok::<_, String>((std::rc::Rc::new(i), x)),
                |ms| Ok(ms.iter().sum::<usize>()),
                |i, local, sum| (i, *local, *sum),
            )
            .expect("no error");
            assert_eq!(sum, 36);
            assert_eq!(out, items.iter().map(|&i| (i, i, 36)).collect::<Vec<_>>());
        }
    }

    #[test]
    fn two_phase_reports_the_first_error_in_input_order() {
        let items: Vec<usize> = (0..6).collect();
        let result = two_phase(
            2,
            &items,
            |&x| x,
            |_, &x| if x % 2 == 1 { Err(x) } else { Ok(((), ())) },
            |_| Ok(()),
            |_, (), ()| (),
        );
        assert_eq!(result.err(), Some(1));
    }
}
