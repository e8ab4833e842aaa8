//! Wiring for the Lambda binaries: the environment read once into a typed
//! config (a missing variable is named), SDK clients built once, and the
//! adapters each function is allowed to have.
//!
//! | function | reads | may |
//! |---|---|---|
//! | capture | table, secret, metrics namespace | store, contact pepper |
//! | detect | table, secret, alert topic, metrics namespace | store, webhook keys, alerts |
//! | notify | table, secret, alert topic, model id, configuration set, event bus, Klaviyo on or off, metrics namespace | store, SES, SNS, Bedrock, alerts, events (and Klaviyo's access in the secret) |
//! | sweep | table, secret, alert topic, metrics namespace | store, alerts |
//!
//! Endpoints follow the SDK's usual rules, so `AWS_ENDPOINT_URL` (and
//! `AWS_ENDPOINT_URL_<SERVICE>`) point a binary at a local stand-in.

use std::sync::Arc;
use std::time::Duration;

use aws_config::SdkConfig;
use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;

pub use metrics_cloudwatch_embedded::Collector;
use restock_app::Services;
use restock_app::ports::{Disabled, OsEntropy, SystemClock};
use restock_store_dynamo::DynamoStore;

use crate::{AwsSender, BedrockPhraser, SecretsKeyring, SnsAlerts};

/// The DynamoDB table's name.
pub const TABLE: &str = "RESTOCK_TABLE";
/// The Secrets Manager secret (name or ARN) with the webhook keys and contact pepper.
pub const SECRET: &str = "RESTOCK_SECRET_ID";
/// The SNS topic the team's alerts go to.
pub const ALERT_TOPIC: &str = "RESTOCK_ALERT_TOPIC_ARN";
/// The Bedrock model notify phrases with.
pub const MODEL: &str = "RESTOCK_BEDROCK_MODEL_ID";
/// The SES configuration set notices are sent through (its event
/// destination brings bounces and complaints back to the sweep function).
pub const CONFIGURATION_SET: &str = "RESTOCK_SES_CONFIGURATION_SET";
/// The EventBridge bus notify publishes restock's events to.
pub const EVENT_BUS: &str = "RESTOCK_EVENT_BUS";
/// `on` to hand restock's events to Klaviyo as well (the template's
/// `KlaviyoEvents`; the private key is in the keys secret), `off` not to.
pub const KLAVIYO: &str = "RESTOCK_KLAVIYO_EVENTS";
/// The CloudWatch namespace the function's metrics are written under
/// (`restock/<stack>`, so two stacks in one account keep theirs apart).
pub const METRICS_NAMESPACE: &str = "RESTOCK_METRICS_NAMESPACE";

/// A required variable is missing.
#[derive(Debug, thiserror::Error)]
#[error(
    "environment variable {0} is not set (the SAM template sets it for this function; export it to run locally)"
)]
pub struct MissingVar(pub &'static str);

/// The four functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Function {
    /// Shopper-facing.
    Capture,
    /// Store-facing.
    Detect,
    /// Stream-driven.
    Notify,
    /// Scheduled.
    Sweep,
}

impl Function {
    /// Every function.
    pub const ALL: [Function; 4] = [Self::Capture, Self::Detect, Self::Notify, Self::Sweep];

    /// The binary's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Capture => "capture",
            Self::Detect => "detect",
            Self::Notify => "notify",
            Self::Sweep => "sweep",
        }
    }

    /// Exactly the variables this function's config reads.
    pub fn env(self) -> &'static [&'static str] {
        match self {
            Self::Capture => &[TABLE, SECRET, METRICS_NAMESPACE],
            Self::Detect => &[TABLE, SECRET, ALERT_TOPIC, EVENT_BUS, METRICS_NAMESPACE],
            Self::Notify => &[
                TABLE,
                SECRET,
                ALERT_TOPIC,
                MODEL,
                CONFIGURATION_SET,
                EVENT_BUS,
                KLAVIYO,
                METRICS_NAMESPACE,
            ],
            Self::Sweep => &[
                TABLE,
                SECRET,
                ALERT_TOPIC,
                CONFIGURATION_SET,
                EVENT_BUS,
                METRICS_NAMESPACE,
            ],
        }
    }
}

/// A function's configuration, read once.
#[derive(Debug, Clone)]
pub struct Config {
    function: Function,
    values: Vec<(&'static str, String)>,
}

impl Config {
    /// Reads the function's variables.
    ///
    /// # Errors
    /// [`MissingVar`] naming the first one missing or empty.
    pub fn from_env(function: Function) -> Result<Self, MissingVar> {
        Self::from_lookup(function, |name| std::env::var(name).ok())
    }

    /// Reads the variables through `lookup` (tests).
    ///
    /// # Errors
    /// [`MissingVar`] naming the first one missing or empty.
    pub fn from_lookup(
        function: Function,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, MissingVar> {
        let values = function
            .env()
            .iter()
            .map(|name| {
                lookup(name)
                    .filter(|v| !v.trim().is_empty())
                    .map(|v| (*name, v))
                    .ok_or(MissingVar(name))
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { function, values })
    }

    fn get(&self, name: &str) -> &str {
        self.values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
            .expect("read in from_lookup")
    }
}

/// How long any AWS call may take: a connection in 3 s, one attempt in 5 s,
/// the whole call (with the SDK's retries) in 10 s. Without these an SDK
/// call waits as long as the function's own timeout.
pub fn timeouts() -> TimeoutConfig {
    TimeoutConfig::builder()
        .connect_timeout(Duration::from_secs(3))
        .operation_attempt_timeout(Duration::from_secs(5))
        .operation_timeout(Duration::from_secs(10))
        .build()
}

/// The usual AWS configuration (profile, region, `AWS_ENDPOINT_URL`) with
/// [`timeouts`], and `endpoint` overriding the endpoint if given.
pub async fn sdk_config(endpoint: Option<&str>) -> SdkConfig {
    let mut loader =
        aws_config::defaults(aws_config::BehaviorVersion::latest()).timeout_config(timeouts());
    if let Some(url) = endpoint {
        loader = loader.endpoint_url(url);
    }
    loader.load().await
}

/// The sender's clients: SES v2 and SNS with the SDK's retries off. A send
/// whose answer was lost may have been delivered, and a notice goes at most
/// once (I8): notify decides what a failure means, never a blind retry.
pub fn sender(sdk: &SdkConfig) -> AwsSender {
    AwsSender::new(
        aws_sdk_sesv2::Client::from_conf(
            aws_sdk_sesv2::config::Builder::from(sdk)
                .retry_config(RetryConfig::disabled())
                .build(),
        ),
        aws_sdk_sns::Client::from_conf(
            aws_sdk_sns::config::Builder::from(sdk)
                .retry_config(RetryConfig::disabled())
                .build(),
        ),
    )
}

/// Installs the metrics recorder: what the handlers count
/// ([`restock_app::metrics`]) is written to stdout as CloudWatch
/// embedded-metric-format lines under the configured namespace, flushed
/// after each invocation by the runtime layer the binaries run behind
/// (`metrics_cloudwatch_embedded::lambda::service::run`). Lambda sends
/// stdout to the function's log group, where CloudWatch extracts them.
///
/// # Errors
/// A recorder was already installed.
pub fn metrics(config: &Config) -> Result<&'static Collector, lambda_runtime::Error> {
    let collector = metrics_cloudwatch_embedded::Builder::new()
        .cloudwatch_namespace(config.get(METRICS_NAMESPACE).to_owned())
        .init()
        .map_err(|e| format!("metrics recorder: {e}"))?;
    restock_app::metrics::describe();
    Ok(collector)
}

/// Where notify hands restock's events: the stack's bus, and Klaviyo too
/// when the stack turns it on (its key read from the keys secret).
fn events(
    sdk: &aws_config::SdkConfig,
    config: &Config,
    secrets: impl Fn() -> Arc<SecretsKeyring>,
) -> Arc<dyn restock_app::ports::EventSink> {
    let bus: Arc<dyn restock_app::ports::EventSink> = Arc::new(crate::EventBridgeSink::new(
        aws_sdk_eventbridge::Client::new(sdk),
        config.get(EVENT_BUS).to_owned(),
    ));
    if config.get(KLAVIYO) == "on" {
        Arc::new(crate::klaviyo::KlaviyoSink::new(bus, secrets()))
    } else {
        bus
    }
}

/// `services` with the platforms' Admin APIs (detect: which locations sell
/// online, a tie settled by asking for the level; the sweep: the pull) and
/// where an erasure goes (detect: to the sweep; the sweep: a shop's
/// erasure's next pages, to itself).
fn with_platforms(
    mut services: Services,
    erasures: Option<Arc<dyn restock_app::privacy::ErasureQueue>>,
) -> Services {
    services.platforms = Arc::new(crate::platforms::HttpPlatforms::new());
    services.erasures = erasures;
    services
}

/// Where detect hands an erasure, and the sweep a shop's erasure's next
/// pages: the stack's bus, whose Erasures rule runs the sweep (an erasure
/// reads the whole table).
fn erasures(
    sdk: &aws_config::SdkConfig,
    config: &Config,
) -> Arc<dyn restock_app::privacy::ErasureQueue> {
    Arc::new(crate::EventBridgeErasures::new(
        aws_sdk_eventbridge::Client::new(sdk),
        config.get(EVENT_BUS).to_owned(),
    ))
}

/// Builds the function's services on real AWS clients.
pub async fn services(config: &Config) -> Services {
    let sdk = sdk_config(None).await;
    let store = Arc::new(DynamoStore::new(
        aws_sdk_dynamodb::Client::new(&sdk),
        config.get(TABLE),
    ));
    let secrets = || {
        Arc::new(SecretsKeyring::new(
            aws_sdk_secretsmanager::Client::new(&sdk),
            config.get(SECRET).to_owned(),
        ))
    };
    let alerts = || {
        Arc::new(SnsAlerts::new(
            aws_sdk_sns::Client::new(&sdk),
            config.get(ALERT_TOPIC).to_owned(),
        ))
    };
    let (clock, entropy) = (Arc::new(SystemClock), Arc::new(OsEntropy));
    match config.function {
        Function::Capture => Services::new(
            store,
            Arc::new(Disabled),
            Arc::new(Disabled),
            secrets(),
            Arc::new(Disabled),
            clock,
            entropy,
        ),
        Function::Detect => with_platforms(
            Services::new(
                store,
                Arc::new(Disabled),
                Arc::new(Disabled),
                secrets(),
                alerts(),
                clock,
                entropy,
            ),
            Some(erasures(&sdk, config)),
        ),
        Function::Notify => {
            let sender =
                Arc::new(sender(&sdk).with_configuration_set(config.get(CONFIGURATION_SET)));
            let phraser = Arc::new(BedrockPhraser::new(
                aws_sdk_bedrockruntime::Client::new(&sdk),
                config.get(MODEL).to_owned(),
            ));
            let mut services = Services::new(
                store,
                sender,
                phraser,
                Arc::new(Disabled),
                alerts(),
                clock,
                entropy,
            );
            services.events = events(&sdk, config, secrets);
            services
        }
        Function::Sweep => {
            // The keys secret holds the platforms' API access for the pull;
            // the sender sends the offers' reminders.
            let sender =
                Arc::new(sender(&sdk).with_configuration_set(config.get(CONFIGURATION_SET)));
            let services = Services::new(
                store,
                sender,
                Arc::new(Disabled),
                secrets(),
                alerts(),
                clock,
                entropy,
            );
            with_platforms(services, Some(erasures(&sdk, config)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_variable_is_named() {
        let err = Config::from_lookup(Function::Notify, |name| {
            (name != MODEL).then(|| "x".to_owned())
        })
        .unwrap_err();
        assert_eq!(err.0, MODEL);
        assert!(err.to_string().contains("RESTOCK_BEDROCK_MODEL_ID"));
        let empty = Config::from_lookup(Function::Capture, |_| Some("  ".to_owned())).unwrap_err();
        assert_eq!(empty.0, TABLE);
        assert!(Config::from_lookup(Function::Sweep, |_| Some("v".to_owned())).is_ok());
    }
}
