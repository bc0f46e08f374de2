//! Types that are deep-identical in several revisions (same code, and every type they
//! refer to identical too) are emitted once, in `generated/src/shared.rs`, and re-exported
//! by each of those revisions. Many type definitions repeat from one revision to the
//! next; compiling them once is most of what keeps the generated crate's build
//! cheap, and it makes a type that did not change *the same Rust type* in every revision
//! that has it.
//!
//! Only the comparison needs every revision at once, and syn trees cannot move between
//! threads; so each revision is [split](Split::new) and [fingerprinted](Split::fingerprint)
//! on its own, one [`plan`] is made from the fingerprints, and each revision is then
//! [rebuilt](Split::rebuild) on its own again.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::visit::Visit;
use syn::visit_mut::VisitMut;

use crate::manifest::Revision;

/// The items of one type in one revision: parsed ones, then serde impls still as tokens
/// (see [`serde_impls::replace`](super::serde_impls::replace)).
#[derive(Default)]
struct Owned {
    items: Vec<syn::Item>,
    unparsed: Vec<TokenStream>,
}

impl Owned {
    fn into_items(self) -> Vec<syn::Item> {
        let mut items = self.items;
        for tokens in self.unparsed {
            items.extend(super::types::parse_items(tokens));
        }
        items
    }
}

/// One revision's rendered `types.rs`, split by the type each item belongs to.
pub struct Split {
    /// Type name → its definition and impls, in file order.
    types: BTreeMap<String, Owned>,
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
/// file could share or re-export (two identical revisions once made `i64` a "shared type").
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

impl Split {
    /// Splits a revision's `types.rs` as [`render_unparsed`](super::types::render_unparsed)
    /// gives it: the file, then the impls of each type that follow its items.
    pub fn new(file: syn::File, unparsed: Vec<(String, TokenStream)>) -> Split {
        let local: BTreeSet<String> = file.items.iter().filter_map(defined).collect();
        let mut types: BTreeMap<String, Owned> = BTreeMap::new();
        let mut other = Vec::new();
        let mut order = Vec::new();
        for item in file.items {
            match owner(&item, &local) {
                Some(name) => {
                    if !types.contains_key(&name) {
                        order.push(name.clone());
                    }
                    types.entry(name).or_default().items.push(item);
                }
                None => other.push(item),
            }
        }
        for (name, tokens) in unparsed {
            if !types.contains_key(&name) {
                order.push(name.clone());
            }
            types.entry(name).or_default().unparsed.push(tokens);
        }
        Split {
            types,
            other,
            order,
        }
    }

    /// What [`plan`] compares of this revision: each type's code and the local types it
    /// refers to. (Takes `&mut self` only to lift the doc comments out while printing.)
    pub fn fingerprint(&mut self) -> Fingerprint {
        let local: BTreeSet<String> = self.types.keys().cloned().collect();
        let types = self
            .types
            .iter_mut()
            .map(|(name, owned)| {
                let mut visitor = Refs {
                    local: &local,
                    found: BTreeSet::new(),
                };
                for item in &owned.items {
                    visitor.visit_item(item);
                }
                // The unparsed impls name no type but their own: every other path in them
                // is absolute, `Self`, a local variable or a generic parameter.
                visitor.found.remove(name);
                (name.clone(), (code_text(owned), visitor.found))
            })
            .collect();
        Fingerprint {
            order: self.order.clone(),
            types,
        }
    }

    /// The revision's `types.rs` (its own types, and `use`s of the shared ones), and the
    /// shared modules whose items come from this revision, with their index in the plan.
    pub fn rebuild(mut self, plan: &Plan, revision: usize) -> (syn::File, Vec<(usize, syn::Item)>) {
        let mut items: Vec<syn::Item> = Vec::new();
        for (module, names) in &plan.reexports[revision] {
            let m = format_ident!("{}", module);
            let names = names.iter().map(|n| format_ident!("{}", n));
            items.push(syn::parse_quote!(pub use crate::shared::#m::{#(#names),*};));
        }
        let mut modules = Vec::new();
        for (index, module) in plan.modules.iter().enumerate() {
            if !module.revisions.contains(&revision) {
                continue;
            }
            // Revisions are oldest first: the newest revision's docs win. The other copies
            // are dropped unparsed.
            let source = module.revisions.last() == Some(&revision);
            let mut module_items = Vec::new();
            for name in &module.types {
                let owned = self.types.remove(name).unwrap_or_default();
                if source {
                    module_items.extend(owned.into_items());
                }
            }
            if source {
                modules.push((index, module.item(module_items)));
            }
        }
        for name in &self.order {
            if let Some(owned) = self.types.remove(name) {
                items.extend(owned.into_items());
            }
        }
        items.extend(self.other);
        let file = syn::File {
            shebang: None,
            attrs: Vec::new(),
            items,
        };
        (file, modules)
    }
}

/// One revision's types as [`plan`] compares them.
pub struct Fingerprint {
    /// Type names in file order.
    order: Vec<String>,
    /// Type name → its code without docs, and the local types it refers to.
    types: BTreeMap<String, (String, BTreeSet<String>)>,
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
/// revision's docs). The unparsed impls follow as their own tokens, which are what parsing
/// and printing them would give.
fn code_text(owned: &mut Owned) -> String {
    // The docs are lifted out and put back rather than stripped from a copy: copying the
    // items cost more than printing them.
    let mut docs = Docs::default();
    for item in &mut owned.items {
        docs.visit_item_mut(item);
    }
    let items = &owned.items;
    let mut text = quote!(#(#items)*).to_string();
    docs.putting_back = true;
    docs.visits = 0;
    docs.taken.reverse();
    for item in &mut owned.items {
        docs.visit_item_mut(item);
    }
    for tokens in &owned.unparsed {
        // U+0001 never occurs in printed tokens (a literal prints it escaped).
        let _ = write!(text, "\u{1}{tokens}");
    }
    text
}

/// Takes the doc attributes out of every attribute list, then puts them back where they
/// were (a second walk of the same tree visits the lists in the same order).
#[derive(Default)]
struct Docs {
    /// (visit number, [(position, attribute)]) for each list that had docs.
    taken: Vec<(usize, Vec<(usize, syn::Attribute)>)>,
    visits: usize,
    putting_back: bool,
}

impl VisitMut for Docs {
    fn visit_attributes_mut(&mut self, attrs: &mut Vec<syn::Attribute>) {
        let visit = self.visits;
        self.visits += 1;
        if self.putting_back {
            if self.taken.last().is_some_and(|(v, _)| *v == visit) {
                if let Some((_, docs)) = self.taken.pop() {
                    for (position, attr) in docs {
                        attrs.insert(position, attr);
                    }
                }
            }
        } else if attrs.iter().any(|a| a.path().is_ident("doc")) {
            let mut docs = Vec::new();
            for (position, attr) in std::mem::take(attrs).into_iter().enumerate() {
                if attr.path().is_ident("doc") {
                    docs.push((position, attr));
                } else {
                    attrs.push(attr);
                }
            }
            self.taken.push((visit, docs));
        }
    }
}

/// What sharing decided: which types each revision re-exports, and the shared modules.
pub struct Plan {
    /// Per revision: shared module → the names it re-exports from it (in file order).
    reexports: Vec<BTreeMap<String, Vec<String>>>,
    /// The shared modules, in name order (the order of `shared.rs`).
    modules: Vec<SharedModule>,
}

impl Plan {
    /// How many shared modules there are.
    pub fn module_count(&self) -> usize {
        self.modules.len()
    }
}

/// One module of `shared.rs`: the types identical in one set of revisions.
struct SharedModule {
    name: String,
    /// The revisions, oldest first.
    revisions: Vec<usize>,
    /// Its types, by name.
    types: BTreeSet<String>,
    /// Types it uses from other shared modules: module → names.
    imports: BTreeMap<String, BTreeSet<String>>,
    doc: String,
    features: Vec<String>,
}

impl SharedModule {
    /// The module, gated on the features of its revisions, holding `items`.
    fn item(&self, items: Vec<syn::Item>) -> syn::Item {
        let ident = format_ident!("{}", self.name);
        let doc = &self.doc;
        let features = &self.features;
        let uses = self.imports.iter().map(|(m, names)| {
            let m = format_ident!("{}", m);
            let names = names.iter().map(|n| format_ident!("{}", n));
            quote!(use super::#m::{#(#names),*};)
        });
        // The items are added to the parsed shell, not printed into it and parsed again.
        let mut module: syn::ItemMod = syn::parse_quote! {
            #[doc = #doc]
            #[cfg(any(#(feature = #features),*))]
            pub mod #ident {
                #(#uses)*
            }
        };
        if let Some((_, content)) = &mut module.content {
            content.extend(items);
        }
        syn::Item::Mod(module)
    }
}

fn refs<'a>(prints: &'a [Fingerprint], r: usize, name: &str) -> &'a BTreeSet<String> {
    &prints[r].types[name].1
}

type Refined<'a> = (usize, Vec<(&'a str, usize)>);

/// Decides which types are shared, from the fingerprints of `revisions` (same order).
pub fn plan(revisions: &[Revision], prints: &[Fingerprint]) -> Plan {
    let refs = |r: usize, name: &str| refs(prints, r, name);
    // Partition refinement: same text, then same classes of everything referred to.
    let mut class: BTreeMap<(usize, &str), usize> = BTreeMap::new();
    let mut ids: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for (r, print) in prints.iter().enumerate() {
        for (name, (text, _)) in &print.types {
            let n = ids.len();
            class.insert(
                (r, name.as_str()),
                *ids.entry((name.as_str(), text.as_str())).or_insert(n),
            );
        }
    }
    loop {
        // (class, [(referred type, its class)]) → refined class.
        let mut ids: BTreeMap<Refined<'_>, usize> = BTreeMap::new();
        let mut next = BTreeMap::new();
        for (&(r, name), &c) in &class {
            let deps: Vec<(&str, usize)> = refs(r, name)
                .iter()
                .map(|m| (m.as_str(), class[&(r, m.as_str())]))
                .collect();
            let n = ids.len();
            let id = *ids.entry((c, deps)).or_insert(n);
            next.insert((r, name), id);
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
    for (&(r, _), c) in &class {
        members.entry(*c).or_default().push(r);
    }
    let module_of = |rs: &[usize]| -> String {
        rs.iter()
            .map(|&r| revisions[r].module_name())
            .collect::<Vec<_>>()
            .join("__")
    };
    let mut home: BTreeMap<(usize, &str), String> = BTreeMap::new();
    for (&(r, name), c) in &class {
        let rs = &members[c];
        if rs.len() > 1 {
            home.insert((r, name), module_of(rs));
        }
    }
    let mut reexports: Vec<BTreeMap<String, Vec<String>>> = vec![BTreeMap::new(); prints.len()];
    // Shared module → (its revisions, its types).
    let mut shared: BTreeMap<&str, (&[usize], BTreeSet<String>)> = BTreeMap::new();
    for (r, print) in prints.iter().enumerate() {
        for name in &print.order {
            let Some(module) = home.get(&(r, name.as_str())) else {
                continue;
            };
            reexports[r]
                .entry(module.clone())
                .or_default()
                .push(name.clone());
            let rs = &members[&class[&(r, name.as_str())]];
            shared
                .entry(module)
                .or_insert_with(|| (rs, BTreeSet::new()))
                .1
                .insert(name.clone());
        }
    }
    let modules = shared
        .into_iter()
        .map(|(module, (rs, types))| {
            // Every revision of the module refers to the same classes; ask the oldest.
            let r0 = rs[0];
            let mut imports: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            for name in &types {
                for dep in refs(r0, name) {
                    if let Some(dep_home) = home.get(&(r0, dep.as_str())) {
                        if dep_home != module {
                            imports
                                .entry(dep_home.clone())
                                .or_default()
                                .insert(dep.clone());
                        }
                    }
                }
            }
            SharedModule {
                name: module.to_owned(),
                revisions: rs.to_vec(),
                types,
                imports,
                doc: format!(
                    " Types identical in {}.",
                    rs.iter()
                        .map(|&r| format!("`{}`", revisions[r].id))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                features: rs.iter().map(|&r| revisions[r].module_name()).collect(),
            }
        })
        .collect();
    Plan { reexports, modules }
}
