//! `mcp`: a command-line client for Model Context Protocol servers of every revision, over
//! the workspace's client (`mcp-runtime-client`). It lists and calls a server's tools,
//! reads its resources, gets its prompts, pings it and shows what it is:
//!
//! ```text
//! mcp tools     --command "python server.py"
//! mcp call      forecast city=Oslo days=3 --url http://127.0.0.1:3000/mcp
//! mcp read      file:///tmp/notes.txt -- npx @modelcontextprotocol/server-filesystem /tmp
//! mcp info      --json --url https://example.com/mcp --oauth
//! ```
//!
//! The server is named once per command: `--command "CMD"` (a shell command line),
//! `-- PROGRAM ARGS…` (no shell) or `--url URL`; the flags that go with it are shared with
//! `mcp-bridge` ([`target`]). Output is text for people, or JSON on stdout with `--json`.
//! What the server asks during a command (elicitation, sampling) is asked on the terminal.
//! The library is the binary (`mcp_cli::main`); it is not an API.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )
)]

mod arguments;
mod render;
#[doc(hidden)]
pub mod target;
mod terminal;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use mcp_runtime::model::Implementation;
use mcp_runtime_client::{Client, ClientError, Progress, RequestOptions};
use serde_json::{json, Value};

use target::{Server, TargetArgs};

const EXAMPLES: &str = "\
Examples:
  mcp tools --command \"uvx mcp-server-time\"
  mcp call get_current_time timezone=Europe/Oslo -- uvx mcp-server-time
  mcp call add --args '{\"a\": 1, \"b\": 2}' --url http://127.0.0.1:3000/mcp
  MEMORY_FILE_PATH=/tmp/m.json mcp tools -- npx -y @modelcontextprotocol/server-memory
  mcp --json info --url http://127.0.0.1:3000/mcp --revision 2025-06-18

Tool arguments (key=value): a value is read as JSON when it is valid JSON (n=3, on=true,
tags='[\"a\"]', name='\"3\"' for the string \"3\") and as a string otherwise (city=Oslo).
Prompt arguments are strings, taken as written.

Exit status: 0 on success, 1 when the server or the connection fails or a tool reports an
error (isError), 2 on a bad command line.";

/// A command-line client for Model Context Protocol servers of every revision.
#[derive(Parser, Debug)]
#[command(
    name = "mcp",
    bin_name = "mcp",
    version,
    about,
    long_about = "A command-line client for Model Context Protocol servers of every revision \
        (2024-11-05 … 2026-07-28), over stdio, Streamable HTTP and HTTP+SSE.\n\n\
        Name the server with --command \"CMD\" (a shell command line), -- PROGRAM ARGS… (run \
        without a shell) or --url URL. Without --revision the client probes with \
        server/discover (2026-07-28) and falls back to initialize.",
    after_help = EXAMPLES
)]
struct Cli {
    #[command(flatten)]
    target: TargetArgs,

    /// Prints the result as JSON on stdout (for scripts) instead of text for people.
    #[arg(long, global = true)]
    json: bool,

    /// How long to wait for each answer, in seconds; 0 waits for ever.
    #[arg(long, value_name = "SECS", default_value_t = 60, global = true)]
    timeout: u64,

    /// Shares this directory with the server as a root (declares `roots`); may be
    /// repeated. Without it the client declares no roots.
    #[arg(long = "root", value_name = "DIR", global = true)]
    roots: Vec<PathBuf>,

    /// Discards the server's stderr (a `--command` or `-- PROGRAM` server); by default it
    /// goes to this command's stderr.
    #[arg(long, short = 'q', global = true)]
    quiet: bool,

    #[command(subcommand)]
    command: Command,
}

/// The words after `--`: a server program and its arguments, run without a shell.
#[derive(clap::Args, Debug, Default)]
struct Program {
    /// The server program and its arguments, run without a shell (instead of --command
    /// or --url).
    #[arg(last = true, value_name = "PROGRAM ARGS")]
    program: Vec<String>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Lists the server's tools, with their parameters (`?`: optional).
    Tools(Program),
    /// Calls a tool: `mcp call TOOL key=value…` or `mcp call TOOL --args JSON`. Progress
    /// is shown on stderr while it runs.
    Call {
        /// The tool's name.
        tool: String,
        /// Its arguments as key=value words (values are JSON when they parse as JSON, else
        /// strings).
        #[arg(value_name = "KEY=VALUE")]
        arguments: Vec<String>,
        /// Its arguments as one JSON object (instead of key=value words).
        #[arg(long = "args", value_name = "JSON")]
        json_arguments: Option<String>,
        #[command(flatten)]
        program: Program,
    },
    /// Lists the server's resources and resource templates.
    Resources(Program),
    /// Reads a resource.
    Read {
        /// The resource's URI.
        uri: String,
        #[command(flatten)]
        program: Program,
    },
    /// Lists the server's prompts, with their arguments (`?`: optional).
    Prompts(Program),
    /// Gets a prompt: `mcp prompt NAME key=value…` (values are strings).
    Prompt {
        /// The prompt's name.
        name: String,
        /// Its arguments as key=value words.
        #[arg(value_name = "KEY=VALUE")]
        arguments: Vec<String>,
        #[command(flatten)]
        program: Program,
    },
    /// Pings the server and prints how long the answer took.
    Ping(Program),
    /// Shows the server: its name and version, the revision in force, the revisions it
    /// serves, its capabilities and instructions.
    Info(Program),
}

impl Command {
    fn program(&self) -> &[String] {
        match self {
            Command::Tools(p)
            | Command::Resources(p)
            | Command::Prompts(p)
            | Command::Ping(p)
            | Command::Info(p)
            | Command::Call { program: p, .. }
            | Command::Read { program: p, .. }
            | Command::Prompt { program: p, .. } => &p.program,
        }
    }
}

/// Why a command failed.
enum Failure {
    /// A bad command line (exit status 2).
    Usage(String),
    /// The server, the connection or the tool failed (exit status 1).
    Failed(String),
    /// The tool answered with `isError` (printed already; exit status 1).
    ToolError,
}

impl From<ClientError> for Failure {
    fn from(e: ClientError) -> Failure {
        Failure::Failed(e.to_string())
    }
}

/// Runs `mcp` with this process's command line and exits the process: 0 on success, 1
/// when the server or the connection fails or a tool reports an error, 2 on a bad
/// command line, 130 when interrupted (SIGINT or SIGTERM; the server is stopped first).
#[tokio::main]
pub async fn main() {
    let cli = Cli::parse();
    let server = match cli.target.server(cli.command.program()) {
        Ok(server) => server,
        Err(message) => exit_usage(&message),
    };
    let status = run(&cli, &server).await;
    std::process::exit(status);
}

fn exit_usage(message: &str) -> ! {
    use clap::CommandFactory;
    Cli::command()
        .error(clap::error::ErrorKind::ArgumentConflict, message)
        .exit()
}

/// Connects, runs the command (or stops at a signal), closes; the exit status.
async fn run(cli: &Cli, server: &Server) -> i32 {
    let mut builder = Client::builder(Implementation::new("mcp", env!("CARGO_PKG_VERSION")))
        .handlers(terminal::handlers())
        .timeout(Duration::from_secs(cli.timeout))
        .inherit_stderr(!cli.quiet);
    if !cli.roots.is_empty() {
        builder = builder.roots(roots(&cli.roots));
    }
    let builder = cli.target.configure(builder, "mcp");
    let connected = tokio::select! {
        connected = target::connect(builder, server) => connected,
        signal = interrupted() => return signal,
    };
    let client = match connected {
        Ok(client) => client,
        Err(e) => {
            eprintln!("mcp: connecting to {server}: {e}");
            return 1;
        }
    };
    let outcome = tokio::select! {
        outcome = command(cli, &client) => Some(outcome),
        _ = interrupted() => None,
    };
    // Ends a spawned server, and everything it started, in every case.
    client.close().await;
    match outcome {
        None => 130,
        Some(Ok(())) => 0,
        Some(Err(Failure::ToolError)) => 1,
        Some(Err(Failure::Failed(message))) => {
            eprintln!("mcp: {message}");
            1
        }
        Some(Err(Failure::Usage(message))) => exit_usage(&message),
    }
}

/// `file://` roots of the given directories, made absolute.
fn roots(dirs: &[PathBuf]) -> Vec<mcp_runtime::model::Root> {
    let roots: Vec<Value> = dirs
        .iter()
        .map(|dir| {
            let path = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| path.display().to_string());
            json!({"uri": format!("file://{}", path.display()), "name": name})
        })
        .collect();
    mcp_runtime::model::Root::from_result(&json!({ "roots": roots }))
}

/// Resolves at SIGINT or SIGTERM (never, where they cannot be listened to).
async fn interrupted() -> i32 {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let (Ok(mut int), Ok(mut term)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
            eprintln!("mcp: interrupted; stopping the server");
            return 130;
        }
    }
    std::future::pending().await
}

async fn command(cli: &Cli, client: &Client) -> Result<(), Failure> {
    let json = cli.json;
    match &cli.command {
        Command::Tools(_) => render::tools(&client.list_all_tools().await?, json),
        Command::Call {
            tool,
            arguments,
            json_arguments,
            ..
        } => {
            let arguments = arguments::tool_arguments(arguments, json_arguments.as_deref())
                .map_err(Failure::Usage)?;
            let progress = ProgressLine::new();
            let options = RequestOptions::new().on_progress(move |p| progress.show(&p));
            let result = client.call_tool_with(tool, arguments, options).await;
            ProgressLine::clear();
            if render::tool_result(&result?, json) {
                return Err(Failure::ToolError);
            }
        }
        Command::Resources(_) => {
            let resources = client.list_all_resources().await?;
            // A server without templates may refuse the method: then it has none.
            let templates = client
                .list_all_resource_templates()
                .await
                .unwrap_or_default();
            render::resources(&resources, &templates, json);
        }
        Command::Read { uri, .. } => render::read(&client.read_resource(uri).await?, json),
        Command::Prompts(_) => render::prompts(&client.list_all_prompts().await?, json),
        Command::Prompt {
            name, arguments, ..
        } => {
            let arguments = arguments::prompt_arguments(arguments).map_err(Failure::Usage)?;
            render::prompt(&client.get_prompt(name, arguments).await?, json);
        }
        Command::Ping(_) => {
            let start = Instant::now();
            client.ping().await?;
            let took = start.elapsed();
            if json {
                render::print_json(&json!({"ok": true, "ms": took.as_secs_f64() * 1000.0}));
            } else {
                println!("ok ({:.1} ms)", took.as_secs_f64() * 1000.0);
            }
        }
        Command::Info(_) => render::info(client.server_info(), json),
    }
    Ok(())
}

/// Progress reports on stderr: one line rewritten in place on a terminal, a line per
/// report otherwise.
struct ProgressLine {
    terminal: bool,
}

impl ProgressLine {
    fn new() -> ProgressLine {
        ProgressLine {
            terminal: std::io::stderr().is_terminal(),
        }
    }

    fn show(&self, p: &Progress) {
        let amount = match p.total {
            Some(total) if total > 0.0 => {
                format!(
                    "{}/{} ({:.0}%)",
                    p.progress,
                    total,
                    100.0 * p.progress / total
                )
            }
            _ => format!("{}", p.progress),
        };
        let message = p
            .message
            .as_deref()
            .map(|m| format!(" {m}"))
            .unwrap_or_default();
        if self.terminal {
            eprint!("\r\x1b[2Kprogress: {amount}{message}");
        } else {
            eprintln!("progress: {amount}{message}");
        }
    }

    /// Ends a line rewritten in place, if any.
    fn clear() {
        if std::io::stderr().is_terminal() {
            eprint!("\r\x1b[2K");
        }
    }
}
