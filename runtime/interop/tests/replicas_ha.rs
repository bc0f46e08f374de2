//! Issue 33, point 3: the load run of `tests/replicas_load.rs` on Redis that is itself
//! highly available or sharded, through the URL forms `docs/deployment.md` documents —
//! a primary with a replica watched by three sentinels, the primary killed mid-run
//! (the failover happens, every call ends in its answer or a visible error, every
//! session created before the kill goes on); and a cluster of three primaries with a
//! replica each, sessions spread over the shards by their hash tags. On both, the task
//! store's script, compare-and-set and listing work too.
//!
//! Needs `redis-server` and `redis-cli` on the PATH (Debian's `redis-server` package; the
//! sentinels are `redis-server --sentinel`) and the `replica_load` example built
//! (`cargo build -p mcp-interop --examples`).

mod kit;

#[path = "../examples/replica_load.rs"]
#[allow(dead_code, unreachable_pub, clippy::duplicate_mod)]
mod replica_load;

use std::time::{Duration, Instant};

use kit::http::Http;
use kit::process::HttpServer;
use kit::redis::{Cluster, Sentinels};
use replica_load::Disruption;
use serde_json::json;

const CLIENTS: usize = 40;
const CALLS: usize = 25;

/// The contract of `conformance_server --http ADDR --redis URL` for `url`: two replicas
/// of the example started with it, a session opened on one and called on the other.
async fn the_example_shares_sessions_through(url: &str) {
    std::env::set_var(
        "MCP_STATE_KEY",
        "replicas-ha-test-shared-key-0123456789abcdef",
    );
    let servers: Vec<HttpServer> = (0..2)
        .map(|_| HttpServer::start_example_with("conformance_server", &["--redis", url]))
        .collect();
    let (a, b) = (
        Http::new(&servers[0].url("")),
        Http::new(&servers[1].url("")),
    );
    let session = a.session("2025-06-18", json!({})).await;
    let call = kit::request(
        1,
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "through the store"}}),
    );
    let answer = b.post(&[("mcp-session-id", &session)], &call).await;
    let messages = answer.messages();
    assert_eq!(
        messages[0]["result"]["content"][0]["text"], "through the store",
        "{}",
        answer.body
    );
}

/// A URL the example cannot use: it exits at start-up naming what is wrong.
fn the_example_refuses(url: &str, says: &str) {
    let out = std::process::Command::new(kit::process::example_named("conformance_server"))
        .args(["--http", "127.0.0.1:0", "--redis", url])
        .output()
        .expect("conformance_server runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{url}: {stderr}");
    assert!(stderr.contains(says), "{url}: {stderr}");
}

#[test]
fn bad_redis_urls_are_refused_at_start_up() {
    the_example_refuses(
        "redis+sentinel://127.0.0.1:26379",
        "names the primary's service",
    );
    the_example_refuses("redis+cluster://127.0.0.1:7000/2", "only database 0");
    the_example_refuses("redis+cluster://127.0.0.1:x", "is not a port");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sentinel_fails_over_mid_run_and_every_session_goes_on() {
    let mut ha = Sentinels::start();
    let exe = kit::process::example_named("replica_load");
    let url = ha.url();
    let (old, new) = (ha.primary.port, ha.replica.port);
    assert_eq!(ha.primary_port(), Some(old));
    let mut failover = None;
    let fault = {
        let ha = &mut ha;
        let failover = &mut failover;
        Box::pin(async move {
            ha.primary.stop();
            // The sentinels agree the primary is down, elect one of them, and promote
            // the replica.
            *failover = Some(primary_becomes(ha, new).await?);
            Ok(())
        })
    };
    let report =
        replica_load::replica_load(&exe, &url, CLIENTS, CALLS, Disruption::RedisFault(fault))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    let failover = failover.unwrap_or_else(|| panic!("no failover: {report}"));
    eprintln!("{report}\nfailover: the sentinels named the replica {failover:.2?} after the kill");
    // `clean`: nothing lost (no silence), crossed or duplicated; every call answered or
    // failed with a clear error; every client's last call answered — its session, made
    // before the kill, went on on the new primary.
    assert!(report.clean(), "{report}");
    assert!(report.redis_restart.is_some(), "{report}");
    assert!(ha.replica.cli(&["ROLE"]).starts_with("master"), "{report}");
    // New sessions and tasks are written to the new primary: the example takes the
    // Sentinel URL after the failover as before it.
    the_example_shares_sessions_through(&url).await;
    tasks_work_on(&url).await;
}

/// Waits until the sentinels name the server on `port` primary: how long that took.
async fn primary_becomes(ha: &Sentinels, port: u16) -> Result<Duration, String> {
    let started = Instant::now();
    while ha.primary_port() != Some(port) {
        if started.elapsed() > Duration::from_secs(30) {
            return Err(format!("{port} not primary within 30 s"));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sentinel_switchover_mid_run_moves_the_store_off_the_demoted_primary() {
    // The old primary lives on as a read-only replica (an operator's `SENTINEL
    // FAILOVER`, or a partition healed): the store must leave it, not write to it.
    let ha = Sentinels::start();
    let exe = kit::process::example_named("replica_load");
    let url = ha.url();
    let new = ha.replica.port;
    let mut switched = None;
    let fault = {
        let (ha, switched) = (&ha, &mut switched);
        Box::pin(async move {
            let asked = ha.sentinels[0].cli(&["SENTINEL", "FAILOVER", kit::redis::SERVICE]);
            if !asked.starts_with("OK") {
                return Err(format!("SENTINEL FAILOVER: {asked}"));
            }
            *switched = Some(primary_becomes(ha, new).await?);
            Ok(())
        })
    };
    let report =
        replica_load::replica_load(&exe, &url, CLIENTS, CALLS, Disruption::RedisFault(fault))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    let switched = switched.unwrap_or_else(|| panic!("no switchover: {report}"));
    eprintln!(
        "{report}
switchover: the sentinels named the replica {switched:.2?} after asked"
    );
    assert!(report.clean(), "{report}");
    let demoted = Instant::now();
    while !ha.primary.cli(&["ROLE"]).starts_with("slave") {
        assert!(
            demoted.elapsed() < kit::patience(),
            "the old primary was not demoted"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    the_example_shares_sessions_through(&url).await;
    tasks_work_on(&url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_spreads_sessions_over_its_shards_and_loses_nothing() {
    let cluster = Cluster::start();
    the_example_shares_sessions_through(&cluster.url()).await;
    let exe = kit::process::example_named("replica_load");
    let report =
        replica_load::replica_load(&exe, &cluster.url(), CLIENTS, CALLS, Disruption::Nothing)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{report}");
    assert!(report.clean(), "{report}");
    let l = &report.load;
    assert_eq!(
        (l.answered, l.errors),
        ((CLIENTS * CALLS) as u64, 0),
        "{report}"
    );
    assert!(l.notifications_expected > 0, "{report}");
    assert!(report.forwarded.iter().all(|n| *n > 0), "{report}");
    // Sessions' stream events, by shard: each session's keys on its own slot, the
    // sessions on every primary.
    let primaries = cluster.primaries();
    assert_eq!(primaries.len(), 3);
    let per_shard: Vec<usize> = primaries
        .iter()
        .map(|p| {
            p.cli(&["--scan", "--pattern", "mcp:e:*"])
                .lines()
                .filter(|l| !l.is_empty())
                .count()
        })
        .collect();
    eprintln!("stream event keys per primary: {per_shard:?}");
    assert!(per_shard.iter().all(|n| *n > 0), "{per_shard:?}");
    tasks_work_on(&cluster.url()).await;
}

/// The task store on `url`: its insert script (the per-owner bound), compare-and-set
/// update and listing, whose keys must share one slot on a cluster.
async fn tasks_work_on(url: &str) {
    use mcp_runtime::server::tasks::{TaskRecord, TaskStatus, TaskStoreError};
    use mcp_runtime_http::SessionStore;
    let store = mcp_runtime_redis::RedisStore::connect(url)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let tasks = store.task_store().expect("RedisStore keeps tasks");
    let record = |id: &str| {
        TaskRecord::from_json(&json!({
            "id": id, "owner": "ha-owner", "version": "2025-11-25", "status": "working",
            "createdAtMs": 1, "updatedAtMs": 1, "ttlMs": 60_000, "pollIntervalMs": 100,
        }))
        .expect("a task record")
    };
    for id in ["ha-task-1", "ha-task-2"] {
        tasks
            .insert(record(id), 2)
            .await
            .unwrap_or_else(|e| panic!("{id}: {e}"));
    }
    // The bound, checked by the script against the owner's live records.
    assert!(matches!(
        tasks.insert(record("ha-task-3"), 2).await,
        Err(TaskStoreError::TooMany(2))
    ));
    let updated = tasks
        .update(
            "ha-task-1",
            Box::new(|r: &mut TaskRecord| {
                r.status = TaskStatus::Completed;
                true
            }),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .expect("the task exists");
    assert_eq!(updated.status, TaskStatus::Completed);
    let found = tasks
        .get("ha-task-1")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(found.map(|r| r.status), Some(TaskStatus::Completed));
    let mut listed: Vec<String> = tasks
        .list("ha-owner")
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|r| r.id)
        .collect();
    listed.sort();
    assert_eq!(listed, ["ha-task-1", "ha-task-2"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_shard_fails_over_mid_run_and_every_session_goes_on() {
    // A shard that does not hold the replicas' bus (`mcp:bus`): its sessions' requests
    // fail visibly until its replica is promoted, the others' go on. (When the bus's own
    // shard fails over, the replicas do not yet hear the bus again: open work.)
    let mut cluster = Cluster::start();
    let exe = kit::process::example_named("replica_load");
    let url = cluster.url();
    let mut failover = None;
    let fault = {
        let (cluster, failover) = (&mut cluster, &mut failover);
        Box::pin(async move {
            let victim = cluster
                .nodes
                .iter()
                .position(|n| {
                    n.cli(&["ROLE"]).starts_with("master")
                        && n.cli(&["EXISTS", "mcp:bus"]).trim() != "1"
                })
                .ok_or("no primary without mcp:bus")?;
            let killed = Instant::now();
            cluster.nodes[victim].stop();
            // The killed node answers nothing: three primaries again once its replica is
            // promoted (after `cluster-node-timeout`).
            while cluster.primaries().len() < 3
                || !cluster.nodes[(victim + 1) % 6]
                    .cli(&["CLUSTER", "INFO"])
                    .contains("cluster_state:ok")
            {
                if killed.elapsed() > Duration::from_secs(30) {
                    return Err("no failover within 30 s".to_owned());
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            *failover = Some(killed.elapsed());
            Ok(())
        })
    };
    let report =
        replica_load::replica_load(&exe, &url, CLIENTS, CALLS, Disruption::RedisFault(fault))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    let failover = failover.unwrap_or_else(|| panic!("no failover: {report}"));
    eprintln!("{report}\nfailover: the shard's replica was primary {failover:.2?} after the kill");
    assert!(report.clean(), "{report}");
    the_example_shares_sessions_through(&url).await;
}
