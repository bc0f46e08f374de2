//! Nothing to export: this package exists for `tests/`, a server built on the runtime
//! without its default features (see `Cargo.toml`).
