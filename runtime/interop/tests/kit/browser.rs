//! A real browser for the tests of what browsers do (CORS): Debian's `chromium`, headless,
//! loading a page and printing its DOM once the page's script has run. Installed with
//! apt-get on first use when missing (as `.ci/run` does); a browser is never downloaded
//! by a test.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use super::patience::patience;

const CHROMIUM: &str = "/usr/bin/chromium";

/// The browser, installed if it is missing; a failed install fails the test with what
/// to do.
pub fn chromium() -> PathBuf {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    let outcome = INSTALLED.get_or_init(|| {
        if std::path::Path::new(CHROMIUM).exists() {
            return Ok(());
        }
        let install = Command::new("apt-get")
            .args(["install", "-y", "chromium"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .output();
        match install {
            Ok(out) if out.status.success() && std::path::Path::new(CHROMIUM).exists() => Ok(()),
            Ok(out) => Err(format!(
                "installing chromium failed ({}): {}\n(Debian/Ubuntu: `apt-get install -y chromium`; `.ci/run` installs it)",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            )),
            Err(e) => Err(format!(
                "apt-get: {e}\n(Debian/Ubuntu: `apt-get install -y chromium`; `.ci/run` installs it)"
            )),
        }
    });
    if let Err(message) = outcome {
        panic!("{message}");
    }
    PathBuf::from(CHROMIUM)
}

/// Loads `url` in headless Chromium and returns the page's DOM once its scripts settled:
/// virtual time runs up to 10 s and waits for the page's network requests, so a page
/// whose script writes the outcome of its `fetch` calls into the document shows it here.
pub fn dump_dom(url: &str) -> String {
    let profile = tempfile::tempdir().expect("a browser profile directory");
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--virtual-time-budget=10000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(url)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starting chromium");
    let stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap_or_default());
    let started = std::time::Instant::now();
    loop {
        if child.try_wait().expect("waiting for chromium").is_some() {
            break;
        }
        if started.elapsed() > patience() {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "chromium did not finish loading {url} within {:?}",
                patience()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    reader.join().expect("reading chromium's output")
}
