//! A server that asks the client, with one handler API for every revision: a typed form
//! (elicitation), a question to the client's model (sampling) and the client's roots,
//! plus a hook that hears when the roots change. Clients of 2024-11-05 … 2025-11-25 get
//! server requests; clients of 2026-07-28 get `input_required` results and retry with
//! the answers (the handler runs again: see `Context`).
//!
//! `cargo run -p mcp-interop --example asking` (stdio) or `… -- --http 127.0.0.1:3002`.

use std::sync::{Arc, Mutex};

use mcp_runtime::model::Resource;
use mcp_runtime::model::{
    Elicitation, Implementation, LogLevel, Root, SamplingRequest, Tool, ToolResult,
};
use mcp_runtime::Server;
use mcp_runtime_http::{self as transport, Transport};

/// The form `book_table` asks the user to fill in.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Booking {
    /// The day, as YYYY-MM-DD.
    date: String,
    /// How many people.
    party_size: u8,
    /// Where to sit.
    seating: Seating,
    /// Anything the restaurant should know.
    notes: Option<String>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
enum Seating {
    /// Inside
    Indoor,
    /// On the terrace
    Terrace,
}

/// What `summarise` takes.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    /// The text to summarise.
    text: String,
}

fn asking_server(known_roots: Arc<Mutex<Vec<Root>>>) -> Server {
    let remembered = Arc::clone(&known_roots);
    let known_roots_for_reading = Arc::clone(&known_roots);
    Server::builder(Implementation::new("asking", "1.0.0").title("Asks the client"))
        .tool(
            Tool::new(
                "book_table",
                "Books a table, asking the user for the details",
            ),
            |_args, ctx| async move {
                // Nothing happens before the ask: in 2026-07-28 this handler runs again
                // when the client retries with the user's answer.
                Ok(
                    match ctx
                        .elicit::<Booking>("Book a table: when, for how many?")
                        .await?
                    {
                        Elicitation::Accept(b) => {
                            let seat = match b.seating {
                                Seating::Indoor => "inside",
                                Seating::Terrace => "on the terrace",
                            };
                            let notes = b.notes.map(|n| format!(" ({n})")).unwrap_or_default();
                            ToolResult::text(format!(
                                "Booked for {} people on {}, {seat}{notes}.",
                                b.party_size, b.date
                            ))
                        }
                        Elicitation::Decline => ToolResult::text("No booking made."),
                        Elicitation::Cancel => ToolResult::error("The user cancelled."),
                    },
                )
            },
        )
        .typed_tool(
            Tool::new("summarise", "Summarises a text with the client's model"),
            |args: Text, ctx| async move {
                let request = SamplingRequest::new(200)
                    .system_prompt("You write one-sentence summaries.")
                    .user(format!("Summarise: {}", args.text));
                let answer = ctx.create_message(request).await?;
                Ok(format!("{} (by {})", answer.text(), answer.model))
            },
        )
        .tool(
            Tool::new("workspace", "Lists the client's roots").read_only(),
            move |_args, ctx| {
                let remembered = Arc::clone(&remembered);
                async move {
                    let roots = ctx.list_roots().await?;
                    let listing: Vec<String> = roots
                        .iter()
                        .map(|r| match &r.name {
                            Some(name) => format!("{name}: {}", r.uri),
                            None => r.uri.clone(),
                        })
                        .collect();
                    *remembered.lock().unwrap_or_else(|e| e.into_inner()) = roots;
                    Ok(format!("{} root(s): {}", listing.len(), listing.join(", ")))
                }
            },
        )
        .resource(
            Resource::new("asking://roots", "roots").mime_type("text/plain"),
            move |_uri, _ctx| {
                let known = Arc::clone(&known_roots_for_reading);
                async move {
                    let roots = known.lock().unwrap_or_else(|e| e.into_inner());
                    roots
                        .iter()
                        .map(|r| r.uri.as_str())
                        .collect::<Vec<_>>()
                        .join("\n")
                }
            },
        )
        // A legacy client that declared `roots.listChanged` tells the server when its
        // roots change; the hook asks for the new list on the session.
        .on_roots_list_changed(move |ctx| {
            let known = Arc::clone(&known_roots);
            async move {
                if let Ok(roots) = ctx.list_roots().await {
                    let count = roots.len();
                    *known.lock().unwrap_or_else(|e| e.into_inner()) = roots;
                    let note = format!("{count} root(s) now");
                    ctx.log(LogLevel::Info, Some("asking"), note.into()).await;
                }
            }
        })
        .build()
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let server = asking_server(Arc::default());
    transport::run(server, Transport::from_args()).await
}
