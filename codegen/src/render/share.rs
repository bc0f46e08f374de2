//! Types that are deep-identical in several revisions (same code, and every type they
//! refer to identical too) are emitted once, in `generated/src/shared.rs`, and re-exported
//! by each of those revisions. About 40% of the type definitions repeat from one revision
//! to the next; compiling them once is most of what keeps the generated crate's build
//! cheap, and it makes a type that did not change *the same Rust type* in every revision
//! that has it.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::visit::Visit;

use crate::manifest::Revision;

/// One revision's rendered `types.rs`, split by the type each item belongs to.
struct Split {
    /// Type name → its definition and impls, in file order.
    types: BTreeMap<String, Vec<syn::Item>>,
    /// Items that belong to no type (kept in the revision).
    other: Vec<syn::Item>,
    /// Names in file order (to keep the revision file's order stable).
    order: Vec<String>,
}

/// The name an item defines, if it is a type definition.
fn defined(item: &syn::Item) -> Option<String> {
    match item {
        syn::Item::Struct(s) => Some(s.ident.to_string()),
        syn::Item::Enum(e) => Some(e.ident.to_string()),
        syn::Item::Type(t) => Some(t.ident.to_string()),
        _ => None,
    }
}

fn single_segment(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(p)
            if p.qself.is_none()
                && p.path.leading_colon.is_none()
                && p.path.segments.len() == 1 =>
        {
            p.path.segments.first().map(|s| s.ident.to_string())
        }
        _ => None,
    }
}

/// The local type an item belongs to: the type it defines, or the one an impl is for. An
/// impl for a type defined elsewhere (`impl From<ErrorCode> for i64`) belongs to the local
/// type among its trait's arguments: it moves with that type, and `i64` is not a type the
/// file could share or re-export.
fn owner(item: &syn::Item, local: &BTreeSet<String>) -> Option<String> {
    if let Some(name) = defined(item) {
        return Some(name);
    }
    let syn::Item::Impl(i) = item else {
        return None;
    };
    if let Some(name) = single_segment(&i.self_ty).filter(|n| local.contains(n)) {
        return Some(name);
    }
    let (_, trait_path, _) = i.trait_.as_ref()?;
    let syn::PathArguments::AngleBracketed(args) = &trait_path.segments.last()?.arguments else {
        return None;
    };
    args.args.iter().find_map(|a| match a {
        syn::GenericArgument::Type(ty) => single_segment(ty).filter(|n| local.contains(n)),
        _ => None,
    })
}

fn split(file: syn::File) -> Split {
    let local: BTreeSet<String> = file.items.iter().filter_map(defined).collect();
    let mut types: BTreeMap<String, Vec<syn::Item>> = BTreeMap::new();
    let mut other = Vec::new();
    let mut order = Vec::new();
    for item in file.items {
        match owner(&item, &local) {
            Some(name) => {
                if !types.contains_key(&name) {
                    order.push(name.clone());
                }
                types.entry(name).or_default().push(item);
            }
            None => other.push(item),
        }
    }
    Split {
        types,
        other,
        order,
    }
}

/// Single-segment paths (local type names) used by some items.
struct Refs<'a> {
    local: &'a BTreeSet<String>,
    found: BTreeSet<String>,
}

impl<'ast> Visit<'ast> for Refs<'_> {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() && path.segments.len() == 1 {
            if let Some(seg) = path.segments.first() {
                let name = seg.ident.to_string();
                if self.local.contains(&name) {
                    self.found.insert(name);
                }
            }
        }
        syn::visit::visit_path(self, path);
    }
}

/// The items' code without doc comments: revisions often reword or relink a description
/// of a type whose shape did not change; such types are still shared (with the newest
/// revision's docs).
fn code_text(items: &[syn::Item]) -> String {
    struct StripDocs;
    impl syn::visit_mut::VisitMut for StripDocs {
        fn visit_attributes_mut(&mut self, attrs: &mut Vec<syn::Attribute>) {
            attrs.retain(|a| !a.path().is_ident("doc"));
        }
        fn visit_field_mut(&mut self, f: &mut syn::Field) {
            f.attrs.retain(|a| !a.path().is_ident("doc"));
            syn::visit_mut::visit_field_mut(self, f);
        }
        fn visit_variant_mut(&mut self, v: &mut syn::Variant) {
            v.attrs.retain(|a| !a.path().is_ident("doc"));
            syn::visit_mut::visit_variant_mut(self, v);
        }
        fn visit_item_mut(&mut self, i: &mut syn::Item) {
            match i {
                syn::Item::Struct(s) => s.attrs.retain(|a| !a.path().is_ident("doc")),
                syn::Item::Enum(e) => e.attrs.retain(|a| !a.path().is_ident("doc")),
                syn::Item::Type(t) => t.attrs.retain(|a| !a.path().is_ident("doc")),
                _ => {}
            }
            syn::visit_mut::visit_item_mut(self, i);
        }
    }
    let mut items = items.to_vec();
    for item in &mut items {
        syn::visit_mut::VisitMut::visit_item_mut(&mut StripDocs, item);
    }
    quote!(#(#items)*).to_string()
}

/// Splits shared types out of `files` (one per revision, same order as `revisions`),
/// rewriting each file to re-export them, and returns the shared module's items.
pub fn share(revisions: &[Revision], files: &mut [syn::File]) -> TokenStream {
    let splits: Vec<Split> = files
        .iter_mut()
        .map(|f| split(std::mem::replace(f, syn::parse_quote!())))
        .collect();
    // Text and references of every (revision, type).
    let mut text: BTreeMap<(usize, String), String> = BTreeMap::new();
    let mut refs: BTreeMap<(usize, String), BTreeSet<String>> = BTreeMap::new();
    for (r, s) in splits.iter().enumerate() {
        let local: BTreeSet<String> = s.types.keys().cloned().collect();
        for (name, items) in &s.types {
            text.insert((r, name.clone()), code_text(items));
            let mut visitor = Refs {
                local: &local,
                found: BTreeSet::new(),
            };
            for item in items {
                visitor.visit_item(item);
            }
            visitor.found.remove(name);
            refs.insert((r, name.clone()), visitor.found);
        }
    }
    // Partition refinement: same text, then same classes of everything referred to.
    let mut class: BTreeMap<(usize, String), usize> = BTreeMap::new();
    let mut ids: BTreeMap<String, usize> = BTreeMap::new();
    for (key, t) in &text {
        let n = ids.len();
        class.insert(
            key.clone(),
            *ids.entry(format!("{}\u{0}{t}", key.1)).or_insert(n),
        );
    }
    loop {
        let mut ids: BTreeMap<(usize, Vec<(String, usize)>), usize> = BTreeMap::new();
        let mut next = BTreeMap::new();
        for key in text.keys() {
            let deps: Vec<(String, usize)> = refs[key]
                .iter()
                .map(|m| (m.clone(), class[&(key.0, m.clone())]))
                .collect();
            let n = ids.len();
            let id = *ids.entry((class[key], deps)).or_insert(n);
            next.insert(key.clone(), id);
        }
        let before: BTreeSet<usize> = class.values().copied().collect();
        let after: BTreeSet<usize> = next.values().copied().collect();
        class = next;
        if before.len() == after.len() {
            break;
        }
    }
    // Class → revisions that have it.
    let mut members: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for ((r, _), c) in &class {
        members.entry(*c).or_default().push(*r);
    }
    let module_of = |rs: &[usize]| -> String {
        rs.iter()
            .map(|&r| revisions[r].module_name())
            .collect::<Vec<_>>()
            .join("__")
    };
    // (shared module) → (type name → items), and per revision the names it re-exports.
    // Shared module → (its revisions, type name → items).
    type Members = (Vec<usize>, BTreeMap<String, Vec<syn::Item>>);
    let mut shared: BTreeMap<String, Members> = BTreeMap::new();
    let mut home: BTreeMap<(usize, String), String> = BTreeMap::new();
    for ((r, name), c) in &class {
        let rs = &members[c];
        if rs.len() > 1 {
            home.insert((*r, name.clone()), module_of(rs));
        }
    }
    let mut splits = splits;
    let mut reexports: Vec<BTreeMap<String, Vec<String>>> = vec![BTreeMap::new(); splits.len()];
    for (r, s) in splits.iter_mut().enumerate() {
        for name in s.order.clone() {
            let Some(module) = home.get(&(r, name.clone())) else {
                continue;
            };
            reexports[r]
                .entry(module.clone())
                .or_default()
                .push(name.clone());
            let items = s.types.remove(&name).unwrap_or_default();
            let rs = members[&class[&(r, name.clone())]].clone();
            let entry = shared
                .entry(module.clone())
                .or_insert_with(|| (rs, BTreeMap::new()));
            // Revisions are oldest first: the newest revision's docs win.
            entry.1.insert(name.clone(), items);
        }
    }
    // Rebuild each revision file: its own items, then the re-exports.
    for (r, (s, file)) in splits.into_iter().zip(files.iter_mut()).enumerate() {
        let mut items = Vec::new();
        for (module, names) in &reexports[r] {
            let m = format_ident!("{}", module);
            let names = names.iter().map(|n| format_ident!("{}", n));
            items.push(syn::parse_quote!(pub use crate::shared::#m::{#(#names),*};));
        }
        let mut s = s;
        for name in &s.order {
            if let Some(type_items) = s.types.remove(name) {
                items.extend(type_items);
            }
        }
        items.extend(s.other);
        file.items = items;
    }
    // The shared module: one submodule per set of revisions, gated on their features.
    let modules = shared.iter().map(|(module, (rs, types))| {
        let ident = format_ident!("{}", module);
        let features = rs.iter().map(|&r| revisions[r].module_name());
        let doc = format!(
            " Types identical in {}.",
            rs.iter()
                .map(|&r| format!("`{}`", revisions[r].id))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let r0 = rs[0];
        let mut imports: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for name in types.keys() {
            for dep in &refs[&(r0, name.clone())] {
                if let Some(dep_home) = home.get(&(r0, dep.clone())) {
                    if dep_home != module {
                        imports
                            .entry(dep_home.clone())
                            .or_default()
                            .insert(dep.clone());
                    }
                }
            }
        }
        let uses = imports.iter().map(|(m, names)| {
            let m = format_ident!("{}", m);
            let names = names.iter().map(|n| format_ident!("{}", n));
            quote!(use super::#m::{#(#names),*};)
        });
        let items = types.values().flatten();
        quote! {
            #[doc = #doc]
            #[cfg(any(#(feature = #features),*))]
            pub mod #ident {
                #(#uses)*
                #(#items)*
            }
        }
    });
    quote!(#(#modules)*)
}
