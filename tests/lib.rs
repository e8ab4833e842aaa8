//! End-to-end test support: a [`World`] that runs restock's real routers and
//! handlers, on the in-memory store with an outbox, or on the AWS adapters
//! against moto's DynamoDB, SES, SNS and Secrets Manager with a local Bedrock
//! fake that speaks the Converse API.
//!
//! The stream that carries wakes to notify is emulated by [`World::pump`],
//! which runs the notify handler for every SKU with new wake records, the way
//! the DynamoDB stream would.
//!
//! Everything lives under [`support`]; it is re-exported here so a test
//! reads `use restock_e2e::*`.

pub mod support;

pub use support::*;
