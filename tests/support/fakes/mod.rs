//! One file per fake of a service restock calls but cannot reach here.

pub mod bedrock;
pub mod dns;
pub mod klaviyo;
pub mod messaging;
pub mod platform;
pub mod provider;

pub use bedrock::*;
pub use dns::*;
pub use klaviyo::*;
pub use messaging::*;
pub use platform::*;
pub use provider::*;
