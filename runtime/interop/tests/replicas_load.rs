//! Issue 18's load run, scaled down (`examples/replica_load.rs`; BENCHMARKS.md §6 has the
//! full size): three replica processes on a real `redis-server` behind the kit's
//! round-robin front, clients of every legacy revision (Streamable HTTP sessions, some
//! with a GET stream and a resource subscription) and of 2026-07-28 (stateless), every
//! answer checked to be its caller's own, with its session's declared client name. Once
//! undisturbed, once with replica 1 killed mid-run and restarted (only requests it was
//! running fail, as errors, and every session goes on), once with Redis restarted mid-run
//! (clear errors meanwhile, never silence, then every session goes on).
//!
//! Needs `redis-server` on the PATH (see tests/replicas.rs) and the `replica_load`
//! example built (`cargo build -p mcp-interop --examples`; `cargo test --workspace` does).

mod kit;

#[path = "../examples/replica_load.rs"]
#[allow(dead_code, unreachable_pub, clippy::duplicate_mod)]
mod replica_load;

use kit::redis::Redis;
use replica_load::{Disruption, OwnRedis};

/// 40 clients: every legacy revision four times over (`LEGACY[(n / 10) % 4]`), a GET
/// stream in each ten, two stateless 2026-07-28 clients in each ten.
const CLIENTS: usize = 40;
const CALLS: usize = 25;

async fn run(disruption: Disruption<'_>) -> replica_load::ReplicaReport {
    let redis = Redis::start();
    let exe = kit::process::example_named("replica_load");
    let report = replica_load::replica_load(&exe, &redis.url(), CLIENTS, CALLS, disruption)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{report}");
    report
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_replicas_behind_a_front_lose_and_cross_nothing() {
    let report = run(Disruption::Nothing).await;
    assert!(report.clean(), "{report}");
    let l = &report.load;
    assert_eq!(
        (l.answered, l.errors),
        ((CLIENTS * CALLS) as u64, 0),
        "{report}"
    );
    assert!(l.notifications_expected > 0, "{report}");
    // Round robin: every replica served its share.
    assert!(report.forwarded.iter().all(|n| *n > 0), "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_and_restarted_mid_run_fails_only_what_it_was_running() {
    let report = run(Disruption::KillReplica).await;
    // `clean` holds: nothing lost (no silence), crossed or duplicated; every call answered
    // or failed once; failures only at the killed replica, no more than the front saw
    // fail there; the restarted replica served again without a failure.
    assert!(report.clean(), "{report}");
    let fault = report.fault.as_ref().unwrap_or_else(|| panic!("{report}"));
    assert!(fault.restarted_at > fault.killed_at, "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_restart_mid_run_gives_clear_errors_then_everything_goes_on() {
    // A persistent Redis of the run's own (sessions survive its restart, as with a
    // production Redis that persists), restarted a third of the way in.
    let mut redis = OwnRedis::start().await.unwrap_or_else(|e| panic!("{e}"));
    let exe = kit::process::example_named("replica_load");
    let url = redis.url();
    let disruption = Disruption::RestartRedis(&mut redis);
    let report = replica_load::replica_load(&exe, &url, CLIENTS, CALLS, disruption)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{report}");
    // `clean`: no silence (nothing lost), nothing crossed or duplicated, every call
    // answered or failed with a clear error, the replicas never failing at the front, and
    // every client's last call answered (its session went on).
    assert!(report.clean(), "{report}");
    assert!(report.redis_restart.is_some(), "{report}");
}
