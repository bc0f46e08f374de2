//! Official SDK clients of every era (pinned in `tests/clients/`, installed on first use
//! under `target/clients` by `kit::pinned`) against the conformance example over
//! stdio: each connects, lists and calls tools, reads a resource and gets a prompt, at the
//! revision its release speaks.

use std::process::Command;

use serde_json::Value;

mod kit;

use kit::pinned;
use kit::process::example;

fn run(client: &str) -> Value {
    pinned::ensure_client(client);
    let out = Command::new("bash")
        .arg(pinned::clients_src().join("run-client.sh"))
        .arg(client)
        .env("MCP_CLIENTS_DIR", pinned::clients_dir())
        .arg("--")
        .arg(example())
        .output()
        .unwrap_or_else(|e| panic!("{client}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    let summary: Value = serde_json::from_str(line).unwrap_or_else(|e| {
        panic!(
            "{client}: no JSON summary ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(summary["ok"], true, "{client} failed: {summary}");
    summary
}

fn check(client: &str, revision: &str) {
    let s = run(client);
    assert_eq!(
        s["protocolVersion"], revision,
        "{client}: negotiated revision"
    );
    let tools: Vec<&str> = s["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        tools.contains(&"test_simple_text") && tools.contains(&"test_structured_output"),
        "{client}: {tools:?}"
    );
    let text = s["callResult"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(
        text, "This is a simple text response for testing.",
        "{client}: {s}"
    );
    let resource = &s["resource"]["contents"][0];
    assert_eq!(resource["uri"], "test://static-text", "{client}: {s}");
    assert!(
        resource["text"]
            .as_str()
            .unwrap_or_default()
            .contains("static text resource"),
        "{client}"
    );
    let prompt = &s["prompt"]["messages"][0]["content"]["text"];
    assert_eq!(
        prompt, "This is a simple prompt for testing.",
        "{client}: {s}"
    );
}

macro_rules! clients {
    ($($test:ident: $client:literal => $revision:literal,)*) => {$(
        #[test]
        fn $test() {
            check($client, $revision);
        }
    )*};
}

clients! {
    typescript_sdk_2024_11_05: "ts-2024-11-05" => "2024-11-05",
    typescript_sdk_2025_03_26: "ts-2025-03-26" => "2025-03-26",
    typescript_sdk_2025_06_18: "ts-2025-06-18" => "2025-06-18",
    typescript_sdk_2025_11_25: "ts-2025-11-25" => "2025-11-25",
    typescript_client_2026_07_28_pinned: "ts-2026-07-28-pinned" => "2026-07-28",
    typescript_client_2026_07_28_auto: "ts-2026-07-28-auto" => "2026-07-28",
    python_sdk_2024_11_05: "py-2024-11-05" => "2024-11-05",
    python_sdk_2025_03_26: "py-2025-03-26" => "2025-03-26",
    python_sdk_2025_06_18: "py-2025-06-18" => "2025-06-18",
    python_sdk_2025_11_25: "py-2025-11-25" => "2025-11-25",
    python_client_2026_07_28_pinned: "py-2026-07-28-pinned" => "2026-07-28",
    python_client_2026_07_28_auto: "py-2026-07-28-auto" => "2026-07-28",
}
