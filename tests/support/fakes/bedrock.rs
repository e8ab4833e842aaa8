//! A local HTTP server that speaks Bedrock's Converse API.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;

/// What the Bedrock fake does.
#[derive(Debug, Clone)]
pub enum ModelMode {
    /// Answers with this text.
    Answer(String),
    /// Answers 500.
    Fail,
    /// Answers 403 `AccessDeniedException`, as Bedrock does for a model
    /// the account has no access to.
    Denied,
    /// Answers after this long.
    Slow(Duration),
}

/// A local HTTP server that speaks Bedrock's Converse API.
pub struct BedrockFake {
    /// Its base URL.
    pub url: String,
    /// Converse calls received.
    pub calls: Arc<AtomicUsize>,
    /// The system prompt of each call, in order.
    pub prompts: Arc<Mutex<Vec<String>>>,
    /// What it does next.
    pub mode: Arc<Mutex<ModelMode>>,
    /// How long each slow call was held open before it was answered or
    /// the caller hung up (what a timeout on the caller's side cuts short).
    pub held: Arc<Mutex<Vec<Duration>>>,
}

/// Records, when dropped, how long a slow call was held open: answered, or
/// dropped by the server because the caller hung up.
struct Held(std::time::Instant, Arc<Mutex<Vec<Duration>>>);

impl Drop for Held {
    fn drop(&mut self) {
        self.1.lock().expect("lock").push(self.0.elapsed());
    }
}

impl BedrockFake {
    /// Starts the fake on a free loopback port.
    pub async fn start(mode: ModelMode) -> Self {
        use axum::extract::{Path, State};
        use axum::response::IntoResponse;
        let calls = Arc::new(AtomicUsize::new(0));
        let prompts = Arc::new(Mutex::new(Vec::new()));
        let mode = Arc::new(Mutex::new(mode));
        let held = Arc::new(Mutex::new(Vec::new()));
        type Shared = (
            Arc<AtomicUsize>,
            Arc<Mutex<Vec<String>>>,
            Arc<Mutex<ModelMode>>,
            Arc<Mutex<Vec<Duration>>>,
        );
        async fn converse(
            State((calls, prompts, mode, held)): State<Shared>,
            Path(_model): Path<String>,
            body: String,
        ) -> axum::response::Response {
            let request: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
            if !request["messages"][0]["content"][0]["text"].is_string() {
                return (
                    StatusCode::BAD_REQUEST,
                    axum::Json(serde_json::json!({"message": "not a Converse request"})),
                )
                    .into_response();
            }
            calls.fetch_add(1, Ordering::SeqCst);
            prompts.lock().expect("lock").push(
                request["system"][0]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            );
            let mode = mode.lock().expect("lock").clone();
            match mode {
                ModelMode::Fail => (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    axum::Json(serde_json::json!({"message": "model down"})),
                )
                    .into_response(),
                ModelMode::Denied => (
                    StatusCode::FORBIDDEN,
                    [("x-amzn-ErrorType", "AccessDeniedException:http://internal.amazon.com/coral/com.amazon.bedrock/")],
                    axum::Json(serde_json::json!({"message": "You don't have access to the model with the specified model ID."})),
                )
                    .into_response(),
                ModelMode::Slow(d) => {
                    let _held = Held(std::time::Instant::now(), held);
                    tokio::time::sleep(d).await;
                    axum::Json(reply("Too late to matter.")).into_response()
                }
                ModelMode::Answer(text) => axum::Json(reply(&text)).into_response(),
            }
        }
        fn reply(text: &str) -> serde_json::Value {
            serde_json::json!({
                "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
                "stopReason": "end_turn",
                "usage": {"inputTokens": 40, "outputTokens": 14, "totalTokens": 54},
                "metrics": {"latencyMs": 120}
            })
        }
        let app = Router::new()
            .route("/model/{model}/converse", axum::routing::post(converse))
            .with_state((calls.clone(), prompts.clone(), mode.clone(), held.clone()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        tokio::spawn(async move { axum::serve(listener, app).await.expect("fake serves") });
        Self {
            url,
            calls,
            prompts,
            mode,
            held,
        }
    }

    /// Converse calls received so far.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// The system prompts received so far.
    pub fn prompts(&self) -> Vec<String> {
        self.prompts.lock().expect("lock").clone()
    }

    /// Changes what it does next.
    pub fn set(&self, mode: ModelMode) {
        *self.mode.lock().expect("lock") = mode;
    }
}
