//! SMS through SNS: transactional, with a sender id where the destination
//! takes one; a number opted out at SNS is reported as an opt-out.

use aws_sdk_sns::operation::publish::PublishError;
use aws_sdk_sns::types::MessageAttributeValue;
use restock_app::ports::SendError;
use restock_core::Phone;
use restock_core::notice::SmsNotice;

use crate::ambiguous;

/// Whether SNS refused the *sender*: not authorised, a KMS key it cannot
/// use, or throttled (the account's SMS rate or monthly spending limit).
pub(crate) fn sns_refuses_the_sender(e: &PublishError) -> bool {
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

/// Sends one transactional text, under `sender_id` where given; a number
/// opted out at SNS is [`SendError::OptedOut`].
pub(crate) async fn send(
    sns: &aws_sdk_sns::Client,
    sender_id: Option<&str>,
    to: &Phone,
    notice: &SmsNotice,
) -> Result<String, SendError> {
    let opted_out = sns
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
    let mut publish = sns
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
