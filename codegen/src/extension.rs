//! Official protocol extensions (`[[extension]]` in `schema/revisions.toml`): their pinned
//! schemas loaded like a revision's (cache, mirror or download, SHA-256 verified), one
//! module `mcp_generated::ext::<name>` generated from each, and the check of the committed
//! module — complete when the schema is at hand, by provenance when it is not (the shared
//! schema mirror of CI holds only the revisions).

use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::Value;

use crate::behaviour::Behaviour;
use crate::config::Output;
use crate::error::{Error, Result};
use crate::ir::{Direction, Kind, Method};
use crate::load::{sha256_hex, Origin, SchemaSource};
use crate::manifest::{Extension, Manifest, Revision};
use crate::{Analysed, GeneratedFile};

/// Environment variable naming a folder of extension schemas, laid out
/// `DIR/<folder>/schema.json` (the folder is the id with `/` as `-`:
/// `io.modelcontextprotocol-tasks`).
pub const EXTENSION_SCHEMA_DIR_ENV: &str = "MCP_EXTENSION_SCHEMA_DIR";

/// The sub-folder of a revision mirror (`MCP_SCHEMA_DIR`) and of the cache that holds
/// extension schemas: `<mirror>/extensions/<folder>/schema.json`.
pub const EXTENSIONS_SUBDIR: &str = "extensions";

/// Where extension schemas may come from, in order: cache, folders, network.
#[derive(Clone, Debug)]
pub struct ExtensionSource {
    /// The cache (`schema/cache/extensions`), laid out `<folder>/schema.json`.
    pub cache_dir: PathBuf,
    /// Folders laid out `<folder>/schema.json`, searched in order.
    pub dirs: Vec<PathBuf>,
    /// Whether downloading is allowed when neither cache nor folders have the schema.
    pub network: bool,
    /// Whether to draw a progress bar for downloads (only shown on a terminal).
    pub progress: bool,
}

impl ExtensionSource {
    /// The sources that go with a revision source: its cache's `extensions/`, then
    /// `extension_dir` (or else `MCP_EXTENSION_SCHEMA_DIR`), then the revision mirror's
    /// `extensions/`; the network when the revision source allows it.
    pub fn for_schema_source(source: &SchemaSource, extension_dir: Option<&Path>) -> Self {
        let mut dirs = Vec::new();
        match extension_dir {
            Some(dir) => dirs.push(dir.to_owned()),
            None => {
                if let Some(dir) = std::env::var_os(EXTENSION_SCHEMA_DIR_ENV) {
                    dirs.push(PathBuf::from(dir));
                }
            }
        }
        if let Some(mirror) = &source.mirror {
            dirs.push(mirror.join(EXTENSIONS_SUBDIR));
        }
        ExtensionSource {
            cache_dir: source.cache_dir.join(EXTENSIONS_SUBDIR),
            dirs,
            network: source.network,
            progress: source.progress,
        }
    }

    /// Every place a schema file of `extension` is looked for, cache first.
    pub fn candidates(&self, extension: &Extension) -> Vec<PathBuf> {
        std::iter::once(&self.cache_dir)
            .chain(&self.dirs)
            .map(|d| d.join(extension.dir_name()).join("schema.json"))
            .collect()
    }
}

/// A verified, parsed extension schema.
#[derive(Clone, Debug)]
pub struct LoadedExtension {
    /// The manifest entry.
    pub extension: Extension,
    /// The schema document.
    pub json: Value,
    /// Where it came from.
    pub origin: Origin,
}

/// Loads the schema of `extension`: from the cache when it holds the pinned bytes, else
/// from the first folder that has the file (which must hash to the pinned SHA-256: a
/// mismatch is an error, never skipped), else downloaded when allowed. Stored in the cache.
pub fn load(extension: &Extension, source: &ExtensionSource) -> Result<LoadedExtension> {
    let candidates = source.candidates(extension);
    let cached = candidates
        .first()
        .cloned()
        .unwrap_or_else(|| source.cache_dir.join(extension.dir_name()));
    if let Ok(bytes) = std::fs::read(&cached) {
        if sha256_hex(&bytes) == extension.sha256 {
            let json = parse(extension, &bytes, &cached.display().to_string())?;
            return Ok(LoadedExtension {
                extension: extension.clone(),
                json,
                origin: Origin::Cache(cached),
            });
        }
    }
    for path in candidates.iter().skip(1) {
        match std::fs::read(path) {
            Ok(bytes) => {
                let json = verify_and_parse(extension, &bytes, &path.display().to_string())?;
                store(&cached, &bytes)?;
                return Ok(LoadedExtension {
                    extension: extension.clone(),
                    json,
                    origin: Origin::Mirror(path.clone()),
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    if !source.network {
        return Err(missing(extension, &candidates));
    }
    let bytes = crate::load::download_bytes(&extension.id, &extension.url, source.progress)?;
    let json = verify_and_parse(extension, &bytes, &extension.url)?;
    store(&cached, &bytes)?;
    Ok(LoadedExtension {
        extension: extension.clone(),
        json,
        origin: Origin::Download(extension.url.clone()),
    })
}

fn missing(extension: &Extension, candidates: &[PathBuf]) -> Error {
    Error::ExtensionSchemaMissing {
        extension: extension.id.clone(),
        dir_name: extension.dir_name(),
        looked_in: candidates
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
    }
}

fn store(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    let tmp = path.with_extension("json.partial");
    std::fs::write(&tmp, bytes).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}

fn verify_and_parse(extension: &Extension, bytes: &[u8], source_desc: &str) -> Result<Value> {
    let actual = sha256_hex(bytes);
    if actual != extension.sha256 {
        return Err(Error::ExtensionHashMismatch {
            extension: extension.id.clone(),
            source_desc: source_desc.to_owned(),
            expected: extension.sha256.clone(),
            actual,
        });
    }
    parse(extension, bytes, source_desc)
}

fn parse(extension: &Extension, bytes: &[u8], source_desc: &str) -> Result<Value> {
    let json: Value = serde_json::from_slice(bytes).map_err(|e| Error::MalformedJson {
        revision: extension.id.clone(),
        source_desc: source_desc.to_owned(),
        message: e.to_string(),
    })?;
    crate::load::check_dialect(&extension.id, extension.dialect, &json)?;
    Ok(json)
}

/// The pre-pass and IR of an extension schema. The method table holds the extension's
/// own JSON-RPC messages (definitions named `…Request`/`…Notification` with `jsonrpc` and
/// a constant `method`; the copies of core requests it embeds, such as
/// `CreateMessageRequest` inside `InputRequest`, have no `jsonrpc` and are not methods).
/// An extension schema has no `ClientRequest`/`ServerNotification` unions to say who
/// sends what, so requests are taken as the client's and notifications as the server's:
/// true of `io.modelcontextprotocol/tasks` (SEP-2663), the only extension so far.
pub fn analyse(extension: &Extension, schema: &Value) -> Result<Analysed> {
    let prepared = crate::prepass::prepare_extension(&extension.id, extension.dialect, schema)?;
    let mut ir = crate::ir::build(&prepared);
    ir.methods = extension_methods(&prepared.defs);
    Ok(Analysed {
        revision: pseudo_revision(extension),
        prepared,
        ir,
    })
}

/// The manifest entry of an extension as the revision-shaped record the shared pipeline
/// functions take (its behaviour flags are unused).
fn pseudo_revision(extension: &Extension) -> Revision {
    Revision {
        id: extension.id.clone(),
        url: extension.url.clone(),
        sha256: extension.sha256.clone(),
        dialect: extension.dialect,
        examples: None,
        summary: extension.summary.clone(),
        behaviour: Behaviour::fixture(),
    }
}

fn extension_methods(defs: &crate::prepass::Definitions) -> Vec<Method> {
    let mut methods: Vec<Method> = defs
        .iter()
        .filter(|(name, _)| name.ends_with("Request") || name.ends_with("Notification"))
        .filter_map(|(name, def)| {
            let props = def.get("properties")?;
            props.get("jsonrpc")?;
            let method = props.get("method")?;
            let wire = method
                .get("const")
                .or_else(|| match method.get("enum")?.as_array()?.as_slice() {
                    [one] => Some(one),
                    _ => None,
                })?
                .as_str()?
                .to_owned();
            let is_request = props.get("id").is_some();
            let params = props
                .get("params")
                .and_then(crate::prepass::ref_target)
                .map(str::to_owned);
            let params_required = def
                .get("required")
                .and_then(Value::as_array)
                .is_some_and(|r| r.iter().any(|k| k == "params"));
            let stem = name
                .strip_suffix("Request")
                .unwrap_or(name.strip_suffix("Notification").unwrap_or(name));
            let result = format!("{stem}Result");
            Some(Method {
                name: wire,
                kind: if is_request {
                    Kind::Request
                } else {
                    Kind::Notification
                },
                direction: if is_request {
                    Direction::ClientToServer
                } else {
                    Direction::ServerToClient
                },
                message: name.clone(),
                params,
                params_required,
                result: (is_request && defs.contains_key(&result)).then_some(result),
            })
        })
        .collect();
    methods.sort_by(|a, b| a.name.cmp(&b.name));
    methods
}

/// The folder of an extension's module in `output`: `generated/src/ext/<module>`.
pub fn module_dir(output: &Output, extension: &Extension) -> String {
    output.in_crate(&format!("src/ext/{}", extension.module_name()))
}

/// The path of an extension's generated `types.rs`, whose header records the SHA-256 of
/// the schema it was generated from.
pub fn types_path(output: &Output, extension: &Extension) -> String {
    format!("{}/types.rs", module_dir(output, extension))
}

/// The provenance line every extension `types.rs` carries (the check without the schema
/// compares it with the manifest).
pub fn provenance(extension: &Extension) -> String {
    format!(
        "types of MCP extension {}, schema sha256 {}",
        extension.id, extension.sha256
    )
}

/// The files that follow from the manifest alone (no schema needed): `ext/mod.rs` and
/// each extension's `mod.rs`. Checked in full everywhere.
pub fn manifest_files(output: &Output, manifest: &Manifest) -> Vec<GeneratedFile> {
    let mut files = vec![GeneratedFile {
        path: output.in_crate("src/ext/mod.rs"),
        contents: ext_mod_file(manifest),
    }];
    for ext in &manifest.extensions {
        files.push(GeneratedFile {
            path: format!("{}/mod.rs", module_dir(output, ext)),
            contents: module_file(ext),
        });
    }
    files
}

/// The files generated from one extension's schema: `types.rs` and `methods.rs`.
pub fn schema_files(
    output: &Output,
    analysed: &Analysed,
    extension: &Extension,
) -> Result<Vec<GeneratedFile>> {
    let file = crate::render::types::render(&analysed.prepared, &analysed.ir)?;
    let types = format!(
        "{}{}",
        crate::render::rust_header(&provenance(extension)),
        prettyplease::unparse(&file)
    );
    let methods = format!(
        "{}{}",
        crate::render::rust_header(&format!("method table of MCP extension {}", extension.id)),
        crate::render::unparse(methods_tokens(&analysed.ir.methods))
    );
    let dir = module_dir(output, extension);
    Ok(vec![
        GeneratedFile {
            path: format!("{dir}/methods.rs"),
            contents: methods,
        },
        GeneratedFile {
            path: types_path(output, extension),
            contents: types,
        },
    ])
}

fn ext_mod_file(manifest: &Manifest) -> String {
    let mods = manifest.extensions.iter().map(|ext| {
        let name = ext.module_name();
        let ident = format_ident!("{}", name);
        let doc = format!(
            " The `{}` extension{}.",
            ext.id,
            ext.summary
                .as_deref()
                .map(|s| format!(": {s}"))
                .unwrap_or_default()
        );
        let features: Vec<String> = ext
            .extends
            .iter()
            .map(|r| crate::manifest::module_name(r))
            .collect();
        let own = ext.feature_name();
        let cfg = match features.as_slice() {
            [one] => quote!(all(feature = #own, feature = #one)),
            _ => quote!(all(feature = #own, any(#(feature = #features),*))),
        };
        quote! {
            #[doc = #doc]
            #[cfg(#cfg)]
            #[cfg_attr(docsrs, doc(cfg(#cfg)))]
            pub mod #ident;
        }
    });
    let tokens = quote! {
        #![doc = " Official protocol extensions, one module each, generated from the extension's"]
        #![doc = " official JSON Schema (pinned in `schema/revisions.toml` like the revisions)."]
        #![doc = " A module is compiled when its own feature (`ext_<module>`, on by default) and a"]
        #![doc = " revision it extends are."]
        #(#mods)*
    };
    format!(
        "{}{}",
        crate::render::rust_header("the list of extensions, from schema/revisions.toml"),
        crate::render::unparse(tokens)
    )
}

fn module_file(extension: &Extension) -> String {
    let id = &extension.id;
    let doc = format!(
        " Types and methods of the MCP extension `{id}`, generated from its official JSON Schema{}.",
        extension
            .summary
            .as_deref()
            .map(|s| format!(" ({s})"))
            .unwrap_or_default()
    );
    let extends_doc = format!(
        " It extends MCP {}. The schema is self-contained: the core types it uses (`Result`,",
        extension.extends.join(", ")
    );
    let url_doc = format!(" Schema: <{}>", extension.url);
    let extends = &extension.extends;
    let url = &extension.url;
    let sha = &extension.sha256;
    let tokens = quote! {
        #![doc = #doc]
        #![doc = ""]
        #![doc = #extends_doc]
        #![doc = " the sampling, elicitation and roots requests of `inputRequests`, …) are generated here"]
        #![doc = " from the extension's own copies, as the extension pins them; convert to and from a"]
        #![doc = " revision's types through `serde_json::Value` where both are needed."]
        #![doc = ""]
        #![doc = #url_doc]

        #[rustfmt::skip]
        #[allow(missing_docs, unreachable_pub, clippy::all, clippy::pedantic, clippy::unwrap_used)]
        mod types;
        #[rustfmt::skip]
        #[allow(missing_docs, clippy::all)]
        pub mod methods;

        pub use types::*;
        pub use methods::{method, METHODS};

        /// The extension identifier, as declared under `capabilities.extensions`.
        pub const ID: &str = #id;
        /// The revisions the extension extends.
        pub const EXTENDS: &[&str] = &[#(#extends),*];
        /// The pinned upstream URL of the schema these types were generated from.
        pub const SCHEMA_URL: &str = #url;
        /// The SHA-256 of that schema.
        pub const SCHEMA_SHA256: &str = #sha;
    };
    format!(
        "{}{}",
        crate::render::rust_header(&format!("module of MCP extension {id}")),
        crate::render::unparse(tokens)
    )
}

/// `methods.rs` of an extension: one marker type per method implementing the crate's
/// `Method` and `Request`/`Notification`, the table `METHODS` and `method(name)`.
fn methods_tokens(methods: &[Method]) -> TokenStream {
    let mut markers = Vec::new();
    let mut infos = Vec::new();
    let mut lookups = Vec::new();
    for (index, m) in methods.iter().enumerate() {
        let (_, marker_tokens, info) = crate::render::methods::marker_and_info(m);
        markers.push(marker_tokens);
        infos.push(info);
        let name = &m.name;
        lookups.push(quote! { #name => ::std::option::Option::Some(&METHODS[#index]), });
    }
    let count = methods.len();
    quote! {
        #(#markers)*

        /// Every method of this extension, sorted by name.
        pub const METHODS: [crate::MethodInfo; #count] = [#(#infos)*];

        /// Looks a method of this extension up by its wire name.
        pub fn method(name: &str) -> ::std::option::Option<&'static crate::MethodInfo> {
            match name {
                #(#lookups)*
                _ => ::std::option::Option::None,
            }
        }
    }
}

/// An extension whose schema is available, with what the generator made of it.
#[derive(Clone, Debug)]
pub struct ExtensionInput {
    /// The loaded schema.
    pub loaded: LoadedExtension,
    /// Its pre-pass and IR.
    pub analysed: Analysed,
}

/// An extension whose schema could not be had, and why.
#[derive(Clone, Debug)]
pub struct Unavailable {
    /// The manifest entry.
    pub extension: Extension,
    /// Why (the load error, which names where it looked and how to provide the file).
    pub reason: String,
}

/// Every extension of `manifest`, loaded and analysed when its schema can be had. A
/// schema that is found but wrong (hash, JSON, dialect, generation) is an error; one that
/// cannot be found (or downloaded) is reported as unavailable.
pub fn load_all(
    manifest: &Manifest,
    source: &ExtensionSource,
) -> Result<(Vec<ExtensionInput>, Vec<Unavailable>)> {
    let mut inputs = Vec::new();
    let mut unavailable = Vec::new();
    for ext in &manifest.extensions {
        match load(ext, source) {
            Ok(loaded) => {
                let analysed = analyse(ext, &loaded.json)?;
                inputs.push(ExtensionInput { loaded, analysed });
            }
            Err(e @ (Error::ExtensionSchemaMissing { .. } | Error::Download { .. })) => unavailable
                .push(Unavailable {
                    extension: ext.clone(),
                    reason: e.to_string(),
                }),
            Err(e) => return Err(e),
        }
    }
    Ok((inputs, unavailable))
}

/// The extension files that can be generated: the manifest's, and the schema files of
/// every available extension (sorted by path).
pub fn files(
    output: &Output,
    manifest: &Manifest,
    inputs: &[ExtensionInput],
) -> Result<Vec<GeneratedFile>> {
    let mut files = manifest_files(output, manifest);
    for input in inputs {
        files.extend(schema_files(
            output,
            &input.analysed,
            &input.loaded.extension,
        )?);
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// What checking the committed extension modules found.
#[derive(Clone, Debug, Default)]
pub struct ExtensionCheck {
    /// Stale files (or provenance that disagrees with the manifest), with what is wrong.
    pub stale: Vec<String>,
    /// Extensions whose generated content could not be compared, their schema being
    /// unavailable: only their provenance (and the manifest files) were checked.
    pub unchecked: Vec<Unavailable>,
}

/// Checks the committed extension modules under `root`: the manifest files in full; for
/// each extension, its schema files in full when its schema is available, else the
/// SHA-256 recorded in its `types.rs` against the manifest's (and that `methods.rs`
/// exists), reported in [`ExtensionCheck::unchecked`].
pub fn check(
    root: &Path,
    output: &Output,
    manifest: &Manifest,
    source: &ExtensionSource,
) -> Result<ExtensionCheck> {
    let (inputs, unavailable) = load_all(manifest, source)?;
    let mut stale = crate::stale_files(root, &files(output, manifest, &inputs)?);
    for missing in &unavailable {
        let ext = &missing.extension;
        let types = types_path(output, ext);
        match std::fs::read_to_string(root.join(&types)) {
            Ok(text) => {
                let first = text.lines().next().unwrap_or_default();
                if !first.contains(&provenance(ext)) {
                    stale.push(format!(
                        "{types} (its header does not record the pinned schema sha256 {} of {}: regenerate with the pinned schema)",
                        ext.sha256, ext.id
                    ));
                }
            }
            Err(_) => stale.push(types),
        }
        let methods = format!("{}/methods.rs", module_dir(output, ext));
        if !root.join(&methods).is_file() {
            stale.push(methods);
        }
    }
    Ok(ExtensionCheck {
        stale,
        unchecked: unavailable,
    })
}

/// The plain statement printed when an extension's generated content was not compared.
pub fn unchecked_note(output: &Output, missing: &Unavailable) -> String {
    let ext = &missing.extension;
    format!(
        "extension {id}: checked that {types} records the pinned schema (sha256 {sha}) and the manifest files; its generated CONTENT WAS NOT CHECKED, the schema being unavailable here.\n  To check it: {env}=DIR with DIR/{dir}/schema.json (the file at {url}), or $MCP_SCHEMA_DIR/{sub}/{dir}/schema.json, or `cargo codegen fetch` online; then `cargo codegen check` again.\n  ({reason})",
        id = ext.id,
        types = types_path(output, ext),
        sha = ext.sha256,
        env = EXTENSION_SCHEMA_DIR_ENV,
        dir = ext.dir_name(),
        url = ext.url,
        sub = EXTENSIONS_SUBDIR,
        reason = missing.reason,
    )
}

/// Path (relative to the workspace root) of an extension's digest snapshot.
pub fn digest_snapshot_path(extension: &Extension) -> String {
    format!(
        "snapshots/digest/digest__ext_{}.snap",
        extension.module_name()
    )
}

/// The API digest of an extension: its provenance line (checked without the schema),
/// then the digest of its types and methods.
pub fn digest(extension: &Extension, analysed: &Analysed) -> String {
    format!("{}\n\n{}", provenance(extension), analysed.digest())
}

/// The digest in insta's snapshot file format (what `add-extension` writes).
pub fn digest_snapshot(extension: &Extension, analysed: &Analysed) -> String {
    format!(
        "---\nsource: codegen/tests/extensions.rs\nexpression: digest\n---\n{}",
        digest(extension, analysed)
    )
}

/// Where a new extension's schema comes from.
#[derive(Clone, Debug)]
pub enum NewExtensionSource {
    /// Download from this URL (recorded in the manifest).
    Url(String),
    /// Read this file; `url` is recorded in the manifest.
    File {
        /// The schema file.
        path: PathBuf,
        /// The upstream URL to record.
        url: String,
    },
}

/// What `add-extension` did.
#[derive(Debug)]
pub struct AddedExtension {
    /// The new manifest entry.
    pub extension: Extension,
    /// Files written (its module and its digest snapshot).
    pub written: Vec<PathBuf>,
}

/// Records (or re-pins) an extension in the manifest, its hash and dialect measured from
/// the bytes; stores its schema in the cache; writes its module and digest snapshot. A
/// schema the generator cannot handle leaves the workspace as it was.
pub fn add_extension(
    layout: &crate::Layout,
    output: &Output,
    id: &str,
    from: NewExtensionSource,
    extends: Vec<String>,
    summary: Option<String>,
    progress: bool,
) -> Result<AddedExtension> {
    let manifest_path = layout.manifest_path();
    let mut manifest = Manifest::load(&manifest_path)?;
    let (bytes, url, origin) = match &from {
        NewExtensionSource::Url(url) => (
            crate::load::download_bytes(id, url, progress)?,
            url.clone(),
            url.clone(),
        ),
        NewExtensionSource::File { path, url } => (
            std::fs::read(path).map_err(|e| Error::io(path, e))?,
            url.clone(),
            path.display().to_string(),
        ),
    };
    let json: Value = serde_json::from_slice(&bytes).map_err(|e| Error::MalformedJson {
        revision: id.to_owned(),
        source_desc: origin,
        message: e.to_string(),
    })?;
    let dialect = crate::load::detect_dialect(id, &json)?;
    crate::load::check_dialect(id, dialect, &json)?;
    let previous = manifest.extension(id).cloned();
    let extension = Extension {
        id: id.to_owned(),
        summary: summary.or_else(|| previous.as_ref().and_then(|p| p.summary.clone())),
        extends: if extends.is_empty() {
            previous.map(|p| p.extends).unwrap_or_default()
        } else {
            extends
        },
        url,
        sha256: sha256_hex(&bytes),
        dialect,
    };
    manifest.upsert_extension(extension.clone());
    // Validates the new entry (id form, known revisions) before anything is written.
    let manifest = Manifest::parse(&manifest.to_toml(), &manifest_path)?;
    let analysed = analyse(&extension, &json)?;
    let input = ExtensionInput {
        loaded: LoadedExtension {
            extension: extension.clone(),
            json,
            origin: Origin::Download(extension.url.clone()),
        },
        analysed,
    };
    let generated = files(output, &manifest, std::slice::from_ref(&input))?;
    store(
        &layout
            .cache_dir()
            .join(EXTENSIONS_SUBDIR)
            .join(extension.dir_name())
            .join("schema.json"),
        &bytes,
    )?;
    std::fs::write(&manifest_path, manifest.to_toml()).map_err(|e| Error::io(&manifest_path, e))?;
    let mut written = crate::write_files(&layout.root, &generated)?;
    let snap = layout.root.join(digest_snapshot_path(&extension));
    if let Some(parent) = snap.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    std::fs::write(&snap, digest_snapshot(&extension, &input.analysed))
        .map_err(|e| Error::io(&snap, e))?;
    written.push(snap);
    Ok(AddedExtension { extension, written })
}
