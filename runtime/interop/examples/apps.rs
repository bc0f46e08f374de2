//! An MCP Apps server to copy from: a tool linked to an HTML app the host renders in a
//! sandboxed iframe, and a tool only that app calls (through the host), with the
//! `io.modelcontextprotocol/ui` extension declared. The app speaks the extension's
//! JSON-RPC over `postMessage` by hand, without a library, so that every message it
//! exchanges with the host is in this file.
//!
//! `cargo run -p mcp-interop --example apps` serves one client on stdio;
//! `… -- --http 127.0.0.1:3000` serves `http://127.0.0.1:3000/mcp`.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use mcp_runtime::apps::{App, Visibility};
use mcp_runtime::model::{Implementation, Tool};
use mcp_runtime::Server;
use mcp_runtime_http::{self as transport, Transport};

/// What `counter` takes.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Start {
    /// Where the counter starts (default: where it is).
    start: Option<i64>,
}

/// What `increment` takes.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Step {
    /// How much to add (default 1).
    by: Option<i64>,
}

/// What both tools answer (as `structuredContent`, and as JSON text for older clients).
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Count {
    count: i64,
}

const VIEW: &str = "ui://counter/view.html";

/// The app. It announces itself with `ui/initialize` and `ui/notifications/initialized`,
/// shows the count of each `ui/notifications/tool-result`, and on "+1" asks the host for
/// `tools/call increment`, which the host passes on to this server.
const VIEW_HTML: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>Counter</title>
<style>body{font:16px system-ui;margin:1em}#count{font-size:3em;font-weight:bold}</style>
</head><body>
<div>Count</div><div id="count">…</div>
<button id="plus" disabled>+1</button>
<div id="status">connecting</div>
<script>
let nextId = 1;
const pending = new Map();
const send = (message) => window.parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
const request = (method, params) => new Promise((resolve, reject) => {
  const id = nextId++;
  pending.set(id, { resolve, reject });
  send({ id, method, params });
});
const show = (result) => {
  const count = result.structuredContent && result.structuredContent.count;
  if (typeof count === "number") document.getElementById("count").textContent = String(count);
};
window.addEventListener("message", (event) => {
  if (event.source !== window.parent) return;
  const m = event.data;
  if (!m || m.jsonrpc !== "2.0") return;
  if (m.id !== undefined && !m.method) {
    const waiting = pending.get(m.id);
    pending.delete(m.id);
    if (waiting) m.error ? waiting.reject(m.error) : waiting.resolve(m.result);
  } else if (m.method === "ui/notifications/tool-result") {
    show(m.params);
  } else if (m.id !== undefined) {
    // Requests from the host (ping, ui/resource-teardown) need no work here.
    send({ id: m.id, result: {} });
  }
});
document.getElementById("plus").addEventListener("click", async () => {
  const status = document.getElementById("status");
  try {
    const result = await request("tools/call", { name: "increment", arguments: { by: 1 } });
    show(result);
    status.textContent = "incremented";
  } catch (e) {
    status.textContent = "error: " + JSON.stringify(e);
  }
});
(async () => {
  await request("ui/initialize", {
    appInfo: { name: "counter-view", version: "1.0.0" },
    appCapabilities: {},
    protocolVersion: "2026-01-26",
  });
  send({ method: "ui/notifications/initialized", params: {} });
  document.getElementById("plus").disabled = false;
  document.getElementById("status").textContent = "ready";
})();
</script>
</body></html>
"#;

fn apps_server() -> Server {
    let count = Arc::new(AtomicI64::new(0));
    let on_increment = Arc::clone(&count);
    Server::builder(Implementation::new("counter", "1.0.0").title("Counter"))
        .app(
            App::new(VIEW, "counter view", VIEW_HTML)
                .title("Counter")
                .description("The count, with a button that adds one")
                .prefers_border(true),
        )
        .structured_tool::<Start, Count, _, _>(
            Tool::new("counter", "Shows the counter in an interactive view")
                .title("Counter")
                .app(VIEW),
            move |request, _ctx| {
                let count = Arc::clone(&count);
                async move {
                    if let Some(start) = request.start {
                        count.store(start, Ordering::SeqCst);
                    }
                    Ok(Count {
                        count: count.load(Ordering::SeqCst),
                    })
                }
            },
        )
        // The app's button: hidden from the model, called by the app through the host.
        .structured_tool::<Step, Count, _, _>(
            Tool::new("increment", "Adds to the counter").app_visibility([Visibility::App]),
            move |request, _ctx| {
                let count = Arc::clone(&on_increment);
                async move {
                    let by = request.by.unwrap_or(1);
                    Ok(Count {
                        count: count.fetch_add(by, Ordering::SeqCst) + by,
                    })
                }
            },
        )
        .build()
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    transport::run(apps_server(), Transport::from_args()).await
}
