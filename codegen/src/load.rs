//! Getting a revision's schema: from the git-ignored cache, from a local mirror, or by
//! download; always verified against the manifest's SHA-256 before it is used.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::manifest::{Dialect, Revision};

/// Environment variable naming a local mirror laid out as `DIR/<revision>/schema.json`.
pub const SCHEMA_DIR_ENV: &str = "MCP_SCHEMA_DIR";

/// Where schemas may come from, in order: cache, mirror, network.
#[derive(Clone, Debug)]
pub struct SchemaSource {
    /// The cache directory (`schema/cache`), laid out like a mirror.
    pub cache_dir: PathBuf,
    /// A local mirror, `DIR/<revision>/schema.json`.
    pub mirror: Option<PathBuf>,
    /// Whether downloading is allowed when neither cache nor mirror has the revision.
    pub network: bool,
    /// Whether to draw a progress bar for downloads (only shown on a terminal).
    pub progress: bool,
}

impl SchemaSource {
    /// Cache plus the mirror named by `MCP_SCHEMA_DIR`, no network: what tests use.
    pub fn offline(cache_dir: PathBuf) -> SchemaSource {
        SchemaSource {
            cache_dir,
            mirror: std::env::var_os(SCHEMA_DIR_ENV).map(PathBuf::from),
            network: false,
            progress: false,
        }
    }
}

/// Where a loaded schema came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Read from the cache.
    Cache(PathBuf),
    /// Imported from a mirror (and copied into the cache).
    Mirror(PathBuf),
    /// Downloaded (and stored in the cache).
    Download(String),
}

/// A verified, parsed schema.
#[derive(Clone, Debug)]
pub struct LoadedSchema {
    /// The manifest entry.
    pub revision: Revision,
    /// The schema document.
    pub json: Value,
    /// Where it came from.
    pub origin: Origin,
}

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn schema_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(id).join("schema.json")
}

/// Loads one revision. The cache is used when it holds the right bytes, then the mirror,
/// then (if allowed) the network; no network is touched when cache or mirror suffice.
pub fn load(revision: &Revision, source: &SchemaSource) -> Result<LoadedSchema> {
    let cached = schema_path(&source.cache_dir, &revision.id);
    if let Ok(bytes) = std::fs::read(&cached) {
        // A stale cache entry (the manifest moved on) is simply refetched.
        if sha256_hex(&bytes) == revision.sha256 {
            let json = parse(revision, &bytes, &cached.display().to_string())?;
            return Ok(LoadedSchema {
                revision: revision.clone(),
                json,
                origin: Origin::Cache(cached),
            });
        }
    }
    let mut looked_in = vec![cached.display().to_string()];
    if let Some(mirror) = &source.mirror {
        let path = schema_path(mirror, &revision.id);
        match std::fs::read(&path) {
            Ok(bytes) => {
                let json = verify_and_parse(revision, &bytes, &path.display().to_string())?;
                store(&cached, &bytes)?;
                return Ok(LoadedSchema {
                    revision: revision.clone(),
                    json,
                    origin: Origin::Mirror(path),
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                looked_in.push(path.display().to_string())
            }
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    if !source.network {
        return Err(Error::SchemaMissing {
            revision: revision.id.clone(),
            looked_in: looked_in.join(", "),
        });
    }
    let bytes = download(revision, source.progress)?;
    let json = verify_and_parse(revision, &bytes, &revision.url)?;
    store(&cached, &bytes)?;
    Ok(LoadedSchema {
        revision: revision.clone(),
        json,
        origin: Origin::Download(revision.url.clone()),
    })
}

/// Brings the official example instances of `revision` (listed, with their SHA-256, in
/// `listing`, `sha256sum` format with paths relative to the examples folder) into
/// `<cache>/<id>/examples/`: each file from the cache when its bytes are right, else from
/// the mirror (`<mirror>/<id>/examples/`), else downloaded from the manifest's `examples`
/// URL when the network is allowed. Returns the folder; `None` for a revision without
/// examples.
pub fn load_examples(
    revision: &Revision,
    listing: &Path,
    source: &SchemaSource,
) -> Result<Option<PathBuf>> {
    let Some(base) = &revision.examples else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(listing).map_err(|e| Error::io(listing, e))?;
    let folder = source.cache_dir.join(&revision.id).join("examples");
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let (sha256, path) = line
            .split_once("  ")
            .filter(|(h, p)| h.len() == 64 && !p.contains("..") && !p.starts_with('/'))
            .ok_or_else(|| Error::InvalidSchema {
                revision: revision.id.clone(),
                message: format!(
                    "{}:{}: expected `<sha256>  <relative path>`",
                    listing.display(),
                    n + 1
                ),
            })?;
        let cached = folder.join(path);
        if std::fs::read(&cached).is_ok_and(|b| sha256_hex(&b) == sha256) {
            continue;
        }
        let mirrored = source
            .mirror
            .as_ref()
            .map(|m| m.join(&revision.id).join("examples").join(path))
            .filter(|p| p.is_file());
        let (bytes, from) = match mirrored {
            Some(p) => (
                std::fs::read(&p).map_err(|e| Error::io(&p, e))?,
                p.display().to_string(),
            ),
            None if source.network => {
                let url = format!("{base}{path}");
                (download_bytes(&revision.id, &url, false)?, url)
            }
            None => {
                return Err(Error::SchemaMissing {
                    revision: revision.id.clone(),
                    looked_in: format!("{} and the mirror, for example {path}", cached.display()),
                })
            }
        };
        let actual = sha256_hex(&bytes);
        if actual != sha256 {
            return Err(Error::HashMismatch {
                revision: revision.id.clone(),
                source_desc: from,
                expected: sha256.to_owned(),
                actual,
            });
        }
        store(&cached, &bytes)?;
    }
    Ok(Some(folder))
}

fn store(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    // Write then rename, so an interrupted run never leaves a half-written cache entry.
    let tmp = path.with_extension("json.partial");
    std::fs::write(&tmp, bytes).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}

fn verify_and_parse(revision: &Revision, bytes: &[u8], source_desc: &str) -> Result<Value> {
    let actual = sha256_hex(bytes);
    if actual != revision.sha256 {
        return Err(Error::HashMismatch {
            revision: revision.id.clone(),
            source_desc: source_desc.to_owned(),
            expected: revision.sha256.clone(),
            actual,
        });
    }
    parse(revision, bytes, source_desc)
}

/// Parses schema bytes and checks the document is a schema of the manifest's dialect.
pub fn parse(revision: &Revision, bytes: &[u8], source_desc: &str) -> Result<Value> {
    let json: Value = serde_json::from_slice(bytes).map_err(|e| Error::MalformedJson {
        revision: revision.id.clone(),
        source_desc: source_desc.to_owned(),
        message: e.to_string(),
    })?;
    check_dialect(&revision.id, revision.dialect, &json)?;
    Ok(json)
}

/// Checks that `json` is an object whose `$schema` (if any) and definitions key agree with
/// `dialect`.
pub fn check_dialect(revision: &str, dialect: Dialect, json: &Value) -> Result<()> {
    let invalid = |message: String| Error::InvalidSchema {
        revision: revision.to_owned(),
        message,
    };
    let obj = json
        .as_object()
        .ok_or_else(|| invalid("the schema document is not a JSON object".into()))?;
    if let Some(uri) = obj.get("$schema").and_then(Value::as_str) {
        match Dialect::from_schema_uri(uri) {
            Some(d) if d == dialect => {}
            Some(d) => {
                return Err(invalid(format!(
                    "$schema says {d} but the manifest says {dialect}"
                )))
            }
            None => return Err(invalid(format!("unsupported $schema `{uri}`"))),
        }
    }
    match obj.get(dialect.definitions_key()) {
        Some(Value::Object(_)) => Ok(()),
        Some(_) => Err(invalid(format!(
            "`{}` is not an object",
            dialect.definitions_key()
        ))),
        None => Err(invalid(format!(
            "no `{}` section: a {dialect} schema keeps its named types there",
            dialect.definitions_key()
        ))),
    }
}

/// Detects the dialect of a schema document from `$schema`, falling back to the
/// definitions key it uses.
pub fn detect_dialect(revision: &str, json: &Value) -> Result<Dialect> {
    if let Some(uri) = json.get("$schema").and_then(Value::as_str) {
        return Dialect::from_schema_uri(uri).ok_or_else(|| Error::InvalidSchema {
            revision: revision.to_owned(),
            message: format!("unsupported $schema `{uri}`"),
        });
    }
    if json.get("$defs").is_some() {
        Ok(Dialect::Draft2020_12)
    } else {
        Ok(Dialect::Draft07)
    }
}

/// Downloads `url` with a progress bar on a terminal.
pub fn download_bytes(revision: &str, url: &str, progress: bool) -> Result<Vec<u8>> {
    let fail = |message: String| Error::Download {
        revision: revision.to_owned(),
        url: url.to_owned(),
        message,
    };
    let client = reqwest::blocking::Client::builder()
        .user_agent(concat!("mcp-codegen/", env!("CARGO_PKG_VERSION")))
        .timeout(std::time::Duration::from_secs(60))
        .build()
        .map_err(|e| fail(e.to_string()))?;
    let mut response = client
        .get(url)
        .send()
        .and_then(|r| r.error_for_status())
        .map_err(|e| fail(e.to_string()))?;
    let bar = if progress && std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new(response.content_length().unwrap_or(0));
        bar.set_style(
            indicatif::ProgressStyle::with_template("{msg:>12} [{bar:30}] {bytes}/{total_bytes}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.set_message(revision.to_owned());
        Some(bar)
    } else {
        None
    };
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let n = response.read(&mut chunk).map_err(|e| fail(e.to_string()))?;
        if n == 0 {
            break;
        }
        bytes.extend_from_slice(&chunk[..n]);
        if let Some(bar) = &bar {
            bar.inc(n as u64);
        }
    }
    if let Some(bar) = bar {
        bar.finish();
    }
    Ok(bytes)
}

fn download(revision: &Revision, progress: bool) -> Result<Vec<u8>> {
    download_bytes(&revision.id, &revision.url, progress)
}
