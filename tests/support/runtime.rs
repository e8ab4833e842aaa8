//! A Lambda Runtime API emulator the compiled binaries poll for events.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;

/// What a function answered to one invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The handler's response body.
    Response(String),
    /// The handler's error report.
    Error(String),
}

struct Invocation {
    id: String,
    event: String,
    done: tokio::sync::oneshot::Sender<Outcome>,
}

#[derive(Clone)]
struct EmulatorState {
    queue: Arc<tokio::sync::Mutex<tokio::sync::mpsc::Receiver<Invocation>>>,
    pending: Arc<Mutex<HashMap<String, tokio::sync::oneshot::Sender<Outcome>>>>,
    first_poll: Arc<Mutex<Option<std::time::Instant>>>,
    polls: Arc<AtomicUsize>,
    init_error: Arc<Mutex<Option<String>>>,
    /// How far the function's clock is set from the wall clock (libfaketime).
    clock_offset_ms: Arc<Mutex<i128>>,
}

/// A Lambda Runtime API emulator on loopback: the compiled binaries poll it
/// for events exactly as they poll Lambda.
pub struct RuntimeApi {
    /// `host:port`, for `AWS_LAMBDA_RUNTIME_API`.
    pub addr: String,
    send: tokio::sync::mpsc::Sender<Invocation>,
    state: EmulatorState,
    next_id: AtomicUsize,
}

impl RuntimeApi {
    /// Starts the emulator on a free port.
    pub async fn start() -> Self {
        use axum::extract::{Path, State};
        use axum::response::IntoResponse;
        let (send, receive) = tokio::sync::mpsc::channel::<Invocation>(16);
        let state = EmulatorState {
            queue: Arc::new(tokio::sync::Mutex::new(receive)),
            pending: Arc::new(Mutex::new(HashMap::new())),
            first_poll: Arc::new(Mutex::new(None)),
            polls: Arc::new(AtomicUsize::new(0)),
            init_error: Arc::new(Mutex::new(None)),
            clock_offset_ms: Arc::new(Mutex::new(0)),
        };
        async fn next(State(s): State<EmulatorState>) -> axum::response::Response {
            s.first_poll
                .lock()
                .expect("lock")
                .get_or_insert_with(std::time::Instant::now);
            s.polls.fetch_add(1, Ordering::SeqCst);
            let Some(invocation) = s.queue.lock().await.recv().await else {
                return StatusCode::GONE.into_response();
            };
            s.pending
                .lock()
                .expect("lock")
                .insert(invocation.id.clone(), invocation.done);
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .expect("clock")
                .as_millis();
            // On the function's clock, as Lambda's deadline is on Lambda's.
            let deadline = i128::try_from(now).expect("a time")
                + *s.clock_offset_ms.lock().expect("lock")
                + 60_000;
            (
                [
                    ("lambda-runtime-aws-request-id", invocation.id),
                    ("lambda-runtime-deadline-ms", deadline.to_string()),
                    ("lambda-runtime-invoked-function-arn", "arn:aws:lambda:eu-west-2:123456789012:function:restock".to_owned()),
                    ("lambda-runtime-trace-id", "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1".to_owned()),
                    ("content-type", "application/json".to_owned()),
                ],
                invocation.event,
            )
                .into_response()
        }
        async fn respond(
            State(s): State<EmulatorState>,
            Path(id): Path<String>,
            body: String,
        ) -> StatusCode {
            if let Some(done) = s.pending.lock().expect("lock").remove(&id) {
                let _ = done.send(Outcome::Response(body));
            }
            StatusCode::ACCEPTED
        }
        async fn fail(
            State(s): State<EmulatorState>,
            Path(id): Path<String>,
            body: String,
        ) -> StatusCode {
            if let Some(done) = s.pending.lock().expect("lock").remove(&id) {
                let _ = done.send(Outcome::Error(body));
            }
            StatusCode::ACCEPTED
        }
        async fn init_error(State(s): State<EmulatorState>, body: String) -> StatusCode {
            *s.init_error.lock().expect("lock") = Some(body);
            StatusCode::ACCEPTED
        }
        let app = Router::new()
            .route(
                "/2018-06-01/runtime/invocation/next",
                axum::routing::get(next),
            )
            .route(
                "/2018-06-01/runtime/invocation/{id}/response",
                axum::routing::post(respond),
            )
            .route(
                "/2018-06-01/runtime/invocation/{id}/error",
                axum::routing::post(fail),
            )
            .route(
                "/2018-06-01/runtime/init/error",
                axum::routing::post(init_error),
            )
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr").to_string();
        tokio::spawn(async move { axum::serve(listener, app).await.expect("emulator serves") });
        Self {
            addr,
            send,
            state,
            next_id: AtomicUsize::new(1),
        }
    }

    /// Gives the deadlines of later invocations on a function clock set
    /// `offset_ms` from the wall clock (as libfaketime sets it).
    pub fn clock_offset(&self, offset_ms: i128) {
        *self.state.clock_offset_ms.lock().expect("lock") = offset_ms;
    }

    /// Invokes the function with `event` and waits (up to a minute) for its answer.
    pub async fn invoke(&self, event: &str) -> Outcome {
        self.invoke_within(event, Duration::from_secs(60)).await
    }

    /// Invokes the function with `event` and waits up to `limit` for its answer.
    pub async fn invoke_within(&self, event: &str, limit: Duration) -> Outcome {
        let (done, answer) = tokio::sync::oneshot::channel();
        let id = format!("req-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        self.send
            .send(Invocation {
                id,
                event: event.to_owned(),
                done,
            })
            .await
            .expect("emulator running");
        tokio::time::timeout(limit, answer)
            .await
            .expect("the function answered in time")
            .expect("answer")
    }

    /// Waits (up to `limit`) until the function has finished every
    /// invocation sent and asked for the next: whatever it does after
    /// answering (flushing its metrics) is then done, as Lambda would
    /// wait before freezing it. Answers whether it did.
    pub async fn wait_idle(&self, limit: Duration) -> bool {
        let sent = self.next_id.load(Ordering::Relaxed) - 1;
        let started = std::time::Instant::now();
        while started.elapsed() < limit {
            if self.state.polls.load(Ordering::SeqCst) > sent {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        false
    }

    /// When the function first asked for an event (its init was done).
    pub fn first_poll(&self) -> Option<std::time::Instant> {
        *self.state.first_poll.lock().expect("lock")
    }

    /// Waits for the first poll, up to `limit`.
    pub async fn wait_first_poll(&self, limit: Duration) -> Option<std::time::Instant> {
        let started = std::time::Instant::now();
        while started.elapsed() < limit {
            if let Some(at) = self.first_poll() {
                return Some(at);
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        None
    }
}

/// The environment Lambda gives every function, pointed at `api`.
pub fn lambda_env(api: &RuntimeApi, function: &str) -> Vec<(String, String)> {
    [
        ("AWS_LAMBDA_RUNTIME_API", api.addr.as_str()),
        ("AWS_LAMBDA_FUNCTION_NAME", function),
        ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128"),
        ("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST"),
        ("AWS_LAMBDA_LOG_FORMAT", "JSON"),
        ("AWS_LAMBDA_LOG_LEVEL", "INFO"),
        ("AWS_REGION", "eu-west-2"),
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}
