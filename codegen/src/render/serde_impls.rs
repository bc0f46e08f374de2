//! Replaces typify's `#[derive(Serialize, Deserialize)]` and `#[serde(...)]` attributes with
//! impls written out here. Decoding goes through `crate::support::FromValue`: one plain
//! (non-generic) function per type, so nothing is compiled again in the crates that use
//! the types, and the generated crate needs no proc macro (serde_derive, syn) to build.
//! The impls keep serde's derived behaviour on the wire: same keys, same skipping, same
//! error messages for the `serde_json::Value` decoding the runtime does.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// What the `#[serde(...)]` attributes of a field say.
#[derive(Default)]
struct FieldAttrs {
    rename: Option<String>,
    skip_if_none: bool,
    default: bool,
    flatten: bool,
    /// `deserialize_with = "Option::deserialize"`: `null` allowed, but the key required.
    required_nullable: bool,
}

/// Where a `#[serde(...)]` attribute stands, and what the impls written here understand
/// there. Anything else typify writes is an error naming the type: an attribute dropped
/// without its meaning would change the wire silently.
#[derive(Clone, Copy)]
enum Place {
    Container,
    Field,
    Variant,
}

impl Place {
    fn understood(self) -> &'static [&'static str] {
        match self {
            // `transparent`: tuple newtypes; `untagged`: unions of types. Typify's
            // `deny_unknown_fields` is not emitted with these settings (types keep unknown
            // keys in `extra` or drop them, by design: see ARCHITECTURE.md).
            Place::Container => &["transparent", "untagged"],
            Place::Field => &[
                "rename",
                "skip_serializing_if",
                "deserialize_with",
                "default",
                "flatten",
            ],
            Place::Variant => &["rename"],
        }
    }

    fn name(self) -> &'static str {
        match self {
            Place::Container => "type",
            Place::Field => "field",
            Place::Variant => "variant",
        }
    }
}

/// Reads the `#[serde(...)]` attributes at `place`; an attribute the impls do not
/// understand, or one they understand with a value they do not, is an error.
fn serde_attrs(
    attrs: &[syn::Attribute],
    place: Place,
) -> std::result::Result<(FieldAttrs, BTreeSet<String>), String> {
    let mut out = FieldAttrs::default();
    let mut flags = BTreeSet::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            if !place.understood().contains(&key.as_str()) {
                return Err(meta.error(format!(
                    "`#[serde({key})]` on a {} is not written out by serde_impls.rs",
                    place.name()
                )));
            }
            match key.as_str() {
                "rename" => {
                    let lit: syn::LitStr = meta.value()?.parse()?;
                    out.rename = Some(lit.value());
                }
                "skip_serializing_if" => {
                    let lit: syn::LitStr = meta.value()?.parse()?;
                    if !lit.value().ends_with("::is_none") {
                        return Err(meta.error(format!(
                            "`skip_serializing_if = \"{}\"`: only `Option::is_none` is written out",
                            lit.value()
                        )));
                    }
                    out.skip_if_none = true;
                }
                "deserialize_with" => {
                    let lit: syn::LitStr = meta.value()?.parse()?;
                    if !lit.value().ends_with("Option::deserialize") {
                        return Err(meta.error(format!(
                            "`deserialize_with = \"{}\"`: only `Option::deserialize` is written out",
                            lit.value()
                        )));
                    }
                    out.required_nullable = true;
                }
                "default" => {
                    if meta.input.peek(syn::Token![=]) {
                        return Err(meta.error("`default = ...`: only a plain `default` is written out"));
                    }
                    out.default = true;
                }
                "flatten" => out.flatten = true,
                // `transparent`, `untagged`: flags, read from the returned set.
                _ => {}
            }
            flags.insert(key);
            Ok(())
        })
        .map_err(|e| e.to_string())?;
    }
    Ok((out, flags))
}

/// Names of the types that have an impl of `trait_name` in the file.
fn implementors(file: &syn::File, trait_name: &str) -> BTreeSet<String> {
    file.items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Impl(imp) => {
                let (_, path, _) = imp.trait_.as_ref()?;
                if path.segments.last()?.ident != trait_name {
                    return None;
                }
                match &*imp.self_ty {
                    syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
                    _ => None,
                }
            }
            _ => None,
        })
        .collect()
}

/// Removes the serde derives and attributes of every type in the file and writes the
/// impls instead. Types whose `Deserialize` is already hand-written (typify's checked
/// newtypes, discriminators) get a `FromValue` that uses it, unless they have one.
///
/// The impls are returned as tokens, each with the name of its type, in the order they
/// belong after the file's items; they are not parsed here. Parsing them was the largest
/// cost of a run, and the copies of a type that [`share`](super::share) finds identical in
/// several revisions are printed once, so only those printed are ever parsed.
///
/// A `#[serde(...)]` attribute these impls do not write out is an error naming the type
/// (dropping it would silently change the type's wire form).
pub fn replace(file: &mut syn::File) -> std::result::Result<Vec<(String, TokenStream)>, String> {
    let has_from_value = implementors(file, "FromValue");
    let manual_de: BTreeSet<String> = implementors(file, "Deserialize")
        .into_iter()
        .filter(|n| !has_from_value.contains(n))
        .collect();
    let mut extra = Vec::new();
    for item in &mut file.items {
        let (attrs, name) = match item {
            syn::Item::Struct(s) => (&mut s.attrs, s.ident.to_string()),
            syn::Item::Enum(e) => (&mut e.attrs, e.ident.to_string()),
            _ => continue,
        };
        let ser = take_derive(attrs, "Serialize");
        let de = take_derive(attrs, "Deserialize");
        let in_type = |e: String| format!("type `{name}`: {e}");
        let (_, container) = serde_attrs(attrs, Place::Container).map_err(in_type)?;
        attrs.retain(|a| !a.path().is_ident("serde"));
        match item {
            syn::Item::Struct(s) => {
                extra.extend(
                    struct_impls(s, ser, de, &container)
                        .map_err(in_type)?
                        .into_iter()
                        .map(|t| (name.clone(), t)),
                );
                for field in &mut s.fields {
                    field.attrs.retain(|a| !a.path().is_ident("serde"));
                }
            }
            syn::Item::Enum(e) => {
                extra.extend(
                    enum_impls(e, ser, de, &container)
                        .map_err(in_type)?
                        .into_iter()
                        .map(|t| (name.clone(), t)),
                );
                for v in &mut e.variants {
                    v.attrs.retain(|a| !a.path().is_ident("serde"));
                }
            }
            _ => {}
        }
        if !de && manual_de.contains(&name) {
            let ident = format_ident!("{}", name);
            extra.push((
                name,
                quote! {
                    impl crate::support::FromValue for #ident {
                        fn from_value(value: ::serde_json::Value) -> ::std::result::Result<Self, crate::support::DispatchError> {
                            crate::support::via_serde(value)
                        }
                    }
                },
            ));
        }
    }
    Ok(extra)
}

/// Removes `name` from the item's derives; whether it was there.
fn take_derive(attrs: &mut [syn::Attribute], name: &str) -> bool {
    let mut found = false;
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
            .filter(|p| {
                let hit = p.segments.last().is_some_and(|s| s.ident == name);
                found |= hit;
                !hit
            })
            .collect();
        *attr = syn::parse_quote!(#[derive(#(#kept),*)]);
    }
    found
}

fn is_option(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p)
        if p.path.segments.last().is_some_and(|s| s.ident == "Option"))
}

/// The `Deserialize` every generated type gets: through `FromValue`.
fn deserialize_impl(name: &syn::Ident) -> TokenStream {
    quote! {
        impl<'de> ::serde::Deserialize<'de> for #name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
                crate::support::deserialize(deserializer)
            }
        }
    }
}

fn struct_impls(
    s: &syn::ItemStruct,
    ser: bool,
    de: bool,
    container: &BTreeSet<String>,
) -> std::result::Result<Vec<TokenStream>, String> {
    let name = &s.ident;
    let mut out = Vec::new();
    if let syn::Fields::Unnamed(_) = &s.fields {
        // `#[serde(transparent)]` newtypes, the only tuple structs typify emits.
        debug_assert!(container.contains("transparent"));
        if ser {
            out.push(quote! {
                impl ::serde::Serialize for #name {
                    fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
                        ::serde::Serialize::serialize(&self.0, serializer)
                    }
                }
            });
        }
        if de {
            out.push(quote! {
                impl crate::support::FromValue for #name {
                    fn from_value(value: ::serde_json::Value) -> ::std::result::Result<Self, crate::support::DispatchError> {
                        match crate::support::from_value(value) {
                            ::std::result::Result::Ok(inner) => ::std::result::Result::Ok(Self(inner)),
                            ::std::result::Result::Err(e) => ::std::result::Result::Err(e),
                        }
                    }
                }
            });
            out.push(deserialize_impl(name));
        }
        return Ok(out);
    }
    let fields: Vec<(&syn::Field, FieldAttrs)> = s
        .fields
        .iter()
        .map(|f| {
            serde_attrs(&f.attrs, Place::Field)
                .map(|(a, _)| (f, a))
                .map_err(|e| {
                    let field = f
                        .ident
                        .as_ref()
                        .map(ToString::to_string)
                        .unwrap_or_default();
                    format!("field `{field}`: {e}")
                })
        })
        .collect::<std::result::Result<_, _>>()?;
    let wire = |f: &syn::Field, a: &FieldAttrs| {
        a.rename.clone().unwrap_or_else(|| {
            f.ident
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default()
        })
    };
    let flatten = fields
        .iter()
        .find(|(_, a)| a.flatten)
        .map(|(f, _)| &f.ident);
    let declared: Vec<_> = fields.iter().filter(|(_, a)| !a.flatten).collect();
    let type_name = name.to_string();
    if ser {
        let body = if let Some(rest) = flatten {
            // As serde does for a struct with a flattened field: a map of unknown length.
            let entries = declared.iter().map(|(f, a)| {
                let key = wire(f, a);
                let ident = &f.ident;
                if a.skip_if_none {
                    quote! {
                        if self.#ident.is_some() {
                            state.serialize_entry(#key, &self.#ident)?;
                        }
                    }
                } else {
                    quote! { state.serialize_entry(#key, &self.#ident)?; }
                }
            });
            quote! {
                use ::serde::ser::SerializeMap as _;
                let mut state = serializer.serialize_map(::std::option::Option::None)?;
                #(#entries)*
                for (key, value) in &self.#rest {
                    state.serialize_entry(key, value)?;
                }
                state.end()
            }
        } else {
            let always = declared.iter().filter(|(_, a)| !a.skip_if_none).count();
            let optional = declared
                .iter()
                .filter(|(_, a)| a.skip_if_none)
                .map(|(f, _)| &f.ident);
            // This body is compiled once per serializer in every crate that encodes the
            // type, so it stays small: presence tested with `matches!` (no `is_some` call),
            // the length counted by one plain function (no overflow check per member), and
            // no `?` (a `Try::branch` and a `from_residual` call per member in a debug
            // build). An absent member is not announced with `skip_field`: JSON
            // serializers ignore it (serde's default does nothing), and these are JSON types.
            let entries = declared.iter().map(|(f, a)| {
                let key = wire(f, a);
                let ident = &f.ident;
                let write = quote! {
                    if let ::std::result::Result::Err(e) = state.serialize_field(#key, &self.#ident) {
                        return ::std::result::Result::Err(e);
                    }
                };
                if a.skip_if_none {
                    quote! {
                        if ::std::matches!(self.#ident, ::std::option::Option::Some(_)) {
                            #write
                        }
                    }
                } else {
                    write
                }
            });
            quote! {
                use ::serde::ser::SerializeStruct as _;
                let len = crate::support::present(#always, &[#( ::std::matches!(self.#optional, ::std::option::Option::Some(_)) ),*]);
                let mut state = match serializer.serialize_struct(#type_name, len) {
                    ::std::result::Result::Ok(state) => state,
                    ::std::result::Result::Err(e) => return ::std::result::Result::Err(e),
                };
                #(#entries)*
                state.end()
            }
        };
        out.push(quote! {
            impl ::serde::Serialize for #name {
                fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
                    #body
                }
            }
        });
    }
    if de {
        let expecting = format!("struct {type_name}");
        let positional = if flatten.is_some() {
            quote!(::std::option::Option::None)
        } else {
            let keys = declared.iter().map(|(f, a)| wire(f, a));
            quote!(::std::option::Option::Some(&[#(#keys),*]))
        };
        // Locals are numbered: a field may be called `key` or `value`.
        let local = |i: usize| format_ident!("field{}", i);
        // A required `_meta` (the 2026-07-28 request params): such a struct also decodes
        // from params whose `_meta` was taken out at parse time and decoded apart
        // (`support::FromParams`); its local starts as the `_meta` given.
        let required = |f: &syn::Field, a: &FieldAttrs| {
            a.required_nullable || !(a.default || is_option(&f.ty))
        };
        let required_meta = declared
            .iter()
            .position(|(f, a)| wire(f, a) == "_meta" && required(f, a));
        // Each member's slot is typed: `support::fill` sees it only as a `dyn Slot`.
        // An optional `Option` member is its own slot (`support::Member`: absent or null
        // is `None`), so that building the struct moves it without an `unwrap_or_default`
        // call; the other members' slots are `Option`s of their type.
        let own_slot = |f: &syn::Field, a: &FieldAttrs| is_option(&f.ty) && !a.required_nullable;
        let locals = declared.iter().enumerate().map(|(i, (f, a))| {
            let l = local(i);
            let ty = &f.ty;
            if Some(i) == required_meta {
                quote! { let mut #l: ::std::option::Option<#ty> = meta; }
            } else if own_slot(f, a) {
                quote! { let mut #l: crate::support::Member<#ty> = crate::support::Member(::std::option::Option::None); }
            } else {
                quote! { let mut #l: ::std::option::Option<#ty> = ::std::option::Option::None; }
            }
        });
        let keys = declared.iter().map(|(f, a)| wire(f, a));
        let slots = (0..declared.len()).map(|i| {
            let l = local(i);
            quote! { &mut #l }
        });
        let rest_local = flatten.map(|_| {
            quote! { let mut rest = ::serde_json::Map::new(); }
        });
        let rest_arg = match flatten {
            Some(_) => quote!(::std::option::Option::Some(&mut rest)),
            None => quote!(::std::option::Option::None),
        };
        let mut index = 0;
        let inits: Vec<TokenStream> = fields
            .iter()
            .map(|(f, a)| {
                let ident = &f.ident;
                if a.flatten {
                    return quote! { #ident: rest };
                }
                let l = local(index);
                index += 1;
                if a.required_nullable || !(a.default || is_option(&f.ty)) {
                    quote! { #ident: #l }
                } else if own_slot(f, a) {
                    quote! { #ident: #l.0 }
                } else {
                    quote! { #ident: #l.unwrap_or_default() }
                }
            })
            .collect();
        // Required fields are unwrapped before the struct is built. No `?` and no
        // `Result::map` here: each would instantiate a generic function per type.
        let mut index = 0;
        let checks: Vec<TokenStream> = fields
            .iter()
            .filter(|(_, a)| !a.flatten)
            .filter_map(|(f, a)| {
                let l = local(index);
                index += 1;
                (a.required_nullable || !(a.default || is_option(&f.ty))).then(|| {
                    let key = wire(f, a);
                    quote! {
                        let ::std::option::Option::Some(#l) = #l else {
                            return ::std::result::Result::Err(crate::support::missing_field(#key));
                        };
                    }
                })
            })
            .collect();
        let body = if declared.is_empty() && flatten.is_none() {
            quote! {
                match crate::support::object(value, #expecting, #positional) {
                    ::std::result::Result::Ok(_) => ::std::result::Result::Ok(Self {}),
                    ::std::result::Result::Err(e) => ::std::result::Result::Err(e),
                }
            }
        } else {
            // The members are sorted into their slots by one non-generic function
            // (`support::fill`), not by a loop and a key match in each decoder.
            quote! {
                    #(#locals)*
                    #rest_local
                    if let ::std::result::Result::Err(e) = crate::support::fill(
                        value,
                        #expecting,
                        #positional,
                        &[#(#keys),*],
                        &mut [#(#slots),*],
                        #rest_arg,
                    ) {
                        return ::std::result::Result::Err(e);
                    }
                    #(#checks)*
                    ::std::result::Result::Ok(Self { #(#inits),* })
            }
        };
        match required_meta.and_then(|i| declared.get(i)) {
            Some((meta, _)) => {
                let meta_type = &meta.ty;
                out.push(quote! {
                    impl crate::support::FromParams for #name {
                        type Meta = #meta_type;
                        fn from_params(value: ::serde_json::Value, meta: ::std::option::Option<#meta_type>) -> ::std::result::Result<Self, crate::support::DispatchError> {
                            #body
                        }
                    }
                    impl crate::support::FromValue for #name {
                        fn from_value(value: ::serde_json::Value) -> ::std::result::Result<Self, crate::support::DispatchError> {
                            <Self as crate::support::FromParams>::from_params(value, ::std::option::Option::None)
                        }
                    }
                });
            }
            None => out.push(quote! {
                impl crate::support::FromValue for #name {
                    fn from_value(value: ::serde_json::Value) -> ::std::result::Result<Self, crate::support::DispatchError> {
                        #body
                    }
                }
            }),
        }
        out.push(deserialize_impl(name));
    }
    Ok(out)
}

fn enum_impls(
    e: &syn::ItemEnum,
    ser: bool,
    de: bool,
    container: &BTreeSet<String>,
) -> std::result::Result<Vec<TokenStream>, String> {
    let name = &e.ident;
    let type_name = name.to_string();
    let mut out = Vec::new();
    let idents: Vec<&syn::Ident> = e.variants.iter().map(|v| &v.ident).collect();
    if container.contains("untagged") {
        // Newtype variants only (unions of types); each written as its member.
        if ser {
            out.push(quote! {
                impl ::serde::Serialize for #name {
                    fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
                        match self {
                            #(Self::#idents(inner) => ::serde::Serialize::serialize(inner, serializer),)*
                        }
                    }
                }
            });
        }
        if de {
            // As serde's untagged enums: the first member that decodes, in order. Each
            // member but the last decodes a copy; the last takes the value itself.
            let body = match idents.split_last() {
                Some((last, earlier)) => quote! {
                    #(
                        if let ::std::result::Result::Ok(inner) = crate::support::from_value(value.clone()) {
                            return ::std::result::Result::Ok(Self::#earlier(inner));
                        }
                    )*
                    if let ::std::result::Result::Ok(inner) = crate::support::from_value(value) {
                        return ::std::result::Result::Ok(Self::#last(inner));
                    }
                    ::std::result::Result::Err(crate::support::no_variant(#type_name))
                },
                None => quote! {
                    ::std::result::Result::Err(crate::support::no_variant(#type_name))
                },
            };
            out.push(quote! {
                impl crate::support::FromValue for #name {
                    fn from_value(value: ::serde_json::Value) -> ::std::result::Result<Self, crate::support::DispatchError> {
                        #body
                    }
                }
            });
            out.push(deserialize_impl(name));
        }
        return Ok(out);
    }
    // Unit variants: a string enum.
    let values: Vec<String> = e
        .variants
        .iter()
        .map(|v| {
            serde_attrs(&v.attrs, Place::Variant)
                .map(|(a, _)| a.rename.unwrap_or_else(|| v.ident.to_string()))
                .map_err(|err| format!("variant `{}`: {err}", v.ident))
        })
        .collect::<std::result::Result<_, _>>()?;
    if ser {
        let indices = (0..values.len()).map(|i| u32::try_from(i).unwrap_or(u32::MAX));
        out.push(quote! {
            impl ::serde::Serialize for #name {
                fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
                    let (index, value) = match self {
                        #(Self::#idents => (#indices, #values),)*
                    };
                    serializer.serialize_unit_variant(#type_name, index, value)
                }
            }
        });
    }
    if de {
        let last = idents.last();
        let first = &idents[..idents.len().saturating_sub(1)];
        let indices = 0..first.len();
        out.push(quote! {
            impl crate::support::FromValue for #name {
                fn from_value(value: ::serde_json::Value) -> ::std::result::Result<Self, crate::support::DispatchError> {
                    ::std::result::Result::Ok(match crate::support::variant(value, &[#(#values),*])? {
                        #(#indices => Self::#first,)*
                        _ => Self::#last,
                    })
                }
            }
        });
        out.push(deserialize_impl(name));
    }
    Ok(out)
}
