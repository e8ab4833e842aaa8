//! What a run logs, captured: a JSON `tracing` subscriber writing into
//! memory, for tests that search the logs for what must never be in them.

use std::sync::{Arc, Mutex};

/// A writer the subscriber appends to.
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Runs `run` on a runtime of its own with every log line (debug and up,
/// as JSON) captured; its answer and the logs.
pub fn logged<T>(run: impl std::future::Future<Output = T>) -> (T, String) {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .with_max_level(tracing::Level::DEBUG)
        .with_writer(move || writer.clone())
        .finish();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let out = tracing::subscriber::with_default(subscriber, || runtime.block_on(run));
    let logs = String::from_utf8(captured.0.lock().expect("lock").clone()).expect("utf-8 logs");
    (out, logs)
}
