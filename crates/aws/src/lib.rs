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
//! - [`http`]: capture's caller address from the Function URL's request context.
//! - [`logs`]: SNS's SMS delivery status logs from a CloudWatch Logs subscription.
//! - [`platforms`]: the Shopify and WooCommerce Admin APIs the stock pull reads.
//! - [`stream`]: notify's DynamoDB stream records decoded into woken SKUs.
//! - [`wiring`]: each function's typed configuration and services.

pub mod http;
pub mod logs;
pub mod platforms;
pub mod stream;
pub mod wiring;

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use aws_sdk_bedrockruntime::types::{
    ContentBlock, ConversationRole, ConverseOutput, InferenceConfiguration,
    Message as ModelMessage, SystemContentBlock,
};
use aws_sdk_sesv2::operation::send_email::SendEmailError;
use aws_sdk_sesv2::types::{Body, Content, Destination, EmailContent, Message, MessageHeader};
use aws_sdk_sns::operation::publish::PublishError;
use aws_sdk_sns::types::MessageAttributeValue;
use restock_app::ports::{
    Alert, AlertError, Alerts, KeyError, Keyring, PhraseError, Phraser, Secrets, SendError, Sender,
};
use restock_core::notice::{EmailNotice, LIST_UNSUBSCRIBE_POST, SmsNotice};
use restock_core::{Email, Phone};
use tokio::sync::Mutex;

/// Whether SES refused the *sender* rather than this recipient: the account
/// is paused or suspended, in the sandbox (an unverified address, sender or
/// recipient), the sender's domain is not verified, a sending quota or rate
/// is used up, or the configuration set is gone. Sending to anyone else would fail the same way.
fn ses_refuses_the_sender(e: &SendEmailError) -> bool {
    match e {
        SendEmailError::AccountSuspendedException(_)
        | SendEmailError::SendingPausedException(_)
        | SendEmailError::MailFromDomainNotVerifiedException(_)
        | SendEmailError::LimitExceededException(_)
        | SendEmailError::TooManyRequestsException(_)
        // What SendEmail names is the configuration set: every notice
        // goes through it, so every send would fail alike.
        | SendEmailError::NotFoundException(_) => true,
        // In the sandbox SES rejects every unverified address: "Email
        // address is not verified. The following identities failed the check".
        SendEmailError::MessageRejected(m) => m
            .message()
            .is_some_and(|m| m.contains("not verified") || m.contains("sandbox")),
        _ => false,
    }
}

/// Whether SNS refused the *sender*: not authorised, a KMS key it cannot
/// use, or throttled (the account's SMS rate or monthly spending limit).
fn sns_refuses_the_sender(e: &PublishError) -> bool {
    use aws_sdk_sns::error::ProvideErrorMetadata;
    let throttled = matches!(e.code(), Some("Throttling" | "ThrottledException"));
    throttled
        || matches!(
            e,
            PublishError::AuthorizationErrorException(_)
                | PublishError::InvalidSecurityException(_)
                | PublishError::KmsAccessDeniedException(_)
                | PublishError::KmsDisabledException(_)
                | PublishError::KmsInvalidStateException(_)
                | PublishError::KmsNotFoundException(_)
                | PublishError::KmsOptInRequired(_)
                | PublishError::KmsThrottlingException(_)
        )
}

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

fn content(text: &str) -> Result<Content, SendError> {
    Content::builder()
        .data(text)
        .charset("UTF-8")
        .build()
        .map_err(|e| SendError::Permanent(e.to_string()))
}

fn header(name: &str, value: &str) -> Result<MessageHeader, SendError> {
    MessageHeader::builder()
        .name(name)
        .value(value)
        .build()
        .map_err(|e| SendError::Permanent(e.to_string()))
}

#[async_trait]
impl Sender for AwsSender {
    async fn send_email(
        &self,
        from: &str,
        to: &Email,
        notice: &EmailNotice,
    ) -> Result<String, SendError> {
        let message = Message::builder()
            .subject(content(&notice.subject)?)
            .body(
                Body::builder()
                    .text(content(&notice.text)?)
                    .html(content(&notice.html)?)
                    .build(),
            )
            .headers(header("List-Unsubscribe", &notice.list_unsubscribe)?)
            .headers(header("List-Unsubscribe-Post", LIST_UNSUBSCRIBE_POST)?)
            .build();
        let result = self
            .ses
            .send_email()
            .from_email_address(from)
            .set_configuration_set_name(self.configuration_set.clone())
            .set_email_tags(Some(
                notice
                    .tags
                    .iter()
                    .map(|(name, value)| {
                        aws_sdk_sesv2::types::MessageTag::builder()
                            .name(name)
                            .value(value)
                            .build()
                            .map_err(|e| SendError::Permanent(e.to_string()))
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ))
            .destination(Destination::builder().to_addresses(to.as_str()).build())
            .content(EmailContent::builder().simple(message).build())
            .send()
            .await;
        match result {
            Ok(out) => Ok(out.message_id.unwrap_or_default()),
            Err(err) => Err(match err.as_service_error() {
                Some(e) if ses_refuses_the_sender(e) => SendError::Sender(format!("SES: {e}")),
                Some(
                    SendEmailError::MessageRejected(_) | SendEmailError::BadRequestException(_),
                ) => SendError::Permanent(format!(
                    "SES refused the message: {}",
                    err.as_service_error()
                        .map_or(String::new(), |e| e.to_string())
                )),
                _ if ambiguous(&err) => SendError::Unknown(format!(
                    "SES: {}",
                    aws_sdk_sesv2::error::DisplayErrorContext(&err)
                )),
                _ => SendError::Transient(format!(
                    "SES: {}",
                    aws_sdk_sesv2::error::DisplayErrorContext(&err)
                )),
            }),
        }
    }

    async fn send_sms(
        &self,
        sender_id: Option<&str>,
        to: &Phone,
        notice: &SmsNotice,
    ) -> Result<String, SendError> {
        let opted_out = self
            .sns
            .check_if_phone_number_is_opted_out()
            .phone_number(to.as_str())
            .send()
            .await
            .map_err(|e| {
                use aws_sdk_sns::operation::check_if_phone_number_is_opted_out::CheckIfPhoneNumberIsOptedOutError as Check;
                match e.as_service_error() {
                    // Throttled (the account's SMS rate) or not authorised:
                    // every number would fail the same way.
                    Some(Check::ThrottledException(_) | Check::AuthorizationErrorException(_)) => {
                        SendError::Sender(format!("SNS: {}", e.as_service_error().map_or(String::new(), ToString::to_string)))
                    }
                    Some(Check::InvalidParameterException(_)) => {
                        SendError::Permanent("SNS refused the number".into())
                    }
                    _ => SendError::Transient(format!(
                        "SNS: {}",
                        aws_sdk_sns::error::DisplayErrorContext(&e)
                    )),
                }
            })?;
        if opted_out.is_opted_out {
            return Err(SendError::OptedOut);
        }
        let attribute = |value: &str| {
            MessageAttributeValue::builder()
                .data_type("String")
                .string_value(value)
                .build()
                .map_err(|e| SendError::Permanent(e.to_string()))
        };
        let mut publish = self
            .sns
            .publish()
            .phone_number(to.as_str())
            .message(&notice.text)
            .message_attributes("AWS.SNS.SMS.SMSType", attribute("Transactional")?);
        if let Some(id) = sender_id {
            publish = publish.message_attributes("AWS.SNS.SMS.SenderID", attribute(id)?);
        }
        match publish.send().await {
            Ok(out) => Ok(out.message_id.unwrap_or_default()),
            Err(err) => Err(match err.as_service_error() {
                Some(e) if sns_refuses_the_sender(e) => SendError::Sender(format!("SNS: {e}")),
                Some(
                    PublishError::InvalidParameterException(_)
                    | PublishError::InvalidParameterValueException(_),
                ) => SendError::Permanent("SNS refused the number or message".into()),
                _ if ambiguous(&err) => SendError::Unknown(format!(
                    "SNS: {}",
                    aws_sdk_sns::error::DisplayErrorContext(&err)
                )),
                _ => SendError::Transient(format!(
                    "SNS: {}",
                    aws_sdk_sns::error::DisplayErrorContext(&err)
                )),
            }),
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
fn ambiguous<E, R>(err: &aws_sdk_sesv2::error::SdkError<E, R>) -> bool {
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

#[async_trait]
impl Alerts for SnsAlerts {
    async fn alert(&self, alert: &Alert) -> Result<(), AlertError> {
        // SNS subjects are at most 100 ASCII characters.
        let subject: String = alert
            .subject
            .chars()
            .filter(char::is_ascii)
            .take(100)
            .collect();
        self.client
            .publish()
            .topic_arn(&self.topic_arn)
            .subject(subject)
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
    use super::*;
    use aws_sdk_sesv2::types::error::{
        AccountSuspendedException, LimitExceededException, MailFromDomainNotVerifiedException,
        MessageRejected, SendingPausedException, TooManyRequestsException,
    };

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
