//! The load generators' cheap reading of one JSON-RPC answer: its id and whether it holds a
//! result, found by walking the top-level members and skipping every value without
//! decoding it (strings skipped with `memchr`), so that a client reading 64 KiB answers
//! costs about a pass over their bytes, the same for every server it measures. The values
//! are not validated as JSON; the bench checks its warm-up answers with the full parser
//! (`frames::answer_head`) and must find the same there.

/// What the scan found: the numeric id (`None` if absent or not a number) and whether a
/// `result` member is present.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Head {
    pub(crate) id: Option<u64>,
    pub(crate) result: bool,
}

/// The head of the answer `line` (one JSON object, without its newline), or why it is not
/// one: not an object, a member that does not end, unbalanced brackets.
pub(crate) fn scan(line: &[u8]) -> Result<Head, String> {
    let mut at = skip_space(line, 0);
    if line.get(at) != Some(&b'{') {
        return Err("an answer that is not a JSON object".into());
    }
    at += 1;
    let mut head = Head {
        id: None,
        result: false,
    };
    loop {
        at = skip_space(line, at);
        match line.get(at) {
            Some(b'}') => break,
            Some(b'"') => {}
            _ => return Err(format!("expected a member at byte {at}")),
        }
        let key_end = string_end(line, at)?;
        let key = line.get(at + 1..key_end - 1).unwrap_or_default();
        at = skip_space(line, key_end);
        if line.get(at) != Some(&b':') {
            return Err(format!("expected `:` at byte {at}"));
        }
        at = skip_space(line, at + 1);
        let value_end = value_end(line, at)?;
        let value = line.get(at..value_end).unwrap_or_default();
        match key {
            b"id" => {
                head.id = std::str::from_utf8(value)
                    .ok()
                    .and_then(|v| v.trim().parse().ok())
            }
            b"result" => head.result = true,
            _ => {}
        }
        at = skip_space(line, value_end);
        match line.get(at) {
            Some(b',') => at += 1,
            Some(b'}') => break,
            _ => return Err(format!("expected `,` or `}}` at byte {at}")),
        }
    }
    if skip_space(line, at + 1) != line.len() {
        return Err("bytes after the answer's object".into());
    }
    Ok(head)
}

fn skip_space(line: &[u8], mut at: usize) -> usize {
    while line.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// The index just past the string that opens at `at` (its quote).
fn string_end(line: &[u8], at: usize) -> Result<usize, String> {
    let mut i = at + 1;
    loop {
        let rest = line.get(i..).unwrap_or_default();
        match memchr::memchr2(b'"', b'\\', rest) {
            None => return Err(format!("a string that does not end (from byte {at})")),
            Some(k) if rest.get(k) == Some(&b'\\') => i += k + 2,
            Some(k) => return Ok(i + k + 1),
        }
    }
}

/// The index just past the value that starts at `at`: a string, an object or array
/// (brackets counted, strings inside skipped), or a scalar (up to `,`, `}` or `]`).
fn value_end(line: &[u8], at: usize) -> Result<usize, String> {
    match line.get(at) {
        Some(b'"') => string_end(line, at),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut i = at;
            while let Some(&byte) = line.get(i) {
                match byte {
                    b'"' => {
                        i = string_end(line, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Ok(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            Err(format!("brackets that do not close (from byte {at})"))
        }
        Some(_) => {
            let rest = line.get(at..).unwrap_or_default();
            let len = rest
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']'))
                .unwrap_or(rest.len());
            let scalar = rest.get(..len).unwrap_or_default();
            if scalar.iter().all(u8::is_ascii_whitespace) {
                return Err(format!("a missing value at byte {at}"));
            }
            Ok(at + len)
        }
        None => Err("the answer ends inside a member".into()),
    }
}
