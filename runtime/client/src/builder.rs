//! Building a client: who it is, what it answers, which revisions it accepts, its
//! timeouts — and connecting it to a server over one of the transports.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;

use super::core::{Config, Core};
use super::error::{ClientError, ClientErrorKind};
use super::handlers::{ClientHandlers, ElicitRequest};
use super::link::stdio::{Spawn, StdioLink};
use super::link::{Incoming, Link};
use super::{negotiate, Client};
use mcp_runtime::model::{Elicitation, Implementation, Root, SampledMessage, SamplingRequest};
use mcp_runtime::protocol::version::{Era, ProtocolVersion, VersionSet};
use mcp_runtime::wire::RpcError;

/// The default of [`ClientBuilder::stream_idle_timeout`]: four of the keep-alive periods
/// servers use by default (15 s), so that a lost comment or two is not a dead stream.
const DEFAULT_STREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Builds a [`Client`] and connects it ([`ClientBuilder::connect_command`],
/// [`ClientBuilder::connect_url`], …).
#[derive(Clone, Debug)]
pub struct ClientBuilder {
    info: Implementation,
    handlers: ClientHandlers,
    url_elicitation: bool,
    versions: VersionSet,
    timeout: Duration,
    probe_timeout: Duration,
    max_rounds: usize,
    experimental: Option<Value>,
    http_headers: Vec<(String, String)>,
    #[cfg(feature = "http")]
    oauth: Option<super::auth::OAuth>,
    get_stream: bool,
    stream_idle_timeout: Option<Duration>,
    inherit_stderr: bool,
    process_group: bool,
    env: Vec<(String, String)>,
    cwd: Option<PathBuf>,
    max_message_bytes: usize,
}

impl ClientBuilder {
    /// A client identified as `info`, accepting every revision, with no handlers.
    pub fn new(info: Implementation) -> ClientBuilder {
        ClientBuilder {
            info,
            handlers: ClientHandlers::new(),
            url_elicitation: false,
            versions: VersionSet::ALL,
            timeout: Duration::from_secs(60),
            probe_timeout: Duration::from_secs(10),
            max_rounds: 8,
            experimental: None,
            http_headers: Vec::new(),
            #[cfg(feature = "http")]
            oauth: None,
            get_stream: true,
            stream_idle_timeout: Some(DEFAULT_STREAM_IDLE_TIMEOUT),
            inherit_stderr: true,
            process_group: false,
            env: Vec::new(),
            cwd: None,
            max_message_bytes: 64 * 1024 * 1024,
        }
    }

    /// The largest message read from the server, in bytes (default 64 MiB): a stdio line,
    /// an HTTP answer's body, one SSE event. A server we do not control (what
    /// `mcp-bridge` fronts) could otherwise make the client buffer without bound. Over
    /// the limit, an HTTP answer or an event on a request's stream fails that request
    /// with an error naming the limit; an HTTP+SSE stream ends the connection so; a
    /// stdio line is skipped (and logged).
    #[must_use]
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }

    /// The revisions the client accepts (default: all). A set without 2026-07-28 skips
    /// the `server/discover` probe; a set without legacy revisions never sends
    /// `initialize`.
    #[must_use]
    pub fn versions(mut self, versions: VersionSet) -> Self {
        self.versions = versions;
        self
    }

    /// Speaks `version` only.
    #[must_use]
    pub fn pin(self, version: ProtocolVersion) -> Self {
        self.versions(VersionSet::of(&[version]))
    }

    /// How long a request waits for its answer by default (60 s; `Duration::ZERO`:
    /// forever).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long the `server/discover` probe waits before the server is taken for a
    /// legacy one (10 s).
    #[must_use]
    pub fn probe_timeout(mut self, timeout: Duration) -> Self {
        self.probe_timeout = timeout;
        self
    }

    /// How many `input_required` rounds one request may take (8).
    #[must_use]
    pub fn max_input_rounds(mut self, rounds: usize) -> Self {
        self.max_rounds = rounds;
        self
    }

    /// The handlers for what the server asks (replacing any set before).
    #[must_use]
    pub fn handlers(mut self, handlers: ClientHandlers) -> Self {
        self.handlers = handlers;
        self
    }

    /// Answers sampling requests (declares `sampling`).
    #[must_use]
    pub fn on_sampling<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(SamplingRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<SampledMessage, RpcError>> + Send + 'static,
    {
        self.handlers = self.handlers.sampling(handler);
        self
    }

    /// Answers elicitation requests (declares `elicitation`).
    #[must_use]
    pub fn on_elicitation<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ElicitRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Elicitation<Map<String, Value>>, RpcError>> + Send + 'static,
    {
        self.handlers = self.handlers.elicitation(handler);
        self
    }

    /// Declares URL-mode elicitation too (2025-11-25+): the elicitation handler then also
    /// gets [`ElicitRequest`]s with a `url`.
    #[must_use]
    pub fn url_elicitation(mut self, enabled: bool) -> Self {
        self.url_elicitation = enabled;
        self
    }

    /// Shares these roots (declares `roots`).
    #[must_use]
    pub fn roots(mut self, roots: Vec<Root>) -> Self {
        self.handlers = self.handlers.fixed_roots(roots);
        self
    }

    /// Experimental capabilities to declare.
    #[must_use]
    pub fn experimental(mut self, capabilities: Value) -> Self {
        self.experimental = Some(capabilities);
        self
    }

    /// A header sent with every HTTP request (`Authorization`, for instance).
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.http_headers.push((name.into(), value.into()));
        self
    }

    /// Authorizes HTTP requests with OAuth 2.1 when the server asks (`401`): see
    /// [`OAuth`](super::OAuth).
    #[cfg(feature = "http")]
    #[must_use]
    pub fn oauth(mut self, oauth: super::auth::OAuth) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// Whether a legacy Streamable HTTP session opens the GET stream the server may send
    /// unsolicited messages on (default: yes).
    #[must_use]
    pub fn get_stream(mut self, open: bool) -> Self {
        self.get_stream = open;
        self
    }

    /// How long an HTTP event stream may stay silent — no event and no keep-alive comment
    /// (servers send one every 15 s by default, this crate's server and the official
    /// SDKs alike) — before the client treats its connection as dead (default 60 s;
    /// `None`: never). A legacy session's stream is then resumed with `Last-Event-ID`
    /// (a request's answer stream, the GET stream); where the revision cannot resume it
    /// (2026-07-28, or a stream that carried no event id yet) the request waiting on it
    /// fails with an error that says so; an HTTP+SSE (2024-11-05) stream silent while a
    /// request waits ends the connection. An idle HTTP+SSE stream with nothing waiting is
    /// left alone: servers without keep-alive are common there.
    #[must_use]
    pub fn stream_idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.stream_idle_timeout = timeout;
        self
    }

    /// Whether a spawned server's stderr goes to this process's (default) or is
    /// discarded.
    #[must_use]
    pub fn inherit_stderr(mut self, inherit: bool) -> Self {
        self.inherit_stderr = inherit;
        self
    }

    /// Whether a spawned server runs in a process group of its own (default: no; always
    /// for [`ClientBuilder::connect_shell`]). Closing or dropping the client then ends the
    /// whole group — the server and whatever it started (a launcher's child, a shell's
    /// pipeline) — asking with SIGTERM first and killing what remains. The group does not
    /// get this process's terminal signals (^C): the application ends the client instead.
    /// Unix only; elsewhere it has no effect.
    #[must_use]
    pub fn process_group(mut self, own_group: bool) -> Self {
        self.process_group = own_group;
        self
    }

    /// An environment variable for a spawned server.
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// The working directory of a spawned server.
    #[must_use]
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    fn config(&self, versions: VersionSet) -> Config {
        Config {
            info: self.info.clone(),
            handlers: self.handlers.clone(),
            url_elicitation: self.url_elicitation,
            versions,
            timeout: self.timeout,
            probe_timeout: self.probe_timeout,
            max_rounds: self.max_rounds,
            experimental: self.experimental.clone(),
        }
    }

    async fn finish(
        &self,
        link: Box<dyn Link>,
        incoming: mpsc::UnboundedReceiver<Incoming>,
        versions: VersionSet,
    ) -> Result<Client, ClientError> {
        let core = Core::start(link, incoming, self.config(versions));
        match negotiate::negotiate(&core).await {
            Ok(server) => Ok(Client {
                core,
                server: Arc::new(server),
            }),
            Err(e) => {
                core.close("negotiation failed").await;
                Err(e)
            }
        }
    }

    /// Launches `program` with `args` and speaks to it over its stdin and stdout.
    pub async fn connect_command<I, S>(self, program: &str, args: I) -> Result<Client, ClientError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let spawn = Spawn {
            program: program.to_owned(),
            args: args.into_iter().map(Into::into).collect(),
            env: self.env.clone(),
            cwd: self.cwd.clone(),
            inherit_stderr: self.inherit_stderr,
            process_group: self.process_group,
            max_line: self.max_message_bytes,
        };
        let (tx, rx) = mpsc::unbounded_channel();
        let link = StdioLink::spawn(&spawn, tx)?;
        let legacy = VersionSet::of(&self.versions.of_era(Era::Legacy).collect::<Vec<_>>());
        let probed = self.versions.of_era(Era::Modern).next().is_some() && !legacy.is_empty();
        match self.finish(Box::new(link), rx, self.versions).await {
            // Some legacy servers exit on a method they do not know before `initialize`
            // (the `server/discover` probe): start the server again and open a legacy
            // session straight away.
            Err(e) if probed && e.kind() == ClientErrorKind::Closed => {
                tracing::debug!("the server exited on the probe ({e}); starting it again");
                let (tx, rx) = mpsc::unbounded_channel();
                let link = StdioLink::spawn(&spawn, tx)?;
                self.finish(Box::new(link), rx, legacy).await
            }
            other => other,
        }
    }

    /// Launches a shell command line with `sh -c` and speaks to it over its stdin and
    /// stdout. The line has every shell feature, `VAR=value server` included; the shell
    /// runs in a process group of its own ([`ClientBuilder::process_group`]), ended whole
    /// when the client closes, so the server goes with it whether or not the shell
    /// replaced itself with the server.
    pub async fn connect_shell(self, command_line: &str) -> Result<Client, ClientError> {
        self.process_group(true)
            .connect_command("sh", ["-c".to_owned(), command_line.to_owned()])
            .await
    }

    /// Speaks newline-delimited JSON-RPC over a stream pair: `from_server` is what the
    /// server writes, `to_server` what it reads (a socket, an in-memory pipe).
    pub async fn connect_streams<R, W>(
        self,
        from_server: R,
        to_server: W,
    ) -> Result<Client, ClientError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, rx) = mpsc::unbounded_channel();
        let link = StdioLink::streams(from_server, to_server, tx, self.max_message_bytes);
        self.finish(Box::new(link), rx, self.versions).await
    }

    /// Connects to the MCP endpoint at `url` over Streamable HTTP; if the server turns
    /// out to speak only the old HTTP+SSE transport (its POST is refused without a
    /// JSON-RPC answer), connects to the same URL over HTTP+SSE.
    #[cfg(feature = "http")]
    pub async fn connect_url(self, url: &str) -> Result<Client, ClientError> {
        let (tx, rx) = mpsc::unbounded_channel();
        let link = super::link::http::HttpLink::new(url, self.http_settings(url, false)?, tx)?;
        match self.finish(Box::new(link), rx, self.versions).await {
            Ok(client) => Ok(client),
            Err(e)
                if e.kind() == ClientErrorKind::Transport
                    && self.versions.of_era(Era::Legacy).next().is_some() =>
            {
                tracing::debug!("Streamable HTTP failed ({e}); trying HTTP+SSE at {url}");
                self.connect_sse(url).await.map_err(|sse| {
                    ClientError::new(
                        ClientErrorKind::Transport,
                        format!("{e}; and over HTTP+SSE: {sse}"),
                    )
                })
            }
            Err(e) => Err(e),
        }
    }

    /// Connects to an HTTP+SSE server (2024-11-05): `url` is its event stream.
    #[cfg(feature = "http")]
    pub async fn connect_sse(self, url: &str) -> Result<Client, ClientError> {
        let (tx, rx) = mpsc::unbounded_channel();
        let link = super::link::legacy_sse::LegacySseLink::connect(
            url,
            &self.http_settings(url, true)?,
            tx,
        )
        .await?;
        let legacy = VersionSet::of(&self.versions.of_era(Era::Legacy).collect::<Vec<_>>());
        self.finish(Box::new(link), rx, legacy).await
    }

    #[cfg(feature = "http")]
    fn http_settings(
        &self,
        url: &str,
        legacy_sse: bool,
    ) -> Result<super::link::http::HttpSettings, ClientError> {
        let auth = match &self.oauth {
            Some(oauth) => Some(Arc::new(super::auth::Authorizer::new(
                oauth.clone(),
                url,
                &self.info.name,
                legacy_sse,
            )?)),
            None => None,
        };
        Ok(super::link::http::HttpSettings {
            max_message_bytes: self.max_message_bytes,
            headers: self.http_headers.clone(),
            get_stream: self.get_stream,
            stream_idle_timeout: self.stream_idle_timeout,
            auth,
        })
    }
}
