//! Who is calling: the [`Principal`] an HTTP transport's resource server verified, as a
//! handler reads it with [`Context::principal`](crate::Context::principal). The resource
//! server itself (metadata, tokens, verifiers) is `mcp-runtime-http`'s `auth` module.

mod principal;
pub use principal::Principal;
