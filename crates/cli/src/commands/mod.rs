//! One module per command group; each exposes the functions `main.rs`
//! dispatches to. Commands the admin port runs as they are go through
//! [`admin::command`].

pub(crate) mod admin;
pub(crate) mod catalogue;
pub(crate) mod connect;
pub(crate) mod dashboard;
pub(crate) mod dlq;
pub(crate) mod export;
pub(crate) mod webhook;
