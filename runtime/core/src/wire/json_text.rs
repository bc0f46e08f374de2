//! JSON text primitives the encoder is built on: strings escaped as serde_json escapes
//! them, scanned eight bytes at a time, and the encoding error.

use std::fmt;

use serde::ser;

/// A value that cannot be written as JSON (a map key that is not a string or a number, or
/// a failing `Serialize` impl).
#[derive(Debug)]
pub struct EncodeError(pub(super) String);

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EncodeError {}

impl ser::Error for EncodeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        EncodeError(msg.to_string())
    }
}

impl From<serde_json::Error> for EncodeError {
    fn from(e: serde_json::Error) -> Self {
        EncodeError(e.to_string())
    }
}

const LOW_BITS: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each of the eight bytes that is a control character, `"` or `\\`.
/// Exact: bytes of 0x80 and above (UTF-8) never count, because `& !word` drops them.
fn escape_bits(word: u64) -> u64 {
    let control = word.wrapping_sub(LOW_BITS * 0x20) & !word;
    let quote = word ^ (LOW_BITS * u64::from(b'"'));
    let quote = quote.wrapping_sub(LOW_BITS) & !quote;
    let backslash = word ^ (LOW_BITS * u64::from(b'\\'));
    let backslash = backslash.wrapping_sub(LOW_BITS) & !backslash;
    (control | quote | backslash) & HIGH_BITS
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// How many bytes at the start of `bytes` need no escape: 64 bytes per step with one
/// branch (vector compares), then 8 at a time (a word's bits), so long runs of plain
/// text cost a fraction of an operation per byte (BENCHMARKS.md §1.2).
fn clean_prefix(bytes: &[u8]) -> usize {
    let word = |chunk: &[u8]| u64::from_le_bytes(<[u8; 8]>::try_from(chunk).unwrap_or([0; 8]));
    let mut clean = 0;
    for block in bytes.chunks_exact(64) {
        // Byte by byte over a fixed 64 bytes, with no branch: the compiler turns this into
        // vector compares (16 bytes at a time with the baseline SSE2, which has equality
        // but no unsigned order: a control character is one whose top three bits are 0).
        let needs = block.iter().fold(false, |needs, &b| {
            needs | (b & 0xe0 == 0) | (b == b'"') | (b == b'\\')
        });
        if needs {
            break;
        }
        clean += 64;
    }
    for chunk in bytes.get(clean..).unwrap_or_default().chunks_exact(8) {
        if escape_bits(word(chunk)) != 0 {
            break;
        }
        clean += 8;
    }
    clean
}

/// Writes `s` as a JSON string, escaping as serde_json does: `\"`, `\\`, the short
/// escapes `\b \f \n \r \t`, and `\u00xx` (lowercase) for other control characters.
pub(crate) fn write_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        i += clean_prefix(bytes.get(i..).unwrap_or_default());
        // At most one word, byte by byte: it holds an escape (or is the tail).
        let end = (i + 8).min(bytes.len());
        while i < end {
            let byte = bytes.get(i).copied().unwrap_or(b' ');
            let short: Option<&[u8]> = match byte {
                b'"' => Some(b"\\\""),
                b'\\' => Some(b"\\\\"),
                b'\n' => Some(b"\\n"),
                b'\r' => Some(b"\\r"),
                b'\t' => Some(b"\\t"),
                0x08 => Some(b"\\b"),
                0x0c => Some(b"\\f"),
                0x00..=0x1f => None,
                _ => {
                    i += 1;
                    continue;
                }
            };
            out.extend_from_slice(bytes.get(start..i).unwrap_or_default());
            match short {
                Some(escape) => out.extend_from_slice(escape),
                None => {
                    let hex = |n: u8| HEX.get(usize::from(n)).copied().unwrap_or(b'0');
                    out.extend_from_slice(b"\\u00");
                    out.push(hex(byte >> 4));
                    out.push(hex(byte & 0xf));
                }
            }
            i += 1;
            start = i;
        }
    }
    out.extend_from_slice(bytes.get(start..).unwrap_or_default());
    out.push(b'"');
}
