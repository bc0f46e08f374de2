//! `mcp-codegen`: fetch the official MCP schemas, generate the bindings, check they are
//! fresh, diff revisions and add new ones.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use mcp_codegen::extension::{self, NewExtensionSource};
use mcp_codegen::{load, Config, Layout, Manifest, NewRevisionSource, SchemaSource};

/// Generates versioned Rust bindings from the official MCP JSON Schemas.
#[derive(Debug, Parser)]
#[command(name = "mcp-codegen", version)]
struct Cli {
    /// Workspace root (default: the nearest ancestor holding schema/revisions.toml).
    #[arg(long, global = true)]
    root: Option<PathBuf>,
    /// Import schemas from this local mirror (DIR/<revision>/schema.json) instead of
    /// downloading them.
    #[arg(long, global = true, env = load::SCHEMA_DIR_ENV, hide_env_values = true, value_name = "DIR")]
    from: Option<PathBuf>,
    /// Never touch the network; fail if the cache and the mirror lack a revision.
    #[arg(long, global = true)]
    offline: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Download (or import with --from) every revision's schema into schema/cache,
    /// verifying each SHA-256.
    Fetch,
    /// Regenerate generated/ and docs/protocol-changes.md.
    Generate {
        /// Only write the files of this revision (shared files are always written).
        #[arg(long, value_name = "R")]
        revision: Option<String>,
    },
    /// Exit non-zero, naming the stale files, if generated/ differs from what the
    /// generator produces.
    Check,
    /// Print what changed between two revisions (Markdown).
    Diff {
        /// The older revision.
        from_revision: String,
        /// The newer revision.
        to_revision: String,
    },
    /// Print the API digest of a revision (method table and type names).
    Digest {
        /// The revision.
        revision: String,
    },
    /// Record a new revision in the manifest, fetch it, regenerate, and write its digest
    /// snapshot.
    ///
    /// The schema is downloaded from --url, or imported from --from DIR
    /// (DIR/<id>/schema.json). The revision gets the behaviour flags of the revision it is
    /// --like (checked against its schema), and the runtime serves it with no other edit.
    AddRevision {
        /// The revision id (YYYY-MM-DD).
        id: String,
        /// Upstream URL of its schema.json (pin it to a commit).
        #[arg(long)]
        url: Option<String>,
        /// The revision whose behaviour flags it shares (default: itself if listed, else
        /// the newest revision).
        #[arg(long, value_name = "REV")]
        like: Option<String>,
        /// Set one behaviour flag after copying (repeatable), e.g. `--set batching=false`.
        #[arg(long, value_name = "FLAG=VALUE")]
        set: Vec<String>,
    },
    /// Record (or re-pin) an official extension in the manifest, fetch its schema,
    /// generate its module `mcp_generated::ext::<name>` and write its digest snapshot.
    ///
    /// The schema is read from --dir DIR (DIR/<id with / as ->/schema.json, e.g.
    /// DIR/io.modelcontextprotocol-tasks/schema.json) when it is there, else downloaded
    /// from --url. Its SHA-256 is measured and recorded with the URL.
    AddExtension {
        /// The extension identifier, e.g. `io.modelcontextprotocol/tasks`.
        id: String,
        /// Upstream URL of its schema.json, pinned to a commit (default: the manifest's,
        /// when re-pinning).
        #[arg(long)]
        url: Option<String>,
        /// A revision it extends (repeatable; default: the manifest's, when re-pinning).
        #[arg(long, value_name = "REV")]
        extends: Vec<String>,
        /// What it adds, in a few words (the doc of its module).
        #[arg(long)]
        summary: Option<String>,
        /// Folder of extension schemas to read it from.
        #[arg(long, env = extension::EXTENSION_SCHEMA_DIR_ENV, hide_env_values = true, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

fn find_root() -> PathBuf {
    if let Ok(cwd) = std::env::current_dir() {
        let mut dir: Option<&Path> = Some(&cwd);
        while let Some(d) = dir {
            if d.join("schema").join("revisions.toml").is_file() {
                return d.to_owned();
            }
            dir = d.parent();
        }
    }
    Layout::workspace().root
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> mcp_codegen::Result<ExitCode> {
    let mut config = Config::new(cli.root.clone().unwrap_or_else(find_root));
    config.progress(true);
    if let Some(dir) = &cli.from {
        config.schema_mirror(dir);
    }
    if cli.offline {
        config.offline();
    }
    let layout = config.layout().clone();
    let source = config.source().clone();
    match cli.command {
        Command::Fetch => {
            let manifest = config.load_manifest()?;
            for rev in &manifest.revisions {
                let loaded = load::load(rev, &source)?;
                let origin = match loaded.origin {
                    load::Origin::Cache(p) => format!("cached at {}", p.display()),
                    load::Origin::Mirror(p) => format!("imported from {}", p.display()),
                    load::Origin::Download(u) => format!("downloaded from {u}"),
                };
                println!("{} ok (sha256 {}…), {origin}", rev.id, &rev.sha256[..12]);
                let listing = layout.examples_listing(&rev.id);
                if let Some(folder) = load::load_examples(rev, &listing, &source)? {
                    println!("{} examples ok, in {}", rev.id, folder.display());
                }
            }
            let (loaded, unavailable) = config.load_extensions()?;
            for input in loaded {
                let ext = &input.loaded.extension;
                let origin = match &input.loaded.origin {
                    load::Origin::Cache(p) => format!("cached at {}", p.display()),
                    load::Origin::Mirror(p) => format!("imported from {}", p.display()),
                    load::Origin::Download(u) => format!("downloaded from {u}"),
                };
                println!(
                    "extension {} ok (sha256 {}…), {origin}",
                    ext.id,
                    &ext.sha256[..12]
                );
            }
            for missing in unavailable {
                eprintln!("warning: {}", missing.reason);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Generate { revision } => {
            let manifest = config.load_manifest()?;
            let inputs = config.load_inputs()?;
            if let Some(r) = &revision {
                manifest.get(r)?;
            }
            let started = std::time::Instant::now();
            let mut files =
                mcp_codegen::generate_into(config.output(), &inputs, &manifest.extensions)?;
            let (extension_files, unavailable) = config.extension_files()?;
            files.extend(extension_files);
            let elapsed = started.elapsed();
            for missing in &unavailable {
                eprintln!(
                    "warning: extension {}: its module {} is left as it is: {}",
                    missing.extension.id,
                    extension::module_dir(config.output(), &missing.extension),
                    missing.reason
                );
            }
            if let Some(r) = &revision {
                let output = config.output();
                let prefix = format!("{}/", output.module_dir(manifest.get(r)?));
                let other_modules: Vec<String> = manifest
                    .revisions
                    .iter()
                    .filter(|x| &x.id != r)
                    .map(|x| format!("{}/", output.module_dir(x)))
                    .collect();
                files.retain(|f| {
                    f.path.starts_with(&prefix)
                        || !other_modules.iter().any(|o| f.path.starts_with(o))
                });
            }
            let changed = mcp_codegen::write_files(&layout.root, &files)?;
            for path in &changed {
                println!(
                    "wrote {}",
                    path.strip_prefix(&layout.root).unwrap_or(path).display()
                );
            }
            eprintln!(
                "generated {} revisions ({} files, {} changed) in {:.0} ms",
                inputs.len(),
                files.len(),
                changed.len(),
                elapsed.as_secs_f64() * 1000.0
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Check => {
            let mut stale = config.check()?;
            let extensions = config.check_extensions()?;
            stale.extend(extensions.stale);
            for missing in &extensions.unchecked {
                println!("{}", extension::unchecked_note(config.output(), missing));
            }
            if stale.is_empty() {
                println!("generated code is fresh");
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!(
                    "stale generated files (run `{}`):",
                    mcp_codegen::render::REGENERATE_COMMAND
                );
                for s in stale {
                    eprintln!("  {s}");
                }
                Ok(ExitCode::FAILURE)
            }
        }
        Command::Diff {
            from_revision,
            to_revision,
        } => {
            let manifest = config.load_manifest()?;
            let a = analysed(&manifest, &source, &from_revision)?;
            let b = analysed(&manifest, &source, &to_revision)?;
            print!("{}", mcp_codegen::diff::diff(&a.summary(), &b.summary()));
            Ok(ExitCode::SUCCESS)
        }
        Command::Digest { revision } => {
            let manifest = config.load_manifest()?;
            print!("{}", analysed(&manifest, &source, &revision)?.digest());
            Ok(ExitCode::SUCCESS)
        }
        Command::AddRevision { id, url, like, set } => {
            // The mirror may come from MCP_SCHEMA_DIR: with --url, it is used only when it
            // holds this revision (offline-friendly, and the hash is measured either way).
            let mirrored = cli
                .from
                .filter(|dir| dir.join(&id).join("schema.json").is_file());
            let from = match (mirrored, url) {
                (Some(dir), url) => NewRevisionSource::Mirror {
                    url: url
                        .unwrap_or_else(|| format!("file://{}/{id}/schema.json", dir.display())),
                    dir,
                },
                (None, Some(url)) => NewRevisionSource::Url(url),
                (None, None) => {
                    eprintln!(
                        "error: add-revision needs --url URL, or --from DIR holding DIR/{id}/schema.json"
                    );
                    return Ok(ExitCode::from(2));
                }
            };
            let behaviour = mcp_codegen::NewRevisionBehaviour { like, set };
            let added = mcp_codegen::add_revision(&layout, &id, from, &behaviour, true)?;
            println!(
                "added {} (sha256 {}, {}) to {}",
                added.revision.id,
                added.revision.sha256,
                added.revision.dialect,
                layout.manifest_path().display()
            );
            for path in added.written {
                println!(
                    "wrote {}",
                    path.strip_prefix(&layout.root).unwrap_or(&path).display()
                );
            }
            println!(
                "next: review the new entry in schema/revisions.toml and the digest snapshot, then run `cargo test`"
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::AddExtension {
            id,
            url,
            extends,
            summary,
            dir,
        } => {
            let manifest = config.load_manifest()?;
            let folder = id.replace('/', "-");
            let url = url.or_else(|| manifest.extension(&id).map(|e| e.url.clone()));
            let file = dir
                .map(|d| d.join(&folder).join("schema.json"))
                .filter(|p| p.is_file());
            let from = match (file, url) {
                (Some(path), Some(url)) => NewExtensionSource::File { path, url },
                (Some(path), None) => NewExtensionSource::File {
                    url: format!("file://{}", path.display()),
                    path,
                },
                (None, Some(url)) => NewExtensionSource::Url(url),
                (None, None) => {
                    eprintln!(
                        "error: add-extension needs --url URL, or --dir DIR holding DIR/{folder}/schema.json"
                    );
                    return Ok(ExitCode::from(2));
                }
            };
            let added = extension::add_extension(
                &layout,
                config.output(),
                &id,
                from,
                extends,
                summary,
                true,
            )?;
            println!(
                "added extension {} (sha256 {}, {}, extends {}) to {}",
                added.extension.id,
                added.extension.sha256,
                added.extension.dialect,
                added.extension.extends.join(", "),
                layout.manifest_path().display()
            );
            for path in added.written {
                println!(
                    "wrote {}",
                    path.strip_prefix(&layout.root).unwrap_or(&path).display()
                );
            }
            println!(
                "next: review the entry in schema/revisions.toml, the module and the digest snapshot, then run `cargo test`"
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn analysed(
    manifest: &Manifest,
    source: &SchemaSource,
    id: &str,
) -> mcp_codegen::Result<mcp_codegen::Analysed> {
    let rev = manifest.get(id)?;
    let input = load::load(rev, source)?;
    mcp_codegen::analyse(&input.into())
}
