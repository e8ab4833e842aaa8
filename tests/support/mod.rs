//! Test support, one home per kind: the fixtures, the [`world::World`], the
//! moto helpers, the Lambda Runtime API emulator, the deployment, captured
//! logs, and one file per fake.

pub mod deployment;
pub mod fakes;
pub mod fixtures;
pub mod logs;
pub mod moto;
pub mod runtime;
pub mod world;

pub use deployment::*;
pub use fakes::*;
pub use fixtures::*;
pub use logs::*;
pub use moto::*;
pub use runtime::*;
pub use world::*;
