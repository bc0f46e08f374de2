//! The official MCP conformance suite's client mode (`conformance client`, pinned in
//! `tests/conformance/`, installed on first use under `target/conformance`) against the
//! example client `examples/conformance_client.rs`, in both requirement sets: the suite
//! starts one scenario server per client scenario and runs the client against it
//! (`MCP_CONFORMANCE_SCENARIO`, the URL as the last argument).
//!
//! Every client scenario a set requires must pass with no failing check: the `auth/*` ones
//! (the client's OAuth, `client/auth/`) too. A scenario without OAuth must also have been
//! finished by the client (it prints `<scenario>: done`); some `auth/*` scenarios expect
//! the client to give up (a mismatched resource or issuer, endless step-up), so for those
//! the checks alone decide. Of the not-scored scenarios (extensions), the ones in
//! [`NOT_SCORED_REQUIRED`] must pass too; the rest are run and counted. The figures are
//! printed even when the test passes.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

mod kit;

use kit::pinned::{self, Pinned};

const REQUIREMENT_SETS: [&str; 2] = ["2025-11-25", "2026-07-28"];

/// Not-scored scenarios the client passes (all of them), held to it so that a regression
/// fails.
const NOT_SCORED_REQUIRED: [&str; 7] = [
    "json-schema-2020-12-preservation",
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
    "auth/dpop",
    "auth/dpop-nonce",
    "auth/enterprise-managed-authorization",
    "auth/wif-jwt-bearer",
];

#[test]
fn official_client_scenarios_pass() {
    pinned::ensure(Pinned::ConformanceSuite);
    let client = kit::process::example_named("conformance_client");
    let results = pinned::conformance_dir()
        .join("client-results")
        .join(std::process::id().to_string());
    let _ = fs::remove_dir_all(&results);
    fs::create_dir_all(&results).expect("results folder");

    let mut summary = Vec::new();
    let mut failures = Vec::new();
    for revision in REQUIREMENT_SETS {
        let out_dir = results.join(revision);
        let log = results.join(format!("{revision}.log"));
        let exit = run_suite(&client, revision, &out_dir, &log);
        let set = requirement_set(revision);
        let runs = runs(&out_dir);
        let score = score(revision, &set, &runs);
        // The suite exits 1 whenever any scenario fails, auth ones included; anything
        // else is a crash.
        if !matches!(exit, Some(0 | 1)) {
            failures.push(format!(
                "[{revision}] the suite exited {exit:?}; log: {}",
                log.display()
            ));
        }
        failures.extend(score.failures.iter().cloned());
        summary.push(score.line(revision));
    }
    summary.push(format!(
        "OVERALL: {}",
        if failures.is_empty() { "PASS" } else { "FAIL" }
    ));
    let _ = writeln!(
        std::io::stderr(),
        "\nofficial MCP conformance suite, client scenarios, against {}:\n{}",
        client.display(),
        summary.join("\n")
    );
    assert!(
        failures.is_empty(),
        "client scenarios failed (results: {}):\n{}",
        results.display(),
        failures.join("\n")
    );
    let _ = fs::remove_dir_all(&results);
}

/// Runs one requirement set of client scenarios; its output goes to `log`.
fn run_suite(client: &Path, revision: &str, out_dir: &Path, log: &Path) -> Option<i32> {
    let log_file = File::create(log).expect("log file");
    Command::new("bash")
        .arg(pinned::conformance_src().join("conformance.sh"))
        .args(["client", "--command"])
        .arg(client)
        .args(["--requirements", revision, "-o"])
        .arg(out_dir)
        .env("MCP_CONFORMANCE_DIR", pinned::conformance_dir())
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().expect("log file"))
        .stderr(log_file)
        .status()
        .expect("running the conformance suite")
        .code()
}

/// A set's client scenarios: scored, and not scored.
fn requirement_set(revision: &str) -> (Vec<String>, Vec<String>) {
    let out = Command::new("node")
        .arg(pinned::conformance_src().join("requirements.mjs"))
        .arg(pinned::conformance_dir())
        .arg(revision)
        .output()
        .expect("running node requirements.mjs");
    assert!(
        out.status.success(),
        "reading requirement set {revision}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let set: Value = serde_json::from_slice(&out.stdout).expect("requirement set JSON");
    let names = |v: &Value| -> Vec<String> {
        v.as_array()
            .expect("a list")
            .iter()
            .filter_map(|e| e.as_str().or_else(|| e["scenario"].as_str()))
            .map(str::to_owned)
            .collect()
    };
    (names(&set["client"]), names(&set["notScoredClient"]))
}

/// One scenario's run: its checks and whether the client finished.
struct Run {
    checks: Vec<Value>,
    finished: bool,
}

/// The runs in `out_dir`, by scenario (`<scenario>-<timestamp>/`, `auth/` nested).
fn runs(out_dir: &Path) -> BTreeMap<String, Run> {
    // `-2026-07-28T12-00-00-000Z`
    const STAMP: usize = 25;
    let mut runs = BTreeMap::new();
    let mut dirs: Vec<PathBuf> = vec![out_dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if !path.is_dir() {
                continue;
            }
            let checks_file = path.join("checks.json");
            if !checks_file.exists() {
                dirs.push(path);
                continue;
            }
            let relative = path
                .strip_prefix(out_dir)
                .expect("inside")
                .to_string_lossy()
                .into_owned();
            let Some(scenario) = relative
                .len()
                .checked_sub(STAMP)
                .and_then(|end| relative.get(..end))
            else {
                continue;
            };
            let checks = fs::read_to_string(&checks_file)
                .ok()
                .and_then(|t| serde_json::from_str::<Vec<Value>>(&t).ok())
                .unwrap_or_else(|| {
                    vec![serde_json::json!({"id": "checks-json-unreadable", "status": "FAILURE"})]
                });
            let stderr = fs::read_to_string(path.join("stderr.txt")).unwrap_or_default();
            runs.insert(
                scenario.to_owned(),
                Run {
                    checks,
                    finished: stderr.contains(&format!("{scenario}: done")),
                },
            );
        }
    }
    runs
}

#[derive(Default)]
struct Score {
    /// Required scenarios without OAuth: clean, of how many; their checks.
    clean: usize,
    required: usize,
    passed: usize,
    failed: usize,
    /// `auth/*` scenarios the set requires: clean, of how many.
    auth_clean: usize,
    auth: usize,
    /// Not-scored scenarios run, and clean.
    not_scored_clean: usize,
    not_scored: usize,
    /// Not-scored scenarios with a failing check.
    not_scored_unclean: Vec<String>,
    failures: Vec<String>,
}

impl Score {
    fn line(&self, revision: &str) -> String {
        format!(
            "{revision}: required client scenarios without OAuth clean: {}/{} ({} passed, {} failed checks); \
             auth/*: {}/{} clean; not scored (extensions): {}/{} clean{}",
            self.clean,
            self.required,
            self.passed,
            self.failed,
            self.auth_clean,
            self.auth,
            self.not_scored_clean,
            self.not_scored,
            if self.not_scored_unclean.is_empty() {
                String::new()
            } else {
                format!(" (not: {})", self.not_scored_unclean.join(", "))
            }
        )
    }
}

fn failing(checks: &[Value]) -> Vec<String> {
    checks
        .iter()
        .filter(|c| c["status"] == "FAILURE")
        .map(|c| {
            format!(
                "{} — {}",
                c["id"].as_str().unwrap_or("?"),
                c["errorMessage"]
                    .as_str()
                    .or_else(|| c["description"].as_str())
                    .unwrap_or_default()
                    .lines()
                    .next()
                    .unwrap_or_default()
            )
        })
        .collect()
}

fn score(
    revision: &str,
    (scored, not_scored): &(Vec<String>, Vec<String>),
    runs: &BTreeMap<String, Run>,
) -> Score {
    let mut score = Score::default();
    for scenario in scored {
        let run = runs.get(scenario);
        let clean = run.is_some_and(|r| failing(&r.checks).is_empty() && !r.checks.is_empty());
        if scenario.starts_with("auth/") {
            score.auth += 1;
            score.auth_clean += usize::from(clean);
            match run {
                None => score
                    .failures
                    .push(format!("[{revision}] {scenario}: no results")),
                Some(run) if run.checks.is_empty() => score
                    .failures
                    .push(format!("[{revision}] {scenario}: no checks")),
                Some(run) => {
                    for f in failing(&run.checks) {
                        score.failures.push(format!("[{revision}] {scenario}: {f}"));
                    }
                }
            }
            continue;
        }
        score.required += 1;
        let Some(run) = run else {
            score
                .failures
                .push(format!("[{revision}] {scenario}: no results"));
            continue;
        };
        let failed = failing(&run.checks);
        score.passed += run
            .checks
            .iter()
            .filter(|c| c["status"] == "SUCCESS")
            .count();
        score.failed += failed.len();
        for f in &failed {
            score.failures.push(format!("[{revision}] {scenario}: {f}"));
        }
        if !run.finished {
            score.failures.push(format!(
                "[{revision}] {scenario}: the client did not finish (see its stderr.txt)"
            ));
        }
        if clean && run.finished {
            score.clean += 1;
        }
    }
    for scenario in not_scored {
        if let Some(run) = runs.get(scenario) {
            score.not_scored += 1;
            let failed = failing(&run.checks);
            score.not_scored_clean += usize::from(failed.is_empty());
            if !failed.is_empty() {
                score.not_scored_unclean.push(scenario.clone());
            }
            if NOT_SCORED_REQUIRED.contains(&scenario.as_str()) {
                for f in failed {
                    score.failures.push(format!("[{revision}] {scenario}: {f}"));
                }
            }
        } else if NOT_SCORED_REQUIRED.contains(&scenario.as_str()) {
            score
                .failures
                .push(format!("[{revision}] {scenario}: no results"));
        }
    }
    score
}
