//! Authorization for the HTTP transport: the server as an OAuth 2.1 resource server, in
//! every revision that has an authorization framework (2025-03-26 and later; a
//! 2024-11-05 client over HTTP+SSE is held to the same tokens).
//!
//! - [`ResourceServer`] is the one setting
//!   ([`HttpConfig::authorization`](crate::HttpConfig::authorization)):
//!   canonical resource URI, authorization servers, scopes (per server and per tool),
//!   and a [`TokenVerifier`]. Without it nothing changes; stdio never uses it (the
//!   specification has stdio servers take credentials from the environment).
//! - On the wire: Protected Resource Metadata (RFC 9728) at
//!   `/.well-known/oauth-protected-resource` and its path-suffixed form; 401 with
//!   `WWW-Authenticate: Bearer resource_metadata=…, scope=…` without a token, 401
//!   `invalid_token`, 403 `insufficient_scope`, 400 `invalid_request` (RFC 6750); 503 when
//!   tokens cannot be verified; the authorization server's metadata mirrored at
//!   `/.well-known/oauth-authorization-server` for 2025-03-26 clients.
//! - The caller is a [`Principal`](mcp_runtime::auth::Principal) on the handler's [`Context`](mcp_runtime::Context); a legacy
//!   session and a 2026-07-28 `requestState` are bound to the principal that opened them.
//! - Feature `auth`: [`AuthorizationServer::discover`], [`JwtVerifier`] (JWKS) and
//!   [`IntrospectionVerifier`] (RFC 7662).

pub use crate::authorize::{metadata_router, AuthorizationLayer, RequireAuthorization};

mod config;
mod jws;
mod verifier;
pub(crate) use config::WELL_KNOWN_RESOURCE;
pub use config::{ConfigError, ResourceServer, ResourceServerBuilder, MIRRORED_MEMBERS};
#[doc(hidden)]
pub use jws::fuzz_token;
pub use verifier::{BoxFuture, TokenVerifier, VerifyError};

#[cfg(feature = "auth")]
mod discovery;
#[cfg(feature = "auth")]
mod fetch;
#[cfg(feature = "auth")]
mod introspection;
#[cfg(feature = "auth")]
mod jwks;
#[cfg(feature = "auth")]
mod jwt;
#[cfg(feature = "auth")]
#[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
pub use discovery::{AuthorizationServer, DiscoveryError};
#[cfg(feature = "auth")]
#[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
pub use introspection::{IntrospectionVerifier, IntrospectionVerifierBuilder};
#[cfg(feature = "auth")]
#[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
pub use jwt::{ByIssuer, JwtVerifier, JwtVerifierBuilder};
