//! One file per fake of a service restock calls but cannot reach here.

pub mod bedrock;
pub mod klaviyo;
pub mod platform;
pub mod provider;

pub use bedrock::*;
pub use klaviyo::*;
pub use platform::*;
pub use provider::*;
