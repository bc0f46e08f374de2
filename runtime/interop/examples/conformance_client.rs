//! The client fixture of the official MCP conformance suite: what
//! `conformance client --command "…/conformance_client"` runs for each client scenario.
//!
//! The suite passes the scenario in `MCP_CONFORMANCE_SCENARIO`, the revision it runs at in
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` (a dated revision through 2025-11-25 means the
//! `initialize` handshake, 2026-07-28 the stateless wire), scenario data in
//! `MCP_CONFORMANCE_CONTEXT` (JSON), and the server URL as the last argument. The client
//! does what the scenario expects of a client — list, call, read, answer what the server
//! asks — and exits 0, or prints the error and exits 1.
//!
//! ```sh
//! cargo build -p mcp-interop --example conformance_client
//! runtime/interop/tests/conformance/conformance.sh client --command target/debug/examples/conformance_client --scenario tools_call --spec-version 2026-07-28
//! ```

use std::time::Duration;

use mcp_runtime::model::{Elicitation, Implementation, Root, SampledMessage};
use mcp_runtime::{Era, ProtocolVersion, VersionSet};
use mcp_runtime_client::auth::{exchange_for_id_jag, ClientCredentials, SigningKey};
use mcp_runtime_client::{Client, ClientError, OAuth};
use serde_json::{json, Map, Value};

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "mcp_runtime=info".into()),
        )
        .init();
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: conformance_client <server-url> (scenario in MCP_CONFORMANCE_SCENARIO)");
        std::process::exit(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    match run(&scenario, &url, &context).await {
        Ok(()) => eprintln!("{scenario}: done"),
        Err(e) => {
            eprintln!("{scenario}: {e}");
            std::process::exit(1);
        }
    }
}

/// The revisions to speak: the one the suite runs at decides the era (legacy: any
/// legacy revision the server counter-offers is fine); without it, every revision.
fn versions() -> VersionSet {
    let requested = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
        .ok()
        .and_then(|v| ProtocolVersion::parse(&v));
    match requested {
        Some(v) if v.era() == Era::Modern => VersionSet::of(&[v]),
        Some(_) => VersionSet::of(&VersionSet::ALL.of_era(Era::Legacy).collect::<Vec<_>>()),
        None => VersionSet::ALL,
    }
}

/// The client ID metadata document URL the suite's authorization servers accept as is
/// (`auth/basic-cimd`).
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// OAuth as the scenario asks: pre-registered credentials when its context has them
/// (`auth/pre-registration`), the client credentials grant for the
/// `auth/client-credentials-*` scenarios, the JWT bearer grant for `auth/wif-jwt-bearer` and
/// (with an ID-JAG) `auth/enterprise-managed-authorization`,
/// else dynamic registration or the metadata
/// document URL; the default headless user agent plays the browser.
fn oauth(scenario: &str, context: &Value) -> OAuth {
    let text = |name: &str| context.get(name).and_then(Value::as_str).map(str::to_owned);
    let key = match (text("private_key_pem"), text("signing_algorithm")) {
        (Some(pem), Some(alg)) => match SigningKey::from_pem(&pem, &alg) {
            Ok(key) => Some(key),
            Err(e) => {
                eprintln!("{scenario}: the context's key: {e}");
                None
            }
        },
        _ => None,
    };
    let credentials = text("client_id").map(|id| match (text("client_secret"), key) {
        (Some(secret), _) => ClientCredentials::confidential(id, secret),
        (None, Some(key)) => ClientCredentials::with_signing_key(id, key),
        (None, None) => ClientCredentials::public(id),
    });
    match credentials {
        Some(c) if scenario.starts_with("auth/client-credentials") => OAuth::client_credentials(c),
        // Workload identity federation: the workload's JWT, as the platform gave it.
        Some(c) if scenario == "auth/wif-jwt-bearer" => {
            let jwt = text("valid_jwt").unwrap_or_default();
            OAuth::jwt_bearer(c, move |_| {
                let jwt = jwt.clone();
                async move { Ok(jwt) }
            })
        }
        // Enterprise-managed authorization: the user's ID token exchanged at the
        // identity provider for an ID-JAG, presented to the authorization server.
        Some(c) if scenario == "auth/enterprise-managed-authorization" => {
            let idp = (
                text("idp_token_endpoint").unwrap_or_default(),
                text("idp_client_id").unwrap_or_default(),
                text("idp_id_token").unwrap_or_default(),
            );
            OAuth::jwt_bearer(c, move |request| {
                let (endpoint, client, id_token) = idp.clone();
                async move { exchange_for_id_jag(&endpoint, &client, None, &id_token, &request).await }
            })
        }
        Some(c) => OAuth::new().client(c),
        None => OAuth::new().client_metadata_url(CLIENT_METADATA_URL),
    }
}

async fn connect(url: &str, scenario: &str, context: &Value) -> Result<Client, ClientError> {
    Client::builder(Implementation::new(
        "mcp-runtime-conformance-client",
        env!("CARGO_PKG_VERSION"),
    ))
    .versions(versions())
    .timeout(Duration::from_secs(20))
    .on_sampling(|request| async move {
        let asked = request
            .messages
            .last()
            .map(|m| format!("{:?}", m.content))
            .unwrap_or_default();
        Ok(SampledMessage::assistant_text(
            "conformance-model",
            format!("A sampled answer to {asked}"),
        ))
    })
    // Accept every form as the user left it: the client fills in the schema's
    // defaults (SEP-1034); a boolean without a default is confirmed.
    .on_elicitation(|request| async move {
        let mut content = Map::new();
        if let Some(Value::Object(props)) = request
            .requested_schema
            .as_ref()
            .and_then(|s| s.get("properties"))
        {
            for (name, prop) in props {
                if prop.get("type") == Some(&json!("boolean")) && prop.get("default").is_none() {
                    content.insert(name.clone(), json!(true));
                }
            }
        }
        Ok(Elicitation::Accept(content))
    })
    .roots(vec![Root::new("file:///conformance").name("conformance")])
    .oauth(oauth(scenario, context))
    .connect_url(url)
    .await
}

async fn run(scenario: &str, url: &str, context: &Value) -> Outcome {
    let client = connect(url, scenario, context).await?;
    let outcome = scenario_steps(&client, scenario, context).await;
    client.close().await;
    outcome
}

fn tool_names(tools: &[mcp_runtime::model::Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.clone()).collect()
}

type Outcome = Result<(), Box<dyn std::error::Error>>;

async fn scenario_steps(client: &Client, scenario: &str, context: &Value) -> Outcome {
    match scenario {
        // Only the listing is checked (no network `$ref` is dereferenced: this client
        // never fetches one).
        "json-schema-ref-no-deref" | "request-metadata" => {
            client.list_all_tools().await?;
        }
        "json-schema-2020-12-preservation" => {
            let tools = client.list_all_tools().await?;
            let focal = tools
                .iter()
                .find(|t| t.name == "json_schema_2020_12_tool")
                .ok_or("the server does not list json_schema_2020_12_tool")?;
            client
                .call_tool("json_schema_echo", json!({"schema": focal.input_schema}))
                .await?;
        }
        "sep-2322-client-request-state" => {
            client.list_all_tools().await?;
            client.call_tool("test_mrtr_echo_state", json!({})).await?;
            client.call_tool("test_mrtr_unrelated", json!({})).await?;
            client.call_tool("test_mrtr_no_state", json!({})).await?;
            client
                .call_tool("test_mrtr_no_result_type", json!({}))
                .await?;
        }
        "http-standard-headers" => {
            for tool in tool_names(&client.list_all_tools().await?) {
                client.call_tool(&tool, json!({})).await?;
            }
            for resource in client.list_all_resources().await? {
                client.read_resource(&resource.uri).await?;
            }
            for prompt in client.list_all_prompts().await? {
                let arguments: Vec<(String, String)> = prompt
                    .arguments
                    .iter()
                    .map(|a| (a.name.clone(), "value".to_owned()))
                    .collect();
                client.get_prompt(&prompt.name, arguments).await?;
            }
        }
        "http-invalid-tool-headers" => {
            // The client leaves the invalid tools out of the list; it calls what is left.
            for tool in tool_names(&client.list_all_tools().await?) {
                client
                    .call_tool(&tool, json!({"region": "us-west1"}))
                    .await?;
            }
        }
        "elicitation-sep1034-client-defaults" | "elicitation-defaults" => {
            client.list_all_tools().await?;
            client
                .call_tool("test_client_elicitation_defaults", json!({}))
                .await?;
        }
        "sse-retry" => {
            client.list_all_tools().await?;
            client.call_tool("test_reconnection", json!({})).await?;
        }
        _ => {
            let tools = client.list_all_tools().await?;
            // Scenario data may name the calls to make (http-custom-headers).
            if let Some(calls) = context.get("toolCalls").and_then(Value::as_array) {
                for call in calls {
                    let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
                    let arguments = call.get("arguments").cloned().unwrap_or(json!({}));
                    client.call_tool(name, arguments).await?;
                }
            } else if let Some(tool) = tools.first() {
                // initialize, tools_call: the first tool, with the scenario's numbers.
                client
                    .call_tool(&tool.name, json!({"a": 2, "b": 3}))
                    .await?;
            }
        }
    }
    Ok(())
}
