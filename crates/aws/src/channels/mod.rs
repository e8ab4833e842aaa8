//! One module per channel the sender sends on ([`email`], [`sms`]); the
//! sender port's `send` dispatches by the message's channel.

pub(crate) mod email;
pub(crate) mod sms;
