//! The stores' tests, in one binary so the AWS SDK is linked once:
//!
//! - [`conformance`]: one suite, run on the in-memory and the DynamoDB store;
//! - [`concurrency`]: real parallel requests against the DynamoDB API;
//! - [`round_trips`]: DynamoDB requests per operation, held to budgets.
//!
//! The DynamoDB API is moto's server in CI (`RESTOCK_DYNAMODB_ENDPOINT`,
//! started by `scripts/test.sh`).

mod concurrency;
mod conformance;
mod round_trips;
