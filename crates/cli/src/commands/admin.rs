//! The commands the admin port runs as they are (settings, catalogue
//! show, queue, holds, show, the on-call commands, opt-outs, stats):
//! each argument checked, then handed to [`crate::target::Target::run`].

use restock_app::admin::{Admin, Command};

use crate::args::{CatalogueCmd, Cmd, OptoutCmd, SettingsCmd};
use crate::output::CliError;
use crate::target::{read, sku, skus};

pub(crate) fn command(cmd: &Cmd) -> Result<Command, CliError> {
    Ok(match cmd {
        Cmd::Settings {
            action: SettingsCmd::Show,
        } => Command::SettingsShow,
        Cmd::Settings {
            action: SettingsCmd::Put { file },
        } => Command::SettingsPut { toml: read(file)? },
        Cmd::Catalogue {
            action: CatalogueCmd::Show { sku: Some(s) },
        } => Command::CatalogueShow { sku: sku(s)? },
        Cmd::Catalogue {
            action: CatalogueCmd::Show { sku: None },
        } => Command::CatalogueList,
        Cmd::Queue { sku: s, limit } => Command::Queue {
            sku: sku(s)?,
            limit: usize::try_from(*limit).unwrap_or(Admin::MAX_QUEUE_LIMIT),
        },
        Cmd::Release { sku: s } => Command::Release { sku: sku(s)? },
        Cmd::Reject { sku: s } => Command::Reject { sku: sku(s)? },
        Cmd::Escalations => Command::Escalations,
        Cmd::Holds { sku: s } => Command::Holds { sku: sku(s)? },
        Cmd::Pause { sku: s, reason } => Command::Pause {
            sku: s.as_deref().map(sku).transpose()?,
            reason: reason.clone(),
        },
        Cmd::Resume { sku: s } => Command::Resume {
            sku: s.as_deref().map(sku).transpose()?,
        },
        Cmd::Rewake { skus: s } => Command::Rewake { skus: skus(s)? },
        Cmd::Stats { skus: s } => Command::Stats { skus: skus(s)? },
        Cmd::Reconcile { skus: s } => Command::Reconcile { skus: skus(s)? },
        Cmd::Optout {
            action: OptoutCmd::Add { contact },
        } => Command::OptOutAdd {
            contact: contact.clone(),
        },
        Cmd::Optout {
            action: OptoutCmd::Remove { contact },
        } => Command::OptOutRemove {
            contact: contact.clone(),
        },
        Cmd::Forget { contact } => Command::Forget {
            contact: contact.clone(),
        },
        Cmd::Show { who, with_contacts } => Command::Show {
            who: who.clone(),
            with_contacts: *with_contacts,
        },
        Cmd::Catalogue {
            action: CatalogueCmd::Import { .. } | CatalogueCmd::Sync { .. },
        }
        | Cmd::Export { .. }
        | Cmd::Dashboard { .. }
        | Cmd::Connect { .. }
        | Cmd::Doctor { .. }
        | Cmd::Dlq { .. }
        | Cmd::SignWebhook { .. } => {
            unreachable!("handled before")
        }
    })
}
