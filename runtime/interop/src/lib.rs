//! Not a library: the package that holds the tests, examples and benchmarks which drive
//! outside peers (official SDK clients and servers, the conformance suite, rmcp,
//! redis-server, authorization servers). It is never published, so that `cargo test -p`
//! of each published crate needs nothing but cargo, while `cargo test --workspace` runs
//! everything.
