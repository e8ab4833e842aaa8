//! What the local server's tests share: a server on the in-memory store,
//! seeded with the demo shop, and a call through its router.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use restock_local::{Options, build, memory_store, seed};
use tower::ServiceExt;

pub async fn local() -> Arc<restock_local::Local> {
    let store = memory_store();
    seed(store.as_ref(), 3000, 3001).await.unwrap();
    let dir = std::env::temp_dir().join(format!("restock-local-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    build(&Options {
        port: 3000,
        capture_port: 3001,
        outbox: dir.join(format!("{:?}.jsonl", std::thread::current().id())),
        store,
        phraser: None,
    })
    .unwrap()
}

/// Calls `router` as a browser or curl on this machine would: addressed to
/// the loopback host unless the request names another (every route of the
/// local server answers only to a loopback `Host`).
pub async fn call(router: &axum::Router, mut request: Request<Body>) -> (StatusCode, String) {
    if !request.headers().contains_key("host") {
        request
            .headers_mut()
            .insert("host", "127.0.0.1:3000".parse().unwrap());
    }
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let body = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    (status, String::from_utf8_lossy(&body).into_owned())
}
