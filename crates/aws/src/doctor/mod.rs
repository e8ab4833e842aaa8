//! `restock doctor`: a deployed stack checked end to end from the
//! operator's machine, each finding with its fix ([`restock_app::health`]
//! says what is blocking and what is a warning). The store's checks are
//! shared with the local server; these add the keys secret, the platforms,
//! the model and the senders ([`mail`]: the mail domain's DMARC, [`texts`]:
//! SNS and the number that texts).

pub mod mail;
mod texts;

use hickory_resolver::TokioResolver;
use restock_app::ports::Phraser;
use restock_core::{CatalogueEntry, Platform, Settings};
use restock_store_dynamo::DynamoStore;

pub use restock_app::health::{Finding, Report, Severity};

use crate::connect::{SHOPIFY_TOPICS, Stack, WOOCOMMERCE_TOPICS};
use crate::platforms::HttpPlatforms;

/// What the checks reach beyond the stack's own services: the model's
/// runtime, End User Messaging SMS, and the DNS resolver the mail domain's
/// records are read with.
pub struct Reach {
    /// The model's runtime.
    pub bedrock: aws_sdk_bedrockruntime::Client,
    /// End User Messaging SMS (the numbers SNS texts from).
    pub messaging: aws_sdk_pinpointsmsvoicev2::Client,
    /// The resolver.
    pub dns: TokioResolver,
}

impl Reach {
    /// AWS's services with `sdk`'s settings (`AWS_ENDPOINT_URL_…` as usual),
    /// and the machine's resolver, or the one `RESTOCK_DNS_SERVER`
    /// (`host:port`) names.
    ///
    /// # Errors
    /// `RESTOCK_DNS_SERVER` is not an address.
    pub fn new(sdk: &aws_config::SdkConfig) -> Result<Self, String> {
        let dns = match std::env::var("RESTOCK_DNS_SERVER") {
            Ok(at) => resolver_at(
                at.parse()
                    .map_err(|_| format!("RESTOCK_DNS_SERVER={at} is not host:port"))?,
            ),
            // A machine without resolver settings asks Google's public DNS.
            Err(_) => match TokioResolver::builder_tokio() {
                Ok(mut builder) => {
                    *builder.options_mut() = quick(builder.options_mut().clone());
                    builder.build()
                }
                Err(_) => TokioResolver::builder_with_config(
                    hickory_resolver::config::ResolverConfig::default(),
                    hickory_resolver::name_server::TokioConnectionProvider::default(),
                )
                .with_options(quick(hickory_resolver::config::ResolverOpts::default()))
                .build(),
            },
        };
        Ok(Self {
            bedrock: aws_sdk_bedrockruntime::Client::new(sdk),
            messaging: aws_sdk_pinpointsmsvoicev2::Client::new(sdk),
            dns,
        })
    }
}

/// A resolver that asks only the server at `at`.
#[must_use]
pub fn resolver_at(at: std::net::SocketAddr) -> TokioResolver {
    use hickory_resolver::config::{NameServerConfigGroup, ResolverConfig};
    let servers = NameServerConfigGroup::from_ips_clear(&[at.ip()], at.port(), true);
    TokioResolver::builder_with_config(
        ResolverConfig::from_parts(None, vec![], servers),
        hickory_resolver::name_server::TokioConnectionProvider::default(),
    )
    .with_options(quick(hickory_resolver::config::ResolverOpts::default()))
    .build()
}

/// A lookup gives up after three seconds: doctor says it could not look.
fn quick(
    mut options: hickory_resolver::config::ResolverOpts,
) -> hickory_resolver::config::ResolverOpts {
    options.timeout = std::time::Duration::from_secs(3);
    options.attempts = 1;
    options
}

/// Checks `stack` (its table, keys secret, platforms, model, senders),
/// reaching outside it through `reach`.
pub async fn check(sdk: &aws_config::SdkConfig, stack: &Stack, reach: &Reach) -> Report {
    let mut report = Report::default();
    let store = DynamoStore::new(aws_sdk_dynamodb::Client::new(sdk), &stack.table);
    let Some((settings, catalogue)) =
        restock_app::health::store_checks(&mut report, &store, Some(&stack.table)).await
    else {
        return report;
    };

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
    model_check(&mut report, stack, &reach.bedrock).await;
    if let Some(settings) = &settings {
        sender_checks(&mut report, sdk, stack, settings, &reach.dns).await;
        if !settings.sms_countries.is_empty() {
            texts::checks(&mut report, sdk, &reach.messaging, &settings.sms_countries).await;
        }
    }
    report
}

/// The model that phrases each restock's notice answers a one-line
/// Converse call. Without it every notice goes out in the fixed wording: a
/// warning, not a block.
async fn model_check(report: &mut Report, stack: &Stack, bedrock: &aws_sdk_bedrockruntime::Client) {
    let Some(model) = &stack.model_id else {
        report.add(
            Severity::Warning,
            "Bedrock model",
            "the stack names none (no BedrockModelId parameter): notices use the fixed wording",
            Some("deploy with `sam deploy --parameter-overrides BedrockModelId=…`".into()),
        );
        return;
    };
    let phraser = crate::BedrockPhraser::new(bedrock.clone(), model.clone());
    match phraser
        .phrase("Answer with the single word: ok.", "Are you there?")
        .await
    {
        Ok(_) => report.ok("Bedrock model", format!("{model} answers")),
        Err(e) => {
            let denied = e.0.contains("AccessDenied");
            let fix = if denied {
                format!(
                    "grant this account access to {model} (Bedrock console → Model access; some providers ask for a use-case form first), or deploy with another BedrockModelId"
                )
            } else {
                format!(
                    "check that {model} is offered in this region (Bedrock console → Model catalog), or deploy with another BedrockModelId"
                )
            };
            report.add(
                Severity::Warning,
                "Bedrock model",
                format!(
                    "{model} refused a call ({}): every notice goes out in the fixed wording",
                    e.0
                ),
                Some(fix),
            );
        }
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
    let Some(listed) = listed_webhooks(platforms, platform, access).await else {
        return;
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
    if access["webhooks"] == crate::connect::APP_WEBHOOKS {
        // Subscribed by the app's configuration, which Shopify's Admin API
        // does not list; the webhook-silence alert watches that they come.
        report.ok(
            &format!("{name} webhooks"),
            format!("declared in the app's shopify.app.toml at {url} (`shopify app deploy` subscribes them)"),
        );
        return;
    }
    topic_checks(report, platform, &listed, &url);
    if platform == Platform::WooCommerce {
        own_signups_check(report, platforms, access).await;
    }
}

/// WooCommerce's own back-in-stock sign-ups: on, a shopper could sign up
/// twice and be told twice. The restock plugin takes their form off the
/// product page; those already signed up with WooCommerce are still told
/// by WooCommerce. A warning: nothing restock does is blocked.
async fn own_signups_check(
    report: &mut Report,
    platforms: &HttpPlatforms,
    access: &serde_json::Value,
) {
    const CHECK: &str = "woocommerce stock notifications";
    let Ok(api) = platforms.woocommerce(access) else {
        return;
    };
    match api.own_signups().await {
        Ok(Some(true)) => report.add(
            Severity::Warning,
            CHECK,
            "WooCommerce's own back-in-stock sign-ups are on: the restock plugin shows only its own form, \
             but whoever signed up with WooCommerce is told by WooCommerce as well",
            Some("untick WooCommerce → Settings → Products → Customer stock notifications → Allow sign-ups".into()),
        ),
        Ok(Some(false)) => report.ok(CHECK, "WooCommerce's own sign-ups are off"),
        Ok(None) => report.ok(CHECK, "this WooCommerce has no sign-ups of its own"),
        Err(e) => report.add(Severity::Warning, CHECK, format!("not read: {e}"), None),
    }
}

/// A platform's webhooks as its API lists them: (topic, where it
/// delivers, whether it is on); `None` for a platform without an API.
async fn listed_webhooks(
    platforms: &HttpPlatforms,
    platform: Platform,
    access: &serde_json::Value,
) -> Option<Result<Vec<(String, String, bool)>, String>> {
    Some(match platform {
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
        Platform::Standard => return None,
    })
}

/// Each topic restock needs: delivering to this stack's `url`, disabled by
/// the platform, missing, or delivering elsewhere.
fn topic_checks(
    report: &mut Report,
    platform: Platform,
    listed: &[(String, String, bool)],
    url: &str,
) {
    let name = platform.name();
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

/// The mail sender: its identity verified, its domain's DMARC, and the
/// account out of SES's sandbox (in it, mail reaches only verified
/// addresses: no shopper).
async fn sender_checks(
    report: &mut Report,
    sdk: &aws_config::SdkConfig,
    stack: &Stack,
    settings: &Settings,
    dns: &TokioResolver,
) {
    let ses = aws_sdk_sesv2::Client::new(sdk);
    // `Name <address>` or a bare address.
    let from = settings.email_from.as_str();
    let address = from
        .rsplit_once('<')
        .and_then(|(_, rest)| rest.split_once('>'))
        .map_or(from, |(address, _)| address)
        .trim();
    let domain = address.rsplit_once('@').map_or(address, |(_, d)| d);
    let found = sender_identity(&ses, [domain, address]).await;
    let verified = found.as_ref().map(|(identity, f)| {
        let succeeded =
            f.verification_status() == Some(&aws_sdk_sesv2::types::VerificationStatus::Success);
        (
            identity.clone(),
            f.verified_for_sending_status() || succeeded,
        )
    });
    let dkim = found.as_ref().and_then(|(identity, f)| {
        f.dkim_attributes()
            .and_then(|d| d.status())
            .map(|status| (identity.clone(), status.clone()))
    });
    let sending = mail::Sending {
        domain: domain.to_owned(),
        dkim_signs: matches!(dkim, Some((_, aws_sdk_sesv2::types::DkimStatus::Success))),
        mail_from: found
            .as_ref()
            .and_then(|(_, f)| f.mail_from_attributes())
            .map(|m| mail::MailFrom {
                domain: m.mail_from_domain().to_owned(),
                verified: *m.mail_from_domain_status()
                    == aws_sdk_sesv2::types::MailFromDomainStatus::Success,
                rejects: *m.behavior_on_mx_failure()
                    == aws_sdk_sesv2::types::BehaviorOnMxFailure::RejectMessage,
            })
            .filter(|m| !m.domain.is_empty()),
        region: sdk.region().map_or_else(String::new, ToString::to_string),
    };
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
    match dkim {
        Some((identity, aws_sdk_sesv2::types::DkimStatus::Success)) => {
            report.ok("SES DKIM", format!("{identity} signs with DKIM"));
        }
        Some((identity, status)) => report.add(
            Severity::Warning,
            "SES DKIM",
            format!("{identity}: DKIM {}: mail is sent unsigned, and more of it lands in spam", status.as_str().to_lowercase()),
            Some("publish the three CNAME records SES gives for the domain (SES console → Identities → DKIM)".into()),
        ),
        None => {}
    }
    mail::checks(report, dns, &sending).await;
    configuration_set_check(report, &ses, stack).await;
    account_check(report, &ses).await;
}

/// The first of `identities` SES knows, as it reports it.
async fn sender_identity(
    ses: &aws_sdk_sesv2::Client,
    identities: [&str; 2],
) -> Option<(
    String,
    aws_sdk_sesv2::operation::get_email_identity::GetEmailIdentityOutput,
)> {
    for identity in identities {
        if let Ok(found) = ses
            .get_email_identity()
            .email_identity(identity)
            .send()
            .await
        {
            return Some((identity.to_owned(), found));
        }
    }
    None
}

/// The account out of SES's sandbox.
async fn account_check(report: &mut Report, ses: &aws_sdk_sesv2::Client) {
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

/// The configuration set every notice goes through (`{stack}-notices`)
/// hands bounces and complaints on: without its event destination, a
/// bounced address is mailed again at every restock.
async fn configuration_set_check(report: &mut Report, ses: &aws_sdk_sesv2::Client, stack: &Stack) {
    let name = format!("{}-notices", stack.name);
    let check = "SES configuration set events";
    match ses
        .get_configuration_set_event_destinations()
        .configuration_set_name(&name)
        .send()
        .await
    {
        Ok(found) => {
            let wanted = [
                aws_sdk_sesv2::types::EventType::Bounce,
                aws_sdk_sesv2::types::EventType::Complaint,
            ];
            let on = found.event_destinations().iter().any(|d| {
                d.enabled()
                    && wanted
                        .iter()
                        .all(|t| d.matching_event_types().contains(t))
            });
            if on {
                report.ok(check, format!("{name} hands bounces and complaints on"));
            } else {
                report.add(
                    Severity::Warning,
                    check,
                    format!("{name} has no enabled destination for bounces and complaints: bounced addresses are mailed again"),
                    Some("`sam deploy` puts it back (the NoticeFeedback resource)".into()),
                );
            }
        }
        Err(e) => report.add(
            Severity::Warning,
            check,
            format!(
                "{name} could not be read ({})",
                aws_sdk_sesv2::error::DisplayErrorContext(&e)
            ),
            Some("check in the SES console that it exists with an EventBridge destination for bounces and complaints".into()),
        ),
    }
}
