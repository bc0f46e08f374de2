//! Every difference listed in `docs/protocol-changes.md` has a rule in `runtime/core/SHAPING.md`
//! (or a written reason why none is needed), and the rules that claim observable behaviour
//! are checked here through the public API.
//!
//! The first half parses the generated changes file into entries (one per method,
//! capability, type, field, or union member added/removed) and classifies each with the
//! ordered table `ROWS`: the first row that matches an entry gives its rule id. The table is
//! keyed on revision pair + section + change + name (+ field) + detail, with `*` globs and
//! `|` alternatives in names; rows are pair-specific except the one pattern that is right in
//! every revision (optional display/metadata fields added to what the server sends). A new
//! revision therefore shows up as uncovered entries, named, until someone classifies them.
//!
//! The second half asserts the behaviour the rules describe, on `mcp_runtime::protocol::shape`,
//! `mcp_runtime::model` and (for routing) a connection served over an in-memory stdio pair
//! (the test kit's stdio client).

mod kit;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use kit::stdio::Stdio;
use mcp_runtime::model::{
    Annotations, Content, Elicitation, Icon, Implementation, LogLevel, Prompt, PromptArgument,
    PromptMessage, PromptResult, ResourceContents, ResourceLink, Role, Tool, ToolResult,
};
use mcp_runtime::protocol::shape;
use mcp_runtime::protocol::version::{self, ProtocolVersion as V};
use mcp_runtime::server::SUBSCRIPTION_ID;
use mcp_runtime::{CacheHint, ErrorCode, Server, ServerEvent, VersionSet};
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------
// Parsing docs/protocol-changes.md
// ---------------------------------------------------------------------------------------

/// One difference: a method, capability, type, field of a changed type, or member of a
/// changed union.
#[derive(Clone, Debug)]
struct Entry {
    /// `A → B`, as the heading writes it.
    pair: String,
    /// `Methods`, `Capabilities` or `Types`.
    section: String,
    /// `added`, `removed` or `changed`.
    change: String,
    /// Method name, capability path or type name.
    name: String,
    /// For a line nested under `changed \`Type\`:`, the field.
    field: Option<String>,
    /// What follows the name: `(request, client→server; …)`, `object → JSONObject`, a union
    /// member `+AudioContent`, or empty.
    detail: String,
    /// Line number in the file (1-based).
    line: usize,
}

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}: [{}] {} {} `{}",
            self.line, self.pair, self.section, self.change, self.name
        )?;
        if let Some(field) = &self.field {
            write!(f, ".{field}")?;
        }
        write!(f, "`")?;
        if !self.detail.is_empty() {
            write!(f, " {}", self.detail)?;
        }
        Ok(())
    }
}

/// `- added \`Name\`rest` → (change, name, rest).
fn change_line(s: &str) -> Option<(&str, &str, &str)> {
    let (change, rest) = s.split_once(' ')?;
    if !matches!(change, "added" | "removed" | "changed") {
        return None;
    }
    let rest = rest.strip_prefix('`')?;
    let (name, rest) = rest.split_once('`')?;
    Some((change, name, rest))
}

/// `+A +(B | C)[] −D` → `["+A", "+(B | C)[]", "−D"]`: split at spaces outside parentheses.
fn union_members(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if c == ' ' && depth == 0 {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Parses the file; any line it does not understand is an error naming it.
fn parse(doc: &str) -> Result<Vec<Entry>, String> {
    let mut entries = Vec::new();
    let mut pair: Option<String> = None;
    let mut section: Option<String> = None;
    // The `changed \`Type\`:` whose nested field lines follow, and how many it has had.
    let mut open: Option<(String, usize, usize)> = None;
    let close = |open: &mut Option<(String, usize, usize)>| -> Result<(), String> {
        match open.take() {
            Some((name, line, 0)) => Err(format!(
                "line {line}: `changed \\`{name}\\`:` has no nested field lines"
            )),
            _ => Ok(()),
        }
    };
    for (i, raw) in doc.lines().enumerate() {
        let line = i + 1;
        let text = raw.trim_end();
        if let Some(h) = text.strip_prefix("## ") {
            close(&mut open)?;
            let (a, b) = h
                .split_once(" → ")
                .ok_or_else(|| format!("line {line}: heading is not `## A → B`: {text}"))?;
            if V::parse(a).is_none() || b.split_whitespace().count() != 1 {
                return Err(format!("line {line}: unexpected revision pair: {text}"));
            }
            pair = Some(h.to_owned());
            section = None;
            continue;
        }
        if pair.is_none() {
            continue; // title, generated-file comment, preamble
        }
        if let Some(s) = text.strip_prefix("### ") {
            close(&mut open)?;
            if !matches!(s, "Methods" | "Capabilities" | "Types") {
                return Err(format!("line {line}: unknown section `{s}`"));
            }
            section = Some(s.to_owned());
            continue;
        }
        if text.is_empty() || text == "No changes." {
            continue;
        }
        let (Some(p), Some(sec)) = (&pair, &section) else {
            return Err(format!("line {line}: text outside a section: {text}"));
        };
        if let Some(s) = text.strip_prefix("  - ") {
            let (change, field, rest) =
                change_line(s).ok_or_else(|| format!("line {line}: cannot parse: {text}"))?;
            let Some((ty, _, count)) = &mut open else {
                return Err(format!(
                    "line {line}: nested line without `changed \\`Type\\`:`"
                ));
            };
            *count += 1;
            entries.push(Entry {
                pair: p.clone(),
                section: sec.clone(),
                change: change.to_owned(),
                name: ty.clone(),
                field: Some(field.to_owned()),
                detail: rest.trim_start_matches(':').trim().to_owned(),
                line,
            });
            continue;
        }
        if let Some(s) = text.strip_prefix("- ") {
            close(&mut open)?;
            let (change, name, rest) =
                change_line(s).ok_or_else(|| format!("line {line}: cannot parse: {text}"))?;
            let entry = |detail: String| Entry {
                pair: p.clone(),
                section: sec.clone(),
                change: change.to_owned(),
                name: name.to_owned(),
                field: None,
                detail,
                line,
            };
            if rest == ":" {
                if change != "changed" {
                    return Err(format!(
                        "line {line}: only `changed` lines have nested fields"
                    ));
                }
                open = Some((name.to_owned(), line, 0));
            } else if let Some(members) = rest.strip_prefix(" (union): ") {
                let parts = union_members(members);
                if parts
                    .iter()
                    .all(|m| m.starts_with('+') || m.starts_with('−'))
                {
                    entries.extend(parts.into_iter().map(entry));
                } else {
                    entries.push(entry(members.to_owned())); // e.g. "members reordered"
                }
            } else {
                entries.push(entry(rest.trim_start_matches(':').trim().to_owned()));
            }
            continue;
        }
        return Err(format!("line {line}: cannot parse: {text}"));
    }
    close(&mut open)?;
    Ok(entries)
}

// ---------------------------------------------------------------------------------------
// Classification
// ---------------------------------------------------------------------------------------

const P1: &str = "2024-11-05 → 2025-03-26";
const P2: &str = "2025-03-26 → 2025-06-18";
const P3: &str = "2025-06-18 → 2025-11-25";
const P4: &str = "2025-11-25 → 2026-07-28";
/// Every pair listed today (a new pair is not in it, so its entries stay uncovered).
const ALL: &[&str] = &[P1, P2, P3, P4];
/// Any pair, present or future: only for the one pattern that is right in every revision.
const ANY: &[&str] = &["*"];

const METHODS: &str = "Methods";
const CAPS: &str = "Capabilities";
const TYPES: &str = "Types";

/// Which entries of a type a row matches.
#[derive(Clone, Copy, Debug)]
enum Level {
    /// The type itself (added/removed/replaced), a method, a capability, a union member.
    Top,
    /// Fields of the type whose names match the glob.
    Field(&'static str),
    /// Both.
    Any,
}
use Level::{Any as AnyLevel, Field as F, Top};

/// One line of the classification table. Globs: `*` matches any run of characters; `|`
/// separates alternatives in `name` and `Field` (not in `detail`, which may contain `|`).
#[derive(Debug)]
struct Row {
    pairs: &'static [&'static str],
    section: &'static str,
    /// `added`, `removed`, `changed` or `*`.
    change: &'static str,
    name: &'static str,
    level: Level,
    detail: &'static str,
    rule: &'static str,
}

const fn row(
    pairs: &'static [&'static str],
    section: &'static str,
    change: &'static str,
    name: &'static str,
    level: Level,
    detail: &'static str,
    rule: &'static str,
) -> Row {
    Row {
        pairs,
        section,
        change,
        name,
        level,
        detail,
        rule,
    }
}

/// Sampling, elicitation and roots: the server asking the client something, in either
/// form (legacy server→client request, 2026-07-28 input request).
const ASK_CLIENT_TYPES: &str =
    "CreateMessage*|Sampling*|ToolChoice|ToolUseContent|ToolResultContent\
|Elicit*|BooleanSchema|NumberSchema|StringSchema|*EnumSchema|PrimitiveSchemaDefinition\
|ListRoots*|Root|ServerRequest|ClientResult";

/// What the server sends and builds from the author's model through `shape` (or, for
/// `ResourceUpdatedNotificationParams`, by hand with `uri` only).
const SERVER_SENT: &str = "Tool|Resource|ResourceTemplate|ResourceLink|Prompt|PromptArgument\
|Implementation|TextContent|ImageContent|AudioContent|EmbeddedResource|ResourceContents\
|TextResourceContents|BlobResourceContents|ProgressNotificationParams\
|LoggingMessageNotificationParams|ResourceUpdatedNotificationParams";

/// The message unions of each direction.
const UNIONS: &str =
    "ClientNotification|ClientRequest|ClientResult|ServerNotification|ServerRequest|ServerResult";

/// Optional display/metadata fields: adding one to what the server sends is always a
/// `projection` (checked: never `(required)`).
const OPTIONAL_DISPLAY_FIELDS: &str = "title|icons|description|websiteUrl|annotations|_meta";

/// The classification, first match wins. Every alternative of every row must be the first
/// match of at least one entry (no dead or shadowed rows).
const ROWS: &[Row] = &[
    // --- Tasks (2025-11-25 experimental, an extension in 2026-07-28): opt-in. ------------
    row(&[P3, P4], METHODS, "*", "tasks/*|notifications/tasks/*", Top, "*", "tasks-opt-in"),
    row(&[P3, P4], CAPS, "*", "client.tasks*|server.tasks*", Top, "*", "tasks-opt-in"),
    row(&[P3, P4], TYPES, "*", "*Task*|ToolExecution", Top, "", "tasks-opt-in"),
    row(&[P3, P4], TYPES, "*", "ClientCapabilities|ServerCapabilities", F("tasks"), "*", "tasks-opt-in"),
    row(&[P3, P4], TYPES, "*", "Tool", F("execution"), "*", "tasks-opt-in"),
    row(&[P3, P4], TYPES, "*", "*Params", F("task"), "TaskMetadata", "tasks-opt-in"),
    row(&[P3], TYPES, "changed", UNIONS, Top, "+*Task*", "tasks-opt-in"),
    row(&[P4], TYPES, "changed", "ClientRequest|ServerNotification|ServerResult", Top, "−*Task*", "tasks-opt-in"),
    // --- URL-mode elicitation (2025-11-25): not offered. ---------------------------------
    row(&[P3, P4], METHODS, "*", "notifications/elicitation/complete", Top, "*", "url-elicitation"),
    row(&[P3, P4], CAPS, "*", "client.elicitation.url", Top, "*", "url-elicitation"),
    row(
        &[P3, P4],
        TYPES,
        "*",
        "ElicitRequestURLParams|ElicitationComplete*|URLElicitationRequiredError",
        AnyLevel,
        "*",
        "url-elicitation",
    ),
    row(&[P3, P4], TYPES, "changed", "ServerNotification", Top, "*ElicitationCompleteNotification", "url-elicitation"),
    // --- Sampling, elicitation (form mode), roots: the server asks the client. -----------
    row(&[P2, P3, P4], METHODS, "*", "sampling/createMessage|elicitation/create|roots/list", Top, "*", "ask-client"),
    row(&[P2, P3, P4], CAPS, "*", "client.sampling*|client.elicitation*|client.roots*", Top, "*", "ask-client"),
    row(&[P2, P3, P4], TYPES, "*", "ClientCapabilities", F("sampling|elicitation|roots"), "*", "ask-client"),
    row(ALL, TYPES, "*", ASK_CLIENT_TYPES, AnyLevel, "*", "ask-client"),
    // --- 2024-11-05 → 2025-03-26 ---------------------------------------------------------
    row(&[P1], CAPS, "added", "server.completions", Top, "object", "projection"),
    row(&[P1], TYPES, "added", "ServerCapabilities", F("completions"), "object", "projection"),
    row(&[P1], TYPES, "added", "ProgressNotificationParams", F("message"), "string", "projection"),
    row(&[P1], TYPES, "added", "ToolAnnotations", Top, "", "projection"),
    row(&[P1], TYPES, "added", "AudioContent", Top, "", "downgrade-audio"),
    row(&[P1], TYPES, "changed", "CallToolResultContentItem|PromptMessageContent", Top, "+AudioContent", "downgrade-audio"),
    row(&[P1, P2], TYPES, "*", "JSONRPCBatchRequest|JSONRPCBatchResponse", Top, "", "batching"),
    row(&[P1, P2], TYPES, "changed", "JSONRPCMessage", Top, "*(JSONRPC*)[]", "batching"),
    row(&[P1], TYPES, "*", "Annotations|Annotated", Top, "", "schema-refactor"),
    row(&[P1], TYPES, "changed", "*", F("annotations"), "{audience, priority} → Annotations", "schema-refactor"),
    // --- 2025-03-26 → 2025-06-18 ---------------------------------------------------------
    row(&[P2], TYPES, "*", "ContentBlock|ResourceLink|CallToolResultContentItem|PromptMessageContent", Top, "", "downgrade-resource-link"),
    row(&[P2], TYPES, "changed", "CallToolResult|PromptMessage", F("content"), "*", "downgrade-resource-link"),
    row(&[P2], TYPES, "added", "CallToolResult", F("structuredContent"), "object", "structured-fallback"),
    row(&[P2], TYPES, "added", "Tool", F("outputSchema"), "*", "projection"),
    row(&[P2], TYPES, "added", "Annotations", F("lastModified"), "string", "projection"),
    row(&[P2], TYPES, "added", "CompleteRequestParams", F("context"), "*", "client-input-typed"),
    row(&[P2], TYPES, "added", "PromptReference", F("title"), "string", "client-input-typed"),
    row(&[P2], TYPES, "*", "BaseMetadata|ResourceTemplateReference|ResourceReference", Top, "", "schema-refactor"),
    row(&[P2], TYPES, "changed", "CompleteRequestParamsRef", Top, "*Resource*Reference", "schema-refactor"),
    // --- 2025-06-18 → 2025-11-25 ---------------------------------------------------------
    row(&[P3], METHODS, "changed", "*", Top, "params *Params? → *Params?", "schema-refactor"),
    row(&[P3], TYPES, "added", "NotificationParams|PaginatedRequestParams|RequestParams|ResourceRequestParams", Top, "", "schema-refactor"),
    row(
        &[P3],
        TYPES,
        "removed",
        "InitializedNotificationParams|List*RequestParams|PingRequestParams|*ListChangedNotificationParams",
        Top,
        "",
        "schema-refactor",
    ),
    row(&[P3], TYPES, "changed", "*", F("params"), "*Params → *Params", "schema-refactor"),
    row(&[P3], TYPES, "changed", "PaginatedRequest", F("params"), "{cursor} → PaginatedRequestParams", "schema-refactor"),
    row(&[P3], TYPES, "*", "JSONRPC*", AnyLevel, "*", "jsonrpc-envelope"),
    row(&[P3], TYPES, "changed", "Request|Notification", F("params"), "{_meta} → object", "jsonrpc-envelope"),
    row(&[P3], TYPES, "added", "*", F("id"), "RequestId (required)", "jsonrpc-envelope"),
    row(&[P3], TYPES, "added", "*", F("jsonrpc"), "JSONRPCVersion (required)", "jsonrpc-envelope"),
    row(&[P3], TYPES, "added", "*Params", F("_meta"), "{progressToken}", "client-input-typed"),
    row(&[P3], TYPES, "added", "Error", Top, "", "error-codes"),
    row(&[P3], TYPES, "added", "Icon|Icons", Top, "", "projection"),
    row(&[P3, P4], TYPES, "*", "CancelledNotificationParams", F("_meta|requestId"), "*", "incoming-notifications"),
    row(&[P3, P4], TYPES, "changed", "Tool", F("inputSchema|outputSchema"), "*", "tool-schemas-verbatim"),
    // --- 2025-11-25 → 2026-07-28 ---------------------------------------------------------
    row(&[P4], METHODS, "added", "server/discover", Top, "*", "discover"),
    row(&[P4], METHODS, "added", "subscriptions/listen|notifications/subscriptions/acknowledged", Top, "*", "subscriptions-listen"),
    row(&[P4], METHODS, "removed", "initialize|ping|logging/setLevel|resources/subscribe|resources/unsubscribe", Top, "*", "method-table"),
    row(&[P4], METHODS, "removed", "notifications/initialized|notifications/roots/list_changed", Top, "*", "incoming-notifications"),
    row(
        &[P4],
        METHODS,
        "changed",
        "notifications/cancelled|notifications/progress",
        Top,
        "notification, both → notification, server→client",
        "incoming-notifications",
    ),
    row(&[P4], METHODS, "changed", "tools/call|prompts/get|resources/read", Top, "result * → *ResultResponseResult", "input-required"),
    row(&[P4], METHODS, "changed", "*/list", Top, "params PaginatedRequestParams? → PaginatedRequestParams", "client-input-typed"),
    row(&[P4], CAPS, "*", "client.experimental|client.extensions", Top, "*", "client-caps-opaque"),
    row(&[P4], CAPS, "added", "server.extensions", Top, "*", "projection"),
    row(&[P4], CAPS, "changed", "server.completions|server.experimental|server.logging", Top, "*JSONObject*", "schema-refactor"),
    row(&[P4], TYPES, "added", "CacheableResult|ResultType|ResultMetaObject", Top, "", "stamp-2026"),
    row(&[P4], TYPES, "added", "*Result", F("resultType|ttlMs|cacheScope"), "*", "stamp-2026"),
    row(&[P4], TYPES, "changed", "*", F("_meta"), "object → ResultMetaObject", "stamp-2026"),
    row(&[P4], TYPES, "added", "Discover*", Top, "", "discover"),
    row(&[P4], TYPES, "changed", "ClientRequest|ServerResult", Top, "+Discover*", "discover"),
    row(&[P4], TYPES, "added", "Subscription*|NotificationMetaObject", Top, "", "subscriptions-listen"),
    row(&[P4], TYPES, "changed", "ClientRequest|ServerResult|ServerNotification", Top, "+Subscriptions*", "subscriptions-listen"),
    row(&[P4], TYPES, "changed", "*", F("_meta"), "object → NotificationMetaObject", "subscriptions-listen"),
    row(&[P4], TYPES, "added", "Input*|*ResultResponseResult", Top, "", "input-required"),
    row(&[P4], TYPES, "added", "*", F("inputResponses|requestState"), "*", "input-required"),
    row(&[P4], TYPES, "changed", "ServerResult", Top, "+InputRequiredResult", "input-required"),
    row(&[P4], TYPES, "added", "*ResultResponse", Top, "", "jsonrpc-envelope"),
    row(&[P4], TYPES, "added", "*Error", Top, "", "error-codes"),
    row(&[P4], TYPES, "added", "RequestMetaObject", Top, "", "modern-meta"),
    row(&[P4], TYPES, "changed", "*", F("_meta"), "{progressToken} → RequestMetaObject (required)", "modern-meta"),
    row(&[P4], TYPES, "removed", "InitializedNotification|RootsListChangedNotification", Top, "", "incoming-notifications"),
    row(&[P4], TYPES, "changed", "ClientNotification", Top, "* → object {jsonrpc, method, params}", "incoming-notifications"),
    row(
        &[P4],
        TYPES,
        "removed",
        "Initialize*|PingRequest|SetLevelRequest*|SubscribeRequest*|UnsubscribeRequest*",
        Top,
        "",
        "method-table",
    ),
    row(&[P4], TYPES, "changed", "ClientRequest", Top, "−*Request", "method-table"),
    row(&[P4], TYPES, "changed", "ServerResult", Top, "−InitializeResult", "method-table"),
    row(&[P4], TYPES, "changed", "*Request", F("params"), "PaginatedRequestParams → PaginatedRequestParams (required)", "client-input-typed"),
    row(&[P4], TYPES, "changed", "CallToolResult", F("structuredContent"), "object → any", "structured-fallback"),
    row(&[P4], TYPES, "*", "ClientCapabilities", F("experimental|extensions"), "*", "client-caps-opaque"),
    row(&[P4], TYPES, "added", "ServerCapabilities", F("extensions"), "*", "projection"),
    row(&[P4], TYPES, "changed", "ServerCapabilities", F("completions|experimental|logging"), "*JSONObject*", "schema-refactor"),
    row(&[P4], TYPES, "added", "JSONArray|JSONObject|JSONValue|MetaObject", Top, "", "schema-refactor"),
    row(&[P4], TYPES, "changed", "*", F("_meta"), "object → MetaObject", "schema-refactor"),
    // --- Any revision: optional display/metadata fields on what the server sends. --------
    row(ANY, TYPES, "added", SERVER_SENT, F(OPTIONAL_DISPLAY_FIELDS), "*", "projection"),
];

/// `*` matches any run of characters (including none).
fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// The alternative of `alternatives` (`a|b|c`) that matches `text`, if any.
fn alternative<'p>(alternatives: &'p str, text: &str) -> Option<&'p str> {
    alternatives.split('|').find(|a| glob(a, text))
}

/// Which alternatives (of the name, of the field) made the row match, if it does.
fn matches(row: &Row, e: &Entry) -> Option<(&'static str, Option<&'static str>)> {
    if !row.pairs.iter().any(|p| *p == "*" || *p == e.pair)
        || row.section != e.section
        || !(row.change == "*" || row.change == e.change)
        || !glob(row.detail, &e.detail)
    {
        return None;
    }
    let name = alternative(row.name, &e.name)?;
    let field = match (row.level, &e.field) {
        (Level::Top, None) | (Level::Any, _) => None,
        (Level::Field(f), Some(field)) => Some(alternative(f, field)?),
        _ => return None,
    };
    Some((name, field))
}

/// The index of the first row matching `e`.
fn classify(e: &Entry) -> Option<usize> {
    ROWS.iter().position(|r| matches(r, e).is_some())
}

fn entries() -> Vec<Entry> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/protocol-changes.md");
    let doc = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    parse(&doc).unwrap_or_else(|e| panic!("docs/protocol-changes.md: {e}"))
}

/// The rule ids of SHAPING.md: the first column of the table under `| id |`.
fn documented_rules() -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/SHAPING.md");
    let doc = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut ids = BTreeSet::new();
    let mut in_table = false;
    for line in doc.lines() {
        if line.starts_with("| id |") {
            in_table = true;
            continue;
        }
        if !in_table {
            continue;
        }
        if !line.starts_with('|') {
            break;
        }
        let first = line
            .trim_start_matches('|')
            .split('|')
            .next()
            .unwrap_or("")
            .trim();
        if first.starts_with("---") {
            continue;
        }
        let id = first
            .strip_prefix('`')
            .and_then(|s| s.strip_suffix('`'))
            .unwrap_or_else(|| panic!("SHAPING.md: rule id not in backticks: {line}"));
        assert!(
            ids.insert(id.to_owned()),
            "SHAPING.md: rule `{id}` listed twice"
        );
    }
    assert!(!ids.is_empty(), "SHAPING.md has no `| id |` table");
    ids
}

fn uncovered(entries: &[Entry]) -> Vec<String> {
    entries
        .iter()
        .filter(|e| classify(e).is_none())
        .map(ToString::to_string)
        .collect()
}

#[test]
fn every_difference_has_a_rule() {
    let entries = entries();
    assert!(entries.len() > 400, "only {} entries parsed", entries.len());
    let missing = uncovered(&entries);
    assert!(
        missing.is_empty(),
        "{} difference(s) in docs/protocol-changes.md have no rule: add a row to ROWS in \
         runtime/interop/tests/protocol_changes.rs (and a rule to runtime/core/SHAPING.md if none fits):\n  {}",
        missing.len(),
        missing.join("\n  ")
    );
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &entries {
        if let Some(i) = classify(e) {
            *counts.entry(ROWS[i].rule).or_default() += 1;
        }
    }
    eprintln!("{} entries, by rule:", entries.len());
    for (rule, n) in &counts {
        eprintln!("  {rule:<26} {n}");
    }
}

#[test]
fn every_rule_id_is_documented_in_shaping_md_and_every_documented_rule_is_used() {
    let documented = documented_rules();
    let used: BTreeSet<String> = ROWS.iter().map(|r| r.rule.to_owned()).collect();
    let undocumented: Vec<&String> = used.difference(&documented).collect();
    assert!(
        undocumented.is_empty(),
        "rule ids used in ROWS but not in runtime/core/SHAPING.md: {undocumented:?}"
    );
    let unused: Vec<&String> = documented.difference(&used).collect();
    assert!(
        unused.is_empty(),
        "rules in runtime/core/SHAPING.md that classify no difference: {unused:?}"
    );
}

#[test]
fn no_row_or_alternative_is_dead_or_shadowed() {
    let entries = entries();
    let mut dead = Vec::new();
    for (i, row) in ROWS.iter().enumerate() {
        let won: Vec<(&str, Option<&str>)> = entries
            .iter()
            .filter(|e| classify(e) == Some(i))
            .filter_map(|e| matches(row, e))
            .collect();
        for name in row.name.split('|') {
            if !won.iter().any(|(n, _)| *n == name) {
                dead.push(format!("row {i} ({}): name alternative `{name}`", row.rule));
            }
        }
        if let Level::Field(fields) = row.level {
            for field in fields.split('|') {
                if !won.iter().any(|(_, f)| *f == Some(field)) {
                    dead.push(format!(
                        "row {i} ({}): field alternative `{field}`",
                        row.rule
                    ));
                }
            }
        }
        for pair in row.pairs.iter().filter(|p| **p != "*") {
            if !entries
                .iter()
                .any(|e| classify(e) == Some(i) && e.pair == *pair)
            {
                dead.push(format!("row {i} ({}): pair {pair}", row.rule));
            }
        }
    }
    assert!(
        dead.is_empty(),
        "parts of ROWS classify nothing (dead, or shadowed by an earlier row):\n  {}",
        dead.join("\n  ")
    );
}

#[test]
fn no_row_is_a_catch_all() {
    for (i, row) in ROWS.iter().enumerate() {
        let any_name = row.name.split('|').any(|a| a.chars().all(|c| c == '*'));
        let any_field = match row.level {
            Level::Top => false,
            Level::Any => true,
            Level::Field(f) => f.split('|').any(|a| a.chars().all(|c| c == '*')),
        };
        let any_detail = row.detail.chars().all(|c| c == '*') && !row.detail.is_empty();
        assert!(
            !(any_name && (any_field || matches!(row.level, Level::Top)) && any_detail),
            "row {i} ({}) accepts any name with any detail",
            row.rule
        );
        assert!(
            !(row.pairs.contains(&"*") && (any_name || row.change == "*")),
            "row {i} ({}): a row for any revision pair must name what it accepts and how it changed",
            row.rule
        );
    }
}

#[test]
fn projection_never_has_to_invent_a_required_field() {
    // Projection drops what a revision lacks; it cannot supply what a revision requires.
    for e in entries() {
        if classify(&e).map(|i| ROWS[i].rule) == Some("projection") {
            assert!(
                !e.detail.contains("(required)") && e.change == "added",
                "{e} is classified `projection` but projection only drops optional additions"
            );
        }
    }
}

#[test]
fn a_new_revision_is_reported_uncovered_by_name() {
    let doc = "# Protocol changes\n\n## 2026-07-28 → 2027-01-01\n\n### Methods\n\n\
               - added `widgets/list` (request, client→server; params PaginatedRequestParams; result ListWidgetsResult)\n\n\
               ### Capabilities\n\nNo changes.\n\n### Types\n\n\
               - added `Widget`\n\
               - changed `Tool`:\n  - added `title`: string\n  - added `color`: string\n\
               - changed `ContentBlock` (union): +WidgetContent\n";
    let entries = parse(doc).expect("parses");
    assert_eq!(entries.len(), 5);
    let missing = uncovered(&entries);
    let names: Vec<&str> = [
        "`widgets/list`",
        "`Widget`",
        "`Tool.color`",
        "+WidgetContent",
    ]
    .to_vec();
    assert_eq!(missing.len(), names.len(), "{missing:#?}");
    for (m, n) in missing.iter().zip(&names) {
        assert!(m.contains(n), "{m} should name {n}");
    }
    // An optional display field on a tool is a projection in any revision.
    let title = entries
        .iter()
        .find(|e| e.field.as_deref() == Some("title"))
        .expect("title");
    assert_eq!(classify(title).map(|i| ROWS[i].rule), Some("projection"));
}

#[test]
fn the_parser_rejects_what_it_does_not_understand() {
    let head = "## 2025-11-25 → 2026-07-28\n\n### Types\n\n";
    for bad in [
        "- renamed `X`\n",
        "- changed `X`:\n- added `Y`\n",
        "  - added `y`: string\n",
        "* added `X`\n",
    ] {
        assert!(parse(&format!("{head}{bad}")).is_err(), "accepted: {bad:?}");
    }
    assert!(parse("## 2025-11-25 → 2026-07-28\n\n### Things\n").is_err());
    let members = union_members("+(JSONRPCRequest | JSONRPCNotification)[] −JSONRPCError");
    assert_eq!(
        members,
        ["+(JSONRPCRequest | JSONRPCNotification)[]", "−JSONRPCError"]
    );
}

// ---------------------------------------------------------------------------------------
// The behaviour the rules claim
// ---------------------------------------------------------------------------------------

fn server_info() -> Implementation {
    Implementation::new("shaping", "1.2.3")
        .title("Shaping")
        .description("tests")
        .icons(vec![Icon::new("data:image/png;base64,AA==", "image/png")])
        .website_url("https://example.com")
}

fn rich_tool() -> Tool {
    Tool::new("t", "a tool")
        .title("T")
        .input_schema(json!({"type": "object"}))
        .output_schema(json!({"type": "object", "properties": {"a": {"type": "number"}}}))
        .read_only()
        .icons(vec![Icon::new("data:image/png;base64,AA==", "image/png")])
}

fn has(v: &Value, key: &str) -> bool {
    v.get(key).is_some()
}

fn link() -> Content {
    Content::ResourceLink(ResourceLink::new("test://a", "a").title("The A"))
}

/// `projection`: what a revision does not define is dropped, per revision.
#[test]
fn projection_drops_fields_the_revision_does_not_define() {
    let info = server_info();
    let tool = rich_tool();
    // (revision, annotations, title + outputSchema, icons)
    for (v, annotations, titles, icons) in [
        (V::V2024_11_05, false, false, false),
        (V::V2025_03_26, true, false, false),
        (V::V2025_06_18, true, true, false),
        (V::V2025_11_25, true, true, true),
        (V::V2026_07_28, true, true, true),
    ] {
        let r = shape::list_tools(v, &info, &[&tool], None, CacheHint::LIST)
            .expect("tool list")
            .to_value();
        let t = &r["tools"][0];
        assert_eq!(has(t, "annotations"), annotations, "{v}: {t}");
        assert_eq!(has(t, "title"), titles, "{v}: {t}");
        assert_eq!(has(t, "outputSchema"), titles, "{v}: {t}");
        assert_eq!(has(t, "icons"), icons, "{v}: {t}");

        let i = shape::implementation(v, &info).expect("implementation");
        assert_eq!(has(&i, "title"), titles, "{v}: {i}");
        for key in ["description", "icons", "websiteUrl"] {
            assert_eq!(has(&i, key), icons, "{v}: {key} in {i}");
        }
    }
    // server.completions (2025-03-26).
    let caps = json!({"tools": {"listChanged": true}, "completions": {}, "logging": {}});
    let old = shape::server_capabilities(V::V2024_11_05, &caps).expect("caps");
    assert!(!has(&old, "completions") && has(&old, "tools"), "{old}");
    let new = shape::server_capabilities(V::V2025_03_26, &caps).expect("caps");
    assert!(has(&new, "completions"), "{new}");
    // Annotations.lastModified (2025-06-18) on content.
    let annotated = ToolResult::content(vec![Content::text("x").annotations(
        Annotations::default()
            .audience([Role::User])
            .priority(1.0)
            .last_modified("2025-01-01T00:00:00Z"),
    )]);
    let r = shape::tool_result(V::V2025_03_26, &info, annotated.clone())
        .expect("result")
        .to_value();
    let a = &r["content"][0]["annotations"];
    assert!(has(a, "priority") && !has(a, "lastModified"), "{a}");
    let r = shape::tool_result(V::V2025_06_18, &info, annotated.clone())
        .expect("result")
        .to_value();
    assert!(has(&r["content"][0]["annotations"], "lastModified"), "{r}");
    // PromptArgument.title (2025-06-18).
    let prompt = Prompt::new("p")
        .title("P")
        .argument(PromptArgument::new("x").title("X").required());
    let r = shape::list_prompts(V::V2025_03_26, &info, &[&prompt], None, CacheHint::LIST)
        .expect("prompts")
        .to_value();
    assert!(
        !has(&r["prompts"][0], "title") && !has(&r["prompts"][0]["arguments"][0], "title"),
        "{r}"
    );
    let r = shape::list_prompts(V::V2025_06_18, &info, &[&prompt], None, CacheHint::LIST)
        .expect("prompts")
        .to_value();
    assert_eq!(r["prompts"][0]["arguments"][0]["title"], "X", "{r}");
    // ProgressNotificationParams.message (2025-03-26).
    let p = shape::progress(V::V2024_11_05, &json!("tok"), 1.0, Some(2.0), Some("half"))
        .expect("progress");
    assert_eq!(
        p,
        json!({"progressToken": "tok", "progress": 1, "total": 2})
    );
    let p = shape::progress(V::V2025_03_26, &json!("tok"), 1.0, Some(2.0), Some("half"))
        .expect("progress");
    assert_eq!(p["message"], "half");
}

/// `downgrade-audio`: audio before 2025-03-26 becomes a text notice, in tool results and
/// prompt messages.
#[test]
fn audio_becomes_text_before_2025_03_26() {
    let info = server_info();
    let audio = ToolResult::content(vec![Content::audio("UklGRg==", "audio/wav")]);
    let old = shape::tool_result(V::V2024_11_05, &info, audio.clone())
        .expect("result")
        .to_value();
    assert_eq!(old["content"][0]["type"], "text", "{old}");
    let text = old["content"][0]["text"].as_str().expect("text");
    assert!(
        text.contains("audio/wav") && text.contains("omitted"),
        "{text}"
    );
    let new = shape::tool_result(V::V2025_03_26, &info, audio.clone())
        .expect("result")
        .to_value();
    assert_eq!(
        new["content"][0],
        json!({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"})
    );

    let prompt = PromptResult::new([PromptMessage::user(Content::audio("UklGRg==", "audio/wav"))]);
    let old = shape::get_prompt(V::V2024_11_05, &info, &prompt)
        .expect("prompt")
        .to_value();
    assert_eq!(old["messages"][0]["content"]["type"], "text", "{old}");
    let new = shape::get_prompt(V::V2025_03_26, &info, &prompt)
        .expect("prompt")
        .to_value();
    assert_eq!(new["messages"][0]["content"]["type"], "audio", "{new}");
}

/// `downgrade-resource-link`: a resource link before 2025-06-18 becomes a text block naming
/// the resource (title, else name) and its URI.
#[test]
fn a_resource_link_becomes_text_before_2025_06_18() {
    let info = server_info();
    let r = ToolResult::content(vec![link()]);
    for v in [V::V2024_11_05, V::V2025_03_26] {
        let old = shape::tool_result(v, &info, r.clone())
            .expect("result")
            .to_value();
        assert_eq!(
            old["content"][0],
            json!({"type": "text", "text": "Resource: The A <test://a>"}),
            "{v}"
        );
    }
    let untitled = ToolResult::content(vec![Content::ResourceLink(ResourceLink::new(
        "test://b", "b",
    ))]);
    let old = shape::tool_result(V::V2025_03_26, &info, untitled.clone())
        .expect("result")
        .to_value();
    assert_eq!(old["content"][0]["text"], "Resource: b <test://b>");
    for v in [V::V2025_06_18, V::V2025_11_25, V::V2026_07_28] {
        let new = shape::tool_result(v, &info, r.clone())
            .expect("result")
            .to_value();
        assert_eq!(new["content"][0]["type"], "resource_link", "{v}");
        assert_eq!(new["content"][0]["uri"], "test://a", "{v}");
    }
}

/// `structured-fallback`: before 2025-06-18, no `structuredContent`; its JSON is added as
/// text when the content has no text block.
#[test]
fn structured_output_falls_back_to_json_text_before_2025_06_18() {
    let info = server_info();
    let structured = ToolResult::content(vec![]).structured(json!({"a": 1}));
    for v in [V::V2024_11_05, V::V2025_03_26] {
        let r = shape::tool_result(v, &info, structured.clone())
            .expect("result")
            .to_value();
        assert_eq!(
            r,
            json!({"content": [{"type": "text", "text": "{\"a\":1}"}]}),
            "{v}"
        );
    }
    let with_text = ToolResult::text("a is 1").structured(json!({"a": 1}));
    let r = shape::tool_result(V::V2024_11_05, &info, with_text.clone())
        .expect("result")
        .to_value();
    assert_eq!(r, json!({"content": [{"type": "text", "text": "a is 1"}]}));
    for v in [V::V2025_06_18, V::V2025_11_25, V::V2026_07_28] {
        let r = shape::tool_result(v, &info, structured.clone())
            .expect("result")
            .to_value();
        assert_eq!(r["structuredContent"], json!({"a": 1}), "{v}");
        assert_eq!(r["content"], json!([]), "{v}");
    }
}

/// `stamp-2026`: `resultType`, the server's identity in `_meta`, and cache hints on lists
/// and reads, in 2026-07-28 only.
#[test]
fn results_are_stamped_in_2026_07_28_only() {
    let info = server_info();
    let v = V::V2026_07_28;
    let r = shape::tool_result(v, &info, ToolResult::text("x"))
        .expect("result")
        .to_value();
    assert_eq!(r["resultType"], "complete");
    assert_eq!(
        r["_meta"][version::META_SERVER_INFO],
        json!({"name": "shaping", "version": "1.2.3"})
    );
    assert!(!has(&r, "ttlMs") && !has(&r, "cacheScope"), "{r}");
    let l = shape::list_tools(v, &info, &[&rich_tool()], None, CacheHint::LIST)
        .expect("list")
        .to_value();
    assert_eq!(
        (l["ttlMs"].clone(), l["cacheScope"].clone()),
        (json!(0), json!("public"))
    );
    let read = shape::read_resource(
        v,
        &info,
        vec![ResourceContents::text("test://a", "text/plain", "a")],
        CacheHint::READ,
    )
    .expect("read")
    .to_value();
    assert_eq!(read["cacheScope"], "private");
    assert_eq!(read["resultType"], "complete");
    assert_eq!(shape::empty(v, &info).to_value()["resultType"], "complete");
    for old in [
        V::V2024_11_05,
        V::V2025_03_26,
        V::V2025_06_18,
        V::V2025_11_25,
    ] {
        assert_eq!(shape::empty(old, &info).to_value(), json!({}), "{old}");
        let r = shape::tool_result(old, &info, ToolResult::text("x"))
            .expect("result")
            .to_value();
        assert_eq!(
            r,
            json!({"content": [{"type": "text", "text": "x"}]}),
            "{old}"
        );
        let l = shape::list_tools(old, &info, &[&rich_tool()], None, CacheHint::LIST)
            .expect("list")
            .to_value();
        for key in ["resultType", "ttlMs", "cacheScope", "_meta"] {
            assert!(!has(&l, key), "{old}: {key} in {l}");
        }
    }
}

/// `tool-schemas-verbatim`: the author's JSON Schema documents reach every revision as
/// written.
#[test]
fn tool_schemas_reach_every_revision_verbatim() {
    let info = server_info();
    let input = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/p"}},
        "required": ["p"],
        "additionalProperties": false,
        "$defs": {"p": {"type": "string", "minLength": 1}}
    });
    let tool = rich_tool().input_schema(input.clone());
    for v in V::ALL {
        let r = shape::list_tools(v, &info, &[&tool], None, CacheHint::LIST)
            .expect("list")
            .to_value();
        assert_eq!(r["tools"][0]["inputSchema"], input, "{v}");
    }
}

/// `error-codes`: the codes the runtime uses per revision.
#[test]
fn error_codes_per_revision() {
    for v in V::ALL {
        let expected = if v == V::V2026_07_28 { -32602 } else { -32002 };
        assert_eq!(v.features().resource_not_found_code, expected, "{v}");
    }
    assert_eq!(ErrorCode::HEADER_MISMATCH.0, -32020);
    assert_eq!(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY.0, -32021);
    let e = version::unsupported_version(&json!("2030-01-01"), VersionSet::ALL);
    assert_eq!(e.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
    assert_eq!(e.code.0, -32022);
    assert_eq!(e.data.expect("data")["supported"][0], "2026-07-28");
}

/// `batching`: only 2025-03-26 accepts batches (the feature table; the session reads it).
#[test]
fn batching_only_in_2025_03_26() {
    for v in V::ALL {
        assert_eq!(v.features().batching, v == V::V2025_03_26, "{v}");
    }
}

// --- Routing, through a connection (stdio) -----------------------------------------------------

fn modern(extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"x.example/e": {"on": true}}},
    });
    if let (Some(m), Value::Object(extra)) = (meta.as_object_mut(), extra) {
        m.extend(extra);
    }
    json!({"_meta": meta})
}

fn test_server() -> Server {
    Server::builder(Implementation::new("routing", "1"))
        .tool(
            Tool::new("caps", "Reports the client's capabilities"),
            |_, ctx| async move {
                ctx.log(LogLevel::Info, None, json!("hello")).await;
                Ok(ToolResult::text(ctx.client_capabilities().to_string()))
            },
        )
        .build()
}

use kit::code;

/// `method-table`, `tasks-opt-in`, `ask-client`, `discover`: what a
/// legacy session admits comes from its revision's generated table.
#[tokio::test]
async fn legacy_routing_follows_the_generated_method_table() {
    let mut p = Stdio::serve(test_server());
    p.open(V::V2025_11_25.as_str(), json!({})).await;
    for method in [
        // not in 2025-11-25's table
        "server/discover",
        "subscriptions/listen",
        // in the table, but sent only by servers
        "sampling/createMessage",
        "elicitation/create",
        "roots/list",
        // in the table, client-sendable, not offered by a server without task tools
        "tasks/get",
        "tasks/list",
    ] {
        let r = p.request(1, method, json!({})).await;
        assert_eq!(code(&r), -32601, "{method}: {r}");
    }
    let r = p.request(2, "ping", json!({})).await;
    assert_eq!(r["result"], json!({}));
    let caps = shape::server_capabilities(V::V2025_11_25, &test_server().neutral_capabilities())
        .expect("caps");
    assert!(!has(&caps, "tasks"), "{caps}");
}

/// `method-table`, `modern-meta`, `discover`, `client-caps-opaque`: a 2026-07-28 request
/// is routed by its own `_meta`.
#[tokio::test]
async fn modern_routing_meta_discover_and_opaque_client_capabilities() {
    let mut p = Stdio::serve(test_server());
    for method in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "tasks/get",
    ] {
        let r = p.request(1, method, modern(json!({}))).await;
        assert_eq!(code(&r), -32601, "{method}: {r}");
    }
    let r = p.request(3, "server/discover", modern(json!({}))).await;
    let d = &r["result"];
    assert_eq!(
        d["supportedVersions"],
        json!([
            "2026-07-28",
            "2025-11-25",
            "2025-06-18",
            "2025-03-26",
            "2024-11-05"
        ])
    );
    assert_eq!(d["resultType"], "complete");
    assert!(has(&d["capabilities"], "tools"), "{d}");

    // No logLevel: no log messages; the capabilities reach the handler as sent.
    let call = json!({"name": "caps", "arguments": {}});
    let mut params = modern(json!({}));
    params
        .as_object_mut()
        .expect("object")
        .extend(call.as_object().cloned().expect("object"));
    let (before, r) = p.exchange(4, "tools/call", params).await;
    assert!(before.is_empty(), "{before:?}");
    let sent: Value =
        serde_json::from_str(r["result"]["content"][0]["text"].as_str().expect("text"))
            .expect("JSON");
    assert_eq!(sent, json!({"extensions": {"x.example/e": {"on": true}}}));
    // With a logLevel: the message comes before the answer.
    let mut params = modern(json!({"io.modelcontextprotocol/logLevel": "debug"}));
    params
        .as_object_mut()
        .expect("object")
        .extend(call.as_object().cloned().expect("object"));
    let (before, _) = p.exchange(5, "tools/call", params).await;
    assert_eq!(before.len(), 1, "{before:?}");
    assert_eq!(before[0]["method"], "notifications/message");
}

/// `client-input-typed`: params are decoded with the revision's generated type.
#[tokio::test]
async fn params_are_checked_against_the_revision_types() {
    let mut p = Stdio::serve(test_server());
    p.open(
        V::V2024_11_05.as_str(),
        json!({"roots": {"listChanged": true}}),
    )
    .await;
    let r = p.request(1, "tools/call", json!({"arguments": {}})).await;
    assert_eq!(code(&r), -32602, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .expect("message")
            .contains("name"),
        "{r}"
    );
    // A later revision's request fields (`_meta.progressToken`) are accepted, and the
    // legacy client's capabilities reach the handler as sent.
    let (before, r) = p
        .exchange(
            2,
            "tools/call",
            json!({"name": "caps", "_meta": {"progressToken": 7}}),
        )
        .await;
    // The handler's log message comes first.
    assert_eq!(before.len(), 1, "{before:?}");
    assert_eq!(before[0]["method"], "notifications/message", "{before:?}");
    let sent = r["result"]["content"][0]["text"].as_str().expect("text");
    assert_eq!(sent, r#"{"roots":{"listChanged":true}}"#);
}

/// `subscriptions-listen`: a 2026-07-28 client opts in to change notifications on a
/// long-lived request; the server acknowledges what it honours and tags every notification.
#[tokio::test]
async fn subscriptions_listen_acknowledges_and_forwards_tagged_notifications() {
    let server = test_server();
    let mut p = Stdio::serve(server.clone());
    let mut params = modern(json!({}));
    params.as_object_mut().expect("object").insert(
        "notifications".into(),
        json!({"toolsListChanged": true, "promptsListChanged": true}),
    );
    p.send(&json!({"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen", "params": params}))
        .await;
    let ack = p.recv().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    // No prompts on this server: only the tool list is honoured.
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true}),
        "{ack}"
    );
    let tag = ack["params"]["_meta"][SUBSCRIPTION_ID].clone();
    assert!(tag.is_string() || tag.is_number(), "{ack}");
    server.notify(ServerEvent::PromptsChanged);
    server.notify(ServerEvent::ToolsChanged);
    let n = p.recv().await;
    assert_eq!(n["method"], "notifications/tools/list_changed", "{n}");
    assert_eq!(n["params"]["_meta"][SUBSCRIPTION_ID], tag, "{n}");
    // Cancelling the listen request ends the stream without an answer. A second listen
    // request then hears the next change; the cancelled one must not (announcements reach
    // both in order, and whatever a cancelled stream still wrote, or an answer to it,
    // would arrive before the server closes its output).
    p.send(&kit::cancel(7)).await;
    let mut params = modern(json!({}));
    params
        .as_object_mut()
        .expect("object")
        .insert("notifications".into(), json!({"toolsListChanged": true}));
    p.send(&kit::request(8, "subscriptions/listen", params))
        .await;
    let ack = p.recv().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID], 8, "{ack}");
    server.notify(ServerEvent::ToolsChanged);
    let n = p.recv().await;
    assert_eq!(n["method"], "notifications/tools/list_changed", "{n}");
    assert_eq!(
        n["params"]["_meta"][SUBSCRIPTION_ID], 8,
        "nothing after cancellation: {n}"
    );
    p.send(&kit::cancel(8)).await;
    p.finish().await;
}

fn asking_server() -> Server {
    Server::builder(Implementation::new("asking", "1"))
        .tool(
            Tool::new("ask", "Asks the user's name"),
            |_, ctx| async move {
                let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
                let name = match ctx.elicit_with_schema("Your name?", schema).await? {
                    Elicitation::Accept(content) => content
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                        .to_owned(),
                    Elicitation::Decline | Elicitation::Cancel => "?".to_owned(),
                };
                Ok(ToolResult::text(name))
            },
        )
        .build()
}

/// `ask-client` (legacy): the handler's ask goes out as a server→client request on the
/// request's channel, the client's response is matched by id; nothing is sent when the
/// client did not declare the capability (-32021) or the revision lacks the method.
#[tokio::test]
async fn legacy_asks_are_server_to_client_requests() {
    let mut p = Stdio::serve(asking_server());
    p.open(V::V2025_06_18.as_str(), json!({"elicitation": {}}))
        .await;
    p.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask", "arguments": {}}}))
        .await;
    let ask = p.recv().await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    assert_eq!(ask["params"]["message"], "Your name?", "{ask}");
    assert!(ask["id"].is_string() || ask["id"].is_number(), "{ask}");
    p.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"name": "Ada"}}}))
        .await;
    let r = p.recv().await;
    assert_eq!(r["id"], 1, "{r}");
    assert_eq!(r["result"]["content"][0]["text"], "Ada", "{r}");

    let mut p = Stdio::serve(asking_server());
    p.open(V::V2025_06_18.as_str(), json!({})).await;
    let (before, r) = p
        .exchange(1, "tools/call", json!({"name": "ask", "arguments": {}}))
        .await;
    assert!(before.is_empty(), "{before:?}");
    assert_eq!(code(&r), -32021, "{r}");

    // elicitation/create is not in 2025-03-26.
    let mut p = Stdio::serve(asking_server());
    p.open(V::V2025_03_26.as_str(), json!({"elicitation": {}}))
        .await;
    let (before, r) = p
        .exchange(1, "tools/call", json!({"name": "ask", "arguments": {}}))
        .await;
    assert!(before.is_empty(), "{before:?}");
    assert!(r.get("error").is_some(), "{r}");
}

/// `input-required` (2026-07-28): the first pass answers `input_required` with the asks
/// and a signed `requestState`; the retry with `inputResponses` completes; an altered
/// state is -32602.
#[tokio::test]
async fn modern_asks_are_input_required_round_trips() {
    let mut p = Stdio::serve(asking_server());
    let meta = json!({"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    }, "name": "ask", "arguments": {}});
    let r = p.request(1, "tools/call", meta.clone()).await;
    let first = &r["result"];
    assert_eq!(first["resultType"], "input_required", "{r}");
    let requests = first["inputRequests"].as_object().expect("inputRequests");
    assert_eq!(requests.len(), 1, "{r}");
    let (key, ask) = requests.iter().next().expect("one ask");
    assert_eq!(ask["method"], "elicitation/create", "{r}");
    let state = first["requestState"]
        .as_str()
        .expect("requestState")
        .to_owned();

    let mut retry = meta.clone();
    let obj = retry.as_object_mut().expect("object");
    obj.insert("requestState".into(), json!(state));
    obj.insert(
        "inputResponses".into(),
        json!({key.clone(): {"action": "accept", "content": {"name": "Ada"}}}),
    );
    let r = p.request(2, "tools/call", retry.clone()).await;
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert_eq!(r["result"]["content"][0]["text"], "Ada", "{r}");

    let obj = retry.as_object_mut().expect("object");
    obj.insert("requestState".into(), json!(format!("{state}x")));
    let r = p.request(3, "tools/call", retry).await;
    assert_eq!(code(&r), -32602, "{r}");
}

// --- Gaps found while classifying (see SHAPING.md), now fixed: kept as regression tests. --

/// 2026-07-28 allows any JSON as `structuredContent`; 2025-06-18 and 2025-11-25 require an
/// object. Today the whole result fails with -32603 instead of falling back to text.
#[test]
fn non_object_structured_output_is_not_an_error_in_any_revision() {
    let info = server_info();
    let r = ToolResult::content(vec![]).structured(json!([1, 2]));
    for v in V::ALL {
        assert!(shape::tool_result(v, &info, r.clone()).is_ok(), "{v}");
    }
}

/// 2026-07-28 allows an output schema of any type; older revisions require
/// `type: "object"`. Today one such tool makes the whole tool list fail with -32603.
#[test]
fn a_non_object_output_schema_does_not_break_the_tool_list() {
    let info = server_info();
    let tool = rich_tool().output_schema(json!({"type": "array", "items": {"type": "number"}}));
    for v in V::ALL {
        assert!(
            shape::list_tools(v, &info, &[&tool], None, CacheHint::LIST).is_ok(),
            "{v}"
        );
    }
}

/// The spec: the subscription id "is the JSON-RPC ID of the `subscriptions/listen`
/// request that opened the stream". Today it is a server-generated `sub-N`.
#[tokio::test]
async fn the_subscription_id_is_the_listen_request_id() {
    let mut p = Stdio::serve(test_server());
    let mut params = modern(json!({}));
    params
        .as_object_mut()
        .expect("object")
        .insert("notifications".into(), json!({"toolsListChanged": true}));
    p.send(&json!({"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen", "params": params}))
        .await;
    let ack = p.recv().await;
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID], "listen-1", "{ack}");
}
