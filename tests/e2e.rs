//! restock's end-to-end tests, in one binary so the AWS SDK is linked once:
//!
//! - [`story`]: DESIGN §1 end to end on the AWS adapters (moto's DynamoDB,
//!   SES v2, SNS and Secrets Manager, a local Bedrock fake);
//! - [`inputs`]: every route's bad input;
//! - [`metrics`]: what each step counts for the team's dashboard;
//! - [`events`]: each `events/` fixture through the real handlers;
//! - [`feedback`]: SES bounces and complaints, read from the notices' tags;
//! - [`binaries`]: the compiled functions under a Lambda Runtime API emulator;
//! - [`breaker`]: a sender the provider refuses pauses sending, keeps the queue;
//! - [`confirm`]: double opt-in, consent on record, the inbox manage link;
//! - [`connect`]: `restock connect shopify` against moto and the Shopify fake;
//! - [`klaviyo`]: restock's events handed to Klaviyo's Events API (a fake);
//! - [`languages`]: each shopper told in their own language;
//! - [`notices`]: what a late notice says, and that a dead link is never sent;
//! - [`oncall`]: the on-call engineer's commands: rewake, …;
//! - [`privacy`]: Shopify's privacy topics: a customer erased, the team told;
//! - [`pull`]: the stock pull against Shopify and WooCommerce API fakes, and
//!   the webhook-silence alert;
//! - [`reliability`]: randomised histories, fault injection, security checks;
//! - [`template`]: `template.yaml`, the README, the docs and the code agree;
//! - [`woocommerce`]: the WordPress plugin's PHP, run, and its order through detect.
//!
//! Shared support is in the `restock-e2e` library, under `support/`: the
//! fixtures, the world, the runtime emulator, the deployment, one file per fake.

mod binaries;
mod breaker;
mod confirm;
mod connect;
mod events;
mod feedback;
mod inputs;
mod klaviyo;
mod languages;
mod metrics;
mod notices;
mod oncall;
mod privacy;
mod pull;
mod quiet;
mod reliability;
mod senders;
mod story;
mod template;
mod woocommerce;
