//! The contact commands: opt a contact out for good, lift an opt-out, and
//! forget everything held about a contact but the opt-out.

use restock_core::Millis;
use serde_json::json;

use super::{Admin, AdminError, Output, contact};

impl Admin {
    /// Opts a contact out for good.
    pub(super) async fn opt_out_add(
        &self,
        text: String,
        now: Millis,
    ) -> Result<Output, AdminError> {
        let pepper = self.pepper.as_deref().ok_or(AdminError::NoPepper)?;
        let contact = contact(&text)?;
        // Under every key it may be on record under, live requests kept
        // under a former one included.
        let mut ended = 0;
        for key in contact.keys(pepper) {
            ended += self
                .store
                .opt_out_contact(&key, restock_core::OptOutVia::Team, now)
                .await?;
        }
        Ok(Output::message(
            format!(
                "{} opted out for good; {ended} live requests ended",
                contact.masked()
            ),
            json!({ "opted_out": true, "ended": ended }),
        ))
    }

    /// Erases everything held about a contact but its opt-out.
    pub(super) async fn forget(&self, text: String, now: Millis) -> Result<Output, AdminError> {
        let pepper = self.pepper.as_deref().ok_or(AdminError::NoPepper)?;
        let contact = contact(&text)?;
        let mut f = restock_store::Forgotten::default();
        for key in contact.keys(pepper) {
            let of = self.store.forget_contact(&key, now).await?;
            f.erased += of.erased;
            f.ended += of.ended;
            f.opt_out_kept |= of.opt_out_kept;
        }
        let kept = if f.opt_out_kept {
            "kept: their opt-out, as a keyed hash (so they are never mailed)"
        } else {
            "nothing is kept"
        };
        Ok(Output::message(
            format!(
                "{}: erased {} requests (name, address or number, consent record, links); {} live ones ended first, their units passed on; {kept}",
                contact.masked(),
                f.erased,
                f.ended
            ),
            json!({ "erased": f.erased, "ended": f.ended, "opt_out_kept": f.opt_out_kept }),
        ))
    }

    /// Lifts a contact's opt-out.
    pub(super) async fn opt_out_remove(&self, text: String) -> Result<Output, AdminError> {
        let pepper = self.pepper.as_deref().ok_or(AdminError::NoPepper)?;
        let contact = contact(&text)?;
        let mut removed = false;
        for key in contact.keys(pepper) {
            removed |= self.store.remove_opt_out(&key).await?;
        }
        let message = if removed {
            format!("{}'s opt-out lifted: they may join again", contact.masked())
        } else {
            format!("{} had not opted out", contact.masked())
        };
        Ok(Output::message(message, json!({ "removed": removed })))
    }
}
