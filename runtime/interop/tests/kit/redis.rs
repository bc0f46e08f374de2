//! A real `redis-server` for the replica tests: on a free loopback port, in a temporary
//! directory, without persistence; stopped (and restarted on the same port) at will. And
//! the highly available shapes built of it (issue 33): a primary with a replica watched
//! by three sentinels ([`Sentinels`]), and a cluster of three primaries with a replica
//! each ([`Cluster`]). Sentinels are the same binary (`redis-server --sentinel`), and a
//! cluster needs only `redis-cli`, which Debian's `redis-server` package brings.

use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use super::patience;

/// A `redis-server` on a free loopback port, in a temporary directory, killed on drop.
pub struct Redis {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl Redis {
    /// Starts one (failing, naming what to install, without `redis-server`).
    pub fn start() -> Redis {
        let found = Command::new("redis-server")
            .arg("--version")
            .stdout(Stdio::null())
            .status();
        assert!(
            found.is_ok_and(|s| s.success()),
            "redis-server is not installed: these tests need a real Redis \
             (Debian/Ubuntu: `apt-get install -y redis-server`; `.ci/run` installs it)"
        );
        Redis::on_port(free_port())
    }

    /// Starts one on `port`.
    pub fn on_port(port: u16) -> Redis {
        Redis::on_port_with(port, &[])
    }

    /// Starts one on a free port with more configuration (`["--replicaof", …]`).
    pub fn start_with(extra: &[&str]) -> Redis {
        Redis::on_port_with(free_port(), extra)
    }

    /// Starts one on `port` with more configuration.
    pub fn on_port_with(port: u16, extra: &[&str]) -> Redis {
        let dir = tempfile::tempdir().expect("a directory for redis-server");
        let mut command = Command::new("redis-server");
        command
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(dir.path())
            .args(extra);
        Redis::spawn(command, port, dir)
    }

    fn spawn(mut command: Command, port: u16, dir: tempfile::TempDir) -> Redis {
        let child = command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawning redis-server: {e}"));
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < patience(),
                "redis-server did not listen on {port}"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Redis {
            child,
            port,
            _dir: dir,
        }
    }

    /// `redis://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Kills it (its data is gone).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// `redis-cli -p PORT ARGS…`'s output (an empty string if it could not run).
    pub fn cli(&self, args: &[&str]) -> String {
        cli(self.port, args)
    }
}

/// `redis-cli -p PORT ARGS…`'s output on 127.0.0.1 (an empty string if it could not run).
pub fn cli(port: u16, args: &[&str]) -> String {
    Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .stderr(Stdio::null())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// A port that was free a moment ago (redis-server cannot take port 0).
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a free loopback port");
    l.local_addr().expect("its address").port()
}

/// Waits, within the patience, until `ready` holds; panics naming `what` otherwise.
fn until(what: &str, mut ready: impl FnMut() -> bool) {
    let started = Instant::now();
    while !ready() {
        assert!(
            started.elapsed() < patience(),
            "{what}: not within the patience"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The primary's name the sentinels watch.
pub const SERVICE: &str = "mymaster";

/// A primary, its replica, and three sentinels watching them (quorum 2), deciding a
/// primary is down after one second of silence: a failover takes a few seconds.
pub struct Sentinels {
    pub primary: Redis,
    pub replica: Redis,
    pub sentinels: Vec<Redis>,
}

impl Sentinels {
    /// Starts them all, and waits until the replica is in sync and every sentinel knows
    /// the replica and the two other sentinels (so that a failover can be agreed on).
    pub fn start() -> Sentinels {
        // A replica's first full sync waits `repl-diskless-sync-delay` (5 s) for others.
        let primary = Redis::start_with(&["--repl-diskless-sync-delay", "0"]);
        let replica = Redis::start_with(&["--replicaof", "127.0.0.1", &primary.port.to_string()]);
        let sentinels = (0..3)
            .map(|_| {
                let port = free_port();
                let dir = tempfile::tempdir().expect("a directory for a sentinel");
                // A sentinel rewrites its configuration file: it needs one of its own.
                let conf = dir.path().join("sentinel.conf");
                let text = format!(
                    "port {port}\nbind 127.0.0.1\ndir {dir}\n\
                     sentinel monitor {SERVICE} 127.0.0.1 {primary} 2\n\
                     sentinel down-after-milliseconds {SERVICE} 1000\n\
                     sentinel failover-timeout {SERVICE} 10000\n\
                     sentinel parallel-syncs {SERVICE} 1\n",
                    dir = dir.path().display(),
                    primary = primary.port,
                );
                std::fs::write(&conf, text).expect("writing sentinel.conf");
                let mut command = Command::new("redis-server");
                command.arg(&conf).arg("--sentinel");
                Redis::spawn(command, port, dir)
            })
            .collect::<Vec<_>>();
        until("the replica in sync", || {
            replica
                .cli(&["INFO", "replication"])
                .contains("master_link_status:up")
        });
        for sentinel in &sentinels {
            until("every sentinel knowing the replica and the others", || {
                let info = sentinel.cli(&["INFO", "sentinel"]);
                info.contains("slaves=1,sentinels=3")
            });
        }
        Sentinels {
            primary,
            replica,
            sentinels,
        }
    }

    /// `redis+sentinel://127.0.0.1:S1,127.0.0.1:S2,127.0.0.1:S3/mymaster`.
    pub fn url(&self) -> String {
        let hosts: Vec<String> = self
            .sentinels
            .iter()
            .map(|s| format!("127.0.0.1:{}", s.port))
            .collect();
        format!("redis+sentinel://{}/{SERVICE}", hosts.join(","))
    }

    /// The port of the primary the first sentinel that answers names.
    pub fn primary_port(&self) -> Option<u16> {
        self.sentinels.iter().find_map(|s| {
            let out = s.cli(&["SENTINEL", "get-master-addr-by-name", SERVICE]);
            out.lines().nth(1)?.trim().parse().ok()
        })
    }
}

/// Three primaries with a replica each, on free ports, the slots spread by
/// `redis-cli --cluster create`.
pub struct Cluster {
    pub nodes: Vec<Redis>,
}

impl Cluster {
    /// Starts the six nodes, joins them, and waits until every node says the cluster is
    /// up.
    pub fn start() -> Cluster {
        let nodes: Vec<Redis> = (0..6)
            .map(|_| {
                Redis::start_with(&[
                    "--cluster-enabled",
                    "yes",
                    "--cluster-node-timeout",
                    "2000",
                    "--repl-diskless-sync-delay",
                    "0",
                ])
            })
            .collect();
        let addresses: Vec<String> = nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        let created = Command::new("redis-cli")
            .arg("--cluster")
            .arg("create")
            .args(&addresses)
            .args(["--cluster-replicas", "1", "--cluster-yes"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("redis-cli (Debian's redis-server package brings it)");
        assert!(created.success(), "redis-cli --cluster create failed");
        for node in &nodes {
            until("the cluster up on every node", || {
                node.cli(&["CLUSTER", "INFO"]).contains("cluster_state:ok")
            });
            // A replica that never synced with its primary would not take over from it.
            until("every replica in sync", || {
                let role = node.cli(&["INFO", "replication"]);
                role.contains("role:master") || role.contains("master_link_status:up")
            });
        }
        Cluster { nodes }
    }

    /// `redis+cluster://` with the first three nodes' addresses.
    pub fn url(&self) -> String {
        let hosts: Vec<String> = self
            .nodes
            .iter()
            .take(3)
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        format!("redis+cluster://{}", hosts.join(","))
    }

    /// The nodes that are primaries now.
    pub fn primaries(&self) -> Vec<&Redis> {
        self.nodes
            .iter()
            .filter(|n| n.cli(&["ROLE"]).starts_with("master"))
            .collect()
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}
