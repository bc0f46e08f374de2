//! The null server's reply: what the cheapest possible server answers to a request (a
//! fixed result, the request's id copied in; nothing parsed). The `bench_server` example's
//! `null` and `null-http` servers and the in-process message-path bench use it, so every
//! benchmark has the limit of its path beside its figures.

/// The result every request gets from the null servers (a tool's text answer), and the
/// one `initialize` gets (the requested revision echoed, so the drivers' checks pass).
const NULL_RESULT: &[u8] = br#"{"content":[{"type":"text","text":"It will be sunny."}]}"#;

/// The result of a `resources/read`: the benches' 64 KiB text resource (`mem://big`, the
/// text of `rmcp_server::big_text`), so that the limit of that row moves the same bytes.
fn big_read_result() -> &'static [u8] {
    static RESULT: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    RESULT.get_or_init(|| {
        let mut result =
            br#"{"contents":[{"uri":"mem://big","mimeType":"text/plain","text":""#.to_vec();
        result.resize(result.len() + 64 * 1024, b'x');
        result.extend_from_slice(br#""}]}"#);
        result
    })
}

/// The reply to one request line, or nothing for a notification: `id` and, for
/// `initialize`, the requested revision, found by searching the bytes (no parse).
pub(crate) fn null_reply(line: &[u8], out: &mut Vec<u8>) {
    let find = |needle: &[u8]| line.windows(needle.len()).position(|w| w == needle);
    let Some(at) = find(b"\"id\":") else {
        return;
    };
    let id = line.get(at + 5..).unwrap_or_default();
    let end = id
        .iter()
        .position(|&b| b == b',' || b == b'}')
        .unwrap_or(id.len());
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.get(..end).unwrap_or_default());
    out.extend_from_slice(b",\"result\":");
    match find(b"\"protocolVersion\":\"") {
        Some(v) if find(b"\"initialize\"").is_some() => {
            let version = line.get(v + 19..v + 29).unwrap_or_default();
            out.extend_from_slice(b"{\"protocolVersion\":\"");
            out.extend_from_slice(version);
            out.extend_from_slice(
                b"\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"null\",\"version\":\"1\"}}",
            );
        }
        _ if find(b"\"resources/read\"").is_some() => out.extend_from_slice(big_read_result()),
        _ => out.extend_from_slice(NULL_RESULT),
    }
    out.push(b'}');
}
