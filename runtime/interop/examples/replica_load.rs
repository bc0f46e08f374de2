//! Issue 18's load run: three replicas sharing sessions through Redis, behind a round-robin
//! front with no affinity, under the checked client mix of `examples/load.rs` (legacy
//! Streamable HTTP sessions of 2024-11-05 … 2025-11-25, some holding a GET stream with a
//! resource subscription; 2024-11-05 HTTP+SSE sessions; stateless 2026-07-28 requests;
//! progress and log notifications on every second call); every answer must carry its
//! own nonce, request id, revision and the client name its session declared at
//! `initialize` (which only the shared session record can give the replica that answers).
//! With `--kill`, replica 1 is killed (SIGKILL) a third of the way in and restarted on
//! its port a sixth later: only the requests it was running may fail — each with an
//! error status or a cut connection, never silence — and its sessions go on elsewhere:
//! cut POST answers and GET streams are resumed with `Last-Event-ID` through the front
//! (a request the dead replica was running then ends with a `-32603` error); an HTTP+SSE
//! session, which lives with its stream and cannot be resumed, is opened again.
//!
//! With `--restart-redis`, the Redis server (the run's own, persistent) is restarted
//! instead: requests that need it meanwhile get a clear error (503; HTTP+SSE streams end
//! and their clients connect again), nothing hangs, and every session goes on once it is
//! back.
//!
//! ```sh
//! redis-server --port 6390 --save '' --appendonly no &
//! cargo build --release -p mcp-interop --example replica_load
//! target/release/examples/replica_load redis://127.0.0.1:6390/ 300 100 --kill
//! target/release/examples/replica_load own 300 100 --restart-redis
//! ```
//!
//! Arguments: a Redis URL (or `own`: a `redis-server` of the run's own, with an
//! append-only file), CLIENTS (300), CALLS per client (100), and `--kill` or
//! `--restart-redis`. The replicas are this program again (`replica_load serve ADDR
//! REDIS_URL`), each its own process; the front (`tests/kit/front.rs`) and the clients
//! share this one. Exits 1 if anything was lost, misrouted, duplicated or failed where it
//! should not have; `MCP_LOAD_VERBOSE=1` prints every problem. `tests/replicas_load.rs`
//! runs it scaled down.

#[path = "load.rs"]
#[allow(dead_code, unreachable_pub, clippy::duplicate_mod)]
mod load;

#[path = "../tests/kit/front.rs"]
#[allow(dead_code, unreachable_pub, clippy::duplicate_mod)]
mod front;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_runtime::Limits;
use mcp_runtime_http::HttpConfig;
use mcp_runtime_redis::RedisStore;

/// How many replicas the run spreads over.
pub const REPLICAS: usize = 3;
/// The one killed (and restarted) by [`Disruption::KillReplica`].
pub const KILLED: usize = 1;

/// What happens a third of the way into the run.
pub enum Disruption<'a> {
    Nothing,
    /// Replica [`KILLED`] is killed (SIGKILL), and restarted on its port a sixth later.
    KillReplica,
    /// The Redis server is restarted (stopped, then started again on its port and data):
    /// requests that need it meanwhile are answered 503, then everything goes on.
    RestartRedis(&'a mut OwnRedis),
    /// Something done to Redis by the caller, which is over when the future is (a
    /// primary killed, and the failover seen done): judged as a restart is.
    RedisFault(
        std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), String>> + Send + 'a>>,
    ),
}

/// What a run observed: the clients' report, and the front's per replica.
pub struct ReplicaReport {
    pub load: load::Report,
    /// The calls the clients were to make, and the clients.
    pub calls: u64,
    pub clients: u64,
    /// Requests the front forwarded to each replica.
    pub forwarded: Vec<u64>,
    /// Of those, the ones that failed there (502, or the answer cut).
    pub failed: Vec<u64>,
    /// With a kill: calls answered when replica [`KILLED`] was killed and when it was
    /// back, and the requests the front forwarded to it after its restart.
    pub fault: Option<Fault>,
    /// With a Redis restart: calls answered when it stopped and when it was back, and
    /// how long it was away.
    pub redis_restart: Option<(u64, u64, Duration)>,
}

/// The kill and the restart.
pub struct Fault {
    pub killed_at: u64,
    pub restarted_at: u64,
    /// Requests forwarded to the restarted replica, and how many of those failed.
    pub forwarded_after_restart: u64,
    pub failed_after_restart: u64,
}

impl ReplicaReport {
    /// Nothing lost (no silence), misrouted, duplicated or foreign; every call answered
    /// or failed once. With a kill: failures only on the killed replica, no more than the
    /// front saw fail there, and the restarted replica served again without failing (a
    /// resource update its handler announced as it died may be missing: counted).
    /// With a Redis restart: every failure a clear one, the replicas never failing, and
    /// every client's session going on to its last call.
    pub fn clean(&self) -> bool {
        let l = &self.load;
        let untouched = l.lost == 0 && l.duplicated == 0 && l.misrouted == 0 && l.foreign == 0;
        let accounted = l.calls == self.calls
            && l.answered + l.call_errors == l.calls
            && l.notifications == l.notifications_expected;
        let failed_at = |i: usize| self.failed.get(i).copied().unwrap_or(0);
        let failed_elsewhere: u64 = (0..REPLICAS)
            .filter(|i| self.fault.is_none() || *i != KILLED)
            .map(failed_at)
            .sum();
        let failures_explained = match (&self.fault, &self.redis_restart) {
            (Some(f), _) => {
                l.errors <= failed_at(KILLED)
                    && f.forwarded_after_restart > 0
                    && f.failed_after_restart == 0
            }
            // Every failure is a clear one (no silence: `lost` is 0): 503s while Redis is
            // away, HTTP+SSE streams ended (their sessions cannot hear the other replicas
            // while the channel is down) and what their clients had posted to them; and
            // every client's last call succeeded. Server events announced between Redis
            // coming back and a replica hearing the channel again are not delivered
            // (counted, not failed: see BENCHMARKS.md §6).
            (None, Some(_)) => l.last_ok == self.clients,
            (None, None) => l.errors == 0 && l.updates_missed == 0,
        };
        untouched && accounted && failed_elsewhere == 0 && failures_explained
    }
}

impl std::fmt::Display for ReplicaReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{REPLICAS} replicas behind a round-robin front; {}",
            self.load
        )?;
        write!(
            f,
            "front: forwarded {:?}, failed there {:?}",
            self.forwarded, self.failed
        )?;
        if let Some(fault) = &self.fault {
            write!(
                f,
                "\nreplica {KILLED} killed after {} answered calls, back after {}; \
                 since then it took {} requests, {} failed",
                fault.killed_at,
                fault.restarted_at,
                fault.forwarded_after_restart,
                fault.failed_after_restart
            )?;
        }
        if let Some((stopped, back, away)) = self.redis_restart {
            write!(
                f,
                "\nRedis stopped after {stopped} answered calls, back after {back} ({away:.2?} away)"
            )?;
        }
        Ok(())
    }
}

/// A `redis-server` of the run's own, on a free loopback port, persistent (an append-only
/// file in a temporary directory) so that a restart keeps the sessions, as a production
/// Redis with persistence does; killed on drop.
pub struct OwnRedis {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
}

impl OwnRedis {
    pub async fn start() -> Result<OwnRedis, String> {
        let port = free_port()?;
        let dir = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
        let mut redis = OwnRedis {
            child: None,
            port,
            dir,
        };
        redis.spawn().await?;
        Ok(redis)
    }

    /// `redis://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    async fn spawn(&mut self) -> Result<(), String> {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "yes"])
            .arg("--dir")
            .arg(self.dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("redis-server (is it installed?): {e}"))?;
        self.child = Some(child);
        listening(&format!("127.0.0.1:{}", self.port)).await
    }

    /// Stopped (SIGTERM: it writes its data out), then started again on its port.
    async fn restart(&mut self) -> Result<(), String> {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            let _ = tokio::task::spawn_blocking(move || child.wait()).await;
        }
        self.spawn().await
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A loopback port that was free a moment ago.
fn free_port() -> Result<u16, String> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("a free port: {e}"))?
        .port())
}

/// Waits (within the patience) until something listens on `addr`.
async fn listening(addr: &str) -> Result<(), String> {
    let started = Instant::now();
    while tokio::net::TcpStream::connect(addr).await.is_err() {
        if started.elapsed() > load::patience::patience() {
            return Err(format!("nothing listens on {addr}"));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// One replica process: `exe serve ADDR REDIS_URL`, killed on drop.
struct Replica {
    exe: PathBuf,
    addr: String,
    redis: String,
    child: Option<Child>,
}

impl Replica {
    async fn start(exe: &Path, redis: &str) -> Result<Replica, String> {
        // Kept for the restart.
        let port = free_port()?;
        let mut replica = Replica {
            exe: exe.to_owned(),
            addr: format!("127.0.0.1:{port}"),
            redis: redis.to_owned(),
            child: None,
        };
        replica.spawn().await?;
        Ok(replica)
    }

    async fn spawn(&mut self) -> Result<(), String> {
        let child = Command::new(&self.exe)
            .args(["serve", &self.addr, &self.redis])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| format!("spawning {}: {e}", self.exe.display()))?;
        self.child = Some(child);
        listening(&self.addr).await
    }

    /// SIGKILL: no grace, no goodbye.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The run: [`REPLICAS`] replicas of `exe serve` on `redis`, the front, `clients` clients
/// of `calls` calls each, and a disruption a third of the way in.
pub async fn replica_load(
    exe: &Path,
    redis: &str,
    clients: usize,
    calls: usize,
    disruption: Disruption<'_>,
) -> Result<ReplicaReport, String> {
    let mut replicas = Vec::new();
    for _ in 0..REPLICAS {
        replicas.push(Replica::start(exe, redis).await?);
    }
    let urls = replicas
        .iter()
        .map(|r| format!("http://{}", r.addr))
        .collect();
    let (base, stats) = front::start_counting(urls).await;
    let tally = Arc::new(load::Tally::default());
    let run = {
        let tally = Arc::clone(&tally);
        tokio::spawn(async move { load::drive(&tally, &base, clients, calls).await })
    };
    let total = (clients * calls) as u64;
    let reached = |n: u64| {
        let tally = Arc::clone(&tally);
        let run = &run;
        async move {
            // Every client calling, and `n` calls answered (or the run over).
            while !run.is_finished() && (tally.started() < clients as u64 || tally.answered() < n) {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            tally.answered()
        }
    };
    let (mut fault, mut redis_restart) = (None, None);
    match disruption {
        Disruption::Nothing => {}
        Disruption::KillReplica => {
            let killed_at = reached(total / 3).await;
            let victim = replicas.get_mut(KILLED).ok_or("no replica to kill")?;
            victim.kill();
            let restarted_at = reached(killed_at + total / 6).await;
            victim.spawn().await?;
            let (forwarded, failed) = stats.now();
            let at_restart = (forwarded.get(KILLED).copied(), failed.get(KILLED).copied());
            fault = Some((killed_at, restarted_at, at_restart));
        }
        Disruption::RestartRedis(own) => {
            let stopped_at = reached(total / 3).await;
            let away = Instant::now();
            own.restart().await?;
            redis_restart = Some((stopped_at, tally.answered(), away.elapsed()));
        }
        Disruption::RedisFault(fault) => {
            let stopped_at = reached(total / 3).await;
            let away = Instant::now();
            fault.await?;
            redis_restart = Some((stopped_at, tally.answered(), away.elapsed()));
        }
    }
    let elapsed = run.await.map_err(|e| format!("the clients: {e}"))?;
    let (forwarded, failed) = stats.now();
    let fault = fault.map(|(killed_at, restarted_at, (f0, x0))| Fault {
        killed_at,
        restarted_at,
        forwarded_after_restart: forwarded.get(KILLED).copied().unwrap_or(0) - f0.unwrap_or(0),
        failed_after_restart: failed.get(KILLED).copied().unwrap_or(0) - x0.unwrap_or(0),
    });
    Ok(ReplicaReport {
        load: tally.report("replicas", clients, elapsed),
        calls: total,
        clients: clients as u64,
        forwarded,
        failed,
        fault,
        redis_restart,
    })
}

/// A replica: the load server with its sessions in Redis.
async fn serve(addr: &str, redis: &str) -> Result<(), String> {
    let store = RedisStore::connect(redis)
        .await
        .map_err(|e| format!("{redis}: {e}"))?;
    let mut config = HttpConfig::default().store(store);
    // Every replica keeps a copy of every session it has served.
    config.max_sessions = 100_000;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("{addr}: {e}"))?;
    mcp_runtime_http::serve_listener(load::load_server(Limits::default()), listener, config)
        .await
        .map_err(|e| e.to_string())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("runtime: {e}");
            std::process::exit(2);
        }
    };
    let usage = || -> ! {
        eprintln!(
            "usage: replica_load (REDIS_URL | own) [CLIENTS [CALLS]] [--kill | --restart-redis] \
             | replica_load serve ADDR REDIS_URL   (`own`: a redis-server of the run's own; \
             --restart-redis needs it)"
        );
        std::process::exit(2);
    };
    if let [serve_flag, addr, redis] = args.as_slice() {
        if serve_flag == "serve" {
            if let Err(e) = runtime.block_on(serve(addr, redis)) {
                eprintln!("replica: {e}");
                std::process::exit(1);
            }
            return;
        }
    }
    let flag = |name: &str| args.iter().any(|a| a == name);
    let (kill, restart_redis) = (flag("--kill"), flag("--restart-redis"));
    let rest: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let Some(redis) = rest.first() else { usage() };
    let num = |i: usize, default: usize| -> usize {
        rest.get(i)
            .map(|a| a.replace('_', "").parse().unwrap_or_else(|_| usage()))
            .unwrap_or(default)
    };
    let (clients, calls) = (num(1, 300), num(2, 100));
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!("this program's path: {e}");
            std::process::exit(2);
        }
    };
    let result = runtime.block_on(async {
        let mut own = match redis.as_str() {
            "own" => Some(OwnRedis::start().await?),
            _ => None,
        };
        let url = own
            .as_ref()
            .map_or_else(|| redis.to_string(), OwnRedis::url);
        let disruption = match (kill, restart_redis, own.as_mut()) {
            (true, false, _) => Disruption::KillReplica,
            (false, true, Some(own)) => Disruption::RestartRedis(own),
            (false, false, _) => Disruption::Nothing,
            _ => usage(),
        };
        replica_load(&exe, &url, clients, calls, disruption).await
    });
    match result {
        Ok(report) => {
            println!("{report}");
            std::process::exit(if report.clean() { 0 } else { 1 });
        }
        Err(e) => {
            eprintln!("replica_load: {e}");
            std::process::exit(1);
        }
    }
}
