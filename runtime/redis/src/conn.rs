//! How [`RedisStore`](crate::RedisStore) reaches Redis: one server, the primary that Redis
//! Sentinel names, or a Redis Cluster, chosen by the URL's scheme; all three behind one
//! `ConnectionLike`, so that the store's commands are written once.
//!
//! URL forms (the redis crate parses only the first natively; the other two are this
//! crate's, in the spirit of the forms other Redis clients accept):
//!
//! - `redis://[USER:PASSWORD@]HOST:PORT[/DB]` (and `redis+unix://`): one server;
//! - `redis+sentinel://[USER:PASSWORD@]HOST:PORT[,HOST:PORT…]/SERVICE[/DB]`: the sentinels
//!   (port 26379 when left out), the name of the primary they watch, and the database; the
//!   credentials are the primary's (the sentinels are asked without any);
//! - `redis+cluster://[USER:PASSWORD@]HOST:PORT[,HOST:PORT…][/]`: some of the cluster's
//!   nodes (port 6379 when left out), from which the rest is discovered.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager, MultiplexedConnection};
use redis::sentinel::{SentinelClient, SentinelNodeConnectionInfo, SentinelServerType};
use redis::{
    AsyncConnectionConfig, Cmd, ErrorKind, IntoConnectionInfo, Pipeline, RedisError, RedisFuture,
    RedisResult, ServerErrorKind, Value,
};

/// Where the URL says Redis is.
pub(crate) enum Target {
    Single(redis::Client),
    Sentinel {
        client: Arc<tokio::sync::Mutex<SentinelClient>>,
        config: AsyncConnectionConfig,
    },
    Cluster {
        // Boxed: much larger than the other variants' fields.
        client: Box<redis::cluster::ClusterClient>,
    },
}

const SENTINEL: &str = "redis+sentinel://";
const CLUSTER: &str = "redis+cluster://";

/// Reads `url` (module documentation); a URL it cannot use is an error naming what is
/// wrong, never a panic. The URL itself is not repeated: it may hold a password.
pub(crate) fn parse(url: &str, timeout: Duration) -> Result<Target, String> {
    if let Some(rest) = strip_scheme(url, SENTINEL) {
        let usage = "redis+sentinel://[USER:PASSWORD@]HOST:PORT[,HOST:PORT…]/SERVICE[/DB]";
        let (authority, path) = rest
            .split_once('/')
            .ok_or_else(|| format!("a Sentinel URL names the primary's service: {usage}"))?;
        let (userinfo, hosts) = split_userinfo(authority);
        let sentinels = hosts_of(hosts, 26379, usage)?
            .into_iter()
            .map(|host| format!("redis://{host}/"))
            .collect::<Vec<_>>();
        let mut segments = path.split('/');
        let service = segments.next().unwrap_or_default();
        if service.is_empty() {
            return Err(format!(
                "a Sentinel URL names the primary's service: {usage}"
            ));
        }
        let db = match segments.next() {
            None | Some("") => 0,
            Some(db) => db
                .parse::<i64>()
                .map_err(|_| format!("the database `{db}` is not a number: {usage}"))?,
        };
        if segments.any(|s| !s.is_empty()) {
            return Err(format!("more path than SERVICE/DB: {usage}"));
        }
        // The primary's credentials and database, read (percent-decoded) the way the redis
        // crate reads a plain URL's.
        let primary = format!("redis://{}127.0.0.1/{db}", at(userinfo))
            .into_connection_info()
            .map_err(|e| format!("the credentials or database: {e}"))?;
        let node = SentinelNodeConnectionInfo::default()
            .set_redis_connection_info(primary.redis_settings().clone());
        let client = SentinelClient::build(
            sentinels,
            service.to_owned(),
            Some(node),
            SentinelServerType::Master,
        )
        .map_err(|e| format!("the sentinels: {e}"))?;
        return Ok(Target::Sentinel {
            client: Arc::new(tokio::sync::Mutex::new(client)),
            config: AsyncConnectionConfig::new()
                .set_connection_timeout(Some(timeout))
                .set_response_timeout(Some(timeout)),
        });
    }
    if let Some(rest) = strip_scheme(url, CLUSTER) {
        let usage = "redis+cluster://[USER:PASSWORD@]HOST:PORT[,HOST:PORT…][/]";
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        if !(path.is_empty() || path == "0") {
            return Err(format!(
                "a cluster has only database 0, and the URL no path: {usage}"
            ));
        }
        let (userinfo, hosts) = split_userinfo(authority);
        let nodes: Vec<String> = hosts_of(hosts, 6379, usage)?
            .into_iter()
            .map(|host| format!("redis://{}{host}/", at(userinfo)))
            .collect::<Vec<_>>();
        let client = redis::cluster::ClusterClient::builder(nodes)
            .connection_timeout(timeout)
            .response_timeout(timeout)
            .retries(2)
            .max_retry_wait(500)
            .build()
            .map_err(|e| format!("the cluster's nodes: {e}"))?;
        return Ok(Target::Cluster {
            client: Box::new(client),
        });
    }
    redis::Client::open(url)
        .map(Target::Single)
        .map_err(|e| e.to_string())
}

/// `url` without `scheme`, whatever the scheme's case.
fn strip_scheme<'a>(url: &'a str, scheme: &str) -> Option<&'a str> {
    let head = url.get(..scheme.len())?;
    head.eq_ignore_ascii_case(scheme)
        .then(|| url.get(scheme.len()..))
        .flatten()
}

/// `USER:PASSWORD@HOSTS` into its parts (the last `@`: a password may hold one).
fn split_userinfo(authority: &str) -> (Option<&str>, &str) {
    match authority.rsplit_once('@') {
        Some((userinfo, hosts)) => (Some(userinfo), hosts),
        None => (None, authority),
    }
}

fn at(userinfo: Option<&str>) -> String {
    userinfo.map(|u| format!("{u}@")).unwrap_or_default()
}

/// The comma-separated `HOST[:PORT]` list, each with its port (`default` when left out),
/// checked: a host, and a port that is a number.
fn hosts_of(hosts: &str, default: u16, usage: &str) -> Result<Vec<String>, String> {
    let mut found = Vec::new();
    for host in hosts.split(',') {
        if host.is_empty() {
            return Err(format!("an empty host in the list: {usage}"));
        }
        // `[::1]:26379`: the port follows the bracket.
        let after_address = host.rfind(']').map_or(0, |i| i + 1);
        let tail = host.get(after_address..).unwrap_or_default();
        match tail.rsplit_once(':') {
            Some((_, port)) => {
                port.parse::<u16>()
                    .map_err(|_| format!("the port of `{host}` is not a port: {usage}"))?;
                if host.len() == port.len() + 1 {
                    return Err(format!("`{host}` names no host: {usage}"));
                }
                found.push(host.to_owned());
            }
            None => found.push(format!("{host}:{default}")),
        }
    }
    Ok(found)
}

/// One connection to whichever Redis the URL named, re-established on its own after a
/// failure; commands in the meantime fail (within the store's timeout), never hang.
#[derive(Clone)]
pub(crate) enum Conn {
    Single(ConnectionManager),
    Sentinel(Arc<SentinelConn>),
    Cluster(redis::cluster_async::ClusterConnection),
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Conn::Single(c) => c.req_packed_command(cmd),
            Conn::Cluster(c) => c.req_packed_command(cmd),
            Conn::Sentinel(s) => Box::pin(async move {
                let (mut c, generation) = s.connection().await?;
                let result = c.req_packed_command(cmd).await;
                s.after(&result, generation);
                result
            }),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Conn::Single(c) => c.req_packed_commands(pipeline, offset, count),
            Conn::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
            Conn::Sentinel(s) => Box::pin(async move {
                let (mut c, generation) = s.connection().await?;
                let result = c.req_packed_commands(pipeline, offset, count).await;
                s.after(&result, generation);
                result
            }),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::Single(c) => c.get_db(),
            Conn::Cluster(c) => c.get_db(),
            Conn::Sentinel(_) => 0,
        }
    }
}

/// The connection to the primary the sentinels name. `ConnectionManager` reconnects to
/// one address, but after a failover the primary is elsewhere (or the old one, back, is
/// a read-only replica): so a connection that fails that way is dropped, and the next
/// command asks the sentinels again.
pub(crate) struct SentinelConn {
    sentinel: Arc<tokio::sync::Mutex<SentinelClient>>,
    /// The connection in use, and a count of connections made (a failure drops the
    /// connection only if it is still the one that failed).
    current: Mutex<(u64, Option<MultiplexedConnection>)>,
    config: AsyncConnectionConfig,
    timeout: Duration,
}

impl SentinelConn {
    fn current(&self) -> Option<(MultiplexedConnection, u64)> {
        let current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        current.1.clone().map(|c| (c, current.0))
    }

    async fn connection(&self) -> RedisResult<(MultiplexedConnection, u64)> {
        if let Some(found) = self.current() {
            return Ok(found);
        }
        let connecting = async {
            let mut sentinel = self.sentinel.lock().await;
            // Another command may have connected while this one waited.
            if let Some(found) = self.current() {
                return Ok(found);
            }
            let conn = sentinel
                .get_async_connection_with_config(&self.config)
                .await?;
            let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
            current.0 += 1;
            current.1 = Some(conn.clone());
            Ok((conn, current.0))
        };
        tokio::time::timeout(self.timeout, connecting)
            .await
            .unwrap_or_else(|_| Err(timed_out("the primary Redis Sentinel names")))
    }

    /// Drops the connection if `result` says it is broken or no longer the primary's.
    fn after<T>(&self, result: &RedisResult<T>, generation: u64) {
        let Err(e) = result else { return };
        let broken = e.is_io_error()
            || e.is_connection_dropped()
            || e.is_timeout()
            || e.is_unrecoverable_error()
            || matches!(e.kind(), ErrorKind::Server(ServerErrorKind::ReadOnly));
        if broken {
            let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
            if current.0 == generation {
                current.1 = None;
            }
        }
    }
}

fn timed_out(what: &str) -> RedisError {
    RedisError::from((ErrorKind::Io, "no answer in time", what.to_owned()))
}

impl Target {
    /// The connection, checked to answer `PING`, within `timeout` (at most twice it).
    pub(crate) async fn connect(&self, timeout: Duration) -> RedisResult<Conn> {
        let mut conn = match self {
            Target::Single(client) => {
                let config = redis::aio::ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(timeout))
                    .set_response_timeout(Some(timeout))
                    .set_number_of_retries(2)
                    .set_max_delay(Duration::from_millis(500));
                let connecting = ConnectionManager::new_with_config(client.clone(), config);
                Conn::Single(
                    tokio::time::timeout(timeout * 2, connecting)
                        .await
                        .unwrap_or_else(|_| Err(timed_out("the Redis server")))?,
                )
            }
            Target::Sentinel { client, config } => Conn::Sentinel(Arc::new(SentinelConn {
                sentinel: Arc::clone(client),
                current: Mutex::new((0, None)),
                config: config.clone(),
                timeout,
            })),
            Target::Cluster { client, .. } => Conn::Cluster(
                tokio::time::timeout(timeout * 2, client.get_async_connection())
                    .await
                    .unwrap_or_else(|_| Err(timed_out("the Redis Cluster")))?,
            ),
        };
        let _: () = redis::cmd("PING").query_async(&mut conn).await?;
        Ok(conn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(1);

    fn error(url: &str) -> String {
        match parse(url, T) {
            Ok(_) => panic!("{url} was taken"),
            Err(e) => e,
        }
    }

    #[test]
    fn the_three_forms_are_read() {
        assert!(matches!(
            parse("redis://127.0.0.1:6379/", T),
            Ok(Target::Single(_))
        ));
        for url in [
            "redis+sentinel://10.0.0.1:26379,10.0.0.2:26380/mymaster",
            "redis+sentinel://h1,h2,[::1]:26381/mymaster/2",
            "REDIS+SENTINEL://user:p%40ss@h1:26379/mymaster/",
        ] {
            assert!(
                matches!(parse(url, T), Ok(Target::Sentinel { .. })),
                "{url}"
            );
        }
        assert!(matches!(
            parse("redis+cluster://:secret@h1:7000,h2:7001,h3", T),
            Ok(Target::Cluster { .. })
        ));
    }

    #[test]
    fn bad_urls_are_clear_errors() {
        assert!(error("redis+sentinel://h1:26379").contains("names the primary's service"));
        assert!(error("redis+sentinel://h1:26379/").contains("names the primary's service"));
        assert!(error("redis+sentinel://h1:26379/m/x").contains("`x` is not a number"));
        assert!(error("redis+sentinel://h1:26379/m/0/z").contains("more path"));
        assert!(error("redis+sentinel://h1:port/m").contains("is not a port"));
        assert!(error("redis+sentinel://h1,,h2/m").contains("an empty host"));
        assert!(error("redis+sentinel://:26379/m").contains("names no host"));
        assert!(error("redis+cluster://h1:7000/3").contains("only database 0"));
        assert!(error("redis+cluster://").contains("an empty host"));
        assert!(!error("redis+cluster://user:hunter2@h1:x").contains("hunter2"));
        assert!(!error("mysql://h1").is_empty());
    }
}
