//! The one timeout policy of the tests, their clients and the load example: anything a
//! test expects — a message, an answer, an HTTP response, an event, a process exit, a
//! condition it polls for — may take this long, and not arriving within it is a failure
//! (never a pass). 20 s by default: far beyond what anything takes on a loaded machine,
//! short enough that a hang fails instead of stalling the run. `MCP_TEST_TIMEOUT_MS`
//! changes it (a slow emulator, a debugger).
//!
//! Dependency-free, so that `examples/load.rs` includes it by path.

use std::sync::OnceLock;
use std::time::Duration;

/// The default of [`patience`].
pub const DEFAULT_PATIENCE: Duration = Duration::from_secs(20);

/// How long to wait for anything expected (`MCP_TEST_TIMEOUT_MS`, default 20 s).
pub fn patience() -> Duration {
    static PATIENCE: OnceLock<Duration> = OnceLock::new();
    *PATIENCE.get_or_init(|| {
        std::env::var("MCP_TEST_TIMEOUT_MS")
            .ok()
            .and_then(|ms| ms.trim().parse::<u64>().ok())
            .filter(|ms| *ms > 0)
            .map_or(DEFAULT_PATIENCE, Duration::from_millis)
    })
}
