//! The `id` of a JSON-RPC message too long to keep, read as its bytes stream past: so that
//! an answer over the client's `max_message_bytes` fails its request at once, with an
//! error naming the limit, instead of leaving it to wait for its timeout.
//!
//! Only the top-level object's `id` counts (an `id` nested in a result is not the
//! message's), and wherever it stands: nothing makes a server write it first.

use mcp_runtime::wire::RequestId;
use serde_json::Value;

/// The longest `id` value kept: a longer one is not an id this client sent.
const ID_BYTES_AT_MOST: usize = 128;

/// Where the scanner stands within the top-level object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Before a key (or between members).
    Key,
    /// Inside a key's string.
    InKey,
    /// After a key, before its colon.
    Colon,
    /// In a member's value that is not the id.
    Value,
    /// In the id's value, its bytes kept.
    Id,
}

/// Reads a message's bytes in pieces; [`TopLevelId::answer_id`] then tells the id of the
/// answer they were, if they were one.
#[derive(Debug)]
pub(crate) struct TopLevelId {
    depth: usize,
    in_string: bool,
    escaped: bool,
    phase: Phase,
    key: Vec<u8>,
    value: Vec<u8>,
    id: Option<Vec<u8>>,
    has_method: bool,
}

impl TopLevelId {
    pub(crate) fn new() -> TopLevelId {
        TopLevelId {
            depth: 0,
            in_string: false,
            escaped: false,
            phase: Phase::Key,
            key: Vec::new(),
            value: Vec::new(),
            id: None,
            has_method: false,
        }
    }

    /// Takes the next bytes of the message.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }

    fn keep(&mut self, b: u8) {
        match self.phase {
            // A key kept to 9 bytes is longer than `id` and `method`: it matches neither.
            Phase::InKey if self.key.len() <= 8 => self.key.push(b),
            Phase::Id if self.value.len() <= ID_BYTES_AT_MOST => self.value.push(b),
            _ => {}
        }
    }

    fn byte(&mut self, b: u8) {
        if self.in_string {
            if self.escaped {
                self.escaped = false;
                self.keep(b);
            } else if b == b'\\' {
                self.escaped = true;
                self.keep(b);
            } else if b == b'"' {
                self.in_string = false;
                if self.phase == Phase::InKey {
                    self.phase = Phase::Colon;
                } else {
                    self.keep(b);
                }
            } else {
                self.keep(b);
            }
            return;
        }
        let top = self.depth == 1;
        match b {
            b'"' => {
                self.in_string = true;
                if top && self.phase == Phase::Key {
                    self.phase = Phase::InKey;
                    self.key.clear();
                } else {
                    self.keep(b);
                }
            }
            b'{' | b'[' => {
                self.keep(b);
                self.depth += 1;
            }
            b'}' | b']' => {
                if top && self.phase == Phase::Id {
                    self.finish_id();
                } else {
                    self.keep(b);
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b':' if top && self.phase == Phase::Colon => {
                self.phase = match self.key.as_slice() {
                    b"id" => {
                        self.value.clear();
                        Phase::Id
                    }
                    b"method" => {
                        self.has_method = true;
                        Phase::Value
                    }
                    _ => Phase::Value,
                };
            }
            b',' if top => {
                if self.phase == Phase::Id {
                    self.finish_id();
                }
                self.phase = Phase::Key;
            }
            b' ' | b'\t' | b'\r' | b'\n' => {}
            _ => self.keep(b),
        }
    }

    fn finish_id(&mut self) {
        self.id = Some(std::mem::take(&mut self.value));
        self.phase = Phase::Value;
    }

    /// The id of the answer these bytes were: `None` for a request or notification of the
    /// server's (its id is the server's own), or where no usable id was seen.
    pub(crate) fn answer_id(&self) -> Option<RequestId> {
        if self.has_method {
            return None;
        }
        let raw = self.id.as_ref()?;
        if raw.len() > ID_BYTES_AT_MOST {
            return None;
        }
        let value: Value = serde_json::from_slice(raw).ok()?;
        RequestId::from_value(&value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id_of(pieces: &[&str]) -> Option<RequestId> {
        let mut scanner = TopLevelId::new();
        for piece in pieces {
            scanner.feed(piece.as_bytes());
        }
        scanner.answer_id()
    }

    fn number(n: i64) -> Option<RequestId> {
        RequestId::from_value(&serde_json::json!(n))
    }

    #[test]
    fn the_id_first_last_or_split_across_pieces() {
        assert_eq!(
            id_of(&[r#"{"jsonrpc":"2.0","id":7,"result":{"x":"#, r#""y"}}"#]),
            number(7)
        );
        assert_eq!(
            id_of(&[r#"{"result":{"content":[{"text":"a,b}"}]},"jsonrpc":"2.0","id":12}"#]),
            number(12)
        );
        assert_eq!(
            id_of(&[r#"{"i"#, r#"d": 3"#, r#"4 , "result":{}}"#]),
            number(34)
        );
        assert_eq!(
            id_of(&[r#"{ "id" : "a\"b" , "error":{"code":1}}"#]),
            RequestId::from_value(&serde_json::json!("a\"b"))
        );
    }

    #[test]
    fn nested_ids_keys_in_strings_and_requests_do_not_count() {
        // An `id` inside the result is the result's.
        assert_eq!(id_of(&[r#"{"result":{"id":5}}"#]), None);
        // A string value that looks like a key.
        assert_eq!(id_of(&[r#"{"result":"\"id\":9","x":1}"#]), None);
        // The server's own request: its id is in the server's id space.
        assert_eq!(
            id_of(&[r#"{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}"#]),
            None
        );
        // A long key that starts like `id`.
        assert_eq!(id_of(&[r#"{"identity":4,"result":{}}"#]), None);
        assert_eq!(id_of(&[r#"{"abcdefghXid":4,"result":{}}"#]), None);
    }

    #[test]
    fn an_object_or_overlong_id_is_none() {
        assert_eq!(id_of(&[r#"{"id":{"a":1},"result":{}}"#]), None);
        let long = format!(r#"{{"id":"{}","result":{{}}}}"#, "x".repeat(500));
        assert_eq!(id_of(&[&long]), None);
    }
}
