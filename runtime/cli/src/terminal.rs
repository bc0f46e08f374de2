//! What a server asks while a command runs — elicitation and sampling — put to the user on
//! the terminal, and refused with an error that says why when stdin is not a terminal
//! (a script cannot answer; the server hears the reason, and so does the user).

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

use mcp_runtime::model::{Elicitation, SampledContent, SampledMessage, SamplingRequest};
use mcp_runtime::RpcError;
use mcp_runtime_client::{ClientHandlers, ElicitRequest};
use serde_json::{json, Map, Value};
use tokio::sync::Mutex;

/// The handlers `mcp` answers the server's asks with: on the terminal when stdin is
/// one, otherwise refusals naming the cause.
pub(crate) fn handlers() -> ClientHandlers {
    // One question at a time: two asks must not interleave their prompts.
    let turn = Arc::new(Mutex::new(()));
    let interactive = std::io::stdin().is_terminal();
    let elicit_turn = turn.clone();
    ClientHandlers::new()
        .elicitation(move |request| {
            let turn = elicit_turn.clone();
            async move {
                if !interactive {
                    return Err(not_a_terminal("elicitation", &request.message));
                }
                let _turn = turn.lock().await;
                blocking(move || elicit(&request)).await
            }
        })
        .sampling(move |request| {
            let turn = turn.clone();
            async move {
                let what = request
                    .messages
                    .last()
                    .map(|m| content_text(&m.content))
                    .unwrap_or_default();
                if !interactive {
                    return Err(not_a_terminal("sampling", &what));
                }
                let _turn = turn.lock().await;
                blocking(move || sample(&request)).await
            }
        })
}

fn not_a_terminal(what: &str, message: &str) -> RpcError {
    let reason = format!(
        "mcp: the server asked for {what} (\"{message}\"), but stdin is not a terminal, so \
         no one can answer; run the command in a terminal to answer it"
    );
    eprintln!("{reason}");
    RpcError::internal(reason)
}

/// Runs a terminal dialogue off the async threads.
async fn blocking<T: Send + 'static>(
    dialogue: impl FnOnce() -> Result<T, RpcError> + Send + 'static,
) -> Result<T, RpcError> {
    tokio::task::spawn_blocking(dialogue)
        .await
        .map_err(|e| RpcError::internal(format!("mcp: the terminal dialogue failed: {e}")))?
}

/// One line from the terminal, without its newline; end of input is an error.
fn ask_line(prompt: &str) -> Result<String, RpcError> {
    eprint!("{prompt}");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    let read = std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| RpcError::internal(format!("mcp: reading the terminal: {e}")))?;
    if read == 0 {
        return Err(RpcError::internal(
            "mcp: the terminal closed before the question was answered",
        ));
    }
    Ok(line.trim_end_matches(['\n', '\r']).to_owned())
}

fn elicit(request: &ElicitRequest) -> Result<Elicitation<Map<String, Value>>, RpcError> {
    eprintln!("\nThe server asks: {}", request.message);
    if let Some(url) = &request.url {
        eprintln!("Open this URL to continue: {url}");
        return Ok(
            match ask_line("Done? [y]es / [n]o, decline / [c]ancel: ")?
                .to_lowercase()
                .as_str()
            {
                "y" | "yes" => Elicitation::Accept(Map::new()),
                "n" | "no" => Elicitation::Decline,
                _ => Elicitation::Cancel,
            },
        );
    }
    match ask_line("Answer? [y]es / [n]o, decline / [c]ancel: ")?
        .to_lowercase()
        .as_str()
    {
        "y" | "yes" | "" => {}
        "n" | "no" => return Ok(Elicitation::Decline),
        _ => return Ok(Elicitation::Cancel),
    }
    let schema = request.requested_schema.clone().unwrap_or(json!({}));
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut content = Map::new();
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            if let Some(value) = ask_field(name, property, required.contains(&name.as_str()))? {
                content.insert(name.clone(), value);
            }
        }
    }
    Ok(Elicitation::Accept(content))
}

/// Asks for one form field until the answer fits its type; `None` for an optional field
/// left empty.
fn ask_field(name: &str, property: &Value, required: bool) -> Result<Option<Value>, RpcError> {
    let text = |k: &str| property.get(k).and_then(Value::as_str);
    let kind = text("type").unwrap_or("string");
    let choices: Vec<String> = property
        .get("enum")
        .or_else(|| property.pointer("/items/enum"))
        .and_then(Value::as_array)
        .map(|e| {
            e.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let mut label = text("title").unwrap_or(name).to_owned();
    if let Some(description) = text("description") {
        label.push_str(&format!(" ({description})"));
    }
    if !choices.is_empty() {
        label.push_str(&format!(" [{}]", choices.join(" | ")));
    } else if kind == "boolean" {
        label.push_str(" [y/n]");
    } else if kind != "string" {
        label.push_str(&format!(" [{kind}]"));
    }
    if let Some(default) = property.get("default") {
        label.push_str(&format!(" (default {default})"));
    }
    if !required {
        label.push_str(" (optional)");
    }
    loop {
        let answer = ask_line(&format!("  {label}: "))?;
        if answer.is_empty() {
            if let Some(default) = property.get("default") {
                return Ok(Some(default.clone()));
            }
            if !required {
                return Ok(None);
            }
            eprintln!("  an answer is required");
            continue;
        }
        let value = match kind {
            "boolean" => match answer.to_lowercase().as_str() {
                "y" | "yes" | "true" => Some(Value::Bool(true)),
                "n" | "no" | "false" => Some(Value::Bool(false)),
                _ => None,
            },
            "integer" => answer.parse::<i64>().ok().map(Value::from),
            "number" => answer
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number),
            "array" => Some(Value::Array(
                answer
                    .split(',')
                    .map(|s| Value::String(s.trim().to_owned()))
                    .collect(),
            )),
            _ => Some(Value::String(answer.clone())),
        };
        let fits_choices = |v: &Value| match v {
            Value::String(s) => choices.is_empty() || choices.contains(s),
            Value::Array(items) => items.iter().all(|i| {
                i.as_str()
                    .is_some_and(|s| choices.is_empty() || choices.iter().any(|c| c == s))
            }),
            _ => true,
        };
        match value {
            Some(v) if fits_choices(&v) => return Ok(Some(v)),
            _ => eprintln!("  `{answer}` is not a valid {kind} here"),
        }
    }
}

fn content_text(content: &SampledContent) -> String {
    match content {
        SampledContent::Text(text) => text.clone(),
        SampledContent::Image { mime_type, .. } => format!("[image {mime_type}]"),
        SampledContent::Audio { mime_type, .. } => format!("[audio {mime_type}]"),
        other => format!("{other:?}"),
    }
}

fn sample(request: &SamplingRequest) -> Result<SampledMessage, RpcError> {
    eprintln!(
        "\nThe server asks for a model's reply (at most {} tokens):",
        request.max_tokens
    );
    if let Some(system) = &request.system_prompt {
        eprintln!("  system: {system}");
    }
    for message in &request.messages {
        eprintln!("  {:?}: {}", message.role, content_text(&message.content));
    }
    let reply = ask_line("Your reply as the model (empty to decline): ")?;
    if reply.is_empty() {
        return Err(RpcError::new(
            mcp_runtime::wire::ErrorCode(-1),
            "the user declined the sampling request",
        ));
    }
    Ok(SampledMessage::from_result(&json!({
        "role": "assistant",
        "content": {"type": "text", "text": reply},
        "model": "human at the mcp terminal",
        "stopReason": "endTurn",
    })))
}
