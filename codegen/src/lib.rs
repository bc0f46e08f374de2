//! Generates versioned Rust bindings from the official MCP JSON Schemas.
//!
//! The pipeline is `schema/revisions.toml` → [`load`] (cache, mirror or download, SHA-256
//! verified) → [`prepass`] (schema rewrites that make typify correct) → [`ir`] (method
//! table, union dispatch) → [`render`] (typify + syn post-pass + quote) → files in memory.
//! [`generate`] touches no disk; the `mcp-codegen` CLI and the tests wrap it.
//!
//! Official protocol extensions (`[[extension]]` in the manifest) go the same way, one
//! module `mcp_generated::ext::<name>` each: see [`extension`].
#![warn(missing_docs)]

pub mod behaviour;
mod config;
pub mod diff;
pub mod error;
pub mod extension;
pub mod ir;
pub mod load;
pub mod manifest;
mod par;
mod pipeline;
pub mod prepass;
pub mod render;
pub mod summary;

use std::path::{Path, PathBuf};

use serde_json::Value;

pub use config::{Config, Output};
pub use error::{Error, Result};
pub use load::{LoadedSchema, SchemaSource};
pub use manifest::{Dialect, Extension, Layout, Manifest, Revision};

/// A file the generator produces, with its path relative to the workspace root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratedFile {
    /// Path relative to the workspace root, with `/` separators.
    pub path: String,
    /// The full contents.
    pub contents: String,
}

/// One revision ready for generation: its manifest entry and its schema document.
#[derive(Clone, Debug)]
pub struct Input {
    /// The manifest entry.
    pub revision: Revision,
    /// The schema document.
    pub schema: Value,
}

impl From<LoadedSchema> for Input {
    fn from(l: LoadedSchema) -> Input {
        Input {
            revision: l.revision,
            schema: l.json,
        }
    }
}

/// A revision after the pre-pass, with its IR.
#[derive(Clone, Debug)]
pub struct Analysed {
    /// The manifest entry.
    pub revision: Revision,
    /// The prepared schema.
    pub prepared: prepass::Prepared,
    /// Method table and union dispatch.
    pub ir: ir::Ir,
}

impl Analysed {
    /// The API digest of this revision (reviewed as an insta snapshot).
    pub fn digest(&self) -> String {
        summary::digest(&self.prepared, &self.ir, &render::types::REPLACEMENTS)
    }

    /// The comparable summary used by [`diff`].
    pub fn summary(&self) -> summary::Summary {
        summary::summarize(&self.prepared, &self.ir)
    }
}

/// Runs the pre-pass and builds the IR of one revision.
pub fn analyse(input: &Input) -> Result<Analysed> {
    let prepared = prepass::prepare(&input.revision.id, input.revision.dialect, &input.schema)?;
    let ir = ir::build(&prepared);
    Ok(Analysed {
        revision: input.revision.clone(),
        prepared,
        ir,
    })
}

/// The `types.rs` the generator makes of a small schema (a fixture of one construct):
/// what the codegen snapshots in `snapshots/codegen/` show.
pub fn render_fixture(name: &str, schema: &Value) -> Result<String> {
    let dialect = load::detect_dialect(name, schema)?;
    load::check_dialect(name, dialect, schema)?;
    let revision = Revision {
        id: name.to_owned(),
        url: String::new(),
        sha256: String::new(),
        dialect,
        examples: None,
        summary: None,
        behaviour: behaviour::Behaviour::fixture(),
    };
    let a = analyse(&Input {
        revision: revision.clone(),
        schema: schema.clone(),
    })?;
    let file = render::types::render(&a.prepared, &a.ir)?;
    Ok(prettyplease::unparse(&file))
}

/// Where the files of one revision module live, in the default [`Output`].
pub fn module_dir(revision: &Revision) -> String {
    Output::default().module_dir(revision)
}

/// The path of the committed protocol diff.
pub const PROTOCOL_CHANGES_PATH: &str = "docs/protocol-changes.md";

/// Generates every file for `inputs` (all revisions of the manifest, oldest first).
/// Deterministic: the same inputs give byte-identical files, sorted by path.
pub fn generate(inputs: &[Input]) -> Result<Vec<GeneratedFile>> {
    generate_into(&Output::default(), inputs)
}

/// [`generate`] with the files placed as `output` says.
pub fn generate_into(output: &Output, inputs: &[Input]) -> Result<Vec<GeneratedFile>> {
    for input in inputs {
        check_behaviour(input)?;
    }
    let analysed = pipeline::analyse_all(inputs)?;
    if let Some(a) = analysed.iter().find(|a| a.ir.methods.is_empty()) {
        return Err(Error::InvalidSchema {
            revision: a.revision.id.clone(),
            message: "no methods found: the schema has no ClientRequest/ServerRequest/ClientNotification/ServerNotification unions with `method` constants".into(),
        });
    }
    let revisions: Vec<Revision> = inputs.iter().map(|i| i.revision.clone()).collect();
    let mut files = vec![
        GeneratedFile {
            path: output.in_crate("Cargo.toml"),
            contents: render::cargo_toml(&revisions),
        },
        GeneratedFile {
            path: output.in_crate("src/revisions.rs"),
            contents: render::revisions_file(
                &revisions,
                &analysed
                    .iter()
                    .map(|a| a.ir.methods.as_slice())
                    .collect::<Vec<_>>(),
            )?,
        },
        GeneratedFile {
            path: output.protocol_changes.clone(),
            contents: protocol_changes(&analysed),
        },
    ];
    let printed = pipeline::print(&analysed)?;
    files.push(GeneratedFile {
        path: output.in_crate("src/shared.rs"),
        contents: printed.shared,
    });
    for (a, (types, methods)) in analysed.iter().zip(printed.revisions) {
        let dir = output.module_dir(&a.revision);
        files.push(GeneratedFile {
            path: format!("{dir}/mod.rs"),
            contents: render::module_file(&a.revision),
        });
        files.push(GeneratedFile {
            path: format!("{dir}/types.rs"),
            contents: types,
        });
        files.push(GeneratedFile {
            path: format!("{dir}/methods.rs"),
            contents: methods,
        });
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// Fails, naming every contradicted flag, when the behaviour a revision records in the
/// manifest disagrees with its schema.
pub fn check_behaviour(input: &Input) -> Result<()> {
    let mismatches = behaviour::check(&input.revision.behaviour, &input.schema);
    if mismatches.is_empty() {
        return Ok(());
    }
    Err(Error::Behaviour {
        revision: input.revision.id.clone(),
        mismatches: mismatches.iter().map(|m| format!("\n  {m}")).collect(),
    })
}

/// `docs/protocol-changes.md`: the diff of each consecutive pair of revisions.
pub fn protocol_changes(analysed: &[Analysed]) -> String {
    let mut out = format!(
        "<!-- @generated by `{}`: the output of `cargo codegen diff` for each consecutive pair of revisions. Do not edit. -->\n\n# Protocol changes between MCP revisions\n\nDerived from the official schemas: methods, capabilities, types and fields added, removed or changed. Type names are the schema's (plus the names the generator gives inline `params` and unions, see the digests in `snapshots/digest/`).\n\n",
        render::REGENERATE_COMMAND
    );
    let summaries: Vec<summary::Summary> = analysed.iter().map(Analysed::summary).collect();
    for pair in summaries.windows(2) {
        out.push_str(&diff::diff(&pair[0], &pair[1]));
    }
    out
}

/// Loads every revision of `manifest` (or only `only`) from `source`.
pub fn load_inputs(
    manifest: &Manifest,
    source: &SchemaSource,
    only: Option<&str>,
) -> Result<Vec<Input>> {
    if let Some(id) = only {
        manifest.get(id)?;
    }
    manifest
        .revisions
        .iter()
        .filter(|r| only.is_none_or(|id| r.id == id))
        .map(|r| load::load(r, source).map(Input::from))
        .collect()
}

/// Writes `files` under `root`, creating directories; returns the paths that changed.
pub fn write_files(root: &Path, files: &[GeneratedFile]) -> Result<Vec<PathBuf>> {
    let mut changed = Vec::new();
    for f in files {
        let path = root.join(&f.path);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(f.contents.as_str()) {
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        std::fs::write(&path, &f.contents).map_err(|e| Error::io(&path, e))?;
        changed.push(path);
    }
    Ok(changed)
}

/// The files under `root` that differ from `files` (missing ones included).
pub fn stale_files(root: &Path, files: &[GeneratedFile]) -> Vec<String> {
    files
        .iter()
        .filter(|f| {
            std::fs::read_to_string(root.join(&f.path)).ok().as_deref() != Some(f.contents.as_str())
        })
        .map(|f| f.path.clone())
        .collect()
}

/// What `add-revision` did.
#[derive(Debug)]
pub struct AddedRevision {
    /// The new manifest entry.
    pub revision: Revision,
    /// Files written (generated code and the digest snapshot).
    pub written: Vec<PathBuf>,
}

/// How a new revision behaves: like an existing one, with some flags set otherwise.
#[derive(Clone, Debug, Default)]
pub struct NewRevisionBehaviour {
    /// The revision whose behaviour flags are copied (default: the revision itself when it
    /// is already listed, else the newest revision).
    pub like: Option<String>,
    /// Flags set after copying, as `FLAG=VALUE`.
    pub set: Vec<String>,
}

/// Where a new revision's schema comes from.
#[derive(Clone, Debug)]
pub enum NewRevisionSource {
    /// Download from this URL (recorded in the manifest).
    Url(String),
    /// Import from a mirror `DIR/<id>/schema.json`; `url` is recorded in the manifest.
    Mirror {
        /// The mirror directory.
        dir: PathBuf,
        /// The upstream URL to record.
        url: String,
    },
}

/// Records a new revision in the manifest (hash and dialect measured from the bytes, the
/// behaviour flags of the revision it is like), stores its schema in the cache,
/// regenerates everything and writes the new digest snapshot. The whole workspace under
/// `layout` is updated; a schema the flags contradict, or that the generator cannot
/// handle, leaves it as it was.
pub fn add_revision(
    layout: &Layout,
    id: &str,
    from: NewRevisionSource,
    behaviour: &NewRevisionBehaviour,
    progress: bool,
) -> Result<AddedRevision> {
    let manifest_path = layout.manifest_path();
    let mut manifest = Manifest::load(&manifest_path)?;
    if !manifest::is_revision_id(id) {
        return Err(Error::Manifest {
            path: manifest_path,
            message: format!("revision id `{id}` is not of the form YYYY-MM-DD"),
        });
    }
    let (bytes, url, origin) = match &from {
        NewRevisionSource::Url(url) => (
            load::download_bytes(id, url, progress)?,
            url.clone(),
            url.clone(),
        ),
        NewRevisionSource::Mirror { dir, url } => {
            let path = dir.join(id).join("schema.json");
            let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
            (bytes, url.clone(), path.display().to_string())
        }
    };
    let json: Value = serde_json::from_slice(&bytes).map_err(|e| Error::MalformedJson {
        revision: id.to_owned(),
        source_desc: origin,
        message: e.to_string(),
    })?;
    let dialect = load::detect_dialect(id, &json)?;
    let like = match &behaviour.like {
        Some(like) => manifest.get(like)?,
        // Re-adding a revision (a new pin of its schema) keeps its own behaviour.
        None => manifest
            .get(id)
            .ok()
            .or(manifest.revisions.last())
            .ok_or_else(|| Error::Manifest {
                path: manifest_path.clone(),
                message: "add-revision needs --like REV when the manifest is empty".into(),
            })?,
    };
    let mut flags = like.behaviour.clone();
    for assignment in &behaviour.set {
        flags.set(assignment).map_err(|message| Error::Manifest {
            path: manifest_path.clone(),
            message: format!("--set {message}"),
        })?;
    }
    let revision = Revision {
        id: id.to_owned(),
        url,
        sha256: load::sha256_hex(&bytes),
        dialect,
        examples: manifest.get(id).ok().and_then(|r| r.examples.clone()),
        summary: manifest.get(id).ok().and_then(|r| r.summary.clone()),
        behaviour: flags,
    };
    load::check_dialect(id, dialect, &json)?;
    // Generate before touching the manifest: a schema the generator cannot handle leaves
    // the workspace as it was.
    manifest.upsert(revision.clone());
    let cache = layout.cache_dir().join(id);
    std::fs::create_dir_all(&cache).map_err(|e| Error::io(&cache, e))?;
    std::fs::write(cache.join("schema.json"), &bytes).map_err(|e| Error::io(&cache, e))?;
    let source = SchemaSource::offline(layout.cache_dir());
    let inputs = load_inputs(&manifest, &source, None)?;
    let files = generate(&inputs)?;
    let new = inputs
        .iter()
        .find(|i| i.revision.id == id)
        .map(analyse)
        .transpose()?;
    std::fs::write(&manifest_path, manifest.to_toml()).map_err(|e| Error::io(&manifest_path, e))?;
    let mut written = write_files(&layout.root, &files)?;
    if let Some(a) = new {
        let snap = layout.root.join(digest_snapshot_path(id));
        if let Some(parent) = snap.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        std::fs::write(&snap, digest_snapshot(&a)).map_err(|e| Error::io(&snap, e))?;
        written.push(snap);
    }
    Ok(AddedRevision { revision, written })
}

/// Path (relative to the workspace root) of a revision's digest snapshot.
pub fn digest_snapshot_path(id: &str) -> String {
    format!(
        "snapshots/digest/digest__{}.snap",
        manifest::module_name(id)
    )
}

/// A digest in insta's snapshot file format, so that a revision added by `add-revision`
/// arrives with its snapshot for review (the digest test compares against it).
pub fn digest_snapshot(a: &Analysed) -> String {
    format!(
        "---\nsource: codegen/tests/snapshots.rs\nexpression: digest\n---\n{}",
        a.digest()
    )
}
