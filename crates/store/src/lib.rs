//! # restock-store
//!
//! The store port: what restock persists, as the product's operations, with
//! no storage behind it. The adapters live in crates of their own —
//! `restock-store-memory` (local mode, fast tests) and `restock-store-dynamo`
//! (production) — and `restock-app` depends on this crate only.
//!
//! - [`port`]: the [`Store`] trait, cut into the sections the functions use
//!   ([`CatalogueStore`], [`CaptureStore`], [`DetectStore`], [`NotifyStore`],
//!   [`AbuseStore`], [`SweepStore`], [`FiguresStore`]).
//! - [`model`]: the records and the outcome enums those operations answer
//!   with; a lost race is an outcome, never an error.
//! - [`error`]: [`StoreError`], for what no caller can decide around.
//! - [`prelude`]: the port's traits, for callers of a `dyn Store`.
//! - `conformance` (with the `conformance` feature): the cases every adapter
//!   must pass, run by each adapter's own tests.
//!
//! The decisions themselves (order, caps, transitions) come from
//! `restock-core`; the adapters only apply them atomically.
#![warn(missing_docs)]

#[cfg(feature = "conformance")]
pub mod conformance;
pub mod error;
pub mod model;
pub mod port;
pub mod retry;

pub use error::StoreError;
pub use model::*;
pub use port::{
    AbuseStore, CaptureStore, CatalogueStore, DetectStore, FiguresStore, NotifyStore, Random,
    Store, SweepStore,
};

/// The port's traits: `use restock_store::prelude::*;` makes every
/// operation of a `dyn Store` callable.
pub mod prelude {
    pub use crate::port::{
        AbuseStore, CaptureStore, CatalogueStore, DetectStore, FiguresStore, NotifyStore, Store,
        SweepStore,
    };
}
