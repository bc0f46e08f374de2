//! The few primitives the core needs and writes itself rather than take a crate for each:
//! base64 (cursors, `requestState`, header values), SHA-256 and HMAC-SHA-256
//! (`requestState`) and OS randomness (its key, ids). Every server builds the core, and a
//! stdio server's whole build is a handful of crates (README, "Install"; BENCHMARKS.md §4):
//! each of these is small, fully specified and tested against its standard's vectors and
//! against a well-kept crate (dev-dependencies only).

pub(crate) mod base64;
pub(crate) mod random;
pub(crate) mod sha256;
