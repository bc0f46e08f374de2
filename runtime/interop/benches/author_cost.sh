#!/usr/bin/env bash
# The same server written on this runtime and on rmcp 3.11, each the way its SDK's
# documentation teaches: three tools (`add {a, b}` with a typed argument struct, `hello`
# without arguments, `echo {text}`), one resource (`memo://readme`, text) and one prompt
# (`greet`, one argument), served on stdio. Each is a throwaway binary crate built from
# scratch (debug, its own target directory, same machine, one after the other); each built
# binary is then driven over stdio (initialize at 2025-06-18, notifications/initialized,
# every list, every tool, resources/read, prompts/get) and the run fails on an error or a
# missing or wrong answer, so the figures compare two working servers.
#
# Prints a Markdown table: lines of code of each main.rs (after rustfmt; blank and
# comment-only lines not counted), crates compiled, CPU seconds (user + sys), wall
# seconds, the CPU seconds of the server's own crate compiled again alone (what an edit
# costs at most), and the ratios ours / rmcp. `macro` measures instead what a `#[tool]`
# attribute macro would cost a user of ours (described further down). Needs jq (the
# stdio check) and rustfmt. Results and method: BENCHMARKS.md §4.1.
#
#   runtime/interop/benches/author_cost.sh            # both
#   runtime/interop/benches/author_cost.sh ours       # one (no ratios)
#   runtime/interop/benches/author_cost.sh macro      # the cost of a `#[tool]` macro (see below)
#   KEEP=1 runtime/interop/benches/author_cost.sh     # keep the crates (path printed on stderr)
set -euo pipefail
# Both servers are built without incremental compilation unless the caller says otherwise:
# that is how a user gets `mcp-runtime` and `mcp-generated` from crates.io (cargo never
# compiles a registry dependency incrementally; here they are path dependencies, which it
# would). It applies to both servers alike, their own crates included.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
root="$(cd "$(dirname "$0")/../../.." && pwd)"
work="$(mktemp -d)"
trap '[ -n "${KEEP:-}" ] && echo "kept $work" >&2 || rm -rf "$work"' EXIT
which="${1:-both}"
command -v jq >/dev/null || { echo "author_cost.sh: needs jq (the stdio check)" >&2; exit 1; }

make_crate() { # name, dependencies, main.rs
  mkdir -p "$work/$1/src"
  cat >"$work/$1/Cargo.toml" <<TOML
[package]
name = "$1"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
$2

[workspace]
TOML
  printf '%s\n' "$3" >"$work/$1/src/main.rs"
  # Count lines as `cargo fmt` would leave them, whatever the layout above.
  rustfmt --edition 2021 "$work/$1/src/main.rs"
}

loc() { # file: lines that are neither blank nor only a comment
  grep -c -v -E '^[[:space:]]*(//.*)?$' "$1"
}

declare -A LOC CRATES CPU WALL AGAIN

resolve() { # crate directory: the lockfile, offline from the local registry cache if it can be
  (cd "$1" && { cargo fetch --offline -q 2>/dev/null || cargo fetch -q; })
}

build_timed() { # crate directory, label: sets B_CPU, B_WALL, B_CRATES (packages compiled)
  local user sys
  /usr/bin/time -f "%U %S %e" -o "$work/$2.time" \
    cargo build --manifest-path "$1/Cargo.toml" --target-dir "$1/target" \
    --message-format json >"$work/$2.json" 2>"$work/$2.log" || {
    echo "$2: build failed:" >&2; tail -30 "$work/$2.log" >&2; exit 1; }
  B_CRATES=$(compiled "$work/$2.json" | wc -l)
  read -r user sys B_WALL <"$work/$2.time"
  B_CPU=$(echo "$user + $sys" | bc)
}

compiled() { # cargo's JSON messages: the packages compiled (not found fresh), one a line
  jq -r 'select(.reason == "compiler-artifact" and .fresh == false) | .package_id' "$1" \
    | sed -E 's/^[^#]*\/([^/#]+)#([^@]*)$/\1 \2/; s/.*#//; s/@/ /' | sort -u
}

measure() { # name
  local dir="$work/$1"
  (cd "$dir" && cargo generate-lockfile --offline -q 2>/dev/null || cargo generate-lockfile -q)
  build_timed "$dir" "$1"
  CRATES[$1]=$B_CRATES CPU[$1]=$B_CPU WALL[$1]=$B_WALL
  LOC[$1]=$(loc "$dir/src/main.rs")
  check "$1" "$dir/target/debug/$1"
  # What each edit of the server costs at most: its crate alone compiled again from
  # nothing (its incremental cache removed too), the dependencies built.
  cargo clean -q -p "$1" --manifest-path "$dir/Cargo.toml" --target-dir "$dir/target"
  build_timed "$dir" "$1-again"
  [ "$B_CRATES" = 1 ] || { echo "$1: the rebuild compiled $B_CRATES crates" >&2; exit 1; }
  AGAIN[$1]=$B_CPU
}

# Drives a built server over stdio, one request at a time; each answer (the line with the
# request's id; anything else the server sends is skipped) must pass a jq test.
check() { # name, binary
  local name=$1 answered=0 status=0
  coproc SERVER { exec "$2" 2>"$work/$1.stderr"; }
  local to=${SERVER[1]} from=${SERVER[0]} pid=$SERVER_PID
  ask() { # id, request, jq test of the answer
    printf '%s\n' "$2" >&"$to"
    local line
    while IFS= read -r -t 10 -u "$from" line; do
      jq -e --argjson id "$1" '.id == $id' >/dev/null 2>&1 <<<"$line" || continue
      if jq -e "$3" >/dev/null 2>&1 <<<"$line"; then
        answered=$((answered + 1)); return 0
      fi
      echo "$name: wrong answer to $2:" >&2; echo "  $line" >&2; return 1
    done
    echo "$name: no answer to $2" >&2; return 1
  }
  local call='{"jsonrpc":"2.0","id":'
  ask 1 "${call}1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"author_cost.sh\",\"version\":\"0\"}}}" \
    '.result.protocolVersion == "2025-06-18" and (.result.capabilities | has("tools") and has("resources") and has("prompts"))' \
  && printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&"$to" \
  && ask 2 "${call}2,\"method\":\"tools/list\"}" \
    '([.result.tools[].name] | sort) == ["add", "echo", "hello"]
     and (.result.tools[] | select(.name == "add") | .inputSchema.properties | has("a") and has("b"))' \
  && ask 3 "${call}3,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":2,\"b\":3}}}" \
    '.result.isError != true and .result.content[0].text == "5"' \
  && ask 4 "${call}4,\"method\":\"tools/call\",\"params\":{\"name\":\"hello\",\"arguments\":{}}}" \
    '.result.isError != true and .result.content[0].text == "Hello, world!"' \
  && ask 5 "${call}5,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"ping\"}}}" \
    '.result.isError != true and .result.content[0].text == "ping"' \
  && ask 6 "${call}6,\"method\":\"resources/list\"}" \
    '[.result.resources[] | .uri] == ["memo://readme"]' \
  && ask 7 "${call}7,\"method\":\"resources/read\",\"params\":{\"uri\":\"memo://readme\"}}" \
    '.result.contents[0].uri == "memo://readme" and .result.contents[0].text == "A server written twice."' \
  && ask 8 "${call}8,\"method\":\"prompts/list\"}" \
    '[.result.prompts[] | .name, (.arguments[] | .name, .required)] == ["greet", "name", true]' \
  && ask 9 "${call}9,\"method\":\"prompts/get\",\"params\":{\"name\":\"greet\",\"arguments\":{\"name\":\"Ada\"}}}" \
    '.result.messages[0].role == "user" and .result.messages[0].content.text == "Say hello to Ada."' \
  || status=1
  # End of input: the server must exit by itself.
  exec {to}>&-
  local waited=0
  while kill -0 "$pid" 2>/dev/null && [ $waited -lt 50 ]; do sleep 0.1; waited=$((waited + 1)); done
  if kill -0 "$pid" 2>/dev/null; then
    echo "$name: still running 5 s after its stdin closed" >&2; kill "$pid"; status=1
  fi
  wait "$pid" 2>/dev/null || true
  if [ $status -ne 0 ]; then
    echo "$name: stdio check failed (server stderr below)" >&2; tail -20 "$work/$name.stderr" >&2
    exit 1
  fi
  echo "$name: stdio check passed ($answered answers, protocol 2025-06-18)" >&2
}

row() { # name
  printf '| %s | %s | %s | %.1f | %.1f | %.1f |\n' \
    "$1" "${LOC[$1]}" "${CRATES[$1]}" "${CPU[$1]}" "${WALL[$1]}" "${AGAIN[$1]}"
}

ours_main=$(cat <<'RUST'
//! Three tools (one with a typed argument struct), one resource and one prompt, on stdio.
use mcp_runtime::model::{Implementation, Prompt, Resource, Tool};
use mcp_runtime::{transport, Server};

/// What `add` takes.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    /// The first number.
    a: i64,
    /// The second number.
    b: i64,
}

/// What `echo` takes.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    /// The text to send back.
    text: String,
}

/// The argument of the `greet` prompt.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Greet {
    /// Who to greet.
    name: String,
}

fn main() -> std::io::Result<()> {
    let server = Server::builder(Implementation::new("compare", "1.0.0"))
        .typed_tool(
            Tool::new("add", "Adds two numbers"),
            |args: Add, _ctx| async move { (args.a + args.b).to_string() },
        )
        .tool(Tool::new("hello", "Says hello"), |_args, _ctx| async {
            "Hello, world!"
        })
        .typed_tool(
            Tool::new("echo", "Sends the text back"),
            |args: Echo, _ctx| async move { args.text },
        )
        .resource(
            Resource::new("memo://readme", "readme").mime_type("text/plain"),
            |_uri, _ctx| async { "A server written twice." },
        )
        .typed_prompt(
            Prompt::new("greet").description("Greets someone"),
            |args: Greet, _ctx| async move { format!("Say hello to {}.", args.name) },
        )
        .build();
    transport::stdio::run(server)
}
RUST
)

rmcp_main=$(cat <<'RUST'
//! Three tools (one with a typed argument struct), one resource and one prompt, on stdio.
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::*;
use rmcp::service::RequestContext;
use rmcp::{prompt, prompt_handler, prompt_router, schemars, tool, tool_handler, tool_router};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

/// What `add` takes.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    /// The first number.
    a: i64,
    /// The second number.
    b: i64,
}

/// What `echo` takes.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    /// The text to send back.
    text: String,
}

/// The argument of the `greet` prompt.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Greet {
    /// Who to greet.
    name: String,
}

#[derive(Clone)]
struct Compare;

#[tool_router]
impl Compare {
    #[tool(description = "Adds two numbers")]
    async fn add(&self, Parameters(args): Parameters<Add>) -> String {
        (args.a + args.b).to_string()
    }

    #[tool(description = "Says hello")]
    async fn hello(&self) -> String {
        "Hello, world!".to_string()
    }

    #[tool(description = "Sends the text back")]
    async fn echo(&self, Parameters(args): Parameters<Echo>) -> String {
        args.text
    }
}

#[prompt_router]
impl Compare {
    #[prompt(description = "Greets someone")]
    async fn greet(&self, Parameters(args): Parameters<Greet>) -> Vec<PromptMessage> {
        vec![PromptMessage::new_text(
            Role::User,
            format!("Say hello to {}.", args.name),
        )]
    }
}

// rmcp has no resource macro: resources are `ServerHandler` methods, and `get_info` is
// written by hand because the handler macros only declare tools and prompts.
#[tool_handler]
#[prompt_handler]
impl ServerHandler for Compare {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_prompts()
            .enable_resources();
        ServerConfig::new(capabilities.build())
            .with_server_info(Implementation::new("compare", "1.0.0"))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let readme = Resource::new("memo://readme", "readme").with_mime_type("text/plain");
        Ok(ListResourcesResult::with_all_items(vec![readme]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        match request.uri.as_str() {
            "memo://readme" => {
                let text = ResourceContents::text("A server written twice.", request.uri);
                Ok(ReadResourceResult::new(vec![text]).into())
            }
            _ => Err(ErrorData::resource_not_found("no such resource", None)),
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    Compare
        .serve(rmcp::transport::stdio_pipes())
        .await?
        .waiting()
        .await?;
    Ok(())
}
RUST
)

# Both derive `Deserialize` + `JsonSchema`, each `main` as its SDK's README teaches (ours
# `transport::stdio::run`, which starts its own runtime; rmcp `#[tokio::main]`); both are
# stdio-only (ours without its default `tasks` feature, which rmcp has no counterpart of;
# rmcp with its default features — `macros`, `server`, `base64` — plus `transport-io`).
ours_deps="mcp-runtime = { path = \"$root/runtime/core\", default-features = false, features = [\"typed-tools\"] }
serde = { version = \"1\", features = [\"derive\"] }
schemars = \"1\""
make_crate author-ours "$ours_deps" "$ours_main"

make_crate author-rmcp \
  'rmcp = { version = "=3.11.0", features = ["server", "transport-io"] }
tokio = { version = "1", features = ["rt-multi-thread", "macros"] }
serde = { version = "1", features = ["derive"] }' \
  "$rmcp_main"

stamp() { echo "$1 $(date '+%F %T'),$(uptime | sed -E 's/.*(load average)/ \1/'), CARGO_INCREMENTAL=$CARGO_INCREMENTAL"; }

if [ "$which" != macro ]; then
  stamp started
  case "$which" in
    ours) measure author-ours ;;
    rmcp) measure author-rmcp ;;
    *) measure author-ours; measure author-rmcp ;;
  esac
  stamp finished
  echo
  echo "| server | main.rs LOC | crates compiled | CPU-s (user+sys) | wall s | server crate alone, CPU-s |"
  echo "|---|---|---|---|---|---|"
  case "$which" in
    ours) row author-ours ;;
    rmcp) row author-rmcp ;;
    *)
      row author-ours; row author-rmcp
      ratio() { echo "scale=4; $1 / $2" | bc; }
      printf '| ours / rmcp | %.2f | %.2f | %.2f | %.2f | %.2f |\n' \
        "$(ratio "${LOC[author-ours]}" "${LOC[author-rmcp]}")" \
        "$(ratio "${CRATES[author-ours]}" "${CRATES[author-rmcp]}")" \
        "$(ratio "${CPU[author-ours]}" "${CPU[author-rmcp]}")" \
        "$(ratio "${WALL[author-ours]}" "${WALL[author-rmcp]}")" \
        "$(ratio "${AGAIN[author-ours]}" "${AGAIN[author-rmcp]}")"
      ;;
  esac
  exit 0
fi

# ---------------------------------------------------------------------------------------
# `author_cost.sh macro`: what an optional `#[tool]` attribute macro would cost a user of
# ours, on top of the comparison server above (which derives `Deserialize` + `JsonSchema`
# and uses `#[tokio::main]`, so syn with `full`, quote and proc-macro2 are built already).
# The server is built from scratch once; then each variant starts again from a copy of that
# target directory, adds its dependencies and main.rs, and is built: "after deps" is
# everything that build compiled (the new crates and the server crate), "server crate" a
# rebuild of the server crate alone (main.rs touched), and the marginal cost of the new
# crates is the difference. MACRO_RUNS repetitions (default 3), each printed. Incremental
# compilation is off throughout, so every compile of the server crate is a full one. Each
# variant's binary passes the same stdio check. Then rmcp-macros 3.11 alone, from scratch.
#
# Variants: the closures above; the same with named `async fn` handlers and no macro; the
# same with a skeleton `#[tool]` (syn, quote: name from the function, description from the
# doc comment, `.typed_tool(add_tool(), add)`); the closures plus rmcp-macros 3.11 as an
# unused dependency (what a full-featured macro crate of its size, on darling, adds).
export CARGO_INCREMENTAL=0
runs="${MACRO_RUNS:-3}"

mkdir -p "$work/tool-macro/src"
cat >"$work/tool-macro/Cargo.toml" <<'TOML'
[package]
name = "tool-macro"
version = "0.0.0"
edition = "2021"
publish = false

[lib]
proc-macro = true

[dependencies]
syn = { version = "3", features = ["full"] }
quote = "1"
proc-macro2 = "1"

[workspace]
TOML
cat >"$work/tool-macro/src/lib.rs" <<'RUST'
//! A skeleton of the `#[tool]` attribute this runtime could offer: on an `async fn(args,
//! ctx)`, it keeps the function and adds `fn <name>_tool() -> Tool`, the tool's name taken
//! from the function (or `name = "…"`) and its description from the doc comment (or
//! `description = "…"`); the function is then the handler: `.typed_tool(add_tool(), add)`.
use proc_macro::TokenStream;
use quote::{format_ident, quote};
use syn::{parse_macro_input, Expr, ExprLit, ItemFn, Lit, LitStr, Meta};

#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut name: Option<LitStr> = None;
    let mut description: Option<LitStr> = None;
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("name") {
            name = Some(meta.value()?.parse()?);
            Ok(())
        } else if meta.path.is_ident("description") {
            description = Some(meta.value()?.parse()?);
            Ok(())
        } else {
            Err(meta.error("expected `name = \"…\"` or `description = \"…\"`"))
        }
    });
    parse_macro_input!(attr with parser);
    let function = parse_macro_input!(item as ItemFn);
    match expand(name, description, function) {
        Ok(tokens) => tokens.into(),
        Err(error) => error.to_compile_error().into(),
    }
}

fn expand(
    name: Option<LitStr>,
    description: Option<LitStr>,
    function: ItemFn,
) -> syn::Result<proc_macro2::TokenStream> {
    let sig = &function.sig;
    if sig.asyncness.is_none() {
        return Err(syn::Error::new_spanned(sig.fn_token, "a tool handler is an `async fn`"));
    }
    if sig.inputs.len() != 2 {
        return Err(syn::Error::new_spanned(
            &sig.inputs,
            "a tool handler takes its arguments and a `Context`",
        ));
    }
    let ident = &sig.ident;
    let name = name.map_or_else(|| ident.to_string(), |n| n.value());
    let description = match description {
        Some(d) => d.value(),
        None => {
            let lines: Vec<String> = function
                .attrs
                .iter()
                .filter_map(|attr| match &attr.meta {
                    Meta::NameValue(nv) if nv.path.is_ident("doc") => match &nv.value {
                        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => {
                            Some(s.value().trim().to_owned())
                        }
                        _ => None,
                    },
                    _ => None,
                })
                .collect();
            if lines.is_empty() {
                return Err(syn::Error::new_spanned(
                    ident,
                    "a tool needs a description: a doc comment or `description = \"…\"`",
                ));
            }
            lines.join("\n")
        }
    };
    let definition = format_ident!("{}_tool", ident);
    let vis = &function.vis;
    Ok(quote! {
        #function
        #[doc = concat!("The definition of the `", #name, "` tool.")]
        #vis fn #definition() -> ::mcp_runtime::model::Tool {
            ::mcp_runtime::model::Tool::new(#name, #description)
        }
    })
}
RUST

# The typed server's handlers as named functions, tools registered by definition.
handlers=$(cat <<'RUST'
async fn readme(uri: String, _ctx: Context) -> Result<Vec<ResourceContents>, RpcError> {
    Ok(vec![ResourceContents::text(uri, "text/plain", "A server written twice.")])
}

async fn greet(args: Greet, _ctx: Context) -> Result<PromptResult, RpcError> {
    Ok(PromptResult::new([PromptMessage::user(format!("Say hello to {}.", args.name))]))
}
RUST
)
structs=$(sed -n '/^\/\/\/ What `add` takes/,/^}$/p; /^\/\/\/ What `echo` takes/,/^}$/p; /^\/\/\/ The argument of the `greet`/,/^}$/p' \
  "$work/author-ours/src/main.rs")

fns_main=$(cat <<RUST
//! The same server with named handler functions instead of closures, no macro.
use mcp_runtime::model::{
    Implementation, Prompt, PromptMessage, PromptResult, Resource, ResourceContents, Tool,
};
use mcp_runtime::{transport, Context, RpcError, Server};
use serde_json::{Map, Value};

$structs

async fn add(args: Add, _ctx: Context) -> String {
    (args.a + args.b).to_string()
}

async fn hello(_args: Map<String, Value>, _ctx: Context) -> &'static str {
    "Hello, world!"
}

async fn echo(args: Echo, _ctx: Context) -> String {
    args.text
}

$handlers

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let server = Server::builder(Implementation::new("compare", "1.0.0"))
        .typed_tool(Tool::new("add", "Adds two numbers"), add)
        .tool(Tool::new("hello", "Says hello"), hello)
        .typed_tool(Tool::new("echo", "Sends the text back"), echo)
        .resource(Resource::new("memo://readme", "readme").mime_type("text/plain"), readme)
        .typed_prompt(Prompt::new("greet").description("Greets someone"), greet)
        .build();
    transport::stdio::serve_stdio(server).await
}
RUST
)

macro_main=$(cat <<RUST
//! The same server with the skeleton \`#[tool]\` (name from the function, description from
//! its doc comment); the resource and the prompt as in the named-function version.
use mcp_runtime::model::{
    Implementation, Prompt, PromptMessage, PromptResult, Resource, ResourceContents,
};
use mcp_runtime::{transport, Context, RpcError, Server};
use serde_json::{Map, Value};
use tool_macro::tool;

$structs

/// Adds two numbers
#[tool]
async fn add(args: Add, _ctx: Context) -> String {
    (args.a + args.b).to_string()
}

/// Says hello
#[tool]
async fn hello(_args: Map<String, Value>, _ctx: Context) -> &'static str {
    "Hello, world!"
}

/// Sends the text back
#[tool]
async fn echo(args: Echo, _ctx: Context) -> String {
    args.text
}

$handlers

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let server = Server::builder(Implementation::new("compare", "1.0.0"))
        .typed_tool(add_tool(), add)
        .tool(hello_tool(), hello)
        .typed_tool(echo_tool(), echo)
        .resource(Resource::new("memo://readme", "readme").mime_type("text/plain"), readme)
        .typed_prompt(Prompt::new("greet").description("Greets someone"), greet)
        .build();
    transport::stdio::serve_stdio(server).await
}
RUST
)

# The same two servers with the runtime built by hand instead of `#[tokio::main]` (as
# build_cost.sh's minimal server does): then nothing else asks for syn's `full`, which a
# `#[tool]` on a function needs.
no_tokio_main() { # main.rs
  printf '%s\n' "$1" | sed -E '/^#\[tokio::main\]$/d; s/^async fn main\(\)/fn main()/;
    s/^( *)transport::stdio::serve_stdio\(server\)\.await$/\1tokio::runtime::Runtime::new()?.block_on(transport::stdio::serve_stdio(server))/'
}
plain_deps=$(printf '%s\n' "$ours_deps" | sed 's/"rt-multi-thread", "macros"/"rt-multi-thread"/')

dir="$work/author-ours"
declare -a ROWS NOTES
base() { # key, dependencies, main.rs: built from scratch, kept as the variants' start
  make_crate author-ours "$2" "$3"
  rm -rf "$dir/target" "$dir/Cargo.lock"
  (cd "$dir" && cargo generate-lockfile --offline -q 2>/dev/null || cargo generate-lockfile -q)
  build_timed "$dir" "base-$1"
  check author-ours "$dir/target/debug/author-ours"
  local syn_features
  syn_features=$(jq -r 'select(.reason == "compiler-artifact" and .target.name == "syn")
    | .features | join(" ")' "$work/base-$1.json" | sort -u | paste -sd';')
  NOTES+=("- base \`$1\`: from scratch $B_CRATES crates, $B_CPU CPU-s; proc-macro crates: $(jq -r \
    'select(.reason == "compiler-artifact" and (.target.kind | index("proc-macro"))) | .package_id' \
    "$work/base-$1.json" | sed -E 's/.*#//; s/@/ /' | sort -u | paste -sd, | sed 's/,/, /g'); syn features: $syn_features")
  mv "$dir/target" "$dir/target.$1"
  cp "$dir/Cargo.lock" "$dir/Cargo.lock.$1"
  BASE_DEPS=$2
}

variant() { # base key, label, extra dependencies, main.rs
  local key=$1 label=$2 total="" server="" marginal="" added="" i t n
  cp "$dir/Cargo.lock.$key" "$dir/Cargo.lock"
  make_crate author-ours "$BASE_DEPS${3:+
$3}" "$4"
  resolve "$dir"
  for i in $(seq "$runs"); do
    rm -rf "$dir/target"; cp -a "$dir/target.$key" "$dir/target"
    build_timed "$dir" variant
    t=$B_CPU n=$((B_CRATES - 1))
    added=$(compiled "$work/variant.json" | { grep -v '^author-ours ' || true; } | cut -d' ' -f1 | paste -sd' ')
    touch "$dir/src/main.rs"
    build_timed "$dir" variant-server
    check author-ours "$dir/target/debug/author-ours"
    total+="${total:+ / }$(printf '%.2f' "$t")" server+="${server:+ / }$(printf '%.2f' "$B_CPU")"
    marginal+="${marginal:+ / }$(printf '%.1f' "$(echo "$t - $B_CPU" | bc)")"
  done
  ROWS+=("| \`$key\` | $label | $(loc "$dir/src/main.rs") | $n | $total | $server | $marginal |")
  [ -z "$added" ] || NOTES+=("- \`$key\`, $label: compiled besides the server crate: $added")
}

stamp started
base typed "$ours_deps" "$ours_main"
variant typed "closures (the comparison server)" "" "$ours_main"
variant typed "named \`async fn\` handlers, no macro" 'serde_json = "1"' "$fns_main"
variant typed "skeleton \`#[tool]\` (syn, quote)" "serde_json = \"1\"
tool-macro = { path = \"$work/tool-macro\" }" "$macro_main"
variant typed "closures + rmcp-macros 3.11 (unused)" 'rmcp-macros = "=3.11.0"' "$ours_main"
base no-tokio-main "$plain_deps" "$(no_tokio_main "$ours_main")"
variant no-tokio-main "closures" "" "$(no_tokio_main "$ours_main")"
variant no-tokio-main "skeleton \`#[tool]\` (syn, quote)" "serde_json = \"1\"
tool-macro = { path = \"$work/tool-macro\" }" "$(no_tokio_main "$macro_main")"

make_crate rmcp-macros-alone 'rmcp-macros = "=3.11.0"' 'fn main() {}'
(cd "$work/rmcp-macros-alone" && cargo generate-lockfile --offline -q 2>/dev/null || cargo generate-lockfile -q)
build_timed "$work/rmcp-macros-alone" alone
stamp finished
echo
echo "| base | variant | main.rs LOC | crates compiled besides the server crate | after deps, CPU-s | server crate alone, CPU-s | marginal CPU-s |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
echo
printf '%s\n' "${NOTES[@]}"
echo "- rmcp-macros 3.11 alone, from scratch (a binary crate depending on it): $B_CRATES crates, $B_CPU CPU-s, $B_WALL s wall"
