//! `mcp-codegen diff R1 R2`: what changed between two revisions — methods, capabilities,
//! types and fields added, removed or changed — as Markdown.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::summary::{Shape, Summary};

/// Renders the changes from `old` to `new`.
pub fn diff(old: &Summary, new: &Summary) -> String {
    let mut out = format!("## {} → {}\n\n", old.revision, new.revision);

    out.push_str("### Methods\n\n");
    let methods = changes(
        &old.methods,
        &new.methods,
        |name, a, b| {
            let mut parts = Vec::new();
            if a.kind != b.kind {
                parts.push(format!("{} → {}", a.kind, b.kind));
            }
            if a.params != b.params {
                parts.push(format!("params {} → {}", a.params, b.params));
            }
            if a.result != b.result {
                parts.push(format!("result {} → {}", a.result, b.result));
            }
            (!parts.is_empty()).then(|| format!("- changed `{name}`: {}", parts.join("; ")))
        },
        |name, s| {
            format!(
                "`{name}` ({}; params {}; result {})",
                s.kind, s.params, s.result
            )
        },
    );
    push_section(&mut out, methods);

    out.push_str("### Capabilities\n\n");
    let caps = changes(
        &old.capabilities,
        &new.capabilities,
        |name, a, b| (a != b).then(|| format!("- changed `{name}`: {a} → {b}")),
        |name, ty| format!("`{name}`: {ty}"),
    );
    push_section(&mut out, caps);

    out.push_str("### Types\n\n");
    let types = changes(&old.types, &new.types, type_change, |name, _| {
        format!("`{name}`")
    });
    push_section(&mut out, types);
    out
}

fn push_section(out: &mut String, lines: Vec<String>) {
    if lines.is_empty() {
        out.push_str("No changes.\n\n");
    } else {
        for l in lines {
            out.push_str(&l);
            out.push('\n');
        }
        out.push('\n');
    }
}

fn changes<V>(
    old: &BTreeMap<String, V>,
    new: &BTreeMap<String, V>,
    changed: impl Fn(&str, &V, &V) -> Option<String>,
    describe: impl Fn(&str, &V) -> String,
) -> Vec<String> {
    let mut lines = Vec::new();
    for (name, v) in new {
        if !old.contains_key(name) {
            lines.push(format!("- added {}", describe(name, v)));
        }
    }
    for (name, v) in old {
        if !new.contains_key(name) {
            lines.push(format!("- removed {}", describe(name, v)));
        }
    }
    for (name, a) in old {
        if let Some(b) = new.get(name) {
            lines.extend(changed(name, a, b));
        }
    }
    lines
}

fn type_change(name: &str, a: &Shape, b: &Shape) -> Option<String> {
    if a == b {
        return None;
    }
    let mut s = String::new();
    match (a, b) {
        (Shape::Object(fa), Shape::Object(fb)) => {
            let _ = write!(s, "- changed `{name}`:");
            for (f, field) in fb {
                match fa.get(f) {
                    None => {
                        let _ = write!(s, "\n  - added `{f}`: {}{}", field.ty, req(field.required));
                    }
                    Some(old) if old != field => {
                        let _ = write!(
                            s,
                            "\n  - changed `{f}`: {}{} → {}{}",
                            old.ty,
                            req(old.required),
                            field.ty,
                            req(field.required)
                        );
                    }
                    Some(_) => {}
                }
            }
            for (f, field) in fa {
                if !fb.contains_key(f) {
                    let _ = write!(
                        s,
                        "\n  - removed `{f}`: {}{}",
                        field.ty,
                        req(field.required)
                    );
                }
            }
        }
        (Shape::Union(ma), Shape::Union(mb)) => {
            let added: Vec<&String> = mb.iter().filter(|m| !ma.contains(m)).collect();
            let removed: Vec<&String> = ma.iter().filter(|m| !mb.contains(m)).collect();
            let _ = write!(s, "- changed `{name}` (union):");
            for m in added {
                let _ = write!(s, " +{m}");
            }
            for m in removed {
                let _ = write!(s, " −{m}");
            }
            if s.ends_with(':') {
                s.push_str(" members reordered");
            }
        }
        _ => {
            let _ = write!(s, "- changed `{name}`: {} → {}", describe(a), describe(b));
        }
    }
    Some(s)
}

fn req(required: bool) -> &'static str {
    if required {
        " (required)"
    } else {
        ""
    }
}

fn describe(s: &Shape) -> String {
    match s {
        Shape::Object(f) => format!(
            "object {{{}}}",
            f.keys().cloned().collect::<Vec<_>>().join(", ")
        ),
        Shape::Union(m) => m.join(" | "),
        Shape::Other(o) => o.clone(),
    }
}
