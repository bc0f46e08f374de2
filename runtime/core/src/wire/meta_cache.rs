//! Request `_meta` objects parsed once per distinct text. A 2026-07-28 client sends the same
//! `_meta` on every request (its revision, its capabilities, often its identity): parsing
//! it into a `Value` per request — two 40-byte keys allocated and hashed with SipHash into
//! two maps — was the largest part of what a 2026-07-28 request costs more than a legacy
//! one. The text seen twice is kept with its parsed value; later requests share that value
//! (and what was decoded from it once, see [`super::message::RequestMeta`]).
//!
//! Per thread, so no lock is taken: each runtime worker learns a client's `_meta` once.
//! Bounded: [`ENTRIES`] texts of at most [`LONGEST`] bytes per thread. A text is kept only
//! the second time it is seen (its hash is remembered the first time), so requests whose
//! `_meta` differs every time (a fresh `progressToken` each) cost one hash, never a copy
//! into the cache.

use std::cell::RefCell;
use std::sync::Arc;

use serde_json::Value;

use super::message::SharedMeta;

/// Texts kept per thread.
const ENTRIES: usize = 8;
/// Hashes of texts seen once, per thread.
const SEEN: usize = 16;
/// The longest text kept.
const LONGEST: usize = 2048;
/// The deepest `_meta` the fast path accepts. Parsed on its own, the text gets the
/// parser's whole nesting limit (128), while inside the frame it has less: a deeper one is
/// left to the general path, which parses the frame as one value and so applies the limit
/// exactly (see `envelope`).
const DEEPEST: usize = 64;

#[derive(Default)]
struct Cache {
    entries: Vec<(Box<str>, Arc<SharedMeta>)>,
    /// Where the next entry goes once `entries` is full (round robin).
    next_entry: usize,
    seen: [u64; SEEN],
    next_seen: usize,
}

thread_local! {
    static CACHE: RefCell<Cache> = RefCell::new(Cache::default());
}

/// The value of a `_meta` member whose JSON text is `text` (as the parser borrowed it):
/// the cached value, shared, or the text parsed. `None` when the text does not parse or
/// nests deeper than [`DEEPEST`]: the caller leaves the frame to the general path, which
/// says why.
pub(super) fn value_of(text: &str) -> Option<Arc<SharedMeta>> {
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some((_, shared)) = cache.entries.iter().find(|(t, _)| t.as_ref() == text) {
            return Some(Arc::clone(shared));
        }
        let value: Value = serde_json::from_str(text).ok()?;
        if depth(&value) > DEEPEST {
            return None;
        }
        let shared = SharedMeta::new(value);
        if text.len() <= LONGEST {
            cache.remember(text, &shared);
        }
        Some(shared)
    })
}

impl Cache {
    /// Keeps `text` if it was seen before, else notes that it has been seen.
    fn remember(&mut self, text: &str, shared: &Arc<SharedMeta>) {
        let hash = fnv1a(text.as_bytes());
        if !self.seen.contains(&hash) {
            let at = self.next_seen;
            if let Some(slot) = self.seen.get_mut(at) {
                *slot = hash;
            }
            self.next_seen = (at + 1) % SEEN;
            return;
        }
        let entry = (Box::from(text), Arc::clone(shared));
        if self.entries.len() < ENTRIES {
            self.entries.push(entry);
        } else if let Some(slot) = self.entries.get_mut(self.next_entry) {
            *slot = entry;
            self.next_entry = (self.next_entry + 1) % ENTRIES;
        }
    }
}

/// FNV-1a, 64 bits: a cheap hash of a short text (only compared with other hashes of this
/// thread's recent texts; a collision only keeps a text one sighting early).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Levels of arrays and objects in `value` (0 for a scalar).
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(members) => 1 + members.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cached_value_is_the_parsed_one() {
        let text = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"n":1.5e3}"#;
        let parsed: Value = serde_json::from_str(text).unwrap_or_default();
        // First sighting, second (kept), third (served from the cache).
        for _ in 0..3 {
            assert_eq!(
                value_of(text).map(|s| s.value().clone()),
                Some(parsed.clone())
            );
        }
        assert!(CACHE.with(|c| c.borrow().entries.iter().any(|(t, _)| t.as_ref() == text)));
    }

    #[test]
    fn deep_or_invalid_texts_are_left_to_the_general_path() {
        let deep = format!("{}1{}", "[".repeat(DEEPEST + 1), "]".repeat(DEEPEST + 1));
        assert!(value_of(&deep).is_none());
        assert!(value_of(r#"{"a":"\ud800"}"#).is_none());
    }

    #[test]
    fn texts_seen_once_are_not_kept() {
        for i in 0..100 {
            let text = format!(r#"{{"progressToken":{i}}}"#);
            assert!(value_of(&text).is_some());
        }
        assert!(CACHE.with(|c| c.borrow().entries.is_empty()));
    }
}
