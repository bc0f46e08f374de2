//! The generator's configuration, in the style of `prost_build::Config`: where the
//! manifest and schemas come from, where the generated crate and the protocol diff go, and
//! which terminal step to run (`files`, `write`, `check`). The defaults are this
//! workspace's layout; the CLI and the tests use it, and a project vendoring the generator
//! can point every path elsewhere.

use std::path::{Path, PathBuf};

use crate::extension::{self, ExtensionCheck, ExtensionSource};
use crate::load::SchemaSource;
use crate::manifest::{Layout, Manifest, Revision};
use crate::{GeneratedFile, Input, Result};

/// Where generated files go, relative to the workspace root (`/` separators).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    /// The generated crate: `Cargo.toml`, `src/revisions.rs`, `src/shared.rs` and one
    /// `src/<module>/` per revision. Default `generated`.
    pub crate_dir: String,
    /// The protocol diff of consecutive revisions. Default `docs/protocol-changes.md`.
    pub protocol_changes: String,
}

impl Default for Output {
    fn default() -> Output {
        Output {
            crate_dir: "generated".into(),
            protocol_changes: crate::PROTOCOL_CHANGES_PATH.into(),
        }
    }
}

impl Output {
    /// A path inside the generated crate.
    pub fn in_crate(&self, path: &str) -> String {
        format!("{}/{path}", self.crate_dir.trim_end_matches('/'))
    }

    /// The folder of one revision's module.
    pub fn module_dir(&self, revision: &Revision) -> String {
        self.in_crate(&format!("src/{}", revision.module_name()))
    }
}

/// What to generate from where, and where to put it.
///
/// ```no_run
/// let stale = mcp_codegen::Config::workspace()
///     .schema_mirror("../shared/mcp-schemas")
///     .offline()
///     .check()?;
/// assert!(stale.is_empty(), "stale: {stale:?}");
/// # Ok::<(), mcp_codegen::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Config {
    layout: Layout,
    manifest: Option<PathBuf>,
    source: SchemaSource,
    extension_dir: Option<PathBuf>,
    output: Output,
}

impl Config {
    /// A configuration for the workspace rooted at `root`: its `schema/revisions.toml`,
    /// its `schema/cache/`, the mirror named by `MCP_SCHEMA_DIR` if set, downloads
    /// allowed, output to `generated/` and `docs/protocol-changes.md`.
    pub fn new(root: impl Into<PathBuf>) -> Config {
        let layout = Layout::new(root);
        let mut source = SchemaSource::offline(layout.cache_dir());
        source.network = true;
        Config {
            layout,
            manifest: None,
            source,
            extension_dir: None,
            output: Output::default(),
        }
    }

    /// [`Config::new`] for the workspace this crate lives in.
    pub fn workspace() -> Config {
        Config::new(Layout::workspace().root)
    }

    /// Reads the manifest from `path` instead of `schema/revisions.toml`.
    pub fn manifest(&mut self, path: impl Into<PathBuf>) -> &mut Config {
        self.manifest = Some(path.into());
        self
    }

    /// Imports schemas from a local folder laid out `DIR/<revision>/schema.json`.
    pub fn schema_mirror(&mut self, dir: impl Into<PathBuf>) -> &mut Config {
        self.source.mirror = Some(dir.into());
        self
    }

    /// Imports extension schemas from a folder laid out `DIR/<folder>/schema.json` (the
    /// folder is the id with `/` as `-`), instead of `MCP_EXTENSION_SCHEMA_DIR`.
    pub fn extension_schema_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Config {
        self.extension_dir = Some(dir.into());
        self
    }

    /// Never downloads: cache and mirror only.
    pub fn offline(&mut self) -> &mut Config {
        self.source.network = false;
        self
    }

    /// Draws a progress bar for downloads (on a terminal).
    pub fn progress(&mut self, on: bool) -> &mut Config {
        self.source.progress = on;
        self
    }

    /// Puts the generated crate in `dir` (relative to the root) instead of `generated`.
    pub fn generated_crate(&mut self, dir: impl Into<String>) -> &mut Config {
        self.output.crate_dir = dir.into();
        self
    }

    /// Writes the protocol diff to `path` (relative to the root).
    pub fn protocol_changes(&mut self, path: impl Into<String>) -> &mut Config {
        self.output.protocol_changes = path.into();
        self
    }

    /// The workspace layout (root, cache, examples listings).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Where schemas are read from.
    pub fn source(&self) -> &SchemaSource {
        &self.source
    }

    /// Where extension schemas are read from.
    pub fn extension_source(&self) -> ExtensionSource {
        ExtensionSource::for_schema_source(&self.source, self.extension_dir.as_deref())
    }

    /// Where files go.
    pub fn output(&self) -> &Output {
        &self.output
    }

    /// The manifest's path.
    pub fn manifest_path(&self) -> PathBuf {
        self.manifest
            .clone()
            .unwrap_or_else(|| self.layout.manifest_path())
    }

    /// Loads the manifest.
    pub fn load_manifest(&self) -> Result<Manifest> {
        Manifest::load(&self.manifest_path())
    }

    /// Loads every revision of the manifest (SHA-256 verified).
    pub fn load_inputs(&self) -> Result<Vec<Input>> {
        crate::load_inputs(&self.load_manifest()?, &self.source, None)
    }

    /// Every generated file, in memory.
    pub fn files(&self) -> Result<Vec<GeneratedFile>> {
        crate::generate_into(
            &self.output,
            &self.load_inputs()?,
            &self.load_manifest()?.extensions,
        )
    }

    /// Generates and writes what changed; returns the changed paths.
    pub fn write(&self) -> Result<Vec<PathBuf>> {
        crate::write_files(self.root(), &self.files()?)
    }

    /// The generated files that differ from what is on disk (empty: fresh).
    pub fn check(&self) -> Result<Vec<String>> {
        Ok(crate::stale_files(self.root(), &self.files()?))
    }

    /// Every extension of the manifest, loaded and analysed when its schema can be had
    /// (see [`extension::load_all`]).
    pub fn load_extensions(
        &self,
    ) -> Result<(Vec<extension::ExtensionInput>, Vec<extension::Unavailable>)> {
        extension::load_all(&self.load_manifest()?, &self.extension_source())
    }

    /// The extension files that can be generated here (the manifest's, and those of every
    /// extension whose schema is available), and the extensions whose schema is not.
    pub fn extension_files(&self) -> Result<(Vec<GeneratedFile>, Vec<extension::Unavailable>)> {
        let manifest = self.load_manifest()?;
        let (inputs, unavailable) = extension::load_all(&manifest, &self.extension_source())?;
        Ok((
            extension::files(&self.output, &manifest, &inputs)?,
            unavailable,
        ))
    }

    /// Checks the committed extension modules (see [`extension::check`]): in full where
    /// the schema is available, by provenance where it is not.
    pub fn check_extensions(&self) -> Result<ExtensionCheck> {
        extension::check(
            self.root(),
            &self.output,
            &self.load_manifest()?,
            &self.extension_source(),
        )
    }

    fn root(&self) -> &Path {
        &self.layout.root
    }
}
