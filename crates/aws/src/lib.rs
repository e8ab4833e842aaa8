//! # restock-aws
//!
//! The AWS adapters behind restock-app's ports. Each builds on an SDK client
//! made once per process and keeps the SDK's error as the source.
//!
//! - [`AwsSender`]: email through SES v2 (text and HTML parts, one-click
//!   unsubscribe headers), SMS through SNS (transactional, with a sender id;
//!   numbers opted out at SNS are reported as opt-outs).
//! - [`BedrockPhraser`]: one Converse call per restock batch.
//! - [`SecretsKeyring`]: the webhook keys and contact pepper from Secrets
//!   Manager, cached for at most five minutes, never logged.
//! - [`SnsAlerts`]: team alerts to an SNS topic.
//! - [`EventBridgeSink`]: restock's events onto the stack's event bus.
//! - [`http`]: capture's caller address from the Function URL's request context.
//! - [`logs`]: SNS's SMS delivery status logs from a CloudWatch Logs subscription.
//! - [`platforms`]: the Shopify and WooCommerce Admin APIs the stock pull reads.
//! - [`stream`]: notify's DynamoDB stream records decoded into woken SKUs.
//! - [`wiring`]: each function's typed configuration and services.

mod channels;
pub mod connect;
#[cfg(feature = "doctor")]
pub mod doctor;
mod events;
pub mod http;
pub mod klaviyo;
pub mod logs;
pub mod platforms;
pub mod sdk_error;
pub mod stream;
pub mod wiring;

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use aws_sdk_bedrockruntime::types::{
    ContentBlock, ConversationRole, ConverseOutput, InferenceConfiguration,
    Message as ModelMessage, SystemContentBlock,
};
use restock_app::ports::{
    Alert, AlertError, Alerts, KeyError, Keyring, PhraseError, Phraser, Secrets, SendError, Sender,
    wrong_channel,
};
use restock_core::{Contact, Message};
use tokio::sync::Mutex;

pub use events::{ERASURE_SOURCE, EventBridgeErasures, EventBridgeSink};

/// How long webhook keys are kept before Secrets Manager is asked again.
pub const KEY_CACHE: Duration = Duration::from_secs(300);

/// Sends email with SES v2 and SMS with SNS.
#[derive(Debug, Clone)]
pub struct AwsSender {
    ses: aws_sdk_sesv2::Client,
    sns: aws_sdk_sns::Client,
    configuration_set: Option<String>,
}

impl AwsSender {
    /// A sender on the two clients; the sender identity comes with each call
    /// from the settings.
    pub fn new(ses: aws_sdk_sesv2::Client, sns: aws_sdk_sns::Client) -> Self {
        Self {
            ses,
            sns,
            configuration_set: None,
        }
    }

    /// Sends every email through the SES configuration set `name`, whose
    /// event destination brings bounces and complaints back to restock.
    #[must_use]
    pub fn with_configuration_set(mut self, name: impl Into<String>) -> Self {
        self.configuration_set = Some(name.into());
        self
    }
}

#[async_trait]
impl Sender for AwsSender {
    async fn send(&self, to: &Contact, message: &Message) -> Result<String, SendError> {
        match (to, message) {
            (Contact::Email(to), Message::Email { from, notice }) => {
                channels::email::send(
                    &self.ses,
                    self.configuration_set.as_deref(),
                    from,
                    to,
                    notice,
                )
                .await
            }
            (Contact::Sms(to), Message::Sms { sender_id, notice }) => {
                channels::sms::send(&self.sns, sender_id.as_deref(), to, notice).await
            }
            _ => Err(wrong_channel(to, message)),
        }
    }
}

/// One Converse call on a configured model.
#[derive(Debug, Clone)]
pub struct BedrockPhraser {
    client: aws_sdk_bedrockruntime::Client,
    model_id: String,
}

impl BedrockPhraser {
    /// A phraser on `model_id`.
    pub fn new(client: aws_sdk_bedrockruntime::Client, model_id: String) -> Self {
        Self { client, model_id }
    }
}

#[async_trait]
impl Phraser for BedrockPhraser {
    async fn phrase(&self, system: &str, user: &str) -> Result<String, PhraseError> {
        let message = ModelMessage::builder()
            .role(ConversationRole::User)
            .content(ContentBlock::Text(user.to_owned()))
            .build()
            .map_err(|e| PhraseError(e.to_string()))?;
        let out = self
            .client
            .converse()
            .model_id(&self.model_id)
            .system(SystemContentBlock::Text(system.to_owned()))
            .messages(message)
            .inference_config(
                InferenceConfiguration::builder()
                    .max_tokens(80)
                    .temperature(0.7)
                    .build(),
            )
            .send()
            .await
            .map_err(|e| {
                PhraseError(format!(
                    "Bedrock: {}",
                    aws_sdk_bedrockruntime::error::DisplayErrorContext(&e)
                ))
            })?;
        let Some(ConverseOutput::Message(message)) = out.output else {
            return Err(PhraseError("Bedrock returned no message".into()));
        };
        let text: String = message
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        Ok(text)
    }
}

/// Whether a failed call may still have reached the provider: a timeout, a
/// dropped connection, or an answer that could not be read. A refusal the
/// provider answered (throttling, a service error) was not accepted.
pub(crate) fn ambiguous<E, R>(err: &aws_sdk_sesv2::error::SdkError<E, R>) -> bool {
    use aws_sdk_sesv2::error::SdkError;
    match err {
        SdkError::TimeoutError(_) | SdkError::ResponseError(_) => true,
        SdkError::DispatchFailure(failure) => failure.is_timeout() || failure.is_io(),
        _ => false,
    }
}

/// The webhook keys and contact pepper, from one Secrets Manager secret.
pub struct SecretsKeyring {
    client: aws_sdk_secretsmanager::Client,
    secret_id: String,
    cache: Mutex<Option<(Instant, Arc<Secrets>)>>,
}

impl SecretsKeyring {
    /// A keyring on the secret `secret_id` (name or ARN).
    pub fn new(client: aws_sdk_secretsmanager::Client, secret_id: String) -> Self {
        Self {
            client,
            secret_id,
            cache: Mutex::new(None),
        }
    }
}

#[async_trait]
impl Keyring for SecretsKeyring {
    async fn keys(&self) -> Result<Arc<Secrets>, KeyError> {
        let mut cache = self.cache.lock().await;
        if let Some((at, secrets)) = cache.as_ref()
            && at.elapsed() < KEY_CACHE
        {
            return Ok(secrets.clone());
        }
        let out = self
            .client
            .get_secret_value()
            .secret_id(&self.secret_id)
            .send()
            .await
            .map_err(|e| {
                KeyError(format!(
                    "Secrets Manager: {}",
                    aws_sdk_secretsmanager::error::DisplayErrorContext(&e)
                ))
            })?;
        let json = out
            .secret_string
            .ok_or_else(|| KeyError("the secret has no string value".into()))?;
        let secrets = Arc::new(Secrets::from_json(&json)?);
        *cache = Some((Instant::now(), secrets.clone()));
        Ok(secrets)
    }
}

/// Team alerts on an SNS topic.
#[derive(Debug, Clone)]
pub struct SnsAlerts {
    client: aws_sdk_sns::Client,
    topic_arn: String,
}

impl SnsAlerts {
    /// Alerts to `topic_arn`.
    pub fn new(client: aws_sdk_sns::Client, topic_arn: String) -> Self {
        Self { client, topic_arn }
    }
}

/// An alert's subject as SNS takes it: at most 100 ASCII characters.
#[must_use]
pub fn sns_subject(subject: &str) -> String {
    subject.chars().filter(char::is_ascii).take(100).collect()
}

#[async_trait]
impl Alerts for SnsAlerts {
    async fn alert(&self, alert: &Alert) -> Result<(), AlertError> {
        self.client
            .publish()
            .topic_arn(&self.topic_arn)
            .subject(sns_subject(&alert.subject))
            .message(&alert.body)
            .send()
            .await
            .map_err(|e| {
                AlertError(format!(
                    "SNS: {}",
                    aws_sdk_sns::error::DisplayErrorContext(&e)
                ))
            })?;
        Ok(())
    }
}

#[cfg(test)]
mod sender_classes {
    use crate::channels::email::ses_refuses_the_sender;
    use crate::channels::sms::sns_refuses_the_sender;
    use aws_sdk_sesv2::operation::send_email::SendEmailError;
    use aws_sdk_sesv2::types::error::{
        AccountSuspendedException, LimitExceededException, MailFromDomainNotVerifiedException,
        MessageRejected, SendingPausedException, TooManyRequestsException,
    };
    use aws_sdk_sns::operation::publish::PublishError;

    #[test]
    fn ses_errors_about_the_account_pause_sending_and_the_rest_are_the_recipients() {
        let rejected = |m: &str| {
            SendEmailError::MessageRejected(MessageRejected::builder().message(m).build())
        };
        for sender in [
            SendEmailError::AccountSuspendedException(AccountSuspendedException::builder().build()),
            SendEmailError::SendingPausedException(SendingPausedException::builder().build()),
            SendEmailError::MailFromDomainNotVerifiedException(
                MailFromDomainNotVerifiedException::builder().build(),
            ),
            SendEmailError::LimitExceededException(
                LimitExceededException::builder()
                    .message("Daily message quota exceeded.")
                    .build(),
            ),
            SendEmailError::TooManyRequestsException(TooManyRequestsException::builder().build()),
            rejected(
                "Email address is not verified. The following identities failed the check in region EU-WEST-2: a@b.example",
            ),
            rejected("Email address not verified hello@shop.example"),
        ] {
            assert!(ses_refuses_the_sender(&sender), "{sender:?}");
        }
        assert!(!ses_refuses_the_sender(&rejected(
            "Message contains a virus."
        )));
    }

    #[test]
    fn sns_authorisation_and_throttling_pause_sending_a_bad_number_does_not() {
        use aws_sdk_sns::types::error::{AuthorizationErrorException, InvalidParameterException};
        assert!(sns_refuses_the_sender(
            &PublishError::AuthorizationErrorException(
                AuthorizationErrorException::builder().build()
            )
        ));
        assert!(!sns_refuses_the_sender(
            &PublishError::InvalidParameterException(InvalidParameterException::builder().build())
        ));
    }
}
