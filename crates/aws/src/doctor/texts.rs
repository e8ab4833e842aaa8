//! The texting side: SNS's sandbox and spending limit, and the number that
//! will send. US carriers drop texts from numbers that are not registered
//! (a 10DLC campaign, a verified toll-free number or a short code); End
//! User Messaging SMS, which SNS sends through, says which numbers the
//! account has and where each one's registration stands.

use aws_sdk_pinpointsmsvoicev2::types::{NumberStatus, NumberType, PhoneNumberInformation};

use super::{Report, Severity};

/// Countries whose carriers take texts only from a registered number, with
/// the kinds of number that can be registered there.
const REGISTERED: &[(&str, &[NumberType])] = &[(
    "US",
    &[
        NumberType::TenDlc,
        NumberType::TollFree,
        NumberType::ShortCode,
    ],
)];

/// Texts (the settings name countries): SNS's SMS sandbox, where texts
/// reach only verified numbers, the account's monthly spending limit, past
/// which SNS stops sending, and a registered number for each country whose
/// carriers drop unregistered texts.
pub async fn checks(
    report: &mut Report,
    sdk: &aws_config::SdkConfig,
    messaging: &aws_sdk_pinpointsmsvoicev2::Client,
    countries: &[String],
) {
    let sns = aws_sdk_sns::Client::new(sdk);
    match sns.get_sms_sandbox_account_status().send().await {
        Ok(status) if status.is_in_sandbox() => report.add(
            Severity::Blocking,
            "SNS SMS sandbox",
            "the account is in it: texts reach only verified numbers, so no shopper is texted",
            Some("request to leave it (SNS console → Text messaging (SMS) → Sandbox)".into()),
        ),
        Ok(_) => report.ok("SNS SMS sandbox", "out of it"),
        Err(e) => report.add(
            Severity::Warning,
            "SNS SMS sandbox",
            format!("could not be read ({e})"),
            Some("check in the SNS console (Text messaging (SMS) → Sandbox) that the account is out of it".into()),
        ),
    }
    let limit = sns
        .get_sms_attributes()
        .attributes("MonthlySpendLimit")
        .send()
        .await
        .ok()
        .and_then(|a| {
            a.attributes()
                .and_then(|m| m.get("MonthlySpendLimit").cloned())
        });
    match limit.as_deref().map(str::parse::<f64>) {
        Some(Ok(dollars)) if dollars <= 1.0 => report.add(
            Severity::Warning,
            "SNS spending limit",
            format!("${dollars} a month (AWS's default): SNS stops texting once it is spent, about 125 texts"),
            Some("raise it with an AWS support case, then in SNS → Text messaging (SMS) → Edit".into()),
        ),
        Some(Ok(dollars)) => report.ok("SNS spending limit", format!("${dollars} a month")),
        _ => report.add(
            Severity::Warning,
            "SNS spending limit",
            "could not be read",
            Some("check it in SNS → Text messaging (SMS)".into()),
        ),
    }
    registration_checks(report, messaging, countries).await;
}

/// Each country in `countries` that asks for registration has a number of
/// a registrable kind that End User Messaging reports active (a number
/// becomes active once its registration is approved).
async fn registration_checks(
    report: &mut Report,
    messaging: &aws_sdk_pinpointsmsvoicev2::Client,
    countries: &[String],
) {
    let asked: Vec<_> = REGISTERED
        .iter()
        .filter(|(c, _)| countries.iter().any(|w| w == c))
        .collect();
    if asked.is_empty() {
        return;
    }
    let numbers = match messaging
        .describe_phone_numbers()
        .into_paginator()
        .items()
        .send()
        .collect::<Result<Vec<_>, _>>()
        .await
    {
        Ok(numbers) => numbers,
        Err(e) => {
            report.add(
                Severity::Warning,
                "text sending number",
                format!(
                    "End User Messaging's numbers could not be read ({})",
                    aws_sdk_pinpointsmsvoicev2::error::DisplayErrorContext(&e)
                ),
                Some("check in the End User Messaging SMS console (Phone numbers) that a registered number is Active".into()),
            );
            return;
        }
    };
    for (country, kinds) in asked {
        let check = format!("{country} text number");
        let theirs: Vec<&PhoneNumberInformation> = numbers
            .iter()
            .filter(|n| n.iso_country_code() == *country && kinds.contains(n.number_type()))
            .collect();
        if let Some(active) = theirs.iter().find(|n| *n.status() == NumberStatus::Active) {
            report.ok(
                &check,
                format!(
                    "{} ({}) is registered and active",
                    active.phone_number(),
                    active
                        .number_type()
                        .as_str()
                        .to_lowercase()
                        .replace('_', " ")
                ),
            );
            continue;
        }
        let mut pending = Vec::new();
        for n in &theirs {
            let state = registration_state(messaging, n).await;
            pending.push(format!(
                "{} is {}{state}",
                n.phone_number(),
                n.status().as_str().to_lowercase()
            ));
        }
        let found = if pending.is_empty() {
            "the account has no 10DLC, toll-free or short-code number there".to_owned()
        } else {
            pending.join("; ")
        };
        report.add(
            Severity::Blocking,
            &check,
            format!("no registered number: {country} carriers drop unregistered texts, so no shopper there is texted ({found})"),
            Some("register one in the End User Messaging SMS console → Registrations: toll-free verification (with the shop's privacy-policy and terms URLs, required since 2026-09-15) or a 10DLC brand and campaign; a registration marked REQUIRES_UPDATES is fixed and resubmitted there. `restock doctor` passes once the number is Active".into()),
        );
    }
}

/// `, registration …` for a number that names one.
async fn registration_state(
    messaging: &aws_sdk_pinpointsmsvoicev2::Client,
    number: &PhoneNumberInformation,
) -> String {
    let Some(id) = number.registration_id() else {
        return ", with no registration".into();
    };
    match messaging
        .describe_registrations()
        .registration_ids(id)
        .send()
        .await
    {
        Ok(found) => found.registrations().first().map_or_else(
            || format!(", registration {id} not found"),
            |r| format!(", registration {}", r.registration_status().as_str()),
        ),
        Err(_) => format!(", registration {id} unreadable"),
    }
}
