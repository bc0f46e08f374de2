//! The revision manifest (`schema/revisions.toml`): which revisions exist, where their
//! schemas come from and what their bytes must hash to.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::behaviour::Behaviour;
use crate::error::{Error, Result};

/// The JSON Schema dialect a revision's schema is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Dialect {
    /// draft-07: definitions live under `definitions`.
    #[serde(rename = "draft-07")]
    Draft07,
    /// 2020-12: definitions live under `$defs`.
    #[serde(rename = "2020-12")]
    Draft2020_12,
}

impl Dialect {
    /// The dialect named by a schema's `$schema` URI, if it is one we handle.
    pub fn from_schema_uri(uri: &str) -> Option<Dialect> {
        let uri = uri.trim_end_matches('#');
        match uri {
            "http://json-schema.org/draft-07/schema"
            | "https://json-schema.org/draft-07/schema" => Some(Dialect::Draft07),
            "https://json-schema.org/draft/2020-12/schema" => Some(Dialect::Draft2020_12),
            _ => None,
        }
    }

    /// The key under which this dialect keeps its named definitions.
    pub fn definitions_key(self) -> &'static str {
        match self {
            Dialect::Draft07 => "definitions",
            Dialect::Draft2020_12 => "$defs",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Dialect::Draft07 => "draft-07",
            Dialect::Draft2020_12 => "2020-12",
        })
    }
}

/// One protocol revision as recorded in the manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Revision {
    /// The revision id, e.g. `2025-06-18`.
    pub id: String,
    /// Upstream URL of the schema, pinned to a commit.
    pub url: String,
    /// Lower-case hex SHA-256 of the schema file.
    pub sha256: String,
    /// The JSON Schema dialect.
    pub dialect: Dialect,
    /// Upstream folder (URL ending in `/`) of the revision's official example instances,
    /// if it has them; the files and their SHA-256 are listed in
    /// `schema/examples/<id>.sha256` (see [`crate::load::load_examples`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub examples: Option<String>,
    /// What the revision brought, in a few words (the doc of its `ProtocolVersion`
    /// variant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// What differs in its behaviour beyond its types (see [`crate::behaviour`]).
    pub behaviour: Behaviour,
}

impl Revision {
    /// The Rust module (and cargo feature) name of this revision, e.g. `v2025_06_18`.
    pub fn module_name(&self) -> String {
        module_name(&self.id)
    }
}

/// The Rust module name for a revision id: `2025-06-18` → `v2025_06_18`.
pub fn module_name(id: &str) -> String {
    format!("v{}", id.replace(['-', '.'], "_"))
}

/// An official protocol extension (`io.modelcontextprotocol/tasks`, …) as recorded in the
/// manifest: its schema is pinned like a revision's, and its types are generated into
/// `mcp_generated::ext::<module>`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Extension {
    /// The extension identifier, as negotiated on the wire (`io.modelcontextprotocol/tasks`).
    pub id: String,
    /// What the extension adds, in a few words (the doc of its module).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The revisions it extends (its module is compiled when any of their features is).
    pub extends: Vec<String>,
    /// Upstream URL of the schema, pinned to a commit.
    pub url: String,
    /// Lower-case hex SHA-256 of the schema file.
    pub sha256: String,
    /// The JSON Schema dialect.
    pub dialect: Dialect,
}

impl Extension {
    /// The Rust module name: the id's last segment (`io.modelcontextprotocol/tasks` →
    /// `tasks`), in snake case.
    pub fn module_name(&self) -> String {
        extension_module_name(&self.id)
    }

    /// The cargo feature of `mcp-generated` that compiles its module: `ext_` and the
    /// module name (`ext_tasks`), on by default, so that a runtime can leave out an
    /// extension it does not serve (the types are a large part of the crate's build).
    pub fn feature_name(&self) -> String {
        format!("ext_{}", self.module_name())
    }

    /// The folder that holds its schema in a mirror or the cache: the id with `/` as `-`
    /// (`io.modelcontextprotocol-tasks`).
    pub fn dir_name(&self) -> String {
        self.id.replace('/', "-")
    }
}

/// The Rust module name of an extension id: `io.modelcontextprotocol/tasks` → `tasks`.
pub fn extension_module_name(id: &str) -> String {
    let last = id.rsplit('/').next().unwrap_or(id);
    last.replace(['-', '.'], "_").to_ascii_lowercase()
}

/// Whether `id` looks like an extension identifier: `<reverse-DNS prefix>/<name>`, of
/// letters, digits, `.`, `-` and `_`, the name starting with a letter.
pub fn is_extension_id(id: &str) -> bool {
    let Some((prefix, name)) = id.split_once('/') else {
        return false;
    };
    let allowed = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
    };
    allowed(prefix) && allowed(name) && name.starts_with(|c: char| c.is_ascii_alphabetic())
}

/// The parsed manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The revisions, oldest first.
    #[serde(rename = "revision", default)]
    pub revisions: Vec<Revision>,
    /// The extensions, sorted by id.
    #[serde(rename = "extension", default)]
    pub extensions: Vec<Extension>,
}

/// The comment block that opens the manifest; kept when `add-revision` rewrites it.
const MANIFEST_HEADER: &str = "\
# The official MCP schema revisions this project generates bindings for.
#
# The schema files themselves are never committed: `cargo codegen fetch` downloads each
# `url` (pinned to a commit of modelcontextprotocol/modelcontextprotocol) into the
# git-ignored `schema/cache/`, or imports it from a local mirror (`--from DIR` or
# MCP_SCHEMA_DIR, laid out as DIR/<id>/schema.json). Either way the SHA-256 must match.
# `examples` names the upstream folder of a revision's official example instances, pinned
# file by file in schema/examples/<id>.sha256 and fetched the same way.
#
# `[revision.behaviour]` records what differs beyond the types (era, batching, …): the
# runtime reads these flags instead of naming revisions, and generation checks each flag
# against the schema (codegen/src/behaviour.rs documents them).
# Add a revision with `cargo codegen add-revision <id> --url <url> --like <revision>` (or
# `--from DIR` instead of `--url`): it gets the behaviour of the revision it is like.
#
# `[[extension]]` pins the schema of an official extension the same way (id, the revisions
# it `extends`, `url`, `sha256`); its types go to `mcp_generated::ext::<name>`. Its schema
# is looked for in schema/cache/extensions/<folder>/, in MCP_EXTENSION_SCHEMA_DIR/<folder>/,
# in MCP_SCHEMA_DIR/extensions/<folder>/ (the folder is the id with `/` as `-`), else
# downloaded. Add or re-pin one with
# `cargo codegen add-extension <id> --url <url> --extends <revision>`.
# io.modelcontextprotocol/tasks is pinned at experimental-ext-tasks e61f822a: the schema the
# pinned conformance suite's tasks-* scenarios and SEP-2663 describe (`resultType` task or
# complete, `notifications/tasks`, integer `ttlMs`/`pollIntervalMs`, `tasks/update`);
# the earlier 46bae204 has no `resultType` and names `notifications/tasks/status`.
";

impl Manifest {
    /// Parses manifest text; `path` is only used in error messages.
    pub fn parse(text: &str, path: &Path) -> Result<Manifest> {
        let manifest: Manifest = toml::from_str(text).map_err(|e| Error::Manifest {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        manifest.validate(path)?;
        Ok(manifest)
    }

    /// Reads and parses the manifest at `path`.
    pub fn load(path: &Path) -> Result<Manifest> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Manifest::parse(&text, path)
    }

    fn validate(&self, path: &Path) -> Result<()> {
        let bad = |message: String| Error::Manifest {
            path: path.to_owned(),
            message,
        };
        let mut seen = std::collections::BTreeSet::new();
        for rev in &self.revisions {
            if !is_revision_id(&rev.id) {
                return Err(bad(format!(
                    "revision id `{}` is not of the form YYYY-MM-DD",
                    rev.id
                )));
            }
            if !seen.insert(rev.id.as_str()) {
                return Err(bad(format!("revision {} is listed twice", rev.id)));
            }
            if rev.sha256.len() != 64 || !rev.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(bad(format!(
                    "revision {}: sha256 must be 64 hex digits",
                    rev.id
                )));
            }
        }
        let mut modules = std::collections::BTreeSet::new();
        for ext in &self.extensions {
            if !is_extension_id(&ext.id) {
                return Err(bad(format!(
                    "extension id `{}` is not of the form `<prefix>/<name>` (e.g. io.modelcontextprotocol/tasks)",
                    ext.id
                )));
            }
            if !modules.insert(ext.module_name()) {
                return Err(bad(format!(
                    "extension {}: another extension already has the module name `{}`",
                    ext.id,
                    ext.module_name()
                )));
            }
            if ext.sha256.len() != 64 || !ext.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(bad(format!(
                    "extension {}: sha256 must be 64 hex digits",
                    ext.id
                )));
            }
            if ext.extends.is_empty() {
                return Err(bad(format!(
                    "extension {}: `extends` must name at least one revision",
                    ext.id
                )));
            }
            if let Some(unknown) = ext.extends.iter().find(|r| !seen.contains(r.as_str())) {
                return Err(bad(format!(
                    "extension {}: extends revision {unknown}, which the manifest does not list",
                    ext.id
                )));
            }
        }
        Ok(())
    }

    /// Renders the manifest as TOML, with its explanatory header.
    pub fn to_toml(&self) -> String {
        let mut out = String::from(MANIFEST_HEADER);
        for rev in &self.revisions {
            out.push_str(&format!("\n[[revision]]\nid = \"{}\"\n", rev.id));
            if let Some(summary) = &rev.summary {
                out.push_str(&format!(
                    "summary = {}\n",
                    toml::Value::from(summary.as_str())
                ));
            }
            out.push_str(&format!(
                "url = \"{}\"\nsha256 = \"{}\"\ndialect = \"{}\"\n",
                rev.url, rev.sha256, rev.dialect,
            ));
            if let Some(examples) = &rev.examples {
                out.push_str(&format!("examples = \"{examples}\"\n"));
            }
            out.push_str(&format!(
                "\n[revision.behaviour]\n{}",
                rev.behaviour.to_toml_lines()
            ));
        }
        for ext in &self.extensions {
            out.push_str(&format!("\n[[extension]]\nid = \"{}\"\n", ext.id));
            if let Some(summary) = &ext.summary {
                out.push_str(&format!(
                    "summary = {}\n",
                    toml::Value::from(summary.as_str())
                ));
            }
            let extends: Vec<String> = ext.extends.iter().map(|r| format!("\"{r}\"")).collect();
            out.push_str(&format!(
                "extends = [{}]\nurl = \"{}\"\nsha256 = \"{}\"\ndialect = \"{}\"\n",
                extends.join(", "),
                ext.url,
                ext.sha256,
                ext.dialect,
            ));
        }
        out
    }

    /// The entry for an extension id.
    pub fn extension(&self, id: &str) -> Option<&Extension> {
        self.extensions.iter().find(|e| e.id == id)
    }

    /// Inserts or replaces an extension, keeping the list sorted by id.
    pub fn upsert_extension(&mut self, extension: Extension) {
        self.extensions.retain(|e| e.id != extension.id);
        self.extensions.push(extension);
        self.extensions.sort_by(|a, b| a.id.cmp(&b.id));
    }

    /// The entry for a revision id.
    pub fn get(&self, id: &str) -> Result<&Revision> {
        self.revisions
            .iter()
            .find(|r| r.id == id)
            .ok_or_else(|| Error::UnknownRevision {
                revision: id.to_owned(),
                known: self.ids().join(", "),
            })
    }

    /// All revision ids, in manifest order.
    pub fn ids(&self) -> Vec<String> {
        self.revisions.iter().map(|r| r.id.clone()).collect()
    }

    /// Inserts or replaces a revision, keeping the list sorted by id (ids are dates).
    pub fn upsert(&mut self, revision: Revision) {
        self.revisions.retain(|r| r.id != revision.id);
        self.revisions.push(revision);
        self.revisions.sort_by(|a, b| a.id.cmp(&b.id));
    }
}

/// Whether `id` looks like a protocol revision (`YYYY-MM-DD`).
pub fn is_revision_id(id: &str) -> bool {
    let b = id.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

/// Where the workspace keeps its inputs and outputs.
#[derive(Clone, Debug)]
pub struct Layout {
    /// The workspace root.
    pub root: PathBuf,
}

impl Layout {
    /// A layout rooted at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Layout {
        Layout { root: root.into() }
    }

    /// The layout of the workspace this crate lives in (for tests and the CLI default).
    pub fn workspace() -> Layout {
        Layout::new(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
    }

    /// `schema/revisions.toml`.
    pub fn manifest_path(&self) -> PathBuf {
        self.root.join("schema").join("revisions.toml")
    }

    /// `schema/examples/<id>.sha256`: the official example instances of a revision, by
    /// path and SHA-256.
    pub fn examples_listing(&self, id: &str) -> PathBuf {
        self.root
            .join("schema")
            .join("examples")
            .join(format!("{id}.sha256"))
    }

    /// `schema/cache/`, where downloads and imports are kept (git-ignored).
    pub fn cache_dir(&self) -> PathBuf {
        self.root.join("schema").join("cache")
    }
}
