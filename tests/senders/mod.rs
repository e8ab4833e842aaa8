//! `restock doctor` on the senders as the rules read them: a US number
//! that is not registered blocks texts (End User Messaging's fake, paged as
//! documented), and a mail domain without a DMARC record, or whose DKIM and
//! SPF both fail to align with it, blocks mail (a DNS fake), each with its
//! fix.

use restock_aws::doctor::mail::{MailFrom, Sending};
use restock_aws::doctor::{Report, Severity};
use restock_e2e::*;
use restock_store::prelude::*;

use crate::connect::stack_of;

/// The finding for `check`: its severity, what was found and its fix.
fn finding(report: &Report, check: &str) -> (Severity, String, String) {
    let f = report
        .findings
        .iter()
        .find(|f| f.check == check)
        .unwrap_or_else(|| panic!("no {check} finding: {}", report.describe()));
    (
        f.severity,
        f.found.clone(),
        f.fix.clone().unwrap_or_default(),
    )
}

#[tokio::test]
async fn an_unregistered_us_number_blocks_texts_until_its_registration_is_approved() {
    let mut us = settings();
    us.sms_countries.push("US".into());
    let d = Deployment::create(us).await;
    let sdk = aws_config(&d.endpoint).await;
    let stack = stack_of(&d);
    {
        // 120 UK long codes first: the account's list is read to its end.
        let mut held = d.messaging.state.lock().unwrap();
        held.numbers = (0..120)
            .map(|i| {
                phone_number(
                    &format!("+4477009{i:05}"),
                    "GB",
                    "LONG_CODE",
                    "ACTIVE",
                    None,
                )
            })
            .collect();
        held.numbers.push(phone_number(
            "+12065550100",
            "US",
            "LONG_CODE",
            "ACTIVE",
            None,
        ));
        held.numbers.push(phone_number(
            "+18885550100",
            "US",
            "TOLL_FREE",
            "PENDING",
            Some("registration-tfv"),
        ));
        held.registrations.push(registration(
            "registration-tfv",
            "US_TOLL_FREE_REGISTRATION",
            "REQUIRES_UPDATES",
        ));
    }

    let pending = restock_aws::doctor::check(&sdk, &stack, &d.reach(&sdk)).await;
    assert!(pending.blocking(), "{}", pending.describe());
    let (severity, found, fix) = finding(&pending, "US text number");
    assert_eq!(severity, Severity::Blocking, "{}", pending.describe());
    assert!(
        found.contains("US carriers drop unregistered texts"),
        "{found}"
    );
    assert!(
        found.contains("+18885550100 is pending, registration REQUIRES_UPDATES"),
        "{found}"
    );
    assert!(
        !found.contains("+12065550100"),
        "a plain long code is no registered number: {found}"
    );
    assert!(
        fix.contains("End User Messaging SMS console → Registrations"),
        "{fix}"
    );
    assert!(fix.contains("privacy-policy and terms URLs"), "{fix}");

    // Approved: the number turns active and doctor passes on it.
    {
        let mut held = d.messaging.state.lock().unwrap();
        let last = held.numbers.last_mut().unwrap();
        last["Status"] = "ACTIVE".into();
        held.registrations[0]["RegistrationStatus"] = "COMPLETE".into();
    }
    let active = restock_aws::doctor::check(&sdk, &stack, &d.reach(&sdk)).await;
    assert_eq!(
        finding(&active, "US text number"),
        (
            Severity::Ok,
            "+18885550100 (toll free) is registered and active".into(),
            String::new()
        )
    );

    // No number there at all, and no US in the settings: nothing asked.
    d.messaging.state.lock().unwrap().numbers.clear();
    let none = restock_aws::doctor::check(&sdk, &stack, &d.reach(&sdk)).await;
    assert!(
        finding(&none, "US text number")
            .1
            .contains("the account has no 10DLC, toll-free or short-code number there")
    );
    d.store.put_settings(&settings()).await.unwrap();
    let uk = restock_aws::doctor::check(&sdk, &stack, &d.reach(&sdk)).await;
    assert!(
        uk.findings.iter().all(|f| f.check != "US text number"),
        "{}",
        uk.describe()
    );
}

/// A sender on a domain of its own (moto's identities are the account's,
/// shared by every test): `hello@{domain}`, verified as an address only.
async fn sender_on_own_domain(d: &Deployment, sdk: &aws_config::SdkConfig) -> String {
    let domain = format!(
        "{}.example",
        restock_store_dynamo::testing::unique_table("shop")
    );
    aws_sdk_sesv2::Client::new(sdk)
        .create_email_identity()
        .email_identity(format!("hello@{domain}"))
        .send()
        .await
        .unwrap();
    let mut s = settings();
    s.email_from = format!("Shop <hello@{domain}>");
    d.store.put_settings(&s).await.unwrap();
    domain
}

#[tokio::test]
async fn a_mail_domain_without_an_aligned_dmarc_record_blocks_mail() {
    let d = Deployment::create(settings()).await;
    let sdk = aws_config(&d.endpoint).await;
    let stack = stack_of(&d);
    let report = restock_aws::doctor::check(&sdk, &stack, &d.reach(&sdk)).await;
    assert_eq!(
        finding(&report, "DMARC record").1,
        "_dmarc.loomandlast.co.uk: p=quarantine"
    );
    assert_eq!(
        finding(&report, "DMARC alignment").0,
        Severity::Ok,
        "{}",
        report.describe()
    );
    assert_eq!(finding(&report, "SES MAIL FROM").0, Severity::Warning);

    // No record: blocking, with the record to publish.
    let domain = sender_on_own_domain(&d, &sdk).await;
    let bare = restock_aws::doctor::check(&sdk, &stack, &d.reach(&sdk)).await;
    let (severity, found, fix) = finding(&bare, "DMARC record");
    assert_eq!(severity, Severity::Blocking, "{}", bare.describe());
    assert!(
        found.contains("Gmail and Yahoo reject bulk mail without one"),
        "{found}"
    );
    assert!(
        fix.contains(&format!("`_dmarc.{domain}` = `v=DMARC1; p=none;")),
        "{fix}"
    );

    // A record, but SES signs as amazonses.com (the address alone is
    // verified) and the envelope is amazonses.com: nothing aligns.
    d.dns
        .txt(&format!("_dmarc.{domain}"), "v=DMARC1; p=reject; adkim=s");
    let unaligned = restock_aws::doctor::check(&sdk, &stack, &d.reach(&sdk)).await;
    assert_eq!(finding(&unaligned, "DMARC record").0, Severity::Ok);
    let (severity, found, fix) = finding(&unaligned, "DMARC alignment");
    assert_eq!(severity, Severity::Blocking, "{}", unaligned.describe());
    assert!(
        found.contains(&format!(
            "neither DKIM (signed as amazonses.com) nor SPF (amazonses.com) aligns with {domain}"
        )),
        "{found}"
    );
    assert!(
        fix.contains(&format!("verify the domain {domain} in SES with Easy DKIM")),
        "{fix}"
    );

    // The fix: the domain verified with Easy DKIM.
    aws_sdk_sesv2::Client::new(&sdk)
        .create_email_identity()
        .email_identity(&domain)
        .dkim_signing_attributes(
            aws_sdk_sesv2::types::DkimSigningAttributes::builder()
                .next_signing_key_length(aws_sdk_sesv2::types::DkimSigningKeyLength::Rsa2048Bit)
                .build(),
        )
        .send()
        .await
        .unwrap();
    let fixed = restock_aws::doctor::check(&sdk, &stack, &d.reach(&sdk)).await;
    assert!(!fixed.blocking(), "{}", fixed.describe());
    assert!(
        finding(&fixed, "DMARC alignment")
            .1
            .starts_with(&format!("DKIM ({domain}) aligns"))
    );
}

#[tokio::test]
async fn the_record_is_found_up_the_tree_and_a_custom_mail_from_needs_its_records() {
    let dns = DnsFake::start().await;
    let mut sending = Sending {
        domain: "news.shop.example".into(),
        dkim_signs: false,
        mail_from: Some(MailFrom {
            domain: "bounce.shop.example".into(),
            verified: false,
            rejects: true,
        }),
        region: "eu-west-2".into(),
    };
    dns.txt("_dmarc.shop.example", "v=DMARC1; p=reject");
    // A fresh resolver each time, as each `restock doctor` has (one
    // caches what it was told).
    let run = |sending: Sending| {
        let resolver = restock_aws::doctor::resolver_at(dns.at);
        async move {
            let mut report = Report::default();
            restock_aws::doctor::mail::checks(&mut report, &resolver, &sending).await;
            report
        }
    };

    // SES has not found the MX record and rejects meanwhile: blocking,
    // naming both records; DMARC is found at the parent and fails.
    let rejecting = run(sending.clone()).await;
    let (severity, found, fix) = finding(&rejecting, "SES MAIL FROM");
    assert_eq!(severity, Severity::Blocking);
    assert!(found.contains("SES refuses every message"), "{found}");
    assert!(
        fix.contains("MX `bounce.shop.example` = `10 feedback-smtp.eu-west-2.amazonses.com`"),
        "{fix}"
    );
    assert!(
        fix.contains("TXT `bounce.shop.example` = `\"v=spf1 include:amazonses.com ~all\"`"),
        "{fix}"
    );
    assert_eq!(
        finding(&rejecting, "DMARC record").1,
        "_dmarc.shop.example: p=reject"
    );
    assert_eq!(finding(&rejecting, "DMARC alignment").0, Severity::Blocking);

    // Published and seen by SES: SPF aligns (relaxed, under shop.example).
    dns.mx(
        "bounce.shop.example",
        "feedback-smtp.eu-west-2.amazonses.com",
    )
    .txt("bounce.shop.example", "v=spf1 include:amazonses.com ~all");
    sending.mail_from = Some(MailFrom {
        domain: "bounce.shop.example".into(),
        verified: true,
        rejects: true,
    });
    let good = run(sending.clone()).await;
    assert!(!good.blocking(), "{}", good.describe());
    assert_eq!(
        finding(&good, "SES MAIL FROM").1,
        "bounce.shop.example, with its MX and SPF records"
    );
    assert_eq!(
        finding(&good, "DMARC alignment").1,
        "SPF (bounce.shop.example) aligns; DKIM does not sign as news.shop.example"
    );

    // Strict SPF alignment: the subdomain no longer aligns.
    dns.clear("_dmarc.shop.example");
    dns.txt("_dmarc.shop.example", "v=DMARC1; p=reject; aspf=s");
    assert_eq!(
        finding(&run(sending.clone()).await, "DMARC alignment").0,
        Severity::Blocking
    );

    // A resolver that cannot be reached is a warning, not a verdict.
    let unreachable = restock_aws::doctor::resolver_at("127.0.0.1:9".parse().unwrap());
    sending.mail_from = None;
    let mut report = Report::default();
    restock_aws::doctor::mail::checks(&mut report, &unreachable, &sending).await;
    assert_eq!(
        finding(&report, "DMARC record").0,
        Severity::Warning,
        "{}",
        report.describe()
    );
}
