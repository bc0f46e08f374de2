//! `methods.rs` of a revision: one marker type per method (`METHOD`, `Params`, `Result`),
//! the method table for look-up by string, and result parsing by method.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::ir::{Direction, Ir, Kind, Method};
use crate::render::types::rust_name;

/// The marker type name of a method: its message definition without the suffix
/// (`CallToolRequest` → `CallTool`).
pub fn marker_name(method: &Method) -> String {
    let m = &method.message;
    m.strip_suffix("Request")
        .or_else(|| m.strip_suffix("Notification"))
        .filter(|s| !s.is_empty())
        .unwrap_or(m)
        .to_owned()
}

fn ty(name: &str) -> TokenStream {
    let ident = format_ident!("{}", rust_name(name));
    quote!(super::#ident)
}

fn direction(d: Direction) -> TokenStream {
    match d {
        Direction::ClientToServer => quote!(crate::Direction::ClientToServer),
        Direction::ServerToClient => quote!(crate::Direction::ServerToClient),
        Direction::Both => quote!(crate::Direction::Both),
    }
}

/// One method's marker type (with its `Method` and `Request`/`Notification` impls) and its
/// `MethodInfo` table entry; shared by the revisions' and the extensions' method modules.
pub(crate) fn marker_and_info(m: &Method) -> (proc_macro2::Ident, TokenStream, TokenStream) {
    let marker = format_ident!("{}", marker_name(m));
    let name = &m.name;
    let dir = direction(m.direction);
    let message = ty(&m.message);
    let params =
        m.params.as_deref().map(ty).unwrap_or_else(
            || quote!(::serde_json::Map<::std::string::String, ::serde_json::Value>),
        );
    let params_required = m.params_required;
    let doc = format!(
        "`{name}` ({}, {}).",
        match m.kind {
            Kind::Request => "request",
            Kind::Notification => "notification",
        },
        m.direction.as_str()
    );
    let kind_impl = match (&m.kind, &m.result) {
        (Kind::Request, Some(result)) => {
            let result = ty(result);
            quote! { impl crate::Request for #marker { type Result = #result; } }
        }
        _ => quote! { impl crate::Notification for #marker {} },
    };
    let marker_tokens = quote! {
        #[doc = #doc]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct #marker;
        impl crate::Method for #marker {
            const METHOD: &'static str = #name;
            const DIRECTION: crate::Direction = #dir;
            const PARAMS_REQUIRED: bool = #params_required;
            type Params = #params;
            type Message = #message;
        }
        #kind_impl
    };
    let kind = match m.kind {
        Kind::Request => quote!(crate::Kind::Request),
        Kind::Notification => quote!(crate::Kind::Notification),
    };
    let message_name = &m.message;
    let params_name = opt_str(m.params.as_deref());
    let result_name = opt_str(m.result.as_deref());
    let info = quote! {
        crate::MethodInfo {
            name: #name,
            kind: #kind,
            direction: #dir,
            message: #message_name,
            params: #params_name,
            params_required: #params_required,
            result: #result_name,
        },
    };
    (marker, marker_tokens, info)
}

/// Renders the method module.
pub fn render(ir: &Ir) -> TokenStream {
    let mut markers = Vec::new();
    let mut infos = Vec::new();
    let mut lookups = Vec::new();
    let mut typed_lookups = Vec::new();
    for (index, m) in ir.methods.iter().enumerate() {
        let (marker, marker_tokens, info) = marker_and_info(m);
        markers.push(marker_tokens);
        infos.push(info);
        let name = &m.name;
        lookups.push(quote! { #name => ::std::option::Option::Some(&METHODS[#index]), });
        typed_lookups.push(
            quote! { crate::McpMethod::#marker => ::std::option::Option::Some(&METHODS[#index]), },
        );
    }

    let result_types: BTreeSet<&str> = ir
        .methods
        .iter()
        .filter_map(|m| m.result.as_deref())
        .collect();
    let result_variants: Vec<_> = result_types
        .iter()
        .map(|r| {
            let v = format_ident!("{}", rust_name(r));
            let t = ty(r);
            quote! { #[allow(missing_docs)] #v(#t), }
        })
        .collect();
    let result_idents: Vec<_> = result_types
        .iter()
        .map(|r| format_ident!("{}", rust_name(r)))
        .collect();
    let parse_arms = ir.methods.iter().filter_map(|m| {
        let result = m.result.as_deref()?;
        let name = &m.name;
        let v = format_ident!("{}", rust_name(result));
        Some(quote! {
            #name => match crate::support::from_value(value) { ::std::result::Result::Ok(r) => ::std::result::Result::Ok(AnyResult::#v(r)), ::std::result::Result::Err(e) => ::std::result::Result::Err(e) },
        })
    });
    let count = ir.methods.len();
    quote! {
        #(#markers)*

        /// Every method of this revision, sorted by name.
        pub const METHODS: [crate::MethodInfo; #count] = [#(#infos)*];

        /// Looks a method up by its wire name.
        // `#[inline]` (here and on `parse_result`): the runtime does not call it, so a
        // build compiles it only where something does (build time, BENCHMARKS.md §4.1).
        #[inline]
        pub fn method(name: &str) -> ::std::option::Option<&'static crate::MethodInfo> {
            match name {
                #(#lookups)*
                _ => ::std::option::Option::None,
            }
        }

        /// This revision's row for a method of any revision (`None`: not defined here).
        pub fn method_of(method: crate::McpMethod) -> ::std::option::Option<&'static crate::MethodInfo> {
            #[allow(unreachable_patterns)]
            match method {
                #(#typed_lookups)*
                _ => ::std::option::Option::None,
            }
        }

        /// The result of any request of this revision.
        #[derive(Clone, Debug, PartialEq)]
        pub enum AnyResult {
            #(#result_variants)*
        }

        impl ::serde::Serialize for AnyResult {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
                match self {
                    #(AnyResult::#result_idents(inner) => ::serde::Serialize::serialize(inner, serializer),)*
                }
            }
        }

        /// Parses a result by the method of the request it answers (a result carries no
        /// discriminator of its own). `None` if `method` is not a request of this revision.
        #[inline]
        pub fn parse_result(
            method: &str,
            value: ::serde_json::Value,
        ) -> ::std::option::Option<::std::result::Result<AnyResult, ::serde_json::Error>> {
            let parsed = match method {
                #(#parse_arms)*
                _ => return ::std::option::Option::None,
            };
            ::std::option::Option::Some(parsed.map_err(<::serde_json::Error as ::serde::de::Error>::custom))
        }
    }
}

fn opt_str(s: Option<&str>) -> TokenStream {
    match s {
        Some(s) => quote!(::std::option::Option::Some(#s)),
        None => quote!(::std::option::Option::None),
    }
}
