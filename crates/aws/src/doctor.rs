//! `restock doctor`: a deployed stack checked end to end from the
//! operator's machine, each finding with its fix. A finding is blocking
//! when notices cannot reach shoppers while it stands (no settings or
//! items, a platform's deliveries refused or never subscribed, a sender
//! that cannot send); a warning when restock works around it (no stock
//! pull, an item only the generic format can report).

use restock_core::{CatalogueEntry, Platform, Settings};
use restock_store::CatalogueStore;
use restock_store_dynamo::DynamoStore;

use crate::connect::{SHOPIFY_TOPICS, Stack, WOOCOMMERCE_TOPICS};
use crate::platforms::HttpPlatforms;

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// As it should be.
    Ok,
    /// restock works around it, at a cost the finding names.
    Warning,
    /// Notices cannot reach shoppers while it stands.
    Blocking,
}

/// One check's result.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Finding {
    /// How much it matters.
    pub severity: Severity,
    /// What was checked.
    pub check: String,
    /// What was found.
    pub found: String,
    /// What to do about it, when something is to be done.
    pub fix: Option<String>,
}

/// Every finding, in the order checked.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Report {
    /// The findings.
    pub findings: Vec<Finding>,
}

impl Report {
    fn add(
        &mut self,
        severity: Severity,
        check: &str,
        found: impl Into<String>,
        fix: Option<String>,
    ) {
        self.findings.push(Finding {
            severity,
            check: check.to_owned(),
            found: found.into(),
            fix,
        });
    }

    fn ok(&mut self, check: &str, found: impl Into<String>) {
        self.add(Severity::Ok, check, found, None);
    }

    /// Whether something blocks notices.
    pub fn blocking(&self) -> bool {
        self.findings
            .iter()
            .any(|f| f.severity == Severity::Blocking)
    }

    /// The report as a person reads it: a line a finding, its fix under it.
    pub fn describe(&self) -> String {
        let mut text = String::new();
        for f in &self.findings {
            let mark = match f.severity {
                Severity::Ok => "ok  ",
                Severity::Warning => "warn",
                Severity::Blocking => "FAIL",
            };
            text += &format!("{mark} {}: {}\n", f.check, f.found);
            if let Some(fix) = &f.fix {
                text += &format!("     fix: {fix}\n");
            }
        }
        let (blocking, warnings) = (
            self.findings
                .iter()
                .filter(|f| f.severity == Severity::Blocking)
                .count(),
            self.findings
                .iter()
                .filter(|f| f.severity == Severity::Warning)
                .count(),
        );
        text += &match (blocking, warnings) {
            (0, 0) => "all good: notices can reach shoppers\n".to_owned(),
            (0, w) => format!("notices can reach shoppers; {w} warnings\n"),
            (b, w) => format!("{b} findings block notices; {w} warnings\n"),
        };
        text
    }
}

/// Checks `stack` (its table, keys secret, platforms, sender).
pub async fn check(sdk: &aws_config::SdkConfig, stack: &Stack) -> Report {
    let mut report = Report::default();
    let store = DynamoStore::new(aws_sdk_dynamodb::Client::new(sdk), &stack.table);

    let settings = match store.settings().await {
        Ok(Some(settings)) => {
            report.ok("settings", "stored and valid");
            Some(settings)
        }
        Ok(None) => {
            report.add(
                Severity::Blocking,
                "settings",
                "none stored: every function refuses to run",
                Some(format!(
                    "`restock --table {} settings put settings.toml` (docs/SETTINGS.md)",
                    stack.table
                )),
            );
            None
        }
        Err(e) => {
            report.add(
                Severity::Blocking,
                "table",
                format!("unreadable: {e}"),
                Some("check the operator's credentials and region".into()),
            );
            return report;
        }
    };
    let catalogue = store.catalogue().await.unwrap_or_default();
    if catalogue.is_empty() {
        report.add(
            Severity::Blocking,
            "catalogue",
            "no items: nobody can sign up",
            Some("`restock connect shopify` or `restock connect woocommerce` imports them; or `restock catalogue import FILE.csv`".into()),
        );
    } else {
        report.ok("catalogue", format!("{} items", catalogue.len()));
    }
    let unnamed = catalogue
        .iter()
        .filter(|e| e.ids.iter().next().is_none())
        .count();
    if unnamed > 0 {
        report.add(
            Severity::Warning,
            "catalogue ids",
            format!("{unnamed} items have no platform id: only the generic format (or WooCommerce, by SKU) can report their stock, and the stock pull cannot read them"),
            Some("`restock connect …` fills the ids for the items the platform lists".into()),
        );
    }

    let keys = match crate::connect::read_keys(sdk, stack).await {
        Ok(keys) => keys,
        Err(e) => {
            report.add(
                Severity::Blocking,
                "keys secret",
                e.to_string(),
                Some("check the operator's credentials, and the KeysSecretArn output".into()),
            );
            return report;
        }
    };
    let platforms = HttpPlatforms::new();
    for platform in Platform::ALL
        .into_iter()
        .filter(|p| p.id_column().is_some())
    {
        platform_checks(&mut report, &platforms, stack, &keys, &catalogue, platform).await;
    }
    if let Some(settings) = &settings {
        sender_checks(&mut report, sdk, settings).await;
        if !settings.sms_countries.is_empty() {
            text_checks(&mut report, sdk).await;
        }
    }
    report
}

/// Texts (the settings name countries): SNS's SMS sandbox, where texts
/// reach only verified numbers, and the account's monthly spending limit,
/// past which SNS stops sending.
async fn text_checks(report: &mut Report, sdk: &aws_config::SdkConfig) {
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
}

/// A platform the catalogue names items of: its webhook key, its API
/// access, and its webhooks at this stack's DetectUrl.
async fn platform_checks(
    report: &mut Report,
    platforms: &HttpPlatforms,
    stack: &Stack,
    keys: &serde_json::Value,
    catalogue: &[CatalogueEntry],
    platform: Platform,
) {
    let name = platform.name();
    let items = catalogue
        .iter()
        .filter(|e| e.ids.get(platform).is_some())
        .count();
    let access = platform
        .api_secret_key()
        .map(|k| &keys[k])
        .filter(|a| !a.is_null());
    if items == 0 && access.is_none() {
        return;
    }
    let connect = format!("`restock connect {name}` (docs/DEPLOY.md)");
    let listed = keys[name].as_array().map_or(0, Vec::len);
    if listed == 0 {
        report.add(
            Severity::Blocking,
            &format!("{name} webhook key"),
            format!("none: every {} delivery is refused (401), so {items} items' restocks are never seen", platform.label()),
            Some(connect.clone()),
        );
    } else {
        report.ok(&format!("{name} webhook key"), format!("{listed} listed"));
    }
    let Some(access) = access else {
        report.add(
            Severity::Warning,
            &format!("{name} API access"),
            "none: no stock pull, and a tie between readings waits for the next one",
            Some(connect),
        );
        return;
    };
    let url = stack.webhook_url(platform);
    // (topic, where it delivers, whether it is on) as the platform lists them.
    let listed: Result<Vec<(String, String, bool)>, String> = match platform {
        Platform::Shopify => match platforms.shopify(access) {
            Ok(api) => api
                .subscriptions(&SHOPIFY_TOPICS)
                .await
                .map(|subs| subs.into_iter().map(|s| (s.topic, s.uri, true)).collect())
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        },
        Platform::WooCommerce => match platforms.woocommerce(access) {
            Ok(api) => api
                .webhooks()
                .await
                .map(|hooks| {
                    hooks
                        .into_iter()
                        .map(|h| (h.topic, h.delivery_url, h.status == "active"))
                        .collect()
                })
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        },
        Platform::Standard => return,
    };
    let listed = match listed {
        Ok(listed) => {
            report.ok(&format!("{name} API access"), "answers");
            listed
        }
        Err(e) => {
            report.add(
                Severity::Warning,
                &format!("{name} API access"),
                format!("refused: {e}"),
                Some(connect),
            );
            return;
        }
    };
    let topics: &[&str] = match platform {
        Platform::Shopify => &SHOPIFY_TOPICS,
        _ => &WOOCOMMERCE_TOPICS,
    };
    for topic in topics {
        let check = format!("{name} webhook {topic}");
        match listed.iter().find(|(t, u, _)| t == topic && *u == url) {
            Some((_, _, true)) => report.ok(&check, format!("delivers to {url}")),
            Some(_) => report.add(
                Severity::Blocking,
                &check,
                format!(
                    "registered at {url} but disabled by {} after failed deliveries",
                    platform.label()
                ),
                Some(format!("turn it back on in {}'s admin", platform.label())),
            ),
            None => {
                let elsewhere: Vec<&str> = listed
                    .iter()
                    .filter(|(t, _, _)| t == topic)
                    .map(|(_, u, _)| u.as_str())
                    .collect();
                let found = if elsewhere.is_empty() {
                    "not subscribed: restocks are seen only by the stock pull".to_owned()
                } else {
                    format!(
                        "delivers to {} instead of this stack's {url}",
                        elsewhere.join(", ")
                    )
                };
                report.add(
                    Severity::Blocking,
                    &check,
                    found,
                    Some(format!("`restock connect {name}` subscribes it")),
                );
            }
        }
    }
}

/// The mail sender: its identity verified, and the account out of SES's
/// sandbox (in it, mail reaches only verified addresses: no shopper).
async fn sender_checks(report: &mut Report, sdk: &aws_config::SdkConfig, settings: &Settings) {
    let ses = aws_sdk_sesv2::Client::new(sdk);
    // `Name <address>` or a bare address.
    let from = settings.email_from.as_str();
    let address = from
        .rsplit_once('<')
        .and_then(|(_, rest)| rest.split_once('>'))
        .map_or(from, |(address, _)| address)
        .trim();
    let domain = address.rsplit_once('@').map_or(address, |(_, d)| d);
    let mut verified = None;
    for identity in [domain, address] {
        if let Ok(found) = ses
            .get_email_identity()
            .email_identity(identity)
            .send()
            .await
        {
            let succeeded = found.verification_status()
                == Some(&aws_sdk_sesv2::types::VerificationStatus::Success);
            verified = Some((
                identity.to_owned(),
                found.verified_for_sending_status() || succeeded,
            ));
            break;
        }
    }
    match verified {
        Some((identity, true)) => report.ok("SES sender identity", format!("{identity} verified")),
        Some((identity, false)) => report.add(
            Severity::Blocking,
            "SES sender identity",
            format!("{identity} is not verified yet: SES refuses every message from {address}"),
            Some("publish the DKIM records SES gives for it (SES console → Identities)".into()),
        ),
        None => report.add(
            Severity::Blocking,
            "SES sender identity",
            format!("neither {domain} nor {address} is an SES identity in this region"),
            Some("deploy with the SenderIdentity parameter, or create the identity in SES".into()),
        ),
    }
    match ses.get_account().send().await {
        Ok(account) if account.production_access_enabled() => {
            report.ok("SES account", "production access")
        }
        Ok(_) => report.add(
            Severity::Blocking,
            "SES account",
            "in the sandbox: mail reaches only verified addresses, so no shopper is told",
            Some("request production access (SES console → Account dashboard)".into()),
        ),
        Err(e) => report.add(
            Severity::Warning,
            "SES account",
            format!("could not be read ({e})"),
            Some("check in the SES console that the account has production access".into()),
        ),
    }
}
