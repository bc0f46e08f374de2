//! Reading a server's `WWW-Authenticate` challenge (RFC 9110 §11.6.1, with the Bearer
//! parameters of RFC 6750 §3 and RFC 9728 §5.1): its `resource_metadata`, `scope` and
//! `error` (of the Bearer or the DPoP scheme, RFC 9449 §7.1).

use reqwest::header::{HeaderMap, WWW_AUTHENTICATE};

/// The Bearer challenge's parameters that matter to the client.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Challenge {
    pub(crate) resource_metadata: Option<String>,
    pub(crate) scope: Option<String>,
    pub(crate) error: Option<String>,
    /// The server offers the DPoP scheme (RFC 9449 §7.1).
    pub(crate) dpop_offered: bool,
}

impl Challenge {
    /// The Bearer challenge among a response's `WWW-Authenticate` headers (else the DPoP
    /// one; empty when there is none or it cannot be read).
    pub(crate) fn of(headers: &HeaderMap) -> Challenge {
        let all: Vec<(String, Challenge)> = headers
            .get_all(WWW_AUTHENTICATE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(challenges)
            .collect();
        let dpop_offered = all.iter().any(|(s, _)| s.eq_ignore_ascii_case("dpop"));
        let pick = |scheme: &str| {
            all.iter()
                .find(|(s, _)| s.eq_ignore_ascii_case(scheme))
                .map(|(_, c)| c.clone())
        };
        Challenge {
            dpop_offered,
            ..pick("bearer").or_else(|| pick("dpop")).unwrap_or_default()
        }
    }

    pub(crate) fn insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// The challenges in one header value: each scheme with its parameters.
fn challenges(value: &str) -> Vec<(String, Challenge)> {
    let mut out = Vec::new();
    let mut rest = value.trim_start();
    loop {
        let (scheme, after) = token(rest);
        if scheme.is_empty() {
            return out;
        }
        let (params, after) = params(after);
        let mut challenge = Challenge::default();
        for (name, value) in params {
            match name.to_ascii_lowercase().as_str() {
                "resource_metadata" => challenge.resource_metadata = Some(value),
                "scope" => challenge.scope = Some(value),
                "error" => challenge.error = Some(value),
                _ => {}
            }
        }
        out.push((scheme.to_owned(), challenge));
        let next = after.trim_start_matches([',', ' ', '\t']);
        if next.len() == rest.len() {
            // Nothing consumed: a character no challenge starts with.
            return out;
        }
        rest = next;
    }
}

/// The Bearer (else DPoP) challenge in one header value, if it has one.
#[cfg(test)]
fn bearer(value: &str) -> Option<Challenge> {
    let mut map = HeaderMap::new();
    map.insert(WWW_AUTHENTICATE, value.parse().ok()?);
    let all = challenges(value);
    all.iter()
        .any(|(s, _)| s.eq_ignore_ascii_case("bearer") || s.eq_ignore_ascii_case("dpop"))
        .then(|| Challenge::of(&map))
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// A token at the start of `s`, and what follows it.
fn token(s: &str) -> (&str, &str) {
    let end = s.find(|c: char| !is_tchar(c)).unwrap_or(s.len());
    s.split_at(end)
}

/// The `name=value` parameters of one challenge, up to the next scheme.
fn params(mut s: &str) -> (Vec<(String, String)>, &str) {
    let mut out = Vec::new();
    loop {
        let trimmed = s.trim_start_matches([',', ' ', '\t']);
        let (name, after) = token(trimmed);
        let after_ws = after.trim_start_matches([' ', '\t']);
        let Some(value_start) = after_ws.strip_prefix('=').filter(|_| !name.is_empty()) else {
            // The next challenge's scheme (or the end, or token68 we do not read).
            return (out, trimmed);
        };
        let value_start = value_start.trim_start_matches([' ', '\t']);
        let (value, rest) = match value_start.strip_prefix('"') {
            Some(quoted) => quoted_string(quoted),
            None => {
                let (v, r) = token(value_start);
                (v.to_owned(), r)
            }
        };
        out.push((name.to_owned(), value));
        s = rest;
    }
}

/// A quoted string's value (after its opening quote), and what follows its closing one.
fn quoted_string(s: &str) -> (String, &str) {
    let mut value = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return (value, s.get(i + 1..).unwrap_or_default()),
            '\\' => {
                if let Some((_, escaped)) = chars.next() {
                    value.push(escaped);
                }
            }
            c => value.push(c),
        }
    }
    (value, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_bearer_parameters() {
        let c = bearer(
            r#"Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://x.example/.well-known/oauth-protected-resource/mcp", error_description="a \"quoted\" text""#,
        )
        .unwrap();
        assert_eq!(c.scope.as_deref(), Some("files:read files:write"));
        assert!(c.insufficient_scope());
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://x.example/.well-known/oauth-protected-resource/mcp")
        );
    }

    #[test]
    fn finds_bearer_after_another_scheme() {
        let c = bearer(r#"Basic realm="x", Bearer scope=mcp"#).unwrap();
        assert_eq!(c.scope.as_deref(), Some("mcp"));
        assert_eq!(bearer(r#"Basic realm="x""#), None);
        assert_eq!(bearer(""), None);
        assert_eq!(bearer("Bearer"), Some(Challenge::default()));
        let both = bearer(r#"DPoP algs="ES256", Bearer scope="a""#).unwrap();
        assert!(both.dpop_offered);
        assert_eq!(both.scope.as_deref(), Some("a"));
        // Unterminated quotes and stray characters end the parse, never panic.
        assert_eq!(
            bearer(r#"Bearer scope="a"#).unwrap().scope.as_deref(),
            Some("a")
        );
        let _ = bearer("Bearer ==,,\"\\");
    }
}
