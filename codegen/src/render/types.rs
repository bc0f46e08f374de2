//! `types.rs` of a revision: typify on the prepared schema, then a syn post-pass that
//! fixes what typify's output still gets wrong and gives each discriminable union a
//! `Deserialize` that picks its member by tag or by keys.

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use quote::quote;
use syn::visit_mut::VisitMut;
use typify::{TypeSpace, TypeSpacePatch, TypeSpaceSettings};

use crate::error::{Error, Result};
use crate::ir::{Dispatch, Ir};
use crate::prepass::Prepared;

/// Schema definitions that get a Rust name of their own because the schema's name would
/// shadow a std prelude type in every module that glob-imports the revision.
pub const RENAMES: [(&str, &str); 2] = [("Result", "BaseResult"), ("Error", "ErrorObject")];

/// Schema definitions replaced by a serde_json type: they describe arbitrary JSON.
pub const REPLACEMENTS: [(&str, &str); 2] = [
    ("JsonValue", "::serde_json::Value"),
    (
        "JsonObject",
        "::serde_json::Map<::std::string::String, ::serde_json::Value>",
    ),
];

/// Types whose values are used as map keys (ids and tokens).
const HASHABLE: [&str; 2] = ["RequestId", "ProgressToken"];

/// The Rust name typify gives a schema definition (its PascalCase sanitisation).
pub fn rust_name(def: &str) -> String {
    if let Some((_, to)) = RENAMES.iter().find(|(from, _)| *from == def) {
        return (*to).to_owned();
    }
    typify_pascal(def)
}

fn typify_pascal(def: &str) -> String {
    // typify lower-cases acronyms the way heck does: JSONRPCRequest → JsonrpcRequest.
    use heck::ToUpperCamelCase;
    def.to_upper_camel_case()
}

/// Normalised form used to match typify's type names with schema names.
fn loose(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Runs typify and the post-pass; returns the file's items (without header).
pub fn render(prepared: &Prepared, ir: &Ir) -> Result<syn::File> {
    let (mut file, impls) = render_unparsed(prepared, ir)?;
    for (_, tokens) in impls {
        file.items.extend(parse_items(tokens));
    }
    Ok(file)
}

/// The items of `tokens`; none if they do not parse (not reachable for the impls this
/// module writes, whose tokens are built from parsed items).
pub fn parse_items(tokens: TokenStream) -> Vec<syn::Item> {
    syn::parse2::<syn::File>(tokens).map_or_else(|_| Vec::new(), |f| f.items)
}

/// As [`render`], except that the serde impls are left as tokens, each with the name of
/// its type (see [`serde_impls::replace`](super::serde_impls::replace)); [`render`]'s file
/// is this file's items followed by theirs.
pub fn render_unparsed(
    prepared: &Prepared,
    ir: &Ir,
) -> Result<(syn::File, Vec<(String, TokenStream)>)> {
    let mut settings = TypeSpaceSettings::default();
    settings
        .with_struct_builder(false)
        .with_derive("PartialEq".to_owned())
        .with_map_type("::std::collections::BTreeMap");
    for (from, to) in RENAMES {
        settings.with_patch(from, TypeSpacePatch::default().with_rename(to));
    }
    for name in HASHABLE {
        settings.with_patch(
            name,
            TypeSpacePatch::default()
                .with_derive("Eq")
                .with_derive("Hash"),
        );
    }
    for (name, ty) in REPLACEMENTS {
        settings.with_replacement(name, ty, std::iter::empty());
    }
    let root: schemars::schema::RootSchema = serde_json::from_value(prepared.root_schema())
        .map_err(|e| {
            // Name the definition at fault rather than the whole document.
            let culprit = prepared
                .defs
                .iter()
                .find(|(_, def)| {
                    serde_json::from_value::<schemars::schema::Schema>((*def).clone()).is_err()
                })
                .map(|(name, _)| format!(" (definition `{name}`)"))
                .unwrap_or_default();
            Error::Typify {
                revision: prepared.revision.clone(),
                message: format!("prepared schema is not a JSON Schema{culprit}: {e}"),
            }
        })?;
    let mut space = TypeSpace::new(&settings);
    // typify reports some failures by panicking; turn them into an error naming the
    // revision instead of taking the caller down.
    let added = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        space.add_root_schema(root).map(|_| space.to_stream())
    }));
    let tokens = match added {
        Ok(Ok(tokens)) => tokens,
        Ok(Err(e)) => {
            return Err(Error::Typify {
                revision: prepared.revision.clone(),
                message: e.to_string(),
            })
        }
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "typify panicked".to_owned());
            return Err(Error::Typify {
                revision: prepared.revision.clone(),
                message,
            });
        }
    };
    let mut file: syn::File = syn::parse2(tokens).map_err(|e| Error::Typify {
        revision: prepared.revision.clone(),
        message: format!("typify output does not parse: {e}"),
    })?;
    let impls = post_pass(&mut file, ir).map_err(|message| Error::Typify {
        revision: prepared.revision.clone(),
        message,
    })?;
    Ok((file, impls))
}

fn post_pass(
    file: &mut syn::File,
    ir: &Ir,
) -> std::result::Result<Vec<(String, TokenStream)>, String> {
    // Items typify adds that nothing here needs and that only cost compile time: clones
    // in disguise, and string conversions of one-value discriminator enums.
    let discriminators: std::collections::BTreeSet<String> = file
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Enum(e) if is_single_unit_enum(e) => Some(e.ident.to_string()),
            _ => None,
        })
        .collect();
    file.items.retain(|item| {
        !is_self_ref_from(item)
            && !is_discriminator_conversion(item, &discriminators)
            && !is_error_module(item)
    });
    // typify's per-file `error` module is replaced by one `crate::ConversionError`, so that
    // types shared between revisions need nothing revision-local.
    let mut paths = ConversionErrorPath;
    paths.visit_file_mut(file);
    let mut fixer = FieldFixer;
    fixer.visit_file_mut(file);
    let unions: BTreeMap<String, (&String, &Dispatch)> = ir
        .unions
        .iter()
        .filter(|(_, d)| !matches!(d, Dispatch::Untagged))
        .map(|(name, d)| (loose(&rust_name(name)), (name, d)))
        .collect();
    let mut extra = Vec::new();
    let items = std::mem::take(&mut file.items);
    for item in items {
        match item {
            syn::Item::Enum(e) if is_single_unit_enum(&e) => file.items.extend(discriminator(&e)),
            other => file.items.push(other),
        }
    }
    for item in &mut file.items {
        let syn::Item::Enum(e) = item else { continue };
        if let Some((_, dispatch)) = unions.get(&loose(&e.ident.to_string())) {
            remove_derive(&mut e.attrs, "Deserialize");
            extra.push(union_deserialize(e, dispatch));
        }
    }
    // Types that keep undeclared keys say so through a trait, so that code building an
    // outgoing message can empty that map generically (see ARCHITECTURE.md, unknown keys).
    for item in &file.items {
        let syn::Item::Struct(st) = item else {
            continue;
        };
        let keeps = st.fields.iter().any(|f| {
            f.ident.as_ref().is_some_and(|i| i == "extra")
                && f.attrs
                    .iter()
                    .any(|a| quote!(#a).to_string().contains("flatten"))
        });
        if keeps {
            let name = &st.ident;
            extra.push(quote! {
                impl crate::KeepsUnknownKeys for #name {
                    fn unknown_keys(&self) -> &::serde_json::Map<::std::string::String, ::serde_json::Value> {
                        &self.extra
                    }
                    fn unknown_keys_mut(&mut self) -> &mut ::serde_json::Map<::std::string::String, ::serde_json::Value> {
                        &mut self.extra
                    }
                }
            });
        }
    }
    for tokens in extra {
        if let Ok(items) = syn::parse2::<syn::File>(tokens) {
            file.items.extend(items.items);
        }
    }
    for item in &mut file.items {
        inline_small_impl(item);
    }
    let envelopes = outside_methods(file, ir);
    for item in &mut file.items {
        inline_union_decoder(item, &envelopes);
    }
    let impls = super::serde_impls::replace(file)?;
    Ok(impls
        .into_iter()
        .map(|(name, tokens)| {
            let tokens = if envelopes.contains(&name) {
                inline_decoder(tokens)
            } else {
                tokens
            };
            (name, tokens)
        })
        .collect())
}

/// The types that no method's params or result contains: the JSON-RPC envelopes (whole
/// requests, notifications and responses, the unions of them, their `method` constants)
/// and error shapes. Their decoders are `#[inline]` (see [`inline_decoder`]).
fn outside_methods(file: &syn::File, ir: &Ir) -> std::collections::BTreeSet<String> {
    use syn::visit::Visit;
    /// Every identifier in a type's fields or variants: the types it contains.
    #[derive(Default)]
    struct Names(std::collections::BTreeSet<String>);
    impl<'ast> Visit<'ast> for Names {
        fn visit_path_segment(&mut self, segment: &'ast syn::PathSegment) {
            self.0.insert(segment.ident.to_string());
            syn::visit::visit_path_segment(self, segment);
        }
    }
    let mut contains: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
    for item in &file.items {
        let mut names = Names::default();
        let name = match item {
            syn::Item::Struct(s) => {
                names.visit_fields(&s.fields);
                s.ident.to_string()
            }
            syn::Item::Enum(e) => {
                for v in &e.variants {
                    names.visit_fields(&v.fields);
                }
                e.ident.to_string()
            }
            syn::Item::Type(t) => {
                names.visit_type(&t.ty);
                t.ident.to_string()
            }
            _ => continue,
        };
        contains.entry(name).or_default().extend(names.0);
    }
    let mut reached = std::collections::BTreeSet::new();
    let mut pending: Vec<String> = ir
        .methods
        .iter()
        .flat_map(|m| m.params.iter().chain(m.result.iter()))
        .map(|def| rust_name(def))
        .collect();
    while let Some(name) = pending.pop() {
        if let Some(inner) = contains.get(&name) {
            if reached.insert(name) {
                pending.extend(inner.iter().filter(|n| !reached.contains(*n)).cloned());
            }
        }
    }
    contains
        .into_keys()
        .filter(|name| !reached.contains(name))
        .collect()
}

/// Conversions, `Display`, `Deref` and the unknown-keys accessors: a line or a match
/// each, but a function each in every build of the crate (about 900 of its 4,200 in a
/// debug build) unless `#[inline]`, which compiles them only where they are used.
const SMALL_IMPLS: [&str; 7] = [
    "From",
    "TryFrom",
    "FromStr",
    "Display",
    "Deref",
    "Default",
    "KeepsUnknownKeys",
];

/// Marks the methods of an impl of one of [`SMALL_IMPLS`] `#[inline]`.
fn inline_small_impl(item: &mut syn::Item) {
    let syn::Item::Impl(imp) = item else { return };
    let small = imp
        .trait_
        .as_ref()
        .and_then(|(_, path, _)| path.segments.last())
        .is_some_and(|s| SMALL_IMPLS.iter().any(|name| s.ident == name));
    if !small {
        return;
    }
    for member in &mut imp.items {
        if let syn::ImplItem::Fn(f) = member {
            if !f.attrs.iter().any(|a| a.path().is_ident("inline")) {
                f.attrs.push(syn::parse_quote!(#[inline]));
            }
        }
    }
}

/// [`inline_decoder`] for a union's decoder, already parsed (see [`union_deserialize`]).
fn inline_union_decoder(item: &mut syn::Item, envelopes: &std::collections::BTreeSet<String>) {
    let syn::Item::Impl(imp) = item else { return };
    let is_decoder = imp
        .trait_
        .as_ref()
        .and_then(|(_, path, _)| path.segments.last())
        .is_some_and(|s| s.ident == "FromValue");
    let syn::Type::Path(ty) = &*imp.self_ty else {
        return;
    };
    let named = ty
        .path
        .get_ident()
        .is_some_and(|i| envelopes.contains(&i.to_string()));
    if !is_decoder || !named {
        return;
    }
    for member in &mut imp.items {
        if let syn::ImplItem::Fn(f) = member {
            f.attrs.push(syn::parse_quote!(#[inline]));
        }
    }
}

/// Marks the `FromValue::from_value` in `tokens` `#[inline]`, so that it is compiled (in a
/// debug build too) only in the crates that call it. A server decodes a message's params
/// and result by method, never a whole envelope: a quarter of the crate's machine code was
/// envelope decoders no server calls (build time, BENCHMARKS.md §4.1).
fn inline_decoder(tokens: TokenStream) -> TokenStream {
    let text = tokens.to_string();
    if !text.contains("FromValue for") {
        return tokens;
    }
    text.replacen("fn from_value (", "# [inline] fn from_value (", 1)
        .parse()
        .unwrap_or(tokens)
}

fn is_discriminator_conversion(
    item: &syn::Item,
    discriminators: &std::collections::BTreeSet<String>,
) -> bool {
    let syn::Item::Impl(imp) = item else {
        return false;
    };
    let Some((_, path, _)) = &imp.trait_ else {
        return false;
    };
    let Some(last) = path.segments.last() else {
        return false;
    };
    let self_name = match &*imp.self_ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    };
    matches!(
        last.ident.to_string().as_str(),
        "Display" | "FromStr" | "TryFrom"
    ) && self_name.is_some_and(|n| discriminators.contains(&n))
}

/// `impl From<&T> for T` (a clone in disguise) is generated for every type.
fn is_self_ref_from(item: &syn::Item) -> bool {
    let syn::Item::Impl(imp) = item else {
        return false;
    };
    let Some((_, path, _)) = &imp.trait_ else {
        return false;
    };
    let Some(last) = path.segments.last() else {
        return false;
    };
    if last.ident != "From" {
        return false;
    }
    matches!(&last.arguments, syn::PathArguments::AngleBracketed(args)
        if matches!(args.args.first(), Some(syn::GenericArgument::Type(syn::Type::Reference(_)))))
}

fn is_error_module(item: &syn::Item) -> bool {
    matches!(item, syn::Item::Mod(m) if m.ident == "error")
}

struct ConversionErrorPath;

impl VisitMut for ConversionErrorPath {
    fn visit_path_mut(&mut self, path: &mut syn::Path) {
        let text: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if text == ["self", "error", "ConversionError"] {
            *path = syn::parse_quote!(crate::ConversionError);
            return;
        }
        syn::visit_mut::visit_path_mut(self, path);
    }
}

/// Field-level fixes: numbers keep their written form; optional maps and arrays keep the
/// difference between absent and empty.
struct FieldFixer;

impl VisitMut for FieldFixer {
    fn visit_type_mut(&mut self, ty: &mut syn::Type) {
        if let syn::Type::Path(p) = ty {
            if p.qself.is_none() && p.path.is_ident("f64") {
                *ty = syn::parse_quote!(::serde_json::Number);
                return;
            }
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }

    fn visit_field_mut(&mut self, field: &mut syn::Field) {
        syn::visit_mut::visit_field_mut(self, field);
        let mut is_empty_skip = false;
        for attr in &mut field.attrs {
            if !attr.path().is_ident("serde") {
                continue;
            }
            let text = attr.meta.to_token_stream_string();
            if text.contains("is_empty") {
                is_empty_skip = true;
                let rewritten = rewrite_is_empty(&text);
                if let Ok(meta) = syn::parse_str::<syn::Meta>(&rewritten) {
                    attr.meta = meta;
                }
            }
        }
        if is_empty_skip {
            let inner = field.ty.clone();
            field.ty = syn::parse_quote!(::std::option::Option<#inner>);
        }
    }
}

trait MetaText {
    fn to_token_stream_string(&self) -> String;
}

impl MetaText for syn::Meta {
    fn to_token_stream_string(&self) -> String {
        quote!(#self).to_string()
    }
}

/// `skip_serializing_if = "<Map|Vec>::is_empty"` → `"Option::is_none"`.
fn rewrite_is_empty(text: &str) -> String {
    let start = text.find("skip_serializing_if");
    match start {
        Some(start) => {
            let rest = &text[start..];
            let end = rest[rest.find('"').map_or(0, |i| i + 1)..]
                .find('"')
                .map(|i| start + rest.find('"').map_or(0, |j| j + 1) + i + 1)
                .unwrap_or(text.len());
            format!(
                "{}skip_serializing_if = \"::std::option::Option::is_none\"{}",
                &text[..start],
                &text[end..]
            )
        }
        None => text.to_owned(),
    }
}

fn is_single_unit_enum(e: &syn::ItemEnum) -> bool {
    e.variants.len() == 1
        && e.variants
            .iter()
            .all(|v| matches!(v.fields, syn::Fields::Unit))
}

/// The wire value of a unit variant: its `serde(rename)`, else its name.
fn variant_value(v: &syn::Variant) -> String {
    for attr in &v.attrs {
        if !attr.path().is_ident("serde") {
            continue;
        }
        let mut renamed = None;
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                let lit: syn::LitStr = meta.value()?.parse()?;
                renamed = Some(lit.value());
            }
            Ok(())
        });
        if let Some(r) = renamed {
            return r;
        }
    }
    v.ident.to_string()
}

/// A one-value enum (a `const` discriminator such as `method` or `type`) becomes a unit
/// struct that always writes its value and accepts nothing else. It defaults to itself,
/// so messages can be built with `..Default::default()`. Hand-written serde impls through
/// shared helpers instead of derived ones: several hundred of these exist across the
/// revisions and derived enum visitors dominated the crate's build time.
fn discriminator(e: &syn::ItemEnum) -> Vec<syn::Item> {
    let name = &e.ident;
    let value = e.variants.first().map(variant_value).unwrap_or_default();
    let docs: Vec<&syn::Attribute> = e
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .collect();
    let doc = format!("Always `{value:?}`.");
    let file: syn::File = syn::parse_quote! {
        #(#docs)*
        #[doc = ""]
        #[doc = #doc]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct #name;
        impl #name {
            /// The value on the wire.
            pub const VALUE: &'static str = #value;
        }
        impl ::serde::Serialize for #name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
                serializer.serialize_str(#value)
            }
        }
        impl<'de> ::serde::Deserialize<'de> for #name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
                crate::support::expect_const(deserializer, #value).map(|()| Self)
            }
        }
    };
    file.items
}

fn remove_derive(attrs: &mut [syn::Attribute], name: &str) {
    for attr in attrs.iter_mut() {
        if !attr.path().is_ident("derive") {
            continue;
        }
        let Ok(paths) = attr.parse_args_with(
            syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
        ) else {
            continue;
        };
        let kept: Vec<&syn::Path> = paths
            .iter()
            .filter(|p| p.segments.last().is_none_or(|s| s.ident != name))
            .collect();
        *attr = syn::parse_quote!(#[derive(#(#kept),*)]);
    }
}

/// Variant ident and the last path segment of its single field's type.
fn variants(e: &syn::ItemEnum) -> Vec<(syn::Ident, String)> {
    e.variants
        .iter()
        .filter_map(|v| {
            let syn::Fields::Unnamed(f) = &v.fields else {
                return None;
            };
            let ty = &f.unnamed.first()?.ty;
            let name = match ty {
                syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string())?,
                _ => String::new(),
            };
            Some((v.ident.clone(), name))
        })
        .collect()
}

fn union_deserialize(e: &syn::ItemEnum, dispatch: &Dispatch) -> TokenStream {
    let name = &e.ident;
    let vars = variants(e);
    let variant_of = |member: &str| -> Option<syn::Ident> {
        let want = loose(&rust_name(member));
        vars.iter()
            .find(|(_, ty)| loose(ty) == want)
            .map(|(v, _)| v.clone())
    };
    let object_members: Vec<String> = match dispatch {
        Dispatch::Tag { cases, default, .. } => cases
            .iter()
            .map(|(_, m)| m.clone())
            .chain(default.clone())
            .collect(),
        Dispatch::BestMatch { members } => members.iter().map(|m| m.name.clone()).collect(),
        Dispatch::Untagged => Vec::new(),
    };
    let object_idents: Vec<syn::Ident> = object_members
        .iter()
        .filter_map(|m| variant_of(m))
        .collect();
    // Variants that hold non-object values (batches, plain arrays): tried in order.
    let other: Vec<&syn::Ident> = vars
        .iter()
        .map(|(v, _)| v)
        .filter(|v| !object_idents.contains(v))
        .collect();
    let non_object = if other.is_empty() {
        quote! { ::std::result::Result::Err(crate::support::not_an_object(&value)) }
    } else {
        // In order, each on a copy but the last, which takes the value itself (no later
        // member needs it); the last error is kept, as before.
        match other.split_first() {
            Some((only, [])) => quote! { crate::support::member(value).map(Self::#only) },
            Some((first, rest)) => {
                let (last, middle) = rest.split_last().unwrap_or((first, &[]));
                quote! {
                    crate::support::member(value.clone()).map(Self::#first)
                        #( .or_else(|_| crate::support::member(value.clone()).map(Self::#middle)) )*
                        .or_else(|_| crate::support::member(value).map(Self::#last))
                }
            }
            None => quote! { ::std::result::Result::Err(crate::support::not_an_object(&value)) },
        }
    };
    let object = match dispatch {
        Dispatch::Tag {
            key,
            cases,
            default,
        } => {
            let arms = cases.iter().filter_map(|(tag, m)| {
                let v = variant_of(m)?;
                Some(quote! { #tag => match crate::support::member(value) { ::std::result::Result::Ok(m) => ::std::result::Result::Ok(Self::#v(m)), ::std::result::Result::Err(e) => ::std::result::Result::Err(e) }, })
            });
            let tags: Vec<&String> = cases.iter().map(|(t, _)| t).collect();
            let fallback = match default.as_ref().and_then(|d| variant_of(d)) {
                Some(v) => {
                    quote! { _ => match crate::support::member(value) { ::std::result::Result::Ok(m) => ::std::result::Result::Ok(Self::#v(m)), ::std::result::Result::Err(e) => ::std::result::Result::Err(e) }, }
                }
                None => quote! {
                    other => ::std::result::Result::Err(crate::support::unknown_tag(#key, other, &[#(#tags),*])),
                },
            };
            let tag_expr = if default.is_some() {
                quote! { crate::support::tag_or_empty(&value, #key)? }
            } else {
                quote! { crate::support::tag(&value, #key)? }
            };
            quote! {
                match #tag_expr {
                    #(#arms)*
                    #fallback
                }
            }
        }
        Dispatch::BestMatch { members } => {
            let shapes = members.iter().map(|m| {
                let required = &m.required;
                let declared = &m.declared;
                let const_keys = m.consts.iter().map(|(k, _)| k);
                let const_values = m.consts.iter().map(|(_, v)| quote!(&[#(#v),*]));
                quote! {
                    crate::support::Shape {
                        required: &[#(#required),*],
                        declared: &[#(#declared),*],
                        consts: &[#((#const_keys, #const_values)),*],
                    }
                }
            });
            let arms = members.iter().enumerate().filter_map(|(i, m)| {
                let v = variant_of(&m.name)?;
                Some(quote! { #i => match crate::support::member(crate::support::candidate(&mut value, position + 1 == count)) { ::std::result::Result::Ok(m) => ::std::result::Result::Ok(Self::#v(m)), ::std::result::Result::Err(e) => ::std::result::Result::Err(e) }, })
            });
            quote! {
                const SHAPES: &[crate::support::Shape] = &[#(#shapes),*];
                // Best fit first; the next fitting member only if it fails to decode
                // (shapes that agree on keys can still differ deeper down). Each
                // candidate but the last decodes a copy; the last takes the value itself
                // (usually the only one whose required keys are all present).
                let order = crate::support::ranked(&value, SHAPES);
                let count = order.len();
                let mut value = ::std::option::Option::Some(value);
                let mut error = ::std::option::Option::None;
                for (position, index) in order.into_iter().enumerate() {
                    let attempt = match index {
                        #(#arms)*
                        _ => continue,
                    };
                    match attempt {
                        ::std::result::Result::Ok(parsed) => return ::std::result::Result::Ok(parsed),
                        ::std::result::Result::Err(e) => {
                            error.get_or_insert(e);
                        }
                    }
                }
                ::std::result::Result::Err(crate::support::first_error(error, value))
            }
        }
        Dispatch::Untagged => {
            quote! { ::std::result::Result::Err(crate::support::not_an_object(&value)) }
        }
    };
    quote! {
        impl crate::support::FromValue for #name {
            fn from_value(value: ::serde_json::Value) -> ::std::result::Result<Self, crate::support::DispatchError> {
                if !value.is_object() {
                    return #non_object;
                }
                #object
            }
        }
        impl<'de> ::serde::Deserialize<'de> for #name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
                crate::support::deserialize(deserializer)
            }
        }
    }
}
