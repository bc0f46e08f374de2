//! Matching a URI against an RFC 6570 template, to find which resource template a
//! `resources/read` names and with which variables. Expansion crates exist, but none
//! matches (the reverse direction), so this covers what resource templates use: literal
//! text, `{var}` (one path segment or more text, no `/`), `{+var}` (reserved: may contain
//! `/`), and `{/var}`, `{?var,…}` forms are treated as literal-delimited simple values.

use std::collections::BTreeMap;

#[derive(Debug, PartialEq)]
enum Part {
    Literal(String),
    Var { name: String, reserved: bool },
}

/// A parsed URI template.
#[derive(Debug, PartialEq)]
pub(super) struct UriTemplate {
    parts: Vec<Part>,
}

impl UriTemplate {
    /// Parses a template; `None` if a `{` is not closed or a variable is empty.
    pub(super) fn parse(template: &str) -> Option<UriTemplate> {
        let mut parts = Vec::new();
        let mut rest = template;
        while let Some(start) = rest.find('{') {
            if start > 0 {
                parts.push(Part::Literal(rest[..start].to_owned()));
            }
            let end = rest[start..].find('}')? + start;
            let expr = &rest[start + 1..end];
            let (reserved, name) = match expr.strip_prefix('+') {
                Some(n) => (true, n),
                None => (
                    false,
                    expr.trim_start_matches(['#', '.', '/', ';', '?', '&']),
                ),
            };
            if name.is_empty() {
                return None;
            }
            parts.push(Part::Var {
                name: name.to_owned(),
                reserved,
            });
            rest = &rest[end + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        Some(UriTemplate { parts })
    }

    /// The variables if `uri` matches the template.
    pub(super) fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let mut vars = BTreeMap::new();
        if match_parts(&self.parts, uri, &mut vars) {
            Some(vars)
        } else {
            None
        }
    }
}

fn match_parts(parts: &[Part], input: &str, vars: &mut BTreeMap<String, String>) -> bool {
    match parts.split_first() {
        None => input.is_empty(),
        Some((Part::Literal(lit), rest)) => input
            .strip_prefix(lit.as_str())
            .is_some_and(|tail| match_parts(rest, tail, vars)),
        Some((Part::Var { name, reserved }, rest)) => {
            // Shortest non-empty value first, so a following literal anchors the match.
            for (i, c) in input.char_indices().map(|(i, c)| (i + c.len_utf8(), c)) {
                if !reserved && c == '/' {
                    break;
                }
                if match_parts(rest, &input[i..], vars) {
                    vars.insert(name.clone(), input[..i].to_owned());
                    return true;
                }
            }
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_simple_and_reserved_variables() {
        let t = UriTemplate::parse("test://template/{id}/data").expect("parse");
        assert_eq!(
            t.matches("test://template/123/data").expect("match")["id"],
            "123"
        );
        assert!(t.matches("test://template/1/2/data").is_none());
        assert!(t.matches("test://template//data").is_none());
        assert!(t.matches("test://other/123/data").is_none());
        let t = UriTemplate::parse("file:///{+path}").expect("parse");
        assert_eq!(
            t.matches("file:///a/b/c.txt").expect("match")["path"],
            "a/b/c.txt"
        );
        let t = UriTemplate::parse("weather://{city}/{day}").expect("parse");
        let vars = t.matches("weather://Paris/monday").expect("match");
        assert_eq!(
            (vars["city"].as_str(), vars["day"].as_str()),
            ("Paris", "monday")
        );
        assert!(UriTemplate::parse("bad://{unclosed").is_none());
        assert!(UriTemplate::parse("bad://{}").is_none());
    }
}
