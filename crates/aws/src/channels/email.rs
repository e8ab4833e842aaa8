//! Email through SES v2: text and HTML parts, one-click unsubscribe
//! headers, the offer's tags for the feedback that comes back.

use aws_sdk_sesv2::operation::send_email::SendEmailError;
use aws_sdk_sesv2::types::{Body, Content, Destination, EmailContent, Message, MessageHeader};
use restock_app::ports::SendError;
use restock_core::Email;
use restock_core::notice::{EmailNotice, LIST_UNSUBSCRIBE_POST};

use crate::ambiguous;

/// Whether SES refused the *sender* rather than this recipient: the account
/// is paused or suspended, in the sandbox (an unverified address, sender or
/// recipient), the sender's domain is not verified, a sending quota or rate
/// is used up, or the configuration set is gone. Sending to anyone else would fail the same way.
pub(crate) fn ses_refuses_the_sender(e: &SendEmailError) -> bool {
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

/// Sends one email from `from` through the configuration set, if any.
pub(crate) async fn send(
    ses: &aws_sdk_sesv2::Client,
    configuration_set: Option<&str>,
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
    let result = ses
        .send_email()
        .from_email_address(from)
        .set_configuration_set_name(configuration_set.map(str::to_owned))
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
            Some(SendEmailError::MessageRejected(_) | SendEmailError::BadRequestException(_)) => {
                SendError::Permanent(format!(
                    "SES refused the message: {}",
                    err.as_service_error()
                        .map_or(String::new(), |e| e.to_string())
                ))
            }
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
