//! Building the examples the end-to-end benchmarks run (`bench_server`, `bridge`): release
//! for figures, the dev profile for CI's smoke runs (which only prove the benchmark still
//! works).

/// Builds the `bench_server` example and returns the path of its executable.
pub(crate) fn build_bench_server(
    quick: bool,
) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    build_example("bench_server", quick)
}

/// Builds the example `name` of this package and returns the path of its executable.
#[allow(dead_code)] // not every benchmark builds more than `bench_server`
pub(crate) fn build_example(
    name: &str,
    quick: bool,
) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["build", "--profile", if quick { "dev" } else { "release" }])
        .args(["-p", "mcp-interop", "--example", name])
        .args(["--message-format", "json-render-diagnostics"])
        .stderr(std::process::Stdio::inherit())
        .output()?;
    if !out.status.success() {
        return Err(format!("building the {name} example failed").into());
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|m| m["target"]["name"] == name && m["executable"].is_string())
        .and_then(|m| m["executable"].as_str().map(str::to_owned))
        .ok_or_else(|| format!("cargo did not name the {name} executable").into())
}
