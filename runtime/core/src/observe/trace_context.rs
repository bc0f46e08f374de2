//! W3C Trace Context (`traceparent`, `tracestate`) and W3C Baggage as MCP carries them:
//! unprefixed keys of a request's `params._meta` (SEP-414, and the OpenTelemetry MCP
//! conventions), or the HTTP headers of the same names. Parsed here, without a
//! dependency, so that the core can hand a span its remote parent whichever tracing
//! backend maps it.

use serde_json::{Map, Value};

/// The `_meta` key (and HTTP header) of the parent span.
pub const TRACEPARENT: &str = "traceparent";
/// The `_meta` key (and HTTP header) of the vendors' trace state.
pub const TRACESTATE: &str = "tracestate";
/// The `_meta` key (and HTTP header) of W3C Baggage.
pub const BAGGAGE: &str = "baggage";

/// Longest `tracestate` or `baggage` value carried on: the W3C limits (512 characters for
/// `tracestate`, 8192 bytes for `baggage`), so that a peer cannot make every span hold an
/// arbitrarily large string.
const MAX_TRACESTATE: usize = 512;
const MAX_BAGGAGE: usize = 8192;

/// A `traceparent`: the trace, the parent span within it, and the trace flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TraceParent {
    /// The trace id (16 bytes, never all zero).
    pub trace_id: [u8; 16],
    /// The parent span's id (8 bytes, never all zero).
    pub span_id: [u8; 8],
    /// The trace flags (bit 0: sampled).
    pub flags: u8,
}

impl TraceParent {
    /// Parses a `traceparent` value by the W3C rules: version `00` is exactly
    /// `00-<32 hex>-<16 hex>-<2 hex>`; a later version may carry more after a `-`; `ff`
    /// is invalid, as are all-zero ids and upper-case hex. `None` for anything else.
    pub fn parse(text: &str) -> Option<TraceParent> {
        let text = text.trim_matches([' ', '\t']);
        let bytes = text.as_bytes();
        let version = hex_byte(bytes.get(0..2)?)?;
        if version == 0xff || bytes.get(2) != Some(&b'-') {
            return None;
        }
        match version {
            0 if bytes.len() != 55 => return None,
            _ if bytes.len() < 55 || (bytes.len() > 55 && bytes.get(55) != Some(&b'-')) => {
                return None
            }
            _ => {}
        }
        if bytes.get(35) != Some(&b'-') || bytes.get(52) != Some(&b'-') {
            return None;
        }
        let mut trace_id = [0u8; 16];
        for (i, byte) in trace_id.iter_mut().enumerate() {
            *byte = hex_byte(bytes.get(3 + 2 * i..5 + 2 * i)?)?;
        }
        let mut span_id = [0u8; 8];
        for (i, byte) in span_id.iter_mut().enumerate() {
            *byte = hex_byte(bytes.get(36 + 2 * i..38 + 2 * i)?)?;
        }
        let flags = hex_byte(bytes.get(53..55)?)?;
        if trace_id == [0; 16] || span_id == [0; 8] {
            return None;
        }
        Some(TraceParent {
            trace_id,
            span_id,
            flags,
        })
    }

    /// Whether the caller sampled the trace (flag bit 0).
    pub fn sampled(&self) -> bool {
        self.flags & 1 == 1
    }

    /// The trace id as 32 lower-case hex digits.
    pub fn trace_id_hex(&self) -> String {
        to_hex(&self.trace_id)
    }

    /// The span id as 16 lower-case hex digits.
    pub fn span_id_hex(&self) -> String {
        to_hex(&self.span_id)
    }
}

impl std::fmt::Display for TraceParent {
    /// The version `00` form.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "00-{}-{}-{:02x}",
            to_hex(&self.trace_id),
            to_hex(&self.span_id),
            self.flags
        )
    }
}

/// A remote span context as a request carries it: the parent, the trace state and the
/// baggage (each as sent, within the W3C size limits).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceContext {
    /// The parent span.
    pub parent: TraceParent,
    /// The `tracestate` value, if one was sent.
    pub tracestate: Option<String>,
    /// The `baggage` value, if one was sent.
    pub baggage: Option<String>,
}

impl TraceContext {
    /// A context with `parent` and nothing else.
    pub fn new(parent: TraceParent) -> TraceContext {
        TraceContext {
            parent,
            tracestate: None,
            baggage: None,
        }
    }

    /// The context in a request's `_meta` object: `None` when it has no valid
    /// `traceparent` (then `tracestate` and `baggage` are ignored too, as W3C asks).
    pub fn from_meta(meta: &Value) -> Option<TraceContext> {
        let meta = meta.as_object()?;
        let parent = TraceParent::parse(meta.get(TRACEPARENT)?.as_str()?)?;
        let text = |key: &str, max: usize| {
            meta.get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty() && s.len() <= max)
                .map(str::to_owned)
        };
        Some(TraceContext {
            parent,
            tracestate: text(TRACESTATE, MAX_TRACESTATE),
            baggage: text(BAGGAGE, MAX_BAGGAGE),
        })
    }

    /// The context in HTTP headers' values (`traceparent`, `tracestate`, `baggage`).
    pub fn from_headers(
        traceparent: &str,
        tracestate: Option<&str>,
        baggage: Option<&str>,
    ) -> Option<TraceContext> {
        let keep = |s: Option<&str>, max: usize| {
            s.filter(|s| !s.is_empty() && s.len() <= max)
                .map(str::to_owned)
        };
        Some(TraceContext {
            parent: TraceParent::parse(traceparent)?,
            tracestate: keep(tracestate, MAX_TRACESTATE),
            baggage: keep(baggage, MAX_BAGGAGE),
        })
    }

    /// Writes the context into a `_meta` object (replacing what it held under these keys).
    pub fn write_meta(&self, meta: &mut Map<String, Value>) {
        meta.insert(
            TRACEPARENT.to_owned(),
            Value::String(self.parent.to_string()),
        );
        match &self.tracestate {
            Some(state) => meta.insert(TRACESTATE.to_owned(), Value::String(state.clone())),
            None => meta.remove(TRACESTATE),
        };
        match &self.baggage {
            Some(baggage) => meta.insert(BAGGAGE.to_owned(), Value::String(baggage.clone())),
            None => meta.remove(BAGGAGE),
        };
    }
}

fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

fn hex_byte(two: &[u8]) -> Option<u8> {
    match two {
        [hi, lo] => Some(hex_digit(*hi)? << 4 | hex_digit(*lo)?),
        _ => None,
    }
}

pub(super) fn to_hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        // `from_digit` writes lower-case, as W3C requires.
        out.push(char::from_digit(u32::from(b >> 4), 16).unwrap_or('0'));
        out.push(char::from_digit(u32::from(b & 0xf), 16).unwrap_or('0'));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const W3C_EXAMPLE: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn the_w3c_example_parses_and_formats_back() {
        let p = TraceParent::parse(W3C_EXAMPLE).unwrap();
        assert_eq!(p.trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(p.span_id_hex(), "00f067aa0ba902b7");
        assert!(p.sampled());
        assert_eq!(p.to_string(), W3C_EXAMPLE);
    }

    #[test]
    fn invalid_traceparents_are_refused() {
        for bad in [
            "",
            "00",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "0x-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-é1",
        ] {
            assert_eq!(TraceParent::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_later_version_may_carry_more() {
        let later = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes";
        assert!(TraceParent::parse(later).is_some());
        let glued = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x";
        assert_eq!(TraceParent::parse(glued), None);
    }

    #[test]
    fn meta_round_trip_and_limits() {
        let meta = json!({
            "traceparent": W3C_EXAMPLE,
            "tracestate": "rojo=00f067aa0ba902b7",
            "baggage": "userId=alice",
            "other": 1
        });
        let cx = TraceContext::from_meta(&meta).unwrap();
        assert_eq!(cx.tracestate.as_deref(), Some("rojo=00f067aa0ba902b7"));
        assert_eq!(cx.baggage.as_deref(), Some("userId=alice"));
        let mut out = Map::new();
        cx.write_meta(&mut out);
        assert_eq!(out.get("traceparent"), meta.get("traceparent"));
        assert_eq!(out.len(), 3);

        let huge = json!({"traceparent": W3C_EXAMPLE, "tracestate": "x".repeat(600)});
        assert_eq!(TraceContext::from_meta(&huge).unwrap().tracestate, None);
        assert_eq!(TraceContext::from_meta(&json!({"traceparent": 7})), None);
        assert_eq!(TraceContext::from_meta(&json!("traceparent")), None);
    }
}
