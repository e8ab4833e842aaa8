//! Proof under faults and at random: randomised histories checked against
//! the invariants after every step, a fault injected at every store and
//! sender call of each flow, and the security checks. See docs/RELIABILITY.md.

mod budget;
mod differential;
pub(crate) mod faults;
mod histories;
mod security;
