//! `restock stats`: the figures per item, from the item's history, for the
//! team and for `restock export items`.

use restock_core::{Millis, Sku};
use serde_json::json;

use super::{Admin, AdminError, Output, by_language};

impl Admin {
    /// Figures per SKU.
    pub(super) async fn stats(&self, skus: Vec<Sku>, now: Millis) -> Result<Output, AdminError> {
        let mut rows = Vec::new();
        let mut json = Vec::new();
        for entry in self.skus(skus).await? {
            let s = self.store.stats(&entry.sku, entry.shards).await?;
            // Of the offers decided so far, the share somebody clicked.
            let decided = s.held + s.bought + s.lapsed;
            let claim = (decided > 0).then(|| f64::from(s.held + s.bought) / f64::from(decided));
            rows.push(vec![
                entry.sku.to_string(),
                s.waiting.to_string(),
                s.unconfirmed.to_string(),
                s.offered.to_string(),
                s.held.to_string(),
                s.bought.to_string(),
                s.lapsed.to_string(),
                claim.map_or("-".into(), |c| format!("{:.0}%", c * 100.0)),
                restock_core::money::totals(&s.revenue),
                format!(
                    "{} {}",
                    s.assisted,
                    restock_core::money::totals(&s.assisted_revenue)
                ),
                by_language(&s.waiting_by_language),
            ]);
            json.push(json!({ "sku": entry.sku, "stats": s, "claim_rate": claim }));
        }
        let day = restock_core::feedback::day_of(now);
        let mail = self.store.mail_day(&day).await?;
        let percent = |r: Option<f64>| r.map_or("-".to_owned(), |r| format!("{:.2}%", r * 100.0));
        Ok(Output::table(
            format!(
                "claim rate: offers clicked (held or bought) among offers decided; assisted: orders without a hold by a contact told within the attribution window\n\
                 mail on {day} (UTC): {} sent ({} of them texts), bounce rate {} of emails (SES reviews near 5%), complaint rate {} (near 0.1%)\n\
                 sign-ups on {day}: {} confirmations sent, {} confirmed, {} ran out unconfirmed\n\
                 stock deliveries on {day} for items not in the catalogue: {} (the team is alerted once per item a day)",
                mail.sent,
                mail.texts_sent,
                percent(mail.bounce_rate()),
                percent(mail.complaint_rate()),
                mail.confirm_sent,
                mail.confirmed,
                mail.confirm_expired,
                mail.unknown_items,
            ),
            &[
                "sku",
                "waiting",
                "to confirm",
                "offered",
                "held",
                "bought",
                "lapsed",
                "claim rate",
                "revenue (holds)",
                "assisted (orders, revenue)",
                "waiting by language",
            ],
            rows,
            json!({
                "skus": json,
                "mail": {
                    "day": day,
                    "sent": mail.sent,
                    "texts_sent": mail.texts_sent,
                    "bounced": mail.bounced,
                    "complained": mail.complained,
                    "soft_bounced": mail.soft_bounced,
                    "confirmations_sent": mail.confirm_sent,
                    "confirmed": mail.confirmed,
                    "unconfirmed_expired": mail.confirm_expired,
                    "unknown_item_deliveries": mail.unknown_items,
                    "bounce_rate": mail.bounce_rate(),
                    "complaint_rate": mail.complaint_rate(),
                },
            }),
        ))
    }
}
