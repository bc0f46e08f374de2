//! Issue 33, point 1 (its first half): the messages between replicas are kept in Redis
//! (a stream each replica reads from the last message it took), so a replica whose
//! subscription was cut takes, once it subscribes again, what was sent meanwhile — where
//! pub/sub dropped it. A replica's first subscription hears only what is sent from then
//! on. Against a real `redis-server` (tests/replicas.rs says how to get one).

mod kit;

use bytes::Bytes;
use futures_util::stream::{BoxStream, StreamExt};
use mcp_runtime_http::SessionStore;
use mcp_runtime_redis::RedisStore;

use kit::redis::Redis;

async fn next(bus: &mut BoxStream<'static, Bytes>) -> Option<String> {
    tokio::time::timeout(kit::patience(), bus.next())
        .await
        .unwrap_or_else(|_| panic!("the bus was silent for the patience"))
        .map(|m| String::from_utf8_lossy(&m).into_owned())
}

/// Publishes, retrying while the store reconnects after its connections were cut.
async fn publish(store: &RedisStore, message: &'static str) {
    let started = std::time::Instant::now();
    while let Err(e) = store.publish(Bytes::from_static(message.as_bytes())).await {
        assert!(started.elapsed() < kit::patience(), "publishing: {e}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_replica_that_subscribes_again_takes_what_was_sent_meanwhile() {
    let redis = Redis::start();
    let store = RedisStore::connect(&redis.url())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    publish(&store, "before").await;
    let mut bus = store.subscribe().await.unwrap_or_else(|e| panic!("{e}"));
    publish(&store, "one").await;
    // "before" was sent before the first subscription: not heard.
    assert_eq!(next(&mut bus).await.as_deref(), Some("one"));

    // Every client connection cut, the bus reader's among them: the stream ends.
    redis.cli(&["CLIENT", "KILL", "TYPE", "normal"]);
    assert_eq!(next(&mut bus).await, None);
    publish(&store, "two").await;
    publish(&store, "three").await;
    let mut bus = store.subscribe().await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(next(&mut bus).await.as_deref(), Some("two"));
    assert_eq!(next(&mut bus).await.as_deref(), Some("three"));

    // Another replica's first subscription starts from now; both hear what follows.
    let other = RedisStore::connect(&redis.url())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut other_bus = other.subscribe().await.unwrap_or_else(|e| panic!("{e}"));
    publish(&other, "four").await;
    assert_eq!(next(&mut other_bus).await.as_deref(), Some("four"));
    assert_eq!(next(&mut bus).await.as_deref(), Some("four"));
}

#[tokio::test]
async fn the_bus_keeps_about_its_backlog() {
    let redis = Redis::start();
    let store = RedisStore::connect(&redis.url())
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .relay_backlog(10);
    for _ in 0..1_000 {
        publish(&store, "m").await;
    }
    let kept: u64 = redis
        .cli(&["XLEN", "mcp:bus"])
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("XLEN: {e}"));
    // `MAXLEN ~` trims whole blocks of entries (100 by default): about, not exactly.
    assert!((10..=200).contains(&kept), "{kept}");
}
