//! The store's errors: only what the caller cannot decide around.

use std::error::Error as StdError;

/// A store failure. Lost races are outcomes, not errors (see [`crate::model`]).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The storage service could not be reached or refused the call; the
    /// source says why.
    #[error("{service} {operation} failed")]
    Backend {
        /// The service behind the adapter (`DynamoDB`).
        service: &'static str,
        /// The service's operation.
        operation: &'static str,
        /// The SDK's error, kept whole.
        #[source]
        source: Box<dyn StdError + Send + Sync>,
    },
    /// A stored item could not be read back: a bug or a manual edit.
    #[error("stored item {key} is unreadable: {reason}")]
    Corrupt {
        /// The item's key.
        key: String,
        /// What was wrong.
        reason: String,
    },
    /// Too many concurrent writers kept winning; the caller may retry later.
    #[error("gave up after repeated write conflicts on {0}")]
    Contention(String),
    /// The operation needs something that is not there (no settings, unknown SKU).
    #[error("{0}")]
    Missing(String),
    /// The change is not allowed; the message says why and what to do.
    #[error("{0}")]
    Refused(String),
}

impl StoreError {
    /// Whether retrying the whole operation later may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::Backend { .. } | Self::Contention(_))
    }

    /// A catalogue change that would lower a SKU's queue shards.
    pub fn shards_lowered(sku: &restock_core::Sku, from: u16, to: u16) -> Self {
        Self::Refused(format!(
            "{sku}: queue shards can be raised but not lowered ({from} -> {to}), because waiting requests already sit in the higher shards"
        ))
    }

    /// A failure of `service`'s `operation`, keeping the client's error whole.
    pub fn backend(
        service: &'static str,
        operation: &'static str,
        source: impl StdError + Send + Sync + 'static,
    ) -> Self {
        Self::Backend {
            service,
            operation,
            source: Box::new(source),
        }
    }

    /// An item at `key` that could not be read back, and why.
    pub fn corrupt(key: impl Into<String>, reason: impl ToString) -> Self {
        Self::Corrupt {
            key: key.into(),
            reason: reason.to_string(),
        }
    }
}
