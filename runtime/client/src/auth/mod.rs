//! OAuth 2.1 for the client's HTTP transports: what [`OAuth`] configures, and the hooks an
//! application plugs in (the user agent that shows the authorization page, the store that
//! keeps tokens and registrations).
//!
//! The client sends a request without a token (or with the one it has); when the server
//! answers `401`, it finds the authorization server the way the server's revision says
//! (Protected Resource Metadata, RFC 9728, from the challenge's `resource_metadata` or the
//! well-known URIs; for a 2025-03-26 server without it, the authorization server
//! metadata at the server's origin, then the default `/authorize`, `/token`, `/register`
//! paths), reads the authorization server's metadata (RFC 8414, then OpenID Connect
//! Discovery, in the specification's order, its `issuer` checked), registers (pre-registered
//! credentials, then a Client ID Metadata Document URL when the server supports them, then
//! dynamic registration, RFC 7591), runs the authorization code flow with PKCE `S256`
//! (the `resource` of RFC 8707, the scope the challenge or the metadata names, the
//! RFC 9207 `iss` checked) or the client credentials grant, and retries the request with
//! the token. A `403` with `insufficient_scope` re-authorizes with the union of the scopes
//! asked before and the challenged ones (a few times at most); an expired token is
//! refreshed.
//!
//! ```no_run
//! use mcp_runtime_client::{Client, OAuth};
//! use mcp_runtime::model::Implementation;
//!
//! # async fn run() -> Result<(), mcp_runtime_client::ClientError> {
//! let oauth = OAuth::new()
//!     .redirect_uri("http://127.0.0.1:8976/callback")
//!     // A real application shows the page to its user and waits for the redirect back.
//!     .user_agent(|request| async move {
//!         println!("open {} in a browser", request.url);
//!         let redirected_to: String = wait_for_the_callback(&request.redirect_uri).await;
//!         Ok(redirected_to)
//!     });
//! let client = Client::builder(Implementation::new("my-client", "1.0.0"))
//!     .oauth(oauth)
//!     .connect_url("https://mcp.example.com/mcp")
//!     .await?;
//! # Ok(()) }
//! # async fn wait_for_the_callback(_: &str) -> String { String::new() }
//! ```

mod assertion;
mod challenge;
mod discovery;
mod dpop;
mod enterprise;
mod flow;
mod headless;
mod loopback;
mod send;

pub use assertion::SigningKey;
pub use enterprise::exchange_for_id_jag;
pub use loopback::wait_for_redirect;

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

pub(crate) use flow::Authorizer;

/// The default user agent, for an application's own to fall back on or wrap: follows the
/// authorization server's redirects (keeping its cookies, over https or to this machine)
/// until one leads to the redirect URI, and returns that URL. It fails with an error
/// that says so at a page that waits for a user.
pub async fn follow_redirects(request: AuthorizationRequest) -> Result<String, String> {
    headless::follow(request).await
}
pub(crate) use send::send;

/// How the client authenticates at the token endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenEndpointAuth {
    /// A public client: the `client_id` in the body, no secret.
    None,
    /// HTTP Basic with the client id and secret (RFC 6749 §2.3.1).
    ClientSecretBasic,
    /// The client id and secret in the body.
    ClientSecretPost,
    /// A JWT signed with the client's key (RFC 7523; [`ClientCredentials::signing_key`]).
    PrivateKeyJwt,
}

impl TokenEndpointAuth {
    /// The registered name (`none`, `client_secret_basic`, `client_secret_post`).
    pub fn as_str(self) -> &'static str {
        match self {
            TokenEndpointAuth::None => "none",
            TokenEndpointAuth::ClientSecretBasic => "client_secret_basic",
            TokenEndpointAuth::ClientSecretPost => "client_secret_post",
            TokenEndpointAuth::PrivateKeyJwt => "private_key_jwt",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<TokenEndpointAuth> {
        match name {
            "none" => Some(TokenEndpointAuth::None),
            "client_secret_basic" => Some(TokenEndpointAuth::ClientSecretBasic),
            "client_secret_post" => Some(TokenEndpointAuth::ClientSecretPost),
            "private_key_jwt" => Some(TokenEndpointAuth::PrivateKeyJwt),
            _ => None,
        }
    }
}

/// A client's identity at one authorization server: pre-registered, or what dynamic
/// registration returned.
#[derive(Clone)]
#[non_exhaustive]
pub struct ClientCredentials {
    /// The client id.
    pub client_id: String,
    /// The client secret of a confidential client.
    pub client_secret: Option<String>,
    /// How to authenticate at the token endpoint; `None`: the best the authorization
    /// server supports (Basic when there is a secret and the server allows it, else the
    /// secret in the body; a signing key: `private_key_jwt`; nothing: none).
    pub auth_method: Option<TokenEndpointAuth>,
    /// The key of `private_key_jwt`.
    pub signing_key: Option<SigningKey>,
}

impl std::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("auth_method", &self.auth_method)
            .field("signing_key", &self.signing_key)
            .finish()
    }
}

impl ClientCredentials {
    /// A client id, with no secret (a public client).
    pub fn public(client_id: impl Into<String>) -> ClientCredentials {
        ClientCredentials {
            client_id: client_id.into(),
            client_secret: None,
            auth_method: None,
            signing_key: None,
        }
    }

    /// A client id and secret (a confidential client).
    pub fn confidential(
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> ClientCredentials {
        ClientCredentials {
            client_id: client_id.into(),
            client_secret: Some(client_secret.into()),
            auth_method: None,
            signing_key: None,
        }
    }

    /// A client id that authenticates with a JWT signed by `key` (`private_key_jwt`).
    pub fn with_signing_key(client_id: impl Into<String>, key: SigningKey) -> ClientCredentials {
        ClientCredentials {
            client_id: client_id.into(),
            client_secret: None,
            auth_method: Some(TokenEndpointAuth::PrivateKeyJwt),
            signing_key: Some(key),
        }
    }

    /// Authenticates at the token endpoint this way.
    #[must_use]
    pub fn auth_method(mut self, method: TokenEndpointAuth) -> Self {
        self.auth_method = Some(method);
        self
    }
}

/// Tokens from an authorization server, for one resource.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Tokens {
    /// The issuer that granted them.
    pub issuer: String,
    /// The resource (RFC 8707) they were asked for.
    pub resource: String,
    /// The access token.
    pub access_token: String,
    /// Its type: `Bearer`, or `DPoP` (bound to the connection's DPoP key, sent with a
    /// proof).
    pub token_type: String,
    /// The refresh token, when the server gave one.
    pub refresh_token: Option<String>,
    /// When the access token expires, when the server said.
    pub expires_at: Option<SystemTime>,
    /// The scopes the client asked for (space-separated; empty: none named).
    pub requested_scope: String,
    /// The scopes granted, when the server said.
    pub scope: Option<String>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Tokens never reach a log.
        f.debug_struct("Tokens")
            .field("issuer", &self.issuer)
            .field("resource", &self.resource)
            .field("refresh_token", &self.refresh_token.is_some())
            .field("expires_at", &self.expires_at)
            .field("requested_scope", &self.requested_scope)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

impl Tokens {
    /// Whether the access token has expired (with a margin of 30 s).
    pub fn expired(&self) -> bool {
        self.expires_at.is_some_and(|at| {
            at.duration_since(SystemTime::now())
                .map_or(true, |left| left.as_secs() < 30)
        })
    }
}

/// Where the client keeps its tokens (per resource) and the credentials dynamic
/// registration gave it (per authorization server issuer). The default keeps them in
/// memory, shared by the clones of one [`OAuth`]; an application that persists them
/// between runs implements this.
pub trait TokenStore: Send + Sync + 'static {
    /// The tokens last saved for `resource` (the MCP server's canonical URI).
    fn tokens(&self, resource: &str) -> Option<Tokens>;
    /// Keeps the tokens for `resource` (`None`: forget them).
    fn save_tokens(&self, resource: &str, tokens: Option<&Tokens>);
    /// The credentials registered with the authorization server `issuer`.
    fn client(&self, issuer: &str) -> Option<ClientCredentials>;
    /// Keeps the credentials registered with `issuer`.
    fn save_client(&self, issuer: &str, client: &ClientCredentials);
}

/// The in-memory [`TokenStore`].
#[derive(Debug, Default)]
pub struct MemoryTokenStore {
    tokens: Mutex<HashMap<String, Tokens>>,
    clients: Mutex<HashMap<String, ClientCredentials>>,
}

impl TokenStore for MemoryTokenStore {
    fn tokens(&self, resource: &str) -> Option<Tokens> {
        self.tokens
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(resource)
            .cloned()
    }

    fn save_tokens(&self, resource: &str, tokens: Option<&Tokens>) {
        let mut map = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
        match tokens {
            Some(t) => {
                map.insert(resource.to_owned(), t.clone());
            }
            None => {
                map.remove(resource);
            }
        }
    }

    fn client(&self, issuer: &str) -> Option<ClientCredentials> {
        self.clients
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(issuer)
            .cloned()
    }

    fn save_client(&self, issuer: &str, client: &ClientCredentials) {
        self.clients
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(issuer.to_owned(), client.clone());
    }
}

/// What the user agent is asked to do: show `url` (the authorization server's page) and
/// hand back the URL the server redirected to, which starts with `redirect_uri` and carries
/// `code`, `state` (and `iss`) or `error`.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AuthorizationRequest {
    /// The authorization request, ready to open.
    pub url: String,
    /// The redirect URI the server will send the user agent back to.
    pub redirect_uri: String,
}

impl AuthorizationRequest {
    /// A request to show `url`, expecting a redirect to `redirect_uri` (for user agents
    /// driven by hand: tests, a relay).
    pub fn new(url: impl Into<String>, redirect_uri: impl Into<String>) -> AuthorizationRequest {
        AuthorizationRequest {
            url: url.into(),
            redirect_uri: redirect_uri.into(),
        }
    }
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
pub(crate) type UserAgentFn =
    Arc<dyn Fn(AuthorizationRequest) -> BoxFuture<Result<String, String>> + Send + Sync>;

pub(crate) type AssertionFn =
    Arc<dyn Fn(AssertionRequest) -> BoxFuture<Result<String, String>> + Send + Sync>;

/// What a JWT bearer assertion is asked for ([`OAuth::jwt_bearer`]).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AssertionRequest {
    /// The authorization server that will receive it (its audience).
    pub issuer: String,
    /// The MCP server's resource identifier.
    pub resource: String,
    /// The scopes the client will ask for (space-separated, maybe empty).
    pub scope: String,
}

/// Which grant the client uses.
#[derive(Clone)]
pub(crate) enum Grant {
    /// Authorization code with PKCE, through the user agent.
    AuthorizationCode,
    /// Client credentials (the client acts on its own behalf).
    ClientCredentials,
    /// A JWT bearer assertion (RFC 7523 §2.1), e.g. a workload identity token.
    JwtBearer(AssertionFn),
}

impl std::fmt::Debug for Grant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Grant::AuthorizationCode => "AuthorizationCode",
            Grant::ClientCredentials => "ClientCredentials",
            Grant::JwtBearer(_) => "JwtBearer",
        })
    }
}

/// OAuth settings of a client ([`ClientBuilder::oauth`](crate::ClientBuilder::oauth)).
/// Clones share the token store.
#[derive(Clone)]
pub struct OAuth {
    pub(crate) grant: Grant,
    pub(crate) client: Option<ClientCredentials>,
    pub(crate) client_issuer: Option<String>,
    pub(crate) metadata_url: Option<String>,
    pub(crate) redirect_uri: String,
    pub(crate) client_name: Option<String>,
    pub(crate) scopes: Option<String>,
    pub(crate) offline_access: bool,
    pub(crate) user_agent: Option<UserAgentFn>,
    pub(crate) store: Arc<dyn TokenStore>,
    pub(crate) max_step_ups: usize,
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("grant", &self.grant)
            .field("client", &self.client)
            .field("client_issuer", &self.client_issuer)
            .field("metadata_url", &self.metadata_url)
            .field("redirect_uri", &self.redirect_uri)
            .field("scopes", &self.scopes)
            .field("user_agent", &self.user_agent.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for OAuth {
    fn default() -> Self {
        OAuth::new()
    }
}

impl OAuth {
    /// The authorization code flow, registering dynamically, redirecting to
    /// `http://127.0.0.1:8976/callback`, with the headless user agent (see
    /// [`OAuth::user_agent`]) and an in-memory token store.
    pub fn new() -> OAuth {
        OAuth {
            grant: Grant::AuthorizationCode,
            client: None,
            client_issuer: None,
            metadata_url: None,
            redirect_uri: "http://127.0.0.1:8976/callback".to_owned(),
            client_name: None,
            scopes: None,
            offline_access: true,
            user_agent: None,
            store: Arc::new(MemoryTokenStore::default()),
            max_step_ups: 2,
        }
    }

    /// The client credentials grant (the client acts on its own behalf, no user) with
    /// these credentials.
    pub fn client_credentials(credentials: ClientCredentials) -> OAuth {
        OAuth {
            grant: Grant::ClientCredentials,
            client: Some(credentials),
            ..OAuth::new()
        }
    }

    /// The JWT bearer grant (RFC 7523 §2.1; workload identity federation, SEP-1933):
    /// `assertion` yields a JWT issued to this workload for the authorization server
    /// (fetched again at each authorization: a workload identity token, or an ID-JAG from
    /// the enterprise identity provider, [`exchange_for_id_jag`]), exchanged for an access
    /// token as the client
    /// `credentials` (usually a bare client id). A refusal is reported, not retried with
    /// another grant.
    pub fn jwt_bearer<F, Fut>(credentials: ClientCredentials, assertion: F) -> OAuth
    where
        F: Fn(AssertionRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, String>> + Send + 'static,
    {
        OAuth {
            grant: Grant::JwtBearer(Arc::new(move |request| Box::pin(assertion(request)))),
            client: Some(credentials),
            ..OAuth::new()
        }
    }

    /// Pre-registered credentials, used with whichever authorization server the MCP server
    /// names (ahead of metadata documents and dynamic registration).
    #[must_use]
    pub fn client(mut self, credentials: ClientCredentials) -> Self {
        self.client = Some(credentials);
        self
    }

    /// Pre-registered credentials of the authorization server `issuer` only: with another
    /// server the client fails with an error rather than present them there.
    #[must_use]
    pub fn client_for_issuer(
        mut self,
        issuer: impl Into<String>,
        credentials: ClientCredentials,
    ) -> Self {
        self.client = Some(credentials);
        self.client_issuer = Some(issuer.into());
        self
    }

    /// The HTTPS URL of this client's Client ID Metadata Document: used as the
    /// `client_id` with authorization servers that advertise
    /// `client_id_metadata_document_supported` (the document, served by the application,
    /// must name this URL as its `client_id` and list the redirect URI).
    #[must_use]
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.metadata_url = Some(url.into());
        self
    }

    /// The redirect URI (a loopback `http` URI, or `https`).
    #[must_use]
    pub fn redirect_uri(mut self, uri: impl Into<String>) -> Self {
        self.redirect_uri = uri.into();
        self
    }

    /// The `client_name` dynamic registration sends (default: the client's
    /// implementation name).
    #[must_use]
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = Some(name.into());
        self
    }

    /// The scopes to ask for (space-separated) in place of what the server's challenge or
    /// metadata names.
    #[must_use]
    pub fn scopes(mut self, scopes: impl Into<String>) -> Self {
        self.scopes = Some(scopes.into());
        self
    }

    /// Whether to ask for `offline_access` (a refresh token) when the authorization
    /// server lists it (default: yes).
    #[must_use]
    pub fn offline_access(mut self, ask: bool) -> Self {
        self.offline_access = ask;
        self
    }

    /// The user agent: shows the authorization page and resolves to the URL the
    /// authorization server redirected back to (or an error to report). An application
    /// opens a browser and listens on its redirect URI ([`wait_for_redirect`] does the
    /// listening for a loopback one). The default is headless: it
    /// follows the server's redirects (keeping its cookies) to the redirect URI, which
    /// works only with a server that approves without a user (tests, trusted setups) and
    /// fails with a clear error at a login page.
    ///
    /// The authorization runs inside the request that met the 401, so it counts against
    /// that request's timeout — including the `server/discover` probe's when the first
    /// request is the probe. With a person at a browser, raise the client's `timeout` and
    /// `probe_timeout` to leave them time to log in.
    #[must_use]
    pub fn user_agent<F, Fut>(mut self, user_agent: F) -> Self
    where
        F: Fn(AuthorizationRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, String>> + Send + 'static,
    {
        self.user_agent = Some(Arc::new(move |request| Box::pin(user_agent(request))));
        self
    }

    /// Where tokens and registrations are kept (default: in memory).
    #[must_use]
    pub fn token_store(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.store = store;
        self
    }

    /// How many times one request may re-authorize after `403 insufficient_scope`
    /// (default 2: three authorizations at most for one request).
    #[must_use]
    pub fn max_step_ups(mut self, step_ups: usize) -> Self {
        self.max_step_ups = step_ups;
        self
    }
}
