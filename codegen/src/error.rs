//! The generator's error type: every failure names the revision and what is wrong.

use std::path::PathBuf;

/// Everything that can go wrong while loading schemas or generating code.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The manifest could not be read or parsed.
    #[error("manifest {path}: {message}")]
    Manifest {
        /// Path of the manifest file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A revision was asked for that the manifest does not list.
    #[error("revision {revision} is not in the manifest (known: {known})")]
    UnknownRevision {
        /// The revision asked for.
        revision: String,
        /// The revisions the manifest lists, comma-separated.
        known: String,
    },
    /// The schema of a revision could be found neither in the cache nor in the mirror, and
    /// the network was not allowed.
    #[error("revision {revision}: schema not found (looked in {looked_in}); run `cargo codegen fetch` online or pass --from DIR / set MCP_SCHEMA_DIR")]
    SchemaMissing {
        /// The revision.
        revision: String,
        /// The places that were searched, comma-separated.
        looked_in: String,
    },
    /// A downloaded or imported schema does not have the pinned SHA-256.
    #[error("revision {revision}: SHA-256 mismatch for {source_desc}: expected {expected}, got {actual}")]
    HashMismatch {
        /// The revision.
        revision: String,
        /// Where the bytes came from.
        source_desc: String,
        /// The hash in the manifest.
        expected: String,
        /// The hash of the bytes.
        actual: String,
    },
    /// The schema of an extension could be found neither in the cache nor in a mirror, and
    /// the network was not allowed (or the download failed).
    #[error("extension {extension}: schema not found (looked in {looked_in}); set MCP_EXTENSION_SCHEMA_DIR=DIR holding DIR/{dir_name}/schema.json (or put it in $MCP_SCHEMA_DIR/extensions/{dir_name}/), or run `cargo codegen fetch` online")]
    ExtensionSchemaMissing {
        /// The extension id.
        extension: String,
        /// Its folder name in a mirror (`/` of the id replaced by `-`).
        dir_name: String,
        /// The places that were searched, comma-separated.
        looked_in: String,
    },
    /// An imported or downloaded extension schema does not have the pinned SHA-256.
    #[error("extension {extension}: SHA-256 mismatch for {source_desc}: expected {expected} (schema/revisions.toml), got {actual}; the file is not the pinned schema — fetch the pinned URL again, or re-pin with `cargo codegen add-extension`")]
    ExtensionHashMismatch {
        /// The extension id.
        extension: String,
        /// Where the bytes came from.
        source_desc: String,
        /// The hash in the manifest.
        expected: String,
        /// The hash of the bytes.
        actual: String,
    },
    /// A schema is not valid JSON.
    #[error("revision {revision}: {source_desc} is not valid JSON: {message}")]
    MalformedJson {
        /// The revision.
        revision: String,
        /// Where the bytes came from.
        source_desc: String,
        /// The parser's message (with line and column).
        message: String,
    },
    /// The behaviour a revision records in the manifest contradicts its schema.
    #[error("revision {revision}: the behaviour in schema/revisions.toml disagrees with the schema (fix the flags, or add the revision with another --like / --set FLAG=VALUE):{mismatches}")]
    Behaviour {
        /// The revision.
        revision: String,
        /// One indented line per contradicted flag.
        mismatches: String,
    },
    /// A schema is JSON but not a schema this generator understands.
    #[error("revision {revision}: {message}")]
    InvalidSchema {
        /// The revision.
        revision: String,
        /// What is wrong.
        message: String,
    },
    /// A `$ref` points at a definition that does not exist.
    #[error("revision {revision}: unresolvable $ref `{reference}` in {location}")]
    UnresolvedRef {
        /// The revision.
        revision: String,
        /// The reference as written.
        reference: String,
        /// The definition that contains it.
        location: String,
    },
    /// A download failed.
    #[error("revision {revision}: download of {url} failed: {message}")]
    Download {
        /// The revision.
        revision: String,
        /// The URL.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// typify rejected the prepared schema.
    #[error("revision {revision}: type generation failed: {message}")]
    Typify {
        /// The revision.
        revision: String,
        /// typify's message.
        message: String,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// Result alias for the generator.
pub type Result<T, E = Error> = std::result::Result<T, E>;
