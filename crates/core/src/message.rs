//! A message rendered for its channel: what the sender port sends. Each
//! channel renders its own form of a notice and a confirmation, and carries
//! the sender identity its provider needs (the settings' `email_from`,
//! `sms_sender_id`). A new channel is a variant here with its rendering, a
//! [`crate::Contact`] variant, and one sending module in `restock-aws`.

use serde::{Deserialize, Serialize};

use crate::confirm::{ConfirmInput, render_confirm_email, render_confirm_sms};
use crate::contact::Channel;
use crate::notice::{EmailNotice, NoticeInput, SmsNotice, render_email, render_sms};
use crate::settings::Settings;

/// One message, ready for its channel's provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "channel", rename_all = "lowercase")]
pub enum Message {
    /// An email (SES).
    Email {
        /// The sender, as the settings name it.
        from: String,
        /// The email.
        notice: EmailNotice,
    },
    /// A text (SNS).
    Sms {
        /// The sender id, where the destination supports one.
        sender_id: Option<String>,
        /// The text.
        notice: SmsNotice,
    },
}

impl Message {
    /// A restock notice for `channel`; `tags` go with an email so the
    /// provider's feedback names the offer.
    pub fn notice(
        channel: Channel,
        settings: &Settings,
        input: &NoticeInput<'_>,
        tags: Vec<(String, String)>,
    ) -> Self {
        match channel {
            Channel::Email => {
                let mut notice = render_email(input);
                notice.tags = tags;
                Self::email(settings, notice)
            }
            Channel::Sms => Self::sms(settings, render_sms(input)),
        }
    }

    /// A double opt-in confirmation for `channel`.
    pub fn confirmation(channel: Channel, settings: &Settings, input: &ConfirmInput<'_>) -> Self {
        match channel {
            Channel::Email => Self::email(settings, render_confirm_email(input)),
            Channel::Sms => Self::sms(settings, render_confirm_sms(input)),
        }
    }

    /// The shop's help text, the answer to a text that asks for it
    /// ([`crate::inbound::Asks::Help`]).
    pub fn help(settings: &Settings, texts: &crate::lang::Texts) -> Self {
        let text = texts.get(
            "sms-help",
            &[crate::lang::arg("store", &settings.store_name)],
        );
        Self::sms(settings, crate::notice::sms_notice(text))
    }

    fn email(settings: &Settings, notice: EmailNotice) -> Self {
        Self::Email {
            from: settings.email_from.clone(),
            notice,
        }
    }

    fn sms(settings: &Settings, notice: SmsNotice) -> Self {
        Self::Sms {
            sender_id: settings.sms_sender_id.clone(),
            notice,
        }
    }

    /// The channel it goes by.
    pub fn channel(&self) -> Channel {
        match self {
            Self::Email { .. } => Channel::Email,
            Self::Sms { .. } => Channel::Sms,
        }
    }

    /// Its plain text.
    pub fn text(&self) -> &str {
        match self {
            Self::Email { notice, .. } => &notice.text,
            Self::Sms { notice, .. } => &notice.text,
        }
    }
}
