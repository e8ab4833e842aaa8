//! The stores' tests, in one binary so the AWS SDK is linked once:
//!
//! - [`conformance`]: `restock_store`'s conformance suite on the DynamoDB
//!   store (the in-memory store runs it in its own tests);
//! - [`concurrency`]: real parallel requests against the DynamoDB API;
//! - [`contention`]: the same where transactions really contend
//!   (`RESTOCK_DYNAMODB_CONTENDED_ENDPOINT`);
//! - [`events`]: restock's events read from the table's stream;
//! - [`interleavings`]: one operation landing between two requests of
//!   another, made certain;
//! - [`lag`]: the DynamoDB store where index reads lag the table, client
//!   tokens are enforced and conflicts and throttles are injected;
//! - [`round_trips`]: DynamoDB requests per operation, held to budgets;
//! - [`tickets`]: positions by ticket against positions counted from the queue.
//!
//! The DynamoDB API is moto's server behind the strict double in CI
//! (`RESTOCK_DYNAMODB_ENDPOINT`, and `RESTOCK_DYNAMODB_LAGGING_ENDPOINT` for
//! `lag`; both started by `scripts/test.sh`).

mod concurrency;
mod conformance;
mod contention;
mod events;
mod interleavings;
mod lag;
mod round_trips;
mod support;
mod tickets;
