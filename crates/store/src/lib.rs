//! # restock-store
//!
//! Where restock keeps its state, behind one port and two adapters.
//!
//! - [`port`]: the [`Store`] trait — the product's operations (join, hold,
//!   apply a stock event, create offers, expire...), not a key-value wrapper.
//! - [`model`]: the records and the outcome enums those operations answer
//!   with; a lost race is an outcome, never an error.
//! - [`memory`]: [`MemoryStore`], one mutex over plain maps — local mode and
//!   fast tests.
//! - [`dynamo`]: [`DynamoStore`], the production adapter: one table, every
//!   contended change a condition expression or a transaction, no scans.
//! - [`error`]: [`StoreError`], for what no caller can decide around.
//! - [`testing`]: a DynamoDB store on a fresh table for tests (moto in CI).
//!
//! The decisions themselves (order, caps, transitions) come from
//! `restock-core`; both adapters only apply them atomically.
#![warn(missing_docs)]

pub mod dynamo;
pub mod error;
pub mod memory;
pub mod model;
pub mod port;
pub mod testing;

pub use dynamo::DynamoStore;
pub use error::StoreError;
pub use memory::MemoryStore;
pub use model::*;
pub use port::Store;
