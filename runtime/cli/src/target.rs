//! How `mcp` and `mcp-bridge` reach a server: the flags that name it (a shell command
//! line, a program and its arguments after `--`, or a URL), the HTTP headers and OAuth
//! that go with a URL, and the revision to pin. One copy, so the two commands take the
//! same flags with the same meaning.

use mcp_runtime::ProtocolVersion;
use mcp_runtime_client::auth::{wait_for_redirect, ClientCredentials};
use mcp_runtime_client::{Client, ClientBuilder, ClientError, OAuth};

/// The flags that name a server and how to speak to it.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct TargetArgs {
    /// The server is this shell command line, run with `sh -c` and spoken to over its
    /// stdin and stdout; shell syntax works (`VAR=value server --flag`, pipes, quotes).
    /// It runs in a process group of its own, ended whole when the command ends.
    #[arg(long, value_name = "CMD", global = true, conflicts_with = "url")]
    pub command: Option<String>,

    /// The server is at this URL: Streamable HTTP, or HTTP+SSE at the same URL if its
    /// POST is refused.
    #[arg(long, value_name = "URL", global = true)]
    pub url: Option<String>,

    /// Adds this header to every HTTP request to the server (`--url`); may be repeated.
    #[arg(
        long = "header",
        value_name = "NAME: VALUE",
        value_parser = parse_header,
        global = true
    )]
    pub headers: Vec<(String, String)>,

    /// A fixed token for the server (`--url`): the same as
    /// `--header "Authorization: Bearer TOKEN"`.
    #[arg(long, value_name = "TOKEN", global = true)]
    pub bearer: Option<String>,

    /// Authorizes with OAuth when the server asks: prints the authorization URL to open,
    /// and waits for the redirect on the loopback redirect URI (`--oauth-redirect`).
    #[arg(long, global = true, conflicts_with = "oauth_headless")]
    pub oauth: bool,

    /// OAuth without a browser: follows the authorization server's redirects (for
    /// servers that approve without a user).
    #[arg(long, global = true)]
    pub oauth_headless: bool,

    /// Pre-registered OAuth client credentials: public with `ID` alone, confidential with
    /// `ID:SECRET`. Without it the client registers dynamically. On its own it means
    /// `--oauth`.
    #[arg(long, value_name = "ID[:SECRET]", global = true)]
    pub oauth_client: Option<String>,

    /// Uses the credentials of `--oauth-client ID:SECRET` in the client credentials grant
    /// (acting on its own behalf, no user).
    #[arg(long, global = true)]
    pub oauth_client_credentials: bool,

    /// The loopback redirect URI to wait on for `--oauth`
    /// [default: http://127.0.0.1:8976/callback].
    #[arg(long, value_name = "URI", global = true)]
    pub oauth_redirect: Option<String>,

    /// Speaks this protocol revision only (2024-11-05, 2025-03-26, 2025-06-18,
    /// 2025-11-25, 2026-07-28), without probing which one the server prefers. Without it
    /// the client probes with `server/discover` and falls back to `initialize`.
    #[arg(long, value_name = "REV", value_parser = parse_revision, global = true)]
    pub revision: Option<ProtocolVersion>,
}

/// Where the server is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Server {
    /// A shell command line (`--command`).
    Shell(String),
    /// A program and its arguments, run without a shell (`-- PROGRAM ARGS…`).
    Program(String, Vec<String>),
    /// A URL (`--url`).
    Url(String),
}

impl std::fmt::Display for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Server::Shell(line) => write!(f, "`{line}`"),
            Server::Program(program, args) => {
                write!(f, "`{program}")?;
                for arg in args {
                    write!(f, " {arg}")?;
                }
                write!(f, "`")
            }
            Server::Url(url) => f.write_str(url),
        }
    }
}

impl TargetArgs {
    /// The server these flags name, with `program` the words after `--` (if any).
    /// Exactly one of `--command`, `--url` and `-- PROGRAM` must be given.
    pub fn server(&self, program: &[String]) -> Result<Server, String> {
        let mut named = Vec::new();
        if let Some(line) = &self.command {
            named.push(Server::Shell(line.clone()));
        }
        if let Some(url) = &self.url {
            named.push(Server::Url(url.clone()));
        }
        if let Some((first, rest)) = program.split_first() {
            named.push(Server::Program(first.clone(), rest.to_vec()));
        }
        let only = match named.len() {
            0 => {
                return Err(
                    "name the server: --command \"CMD\", --url URL or -- PROGRAM ARGS…".into(),
                )
            }
            1 => named.pop(),
            _ => None,
        };
        let server =
            only.ok_or("name one server only: --command \"CMD\", --url URL or -- PROGRAM ARGS…")?;
        let http_only = !self.headers.is_empty()
            || self.bearer.is_some()
            || self.oauth
            || self.oauth_headless
            || self.oauth_client.is_some();
        if http_only && !matches!(server, Server::Url(_)) {
            return Err(
                "--header, --bearer and the --oauth flags apply to a server at a --url".into(),
            );
        }
        if self.oauth_client_credentials
            && !self
                .oauth_client
                .as_deref()
                .is_some_and(|c| c.contains(':'))
        {
            return Err("--oauth-client-credentials needs --oauth-client ID:SECRET".into());
        }
        Ok(server)
    }

    /// `builder` with these flags' headers, OAuth and revision; `tool` names the command
    /// in what it prints (the authorization URL to open).
    pub fn configure(&self, mut builder: ClientBuilder, tool: &'static str) -> ClientBuilder {
        for (name, value) in &self.headers {
            builder = builder.header(name.clone(), value.clone());
        }
        if let Some(token) = &self.bearer {
            builder = builder.header("authorization", format!("Bearer {token}"));
        }
        if let Some(oauth) = self.oauth_config(tool) {
            builder = builder.oauth(oauth);
        }
        if let Some(revision) = self.revision {
            builder = builder.pin(revision);
        }
        builder
    }

    fn oauth_config(&self, tool: &'static str) -> Option<OAuth> {
        let client = self
            .oauth_client
            .as_deref()
            .map(|given| match given.split_once(':') {
                Some((id, secret)) => ClientCredentials::confidential(id, secret),
                None => ClientCredentials::public(given),
            });
        if self.oauth_client_credentials {
            return client.map(OAuth::client_credentials);
        }
        if !self.oauth && !self.oauth_headless && client.is_none() {
            return None;
        }
        let mut oauth = OAuth::new();
        if let Some(client) = client {
            oauth = oauth.client(client);
        }
        if let Some(redirect) = &self.oauth_redirect {
            oauth = oauth.redirect_uri(redirect.clone());
        }
        if self.oauth_headless {
            return Some(oauth);
        }
        // The bridge's wording predates this module and scripts read it: it authorizes
        // against the server it fronts, its upstream.
        let whom = if tool == "mcp-bridge" {
            " upstream"
        } else {
            ""
        };
        Some(oauth.user_agent(move |request| {
            wait_for_redirect(request, move |url| {
                eprintln!("{tool}: to authorize{whom}, open {url}");
            })
        }))
    }
}

/// Connects `builder` to `server`. A program (`-- PROGRAM ARGS…`) runs in a process group
/// of its own, like a shell command line, so that whatever it starts ends with it.
pub async fn connect(builder: ClientBuilder, server: &Server) -> Result<Client, ClientError> {
    match server {
        Server::Shell(line) => builder.connect_shell(line).await,
        Server::Program(program, args) => {
            builder
                .process_group(true)
                .connect_command(program, args.iter().cloned())
                .await
        }
        Server::Url(url) => builder.connect_url(url).await,
    }
}

/// `NAME: VALUE`.
fn parse_header(given: &str) -> Result<(String, String), String> {
    let (name, value) = given
        .split_once(':')
        .ok_or_else(|| format!("expected NAME: VALUE, got `{given}`"))?;
    let name = name.trim();
    if name.is_empty() {
        return Err(format!("expected NAME: VALUE, got `{given}` (no name)"));
    }
    Ok((name.to_owned(), value.trim().to_owned()))
}

/// A revision by its date.
fn parse_revision(given: &str) -> Result<ProtocolVersion, String> {
    ProtocolVersion::parse(given).ok_or_else(|| {
        let known: Vec<&str> = ProtocolVersion::ALL.iter().map(|v| v.as_str()).collect();
        format!("unknown revision `{given}`; known: {}", known.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_one_server_is_named() {
        let none = TargetArgs::default();
        assert!(none.server(&[]).unwrap_err().contains("name the server"));
        let program = none
            .server(&["srv".to_owned(), "--flag".to_owned()])
            .unwrap();
        assert_eq!(
            program,
            Server::Program("srv".into(), vec!["--flag".into()])
        );
        let both = TargetArgs {
            url: Some("http://x/mcp".into()),
            ..TargetArgs::default()
        };
        assert!(both
            .server(&["srv".to_owned()])
            .unwrap_err()
            .contains("one server"));
    }

    #[test]
    fn http_flags_need_a_url() {
        let args = TargetArgs {
            command: Some("srv".into()),
            bearer: Some("t".into()),
            ..TargetArgs::default()
        };
        assert!(args.server(&[]).unwrap_err().contains("--url"));
    }

    #[test]
    fn headers_and_revisions_parse_or_say_why_not() {
        assert_eq!(
            parse_header("X-Api-Key:  abc ").unwrap(),
            ("X-Api-Key".to_owned(), "abc".to_owned())
        );
        assert!(parse_header("nocolon").unwrap_err().contains("NAME: VALUE"));
        assert_eq!(parse_revision("2025-06-18").unwrap().as_str(), "2025-06-18");
        let err = parse_revision("2025-01-01").unwrap_err();
        assert!(err.contains("2026-07-28"), "{err}");
    }
}
