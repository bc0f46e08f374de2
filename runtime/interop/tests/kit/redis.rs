//! A real `redis-server` for the replica tests: on a free loopback port, in a temporary
//! directory, without persistence; stopped (and restarted on the same port) at will.

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
        let port = {
            // A port that was free a moment ago (redis-server cannot take port 0).
            let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a free loopback port");
            l.local_addr().expect("its address").port()
        };
        Redis::on_port(port)
    }

    /// Starts one on `port`.
    pub fn on_port(port: u16) -> Redis {
        let dir = tempfile::tempdir().expect("a directory for redis-server");
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(dir.path())
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
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}
