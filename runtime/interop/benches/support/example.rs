//! Building the `bench_server` example for the end-to-end benchmarks: release for figures,
//! the dev profile for CI's smoke runs (which only prove the benchmark still works).

/// Builds the example and returns the path of its executable.
pub(crate) fn build_bench_server(
    quick: bool,
) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["build", "--profile", if quick { "dev" } else { "release" }])
        .args(["-p", "mcp-interop", "--example", "bench_server"])
        .args(["--message-format", "json-render-diagnostics"])
        .stderr(std::process::Stdio::inherit())
        .output()?;
    if !out.status.success() {
        return Err("building the bench_server example failed".into());
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|m| m["target"]["name"] == "bench_server" && m["executable"].is_string())
        .and_then(|m| m["executable"].as_str().map(str::to_owned))
        .ok_or_else(|| "cargo did not name the bench_server executable".into())
}
