//! The mail domain as the providers read it: Gmail and Yahoo (bulk-sender
//! rules, 2024) and Outlook.com (`550 5.7.515`, since May 2025) reject mail
//! whose From domain publishes no DMARC record, or whose DKIM signature and
//! SPF domain both fail to align with it. SES signs with the domain's own
//! key once the domain is verified with Easy DKIM (aligned), else as
//! amazonses.com (not); its envelope is amazonses.com (not aligned) unless a
//! custom MAIL FROM subdomain is set up with its MX and SPF records.
//!
//! The records are read with DNS from the operator's machine: the DMARC
//! record by the tree walk DMARC's revision (DMARCbis) describes, the
//! nearest record naming the policy and the highest one the organisational
//! domain that relaxed alignment compares against.

use hickory_resolver::TokioResolver;

use super::{Report, Severity};

/// A DMARC record's policy and alignment modes (`p`, `adkim`, `aspf`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dmarc {
    /// Where the record was found (`_dmarc.` stripped).
    pub at: String,
    /// `none`, `quarantine` or `reject`.
    pub policy: String,
    /// `adkim=s`: the DKIM domain must be the From domain itself.
    pub strict_dkim: bool,
    /// `aspf=s`: the envelope domain must be the From domain itself.
    pub strict_spf: bool,
}

impl Dmarc {
    /// The record in `txt` found at `at`, if it is one (`v=DMARC1` first).
    #[must_use]
    pub fn parse(at: &str, txt: &str) -> Option<Self> {
        let mut tags = txt
            .split(';')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .filter_map(|t| t.split_once('='))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_ascii_lowercase()));
        if tags.next() != Some(("v".into(), "dmarc1".into())) {
            return None;
        }
        let mut dmarc = Self {
            at: at.to_owned(),
            // A record without `p` (but with reports asked) reads as none.
            policy: "none".into(),
            strict_dkim: false,
            strict_spf: false,
        };
        for (tag, value) in tags {
            match tag.as_str() {
                "p" => dmarc.policy = value,
                "adkim" => dmarc.strict_dkim = value == "s",
                "aspf" => dmarc.strict_spf = value == "s",
                _ => {}
            }
        }
        Some(dmarc)
    }
}

/// Whether `signer` (a DKIM `d=` or an envelope domain) aligns with the
/// From domain `from`: the same name when strict; relaxed, both at or under
/// the organisational domain `org`.
#[must_use]
pub fn aligned(from: &str, signer: &str, strict: bool, org: &str) -> bool {
    let under = |d: &str| d == org || d.ends_with(&format!(".{org}"));
    from.eq_ignore_ascii_case(signer) || (!strict && under(from) && under(signer))
}

/// `domain` and its parents down to two labels, nearest first (at most
/// eight, as DMARCbis's tree walk asks).
fn walk(domain: &str) -> Vec<String> {
    let labels: Vec<&str> = domain.trim_end_matches('.').split('.').collect();
    (0..labels.len().saturating_sub(1))
        .map(|i| labels[i..].join("."))
        .take(8)
        .collect()
}

/// What SES signs and sends the shop's mail as, read from its identity.
#[derive(Debug, Clone, Default)]
pub struct Sending {
    /// The From domain.
    pub domain: String,
    /// Easy DKIM signs as the domain (its status is SUCCESS).
    pub dkim_signs: bool,
    /// The custom MAIL FROM domain, with whether SES found its MX record
    /// and whether it rejects mail while it does not.
    pub mail_from: Option<MailFrom>,
    /// The stack's region (the MX record names its feedback endpoint).
    pub region: String,
}

/// A custom MAIL FROM domain as SES reports it.
#[derive(Debug, Clone)]
pub struct MailFrom {
    /// The subdomain.
    pub domain: String,
    /// SES found its MX record (status SUCCESS).
    pub verified: bool,
    /// `BehaviorOnMxFailure` is `REJECT_MESSAGE`.
    pub rejects: bool,
}

/// A name's TXT strings, `Ok(None)` where the name has none.
async fn txt(dns: &TokioResolver, name: String) -> Result<Option<Vec<String>>, String> {
    match dns.txt_lookup(format!("{name}.")).await {
        Ok(found) => Ok(Some(
            found
                .iter()
                .map(|t| {
                    t.txt_data()
                        .iter()
                        .map(|part| String::from_utf8_lossy(part).into_owned())
                        .collect::<String>()
                })
                .collect(),
        )),
        Err(e) if e.is_no_records_found() || e.is_nx_domain() => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// The From domain's DMARC policy and organisational domain.
async fn dmarc(dns: &TokioResolver, domain: &str) -> Result<Option<(Dmarc, String)>, String> {
    let names = walk(domain);
    let found = futures::future::join_all(names.iter().map(|d| txt(dns, format!("_dmarc.{d}"))))
        .await
        .into_iter()
        .zip(&names)
        .map(|(records, at)| {
            Ok(records?
                .unwrap_or_default()
                .iter()
                .find_map(|r| Dmarc::parse(at, r)))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let records: Vec<Dmarc> = found.into_iter().flatten().collect();
    let Some(policy) = records.first().cloned() else {
        return Ok(None);
    };
    let org = records
        .last()
        .map_or_else(|| domain.to_owned(), |d| d.at.clone());
    Ok(Some((policy, org)))
}

/// The DMARC record, the alignment it asks for, and the custom MAIL FROM
/// domain's records.
pub async fn checks(report: &mut Report, dns: &TokioResolver, sending: &Sending) {
    let domain = sending.domain.as_str();
    let envelope = match &sending.mail_from {
        Some(m) if m.verified => m.domain.clone(),
        _ => "amazonses.com".to_owned(),
    };
    mail_from_check(report, dns, sending).await;
    let (policy, org) = match dmarc(dns, domain).await {
        Ok(Some(found)) => found,
        Ok(None) => {
            report.add(
                Severity::Blocking,
                "DMARC record",
                format!("{domain} publishes none: Gmail and Yahoo reject bulk mail without one, and Outlook.com answers 550 5.7.515"),
                Some(format!("publish the TXT record `_dmarc.{domain}` = `v=DMARC1; p=none; rua=mailto:dmarc@{domain}`, and move p to quarantine once its reports are clean (docs/DEPLOY.md, Senders the providers accept)")),
            );
            return;
        }
        Err(e) => {
            report.add(
                Severity::Warning,
                "DMARC record",
                format!("`_dmarc.{domain}` could not be looked up ({e})"),
                Some(format!(
                    "check it from a machine with DNS: `dig TXT _dmarc.{domain}`"
                )),
            );
            return;
        }
    };
    report.ok(
        "DMARC record",
        format!("_dmarc.{}: p={}", policy.at, policy.policy),
    );
    // Easy DKIM signs as the From domain itself: aligned, strict or not.
    let dkim = sending.dkim_signs;
    let spf = aligned(domain, &envelope, policy.strict_spf, &org);
    match (dkim, spf) {
        (true, true) => report.ok("DMARC alignment", format!("DKIM ({domain}) and SPF ({envelope}) align")),
        (true, false) => report.ok("DMARC alignment", format!("DKIM ({domain}) aligns; SPF ({envelope}) does not, so DMARC rests on DKIM")),
        (false, true) => report.ok("DMARC alignment", format!("SPF ({envelope}) aligns; DKIM does not sign as {domain}")),
        (false, false) => report.add(
            Severity::Blocking,
            "DMARC alignment",
            format!("neither DKIM (signed as amazonses.com) nor SPF ({envelope}) aligns with {domain}: DMARC fails, and Gmail, Yahoo and Outlook.com reject or junk the notices"),
            Some(format!("verify the domain {domain} in SES with Easy DKIM and publish its three CNAME records (SES console → Identities), or set up a custom MAIL FROM domain under it")),
        ),
    }
}

/// The custom MAIL FROM domain: none is a warning (bounces go back to
/// amazonses.com and SPF cannot align); one without its MX or SPF record
/// falls back to amazonses.com, or has SES refuse every message.
async fn mail_from_check(report: &mut Report, dns: &TokioResolver, sending: &Sending) {
    let check = "SES MAIL FROM";
    let domain = &sending.domain;
    let Some(mail_from) = &sending.mail_from else {
        report.add(
            Severity::Warning,
            check,
            format!("none: the envelope is amazonses.com, so SPF does not align with {domain} and DMARC rests on DKIM alone"),
            Some(format!("set up a custom MAIL FROM domain such as bounce.{domain} (SES console → Identities → {domain} → Custom MAIL FROM) with the MX and SPF records SES names")),
        );
        return;
    };
    let name = &mail_from.domain;
    let feedback = format!("feedback-smtp.{}.amazonses.com", sending.region);
    let (mx, spf) = tokio::join!(dns.mx_lookup(format!("{name}.")), txt(dns, name.clone()));
    let mx = mx.is_ok_and(|found| {
        found.iter().any(|m| {
            m.exchange()
                .to_utf8()
                .trim_end_matches('.')
                .eq_ignore_ascii_case(&feedback)
        })
    });
    let spf = spf
        .ok()
        .flatten()
        .unwrap_or_default()
        .iter()
        .any(|r| r.starts_with("v=spf1") && r.contains("include:amazonses.com"));
    let mut missing = Vec::new();
    if !mx {
        missing.push(format!("MX `{name}` = `10 {feedback}`"));
    }
    if !spf {
        missing.push(format!(
            "TXT `{name}` = `\"v=spf1 include:amazonses.com ~all\"`"
        ));
    }
    if missing.is_empty() && mail_from.verified {
        report.ok(check, format!("{name}, with its MX and SPF records"));
        return;
    }
    let (severity, effect) = if mail_from.rejects {
        (
            Severity::Blocking,
            "SES refuses every message while it is not verified",
        )
    } else {
        (
            Severity::Warning,
            "SES falls back to amazonses.com, so SPF does not align",
        )
    };
    let records = if missing.is_empty() {
        "its records are published: wait for SES to see them (up to 72 hours)".to_owned()
    } else {
        format!("publish {}", missing.join(" and "))
    };
    report.add(
        severity,
        check,
        format!("{name} is not verified by SES: {effect}"),
        Some(records),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_read_by_its_tags() {
        let d = Dmarc::parse(
            "shop.example",
            "v=DMARC1; p=Reject; adkim=s; rua=mailto:d@shop.example",
        )
        .unwrap();
        assert_eq!(
            (d.policy.as_str(), d.strict_dkim, d.strict_spf),
            ("reject", true, false)
        );
        assert_eq!(
            Dmarc::parse("x", "v=DMARC1; rua=mailto:d@x")
                .unwrap()
                .policy,
            "none"
        );
        assert_eq!(Dmarc::parse("x", "v=spf1 include:amazonses.com ~all"), None);
        assert_eq!(
            Dmarc::parse("x", "p=reject; v=DMARC1"),
            None,
            "v must come first"
        );
    }

    #[test]
    fn alignment_is_relaxed_under_the_organisational_domain_unless_strict() {
        let org = "shop.example";
        assert!(aligned("shop.example", "bounce.shop.example", false, org));
        assert!(aligned(
            "news.shop.example",
            "bounce.shop.example",
            false,
            org
        ));
        assert!(!aligned("shop.example", "bounce.shop.example", true, org));
        assert!(aligned("shop.example", "shop.example", true, org));
        assert!(!aligned("shop.example", "amazonses.com", false, org));
        assert!(!aligned("shop.example", "evilshop.example", false, org));
    }

    #[test]
    fn the_walk_goes_up_to_two_labels() {
        assert_eq!(
            walk("news.loomandlast.co.uk"),
            ["news.loomandlast.co.uk", "loomandlast.co.uk", "co.uk"]
        );
        assert_eq!(walk("shop.example."), ["shop.example"]);
        assert_eq!(walk("a.b.c.d.e.f.g.h.i.j.k").len(), 8);
    }
}
