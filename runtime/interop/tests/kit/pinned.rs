//! The pinned external programs the tests drive, installed on first use under
//! `<workspace>/target/`: the official SDK clients (`tests/clients/install.sh` into
//! `target/clients`, or `MCP_CLIENTS_DIR`), the official conformance suite
//! (`tests/conformance/install.sh` into `target/conformance`) and the authorization server
//! of the OAuth tests (`tests/auth/package-lock.json` into `target/auth-server`), and the
//! third-party servers the command-line client and bridge tests drive
//! (`tests/servers/install.sh` into `target/servers`).
//!
//! The scripts do the work: they hold an exclusive lock while they check and install, so
//! that test binaries started together install once, and they return at once, offline,
//! while their stamps match the pins. Here each installer runs at most once per test
//! binary, and its outcome is shared by every test of the binary. A missing tool or a
//! failed install is a test failure carrying the installer's output (which names what to
//! install), never a skip: a skipped interop test looks like a passing one.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// What the tests install.
#[derive(Clone, Copy, Debug)]
pub enum Pinned {
    /// The official TypeScript SDK clients (`tests/clients/package-lock.json`).
    TypeScriptClients,
    /// The official Python SDK clients (`tests/clients/requirements-*.txt`).
    PythonClients,
    /// The official conformance suite (`tests/conformance/package-lock.json`).
    ConformanceSuite,
    /// The authorization server of the OAuth tests (`tests/auth/package-lock.json`:
    /// oidc-provider).
    AuthorizationServer,
    /// The npm servers: server-everything, server-filesystem, server-memory
    /// (`tests/servers/package-lock.json`).
    NpmServers,
    /// The PyPI servers: mcp-server-time, -git, -calculator, -sqlite
    /// (`tests/servers/requirements-*.txt`).
    PythonServers,
}

fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("runtime/interop lives in the workspace")
}

fn tests_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// Where the SDK clients are installed; `run-client.sh` is given the same directory.
pub fn clients_dir() -> PathBuf {
    std::env::var_os("MCP_CLIENTS_DIR")
        .map_or_else(|| workspace().join("target").join("clients"), PathBuf::from)
}

/// Where the conformance suite is installed.
pub fn conformance_dir() -> PathBuf {
    workspace().join("target").join("conformance")
}

/// Where the authorization server of the OAuth tests is installed.
pub fn auth_server_dir() -> PathBuf {
    workspace().join("target").join("auth-server")
}

/// Where the third-party servers are installed.
pub fn servers_dir() -> PathBuf {
    workspace().join("target").join("servers")
}

/// `runtime/interop/tests/servers`: the third-party servers' pins.
pub fn servers_src() -> PathBuf {
    tests_dir().join("servers")
}

/// `runtime/interop/tests/auth`: the authorization server's pin and script, the OAuth client drivers.
pub fn auth_src() -> PathBuf {
    tests_dir().join("auth")
}

/// `runtime/interop/tests/clients`: `run-client.sh` and the clients' pins.
pub fn clients_src() -> PathBuf {
    tests_dir().join("clients")
}

/// `runtime/interop/tests/conformance`: the suite's pin, its Node 20 preload and helpers.
pub fn conformance_src() -> PathBuf {
    tests_dir().join("conformance")
}

/// Installs `what` unless it is already installed, once per test binary; panics with the
/// installer's output when that fails (in every test that needs it).
pub fn ensure(what: Pinned) {
    static TYPESCRIPT: OnceLock<Result<(), String>> = OnceLock::new();
    static PYTHON: OnceLock<Result<(), String>> = OnceLock::new();
    static SUITE: OnceLock<Result<(), String>> = OnceLock::new();
    static AUTH: OnceLock<Result<(), String>> = OnceLock::new();
    static NPM_SERVERS: OnceLock<Result<(), String>> = OnceLock::new();
    static PYTHON_SERVERS: OnceLock<Result<(), String>> = OnceLock::new();
    let once = match what {
        Pinned::TypeScriptClients => &TYPESCRIPT,
        Pinned::PythonClients => &PYTHON,
        Pinned::ConformanceSuite => &SUITE,
        Pinned::AuthorizationServer => &AUTH,
        Pinned::NpmServers => &NPM_SERVERS,
        Pinned::PythonServers => &PYTHON_SERVERS,
    };
    if let Err(message) = once.get_or_init(|| install(what)) {
        panic!("{message}");
    }
}

/// Installs what the client `id` of `run-client.sh` needs: `ts-*` TypeScript, `py-*` Python.
pub fn ensure_client(id: &str) {
    if id.starts_with("ts-") {
        ensure(Pinned::TypeScriptClients);
    } else if id.starts_with("py-") {
        ensure(Pinned::PythonClients);
    } else {
        panic!("unknown client id {id}: expected ts-* or py-*");
    }
}

fn install(what: Pinned) -> Result<(), String> {
    let (script, args, name) = match what {
        Pinned::TypeScriptClients => (
            clients_src().join("install.sh"),
            vec![
                "--only".into(),
                "npm".into(),
                clients_dir().into_os_string(),
            ],
            "the official TypeScript SDK clients",
        ),
        Pinned::PythonClients => (
            clients_src().join("install.sh"),
            vec![
                "--only".into(),
                "python".into(),
                clients_dir().into_os_string(),
            ],
            "the official Python SDK clients",
        ),
        Pinned::ConformanceSuite => (
            conformance_src().join("install.sh"),
            vec![conformance_dir().into_os_string()],
            "the official conformance suite",
        ),
        Pinned::AuthorizationServer => (
            tests_dir().join("kit").join("npm-pinned.sh"),
            vec![
                auth_src().into_os_string(),
                auth_server_dir().into_os_string(),
            ],
            "the OAuth tests' authorization server (oidc-provider)",
        ),
        Pinned::NpmServers => (
            servers_src().join("install.sh"),
            vec![
                "--only".into(),
                "npm".into(),
                servers_dir().into_os_string(),
            ],
            "the third-party npm servers",
        ),
        Pinned::PythonServers => (
            servers_src().join("install.sh"),
            vec![
                "--only".into(),
                "python".into(),
                servers_dir().into_os_string(),
            ],
            "the third-party PyPI servers",
        ),
    };
    let out = Command::new("bash")
        .arg(&script)
        .args(&args)
        .output()
        .map_err(|e| {
            format!(
                "installing {name}: cannot run bash {}: {e}",
                script.display()
            )
        })?;
    let output = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        eprint!("{output}");
        Ok(())
    } else {
        Err(format!(
            "installing {name} failed ({}): {} said:\n{output}",
            out.status,
            script.display()
        ))
    }
}
