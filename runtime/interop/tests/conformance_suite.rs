//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! `tests/conformance/`, installed on first use under `target/conformance`) against the
//! example over HTTP, in both of its requirement sets: `2025-11-25` drives the stateful
//! wire (initialize, `Mcp-Session-Id`), `2026-07-28` the stateless one, on one URL.
//!
//! The suite's CLI runs each set and writes one result folder per scenario; the scoring is
//! done here, strictly (as `run-conformance.sh --strict`): the scenarios a set lists under
//! `server:` (the suite's score) and its `not_scored` ones (extensions such as `tasks`,
//! pending scenarios) must each run with no failing check. The figures are printed even
//! when the test passes.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::Value;

mod kit;

use kit::pinned::{self, Pinned};
use kit::process::HttpServer;

const REQUIREMENT_SETS: [&str; 2] = ["2025-11-25", "2026-07-28"];

#[test]
fn official_conformance_suite_passes_every_scenario_strictly() {
    pinned::ensure(Pinned::ConformanceSuite);
    let server = HttpServer::start();
    let url = server.url("/mcp");
    // One folder per run, so that two runs in one target directory cannot mix results;
    // kept when something fails, for the details.
    let results = pinned::conformance_dir()
        .join("results")
        .join(std::process::id().to_string());
    let _ = fs::remove_dir_all(&results);
    fs::create_dir_all(&results).expect("results folder");

    let mut summary = Vec::new();
    let mut timings = Vec::new();
    let mut failures = Vec::new();
    for revision in REQUIREMENT_SETS {
        let started = Instant::now();
        let out_dir = results.join(revision);
        let log_path = results.join(format!("{revision}.log"));
        let exit = run_suite(&url, revision, &out_dir, &log_path);
        let score = score(revision, &out_dir);
        let elapsed = started.elapsed();
        failures.extend(score.failures.iter().cloned());
        // The suite exits 1 when a check it scores fails (listed above, from its results);
        // any other exit is a crash, and a failing exit with no failure found here means
        // the two scorings disagree: both need a look at the log.
        match exit {
            Some(0) => {}
            Some(1) if !score.failures.is_empty() => {}
            other => failures.push(format!(
                "[{revision}] the suite exited {other:?}; log: {}\n{}",
                log_path.display(),
                tail(&log_path, 30)
            )),
        }
        summary.push(score.line(revision));
        timings.push(format!("{revision} in {:.1} s", elapsed.as_secs_f64()));
    }
    let overall = if failures.is_empty() { "PASS" } else { "FAIL" };
    summary.push(format!("OVERALL: {overall}"));
    // Straight to stderr, past the test harness's capture: the figures are the point of
    // this test, and CI shows them without running the suite a second time.
    let _ = writeln!(
        std::io::stderr(),
        "\nofficial MCP conformance suite against {url} ({}):\n{}",
        timings.join(", "),
        summary.join("\n")
    );
    assert!(
        failures.is_empty(),
        "conformance checks failed (results: {}; server log below):\n{}\n\nserver:\n{}",
        results.display(),
        failures.join("\n"),
        server.log()
    );
    let _ = fs::remove_dir_all(&results);
}

/// Runs one requirement set; its output goes to `log`. The exit status, `None` if killed.
fn run_suite(url: &str, revision: &str, out_dir: &Path, log: &Path) -> Option<i32> {
    let log_file = File::create(log).expect("log file");
    let status = Command::new("bash")
        .arg(pinned::conformance_src().join("conformance.sh"))
        .args(["server", "--url", url, "--requirements", revision, "-o"])
        .arg(out_dir)
        .env("MCP_CONFORMANCE_DIR", pinned::conformance_dir())
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().expect("log file"))
        .stderr(log_file)
        .status()
        .expect("running the conformance suite");
    status.code()
}

/// One requirement set, scored.
#[derive(Default)]
struct Score {
    /// Checks of the scored scenarios: SUCCESS, FAILURE (plus scored scenarios with no
    /// results), WARNING, SKIPPED. INFO counts nowhere.
    passed: usize,
    failed: usize,
    warnings: usize,
    skipped: usize,
    /// Scored scenarios with no failing check, out of how many the set scores.
    clean: usize,
    scored: usize,
    /// Not-scored scenarios that ran, how many of them have a failing check, and their checks.
    not_scored_run: usize,
    not_scored_failing: usize,
    not_scored_passed: usize,
    not_scored_failed: usize,
    /// One line per failing check, scored or not.
    failures: Vec<String>,
}

impl Score {
    fn line(&self, revision: &str) -> String {
        format!(
            "{revision}: {} passed, {} failed (required scenarios clean: {}/{}; warnings: {}; \
             skipped: {}; not scored: {} run, {} failing, {} passed/{} failed checks)",
            self.passed,
            self.failed,
            self.clean,
            self.scored,
            self.warnings,
            self.skipped,
            self.not_scored_run,
            self.not_scored_failing,
            self.not_scored_passed,
            self.not_scored_failed
        )
    }
}

fn score(revision: &str, out_dir: &Path) -> Score {
    let set = requirement_set(revision);
    let scored: Vec<&str> = set["server"]
        .as_array()
        .expect("server scenarios")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let not_scored: Vec<&str> = set["notScored"]
        .as_array()
        .expect("not-scored scenarios")
        .iter()
        .filter_map(|entry| entry["scenario"].as_str())
        .collect();
    let results = results(out_dir);
    let mut score = Score {
        scored: scored.len(),
        ..Score::default()
    };
    for scenario in scored {
        let Some(checks) = results.get(scenario) else {
            score.failed += 1;
            score.failures.push(format!(
                "[{revision}] {scenario}: no results (the scenario did not run or crashed)"
            ));
            continue;
        };
        let mut clean = true;
        for check in checks {
            match check["status"].as_str() {
                Some("SUCCESS") => score.passed += 1,
                Some("FAILURE") => {
                    score.failed += 1;
                    clean = false;
                    let why = check["errorMessage"]
                        .as_str()
                        .or_else(|| check["description"].as_str())
                        .unwrap_or_default();
                    score.failures.push(format!(
                        "[{revision}] {scenario}: {} — {}",
                        check["id"].as_str().unwrap_or("?"),
                        why.lines().next().unwrap_or_default()
                    ));
                }
                Some("WARNING") => score.warnings += 1,
                Some("SKIPPED") => score.skipped += 1,
                _ => {}
            }
        }
        if clean {
            score.clean += 1;
        }
    }
    for scenario in not_scored {
        let Some(checks) = results.get(scenario) else {
            score.not_scored_failing += 1;
            score.failures.push(format!(
                "[{revision}] {scenario} (not scored): no results (the scenario did not run or crashed)"
            ));
            continue;
        };
        for check in checks.iter().filter(|c| c["status"] == "FAILURE") {
            let why = check["errorMessage"]
                .as_str()
                .or_else(|| check["description"].as_str())
                .unwrap_or_default();
            score.failures.push(format!(
                "[{revision}] {scenario} (not scored): {} — {}",
                check["id"].as_str().unwrap_or("?"),
                why.lines().next().unwrap_or_default()
            ));
        }
        let count = |status: &str| checks.iter().filter(|c| c["status"] == status).count();
        let failed = count("FAILURE");
        score.not_scored_run += 1;
        score.not_scored_passed += count("SUCCESS");
        score.not_scored_failed += failed;
        if failed > 0 {
            score.not_scored_failing += 1;
        }
    }
    score
}

/// The set's scored and not-scored server scenarios, read by `requirements.mjs` from the
/// installed suite.
fn requirement_set(revision: &str) -> Value {
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
    serde_json::from_slice(&out.stdout).expect("requirement set JSON")
}

/// The checks of each scenario in `out_dir`, from its `server-<scenario>-<timestamp>/checks.json`
/// folders (the latest run of a scenario wins; an unreadable file is one failing check).
fn results(out_dir: &Path) -> BTreeMap<String, Vec<Value>> {
    // `-2026-07-28T12-00-00-000Z`
    const STAMP: usize = 25;
    let mut names: Vec<String> = fs::read_dir(out_dir)
        .map(|dir| {
            dir.filter_map(Result::ok)
                .filter_map(|entry| entry.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut results = BTreeMap::new();
    for name in names {
        let Some(rest) = name.strip_prefix("server-") else {
            continue;
        };
        let Some(scenario) = rest
            .len()
            .checked_sub(STAMP)
            .and_then(|end| rest.get(..end))
            .filter(|_| rest.ends_with('Z'))
        else {
            continue;
        };
        let file = out_dir.join(&name).join("checks.json");
        let Ok(text) = fs::read_to_string(&file) else {
            continue;
        };
        let checks = serde_json::from_str::<Vec<Value>>(&text).unwrap_or_else(|e| {
            vec![serde_json::json!({
                "id": "checks-json-unreadable",
                "status": "FAILURE",
                "errorMessage": format!("{}: {e}", file.display()),
            })]
        });
        results.insert(scenario.to_owned(), checks);
    }
    results
}

/// The last `lines` lines of a file, for a failure message.
fn tail(path: &Path, lines: usize) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
