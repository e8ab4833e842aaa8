//! The catalogue: one entry per SKU, imported from CSV (DESIGN §6).

use serde::{Deserialize, Serialize};
use url::Url;

use crate::Millis;
use crate::ids::{HoldId, Sku};
use crate::platform::{Platform, PlatformIds};

/// The CSV columns, in order: the entry's own, each platform's id column
/// ([`Platform::id_column`]), then `shards`.
pub fn csv_header() -> String {
    let mut columns = vec!["sku", "name", "product_url", "checkout_url", "threshold"];
    columns.extend(Platform::ALL.iter().filter_map(|p| p.id_column()));
    columns.push("shards");
    columns.push("launch_at");
    columns.join(",")
}

/// The most queue shards a SKU may have.
pub const MAX_SHARDS: u16 = 64;

/// One product the shop lets shoppers wait for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogueEntry {
    /// The SKU.
    pub sku: Sku,
    /// The product's name, as notices say it.
    pub name: String,
    /// The product page.
    pub product_url: Option<Url>,
    /// Checkout with `{hold}` where the hold id goes.
    pub checkout_url: Option<String>,
    /// Overrides the settings' default threshold.
    pub threshold: Option<u32>,
    /// The item's id on each platform that names items by id (Shopify's
    /// inventory item, WooCommerce's product or variation), stored as the
    /// platforms' id columns.
    #[serde(flatten)]
    pub ids: PlatformIds,
    /// Queue partitions (1 unless the SKU is expected to be hyped).
    pub shards: u16,
    /// When the item ended: its platform stopped listing it (`restock
    /// catalogue sync`). An ended item takes no sign-ups and tells nobody;
    /// its queue is kept as it is, and listing it again carries on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<Millis>,
    /// Notices stopped by the team (`restock pause --sku`): nobody is
    /// offered a unit until it is resumed; sign-ups, places and holds are
    /// kept, and an offer already sent stays good.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<ItemPause>,
    /// A scheduled launch: sign-ups are taken before it, stock reported
    /// before it is held back, and the first wave goes out at it (DESIGN
    /// §3, Launches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_at: Option<Millis>,
}

/// Why and since when the team stopped an item's notices.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemPause {
    /// What the team said (a recall, a wrong price, a restock for the morning).
    pub reason: String,
    /// When it was paused.
    pub since_ms: Millis,
}

/// A catalogue row that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("catalogue line {line}, `{field}`: {reason}")]
pub struct CatalogueError {
    /// 1-based line in the file (the header is line 1).
    pub line: u64,
    /// The column at fault.
    pub field: &'static str,
    /// What is wrong.
    pub reason: String,
}

#[derive(Deserialize)]
struct Row {
    sku: String,
    name: String,
    product_url: Option<String>,
    checkout_url: Option<String>,
    threshold: Option<String>,
    shards: Option<String>,
    #[serde(default)]
    launch_at: Option<String>,
}

/// Checks a list of entries as the CSV import does, whichever way they
/// came (the CSV, the admin command, the local server's admin endpoint):
/// every SKU once, and each entry as [`CatalogueEntry::check`] says.
/// `line` in the error is the entry's position plus one (a CSV's line).
///
/// # Errors
/// The first entry at fault.
pub fn check_entries(entries: &[CatalogueEntry]) -> Result<(), CatalogueError> {
    let mut seen = std::collections::HashSet::new();
    for (i, entry) in entries.iter().enumerate() {
        let err = |field, reason| CatalogueError {
            line: i as u64 + 2,
            field,
            reason,
        };
        if !seen.insert(&entry.sku) {
            return Err(err("sku", format!("{} appears twice", entry.sku)));
        }
        entry
            .check()
            .map_err(|(field, reason)| err(field, reason))?;
    }
    Ok(())
}

/// Whether `url` is an absolute web address (`http` or `https`): a link a
/// shopper is sent to, never `javascript:` or `data:`.
fn is_web(url: &Url) -> bool {
    matches!(url.scheme(), "https" | "http") && url.host().is_some()
}

impl CatalogueEntry {
    /// The field at fault and why, for an entry no import would make: a
    /// name of 1 to 120 characters without control characters, web
    /// addresses for the product and the checkout (which holds `{hold}`),
    /// a threshold of at least 1 and 1 to [`MAX_SHARDS`] shards.
    ///
    /// # Errors
    /// As above.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        let name = self.name.trim();
        if name.is_empty() || name.chars().count() > 120 || name.chars().any(char::is_control) {
            return Err(("name", "1 to 120 characters".into()));
        }
        if self.product_url.as_ref().is_some_and(|u| !is_web(u)) {
            return Err(("product_url", "an absolute http(s) URL".into()));
        }
        if let Some(c) = &self.checkout_url {
            let filled = Url::parse(&c.replace("{hold}", "HOLD"));
            if !c.contains("{hold}") || !filled.is_ok_and(|u| is_web(&u)) {
                return Err((
                    "checkout_url",
                    "an absolute http(s) URL containing {hold}".into(),
                ));
            }
        }
        if self.threshold == Some(0) {
            return Err(("threshold", "at least 1".into()));
        }
        if self.shards == 0 || self.shards > MAX_SHARDS {
            return Err(("shards", format!("1 to {MAX_SHARDS}")));
        }
        Ok(())
    }

    /// An entry with only the required fields.
    pub fn new(sku: Sku, name: impl Into<String>) -> Self {
        Self {
            sku,
            name: name.into(),
            product_url: None,
            checkout_url: None,
            threshold: None,
            ids: PlatformIds::default(),
            shards: 1,
            ended: None,
            paused: None,
            launch_at: None,
        }
    }

    /// Whether the item has launched at `now`: no launch is scheduled, or
    /// its time has come.
    pub fn launched(&self, now: Millis) -> bool {
        self.launch_at.is_none_or(|at| at <= now)
    }

    /// The origin [`Self::checkout_for`] leads to (`https://shop.example`),
    /// for a page whose form ends there.
    pub fn checkout_origin(&self) -> Option<String> {
        let url = match &self.checkout_url {
            Some(template) => Url::parse(&template.replace("{hold}", "hold")).ok()?,
            None => self.product_url.clone()?,
        };
        let origin = url.origin();
        origin.is_tuple().then(|| origin.ascii_serialization())
    }

    /// Where a shopper holding `hold` goes to buy: the checkout template
    /// filled in, else the product page with the hold id in its query
    /// (`?hold=…`), so the purchase can still name the hold it used.
    pub fn checkout_for(&self, hold: &HoldId) -> Option<String> {
        match &self.checkout_url {
            Some(template) => Some(template.replace("{hold}", &hold.to_string())),
            None => self.product_url.as_ref().map(|product| {
                let mut url = product.clone();
                url.query_pairs_mut().append_pair("hold", &hold.to_string());
                url.to_string()
            }),
        }
    }
}

/// Reads a catalogue CSV (a header naming at least `sku` and `name`).
///
/// # Errors
/// The first bad row, with its line and column.
pub fn parse_csv(text: &str) -> Result<Vec<CatalogueEntry>, CatalogueError> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .flexible(false)
        .from_reader(text.as_bytes());
    let mut entries = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let header = reader
        .headers()
        .map_err(|e| CatalogueError {
            line: 1,
            field: "header",
            reason: e.to_string(),
        })?
        .clone();
    // Each platform's id column and where the header puts it (if anywhere).
    let id_columns: Vec<_> = Platform::ALL
        .into_iter()
        .filter_map(|p| {
            let column = p.id_column()?;
            Some((p, column, header.iter().position(|h| h == column)))
        })
        .collect();
    for (i, record) in reader.records().enumerate() {
        let line = i as u64 + 2;
        let err = |field, reason: String| CatalogueError {
            line,
            field,
            reason,
        };
        let record = record.map_err(|e| err("row", e.to_string()))?;
        let entry = entry_of(&record, &header, &id_columns, line)?;
        if !seen.insert(entry.sku.clone()) {
            return Err(err("sku", format!("{} appears twice", entry.sku)));
        }
        entries.push(entry);
    }
    Ok(entries)
}

/// One row of the CSV (its `line`) as an entry, its ids read from
/// `id_columns` (each platform's id column and where the header puts it).
fn entry_of(
    record: &csv::StringRecord,
    header: &csv::StringRecord,
    id_columns: &[(Platform, &'static str, Option<usize>)],
    line: u64,
) -> Result<CatalogueEntry, CatalogueError> {
    let err = |field, reason: String| CatalogueError {
        line,
        field,
        reason,
    };
    let row: Row = record
        .deserialize(Some(header))
        .map_err(|e| err("row", e.to_string()))?;
    let sku = Sku::try_from(row.sku.as_str()).map_err(|e| err("sku", e.to_string()))?;
    let name = row.name.trim();
    let opt = |v: Option<String>| v.filter(|s| !s.is_empty());
    let product_url = opt(row.product_url)
        .map(|u| Url::parse(&u).map_err(|_| err("product_url", "an absolute http(s) URL".into())))
        .transpose()?;
    let checkout_url = opt(row.checkout_url);
    let number = |field: &'static str, v: Option<String>| {
        opt(v)
            .map(|s| {
                s.parse::<u64>()
                    .map_err(|_| err(field, "a whole number".into()))
            })
            .transpose()
    };
    let threshold = number("threshold", row.threshold)?;
    let threshold = threshold
        .map(|t| u32::try_from(t).map_err(|_| err("threshold", "at least 1".into())))
        .transpose()?;
    let shards = number("shards", row.shards)?.unwrap_or(1);
    let shards = u16::try_from(shards).map_err(|_| err("shards", format!("1 to {MAX_SHARDS}")))?;
    let launch_at = opt(row.launch_at)
        .map(|t| {
            time::OffsetDateTime::parse(&t, &time::format_description::well_known::Rfc3339)
                .map(|t| (t.unix_timestamp_nanos() / 1_000_000) as Millis)
                .map_err(|_| {
                    err(
                        "launch_at",
                        "a time with its offset, such as 2026-12-10T09:00:00-05:00".into(),
                    )
                })
        })
        .transpose()?;
    let mut ids = PlatformIds::default();
    for &(platform, column, at) in id_columns {
        let cell = at.and_then(|at| record.get(at)).map(str::to_owned);
        ids.set(platform, number(column, cell)?);
    }
    let entry = CatalogueEntry {
        sku,
        name: name.to_owned(),
        product_url,
        checkout_url,
        threshold,
        ids,
        shards,
        ended: None,
        paused: None,
        launch_at,
    };
    entry
        .check()
        .map_err(|(field, reason)| err(field, reason))?;
    Ok(entry)
}

/// What importing a platform's items changes in the catalogue, item by item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// An item the catalogue did not have.
    New(CatalogueEntry),
    /// An item it had, with what the platform says now; `was` as it was.
    /// Listing an ended item again is a change too: it is no longer ended.
    Changed {
        /// As it was.
        was: Box<CatalogueEntry>,
        /// As it will be.
        now: Box<CatalogueEntry>,
    },
    /// An item with the platform's id that the platform no longer lists:
    /// ended (the entry as it will be saved, with [`CatalogueEntry::ended`]).
    Ended(CatalogueEntry),
}

impl Change {
    /// The entry to save.
    pub fn entry(&self) -> &CatalogueEntry {
        match self {
            Self::New(entry) | Self::Ended(entry) => entry,
            Self::Changed { now, .. } => now,
        }
    }

    /// One line for a person: `+ SKU  name`, `~ SKU  field: was -> now; …`
    /// or `- SKU  name: ended, …`.
    pub fn describe(&self) -> String {
        match self {
            Self::New(e) => format!("+ {}  {}", e.sku, e.name),
            Self::Ended(e) => format!(
                "- {}  {}: no longer listed, so ended (no sign-ups, nobody told; its queue is kept)",
                e.sku, e.name
            ),
            Self::Changed { was, now } => {
                let mut fields = Vec::new();
                let mut field = |name: &str, a: String, b: String| {
                    if a != b {
                        fields.push(format!("{name}: {a:?} -> {b:?}"));
                    }
                };
                let url = |u: &Option<Url>| u.as_ref().map(Url::to_string).unwrap_or_default();
                let listed =
                    |e: &CatalogueEntry| if e.ended.is_some() { "ended" } else { "listed" };
                field("state", listed(was).into(), listed(now).into());
                field("name", was.name.clone(), now.name.clone());
                field("product_url", url(&was.product_url), url(&now.product_url));
                field(
                    "checkout_url",
                    was.checkout_url.clone().unwrap_or_default(),
                    now.checkout_url.clone().unwrap_or_default(),
                );
                for platform in Platform::ALL {
                    let id = |e: &CatalogueEntry| {
                        e.ids
                            .get(platform)
                            .map(|i| i.to_string())
                            .unwrap_or_default()
                    };
                    if let Some(column) = platform.id_column() {
                        field(column, id(was), id(now));
                    }
                }
                format!("~ {}  {}", now.sku, fields.join("; "))
            }
        }
    }
}

/// How many changes of each kind: `2 new, 1 changed, 0 ended`.
pub fn tally(changes: &[Change]) -> String {
    let count = |kind: fn(&Change) -> bool| changes.iter().filter(|c| kind(c)).count();
    format!(
        "{} new, {} changed, {} ended",
        count(|c| matches!(c, Change::New(_))),
        count(|c| matches!(c, Change::Changed { .. })),
        count(|c| matches!(c, Change::Ended(_))),
    )
}

/// An item a platform lists that the catalogue cannot take as it is: left
/// as it was, and the team told what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Held {
    /// Several of the platform's items share one SKU (a WooCommerce
    /// variation without its own SKU shows its parent's). A queue is keyed
    /// by SKU, so none is taken: `items` names each (its id, its name).
    Clash {
        /// The SKU they share.
        sku: Sku,
        /// Each item's id on the platform and its name.
        items: Vec<(u64, String)>,
    },
    /// An item the catalogue knows by its platform id now has another SKU:
    /// its queue stays on `was` (its stock still reaches it), `now` is not added.
    Renamed {
        /// The item's id on the platform.
        id: u64,
        /// The SKU the catalogue keys its queue by.
        was: Sku,
        /// The SKU the platform shows now.
        now: Sku,
    },
}

impl Held {
    /// One line for a person: what clashes or moved, and what to do.
    pub fn describe(&self, platform: Platform) -> String {
        let shop = platform.label();
        match self {
            Self::Clash { sku, items } => format!(
                "! {sku}  shared by {} items on {shop} ({}): none taken; give each its own SKU there, then run `restock catalogue sync`",
                items.len(),
                items
                    .iter()
                    .map(|(id, name)| format!("{id} {name}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Self::Renamed { id, was, now } => format!(
                "! {was}  item {id} is {now} on {shop} now: its queue stays on {was} (stock reported for item {id} still reaches it) and {now} is not added. restock cannot move a queue to another SKU: set the SKU back to {was} on {shop}; or, to start {now} with an empty queue, import {was} with its {column} empty (`restock catalogue import`) and sync again",
                column = platform.id_column().unwrap_or("id")
            ),
        }
    }
}

/// What importing a platform's items comes to: the catalogue's changes,
/// and the items held back for the team.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Merge {
    /// The changes to save.
    pub changes: Vec<Change>,
    /// The items not taken as listed.
    pub held: Vec<Held>,
}

/// The changes that bring the catalogue `existing` in line with what
/// `platform` lists (`listed`, one entry per item, keyed by SKU):
/// - new items are added;
/// - an item the catalogue has takes the platform's name, URLs and id
///   while keeping its own threshold, shards and other platforms' ids, and
///   is no longer ended if it was;
/// - an item with `platform`'s id that the platform no longer lists loses
///   that id if another platform still names it, and otherwise is ended at
///   `now_ms` (once: an ended one stays as it is), so an item sold on two
///   platforms ends only when neither lists it;
/// - items that share a SKU, and an item whose id the catalogue knows
///   under another SKU, are [`Held`]: nothing of them changes (so repeated
///   runs settle), and the entries they touch are not ended.
///
/// Items without `platform`'s id are left alone, and nothing changes for
/// an item that already matches.
pub fn merge_listed(
    existing: &[CatalogueEntry],
    platform: Platform,
    listed: Vec<CatalogueEntry>,
    now_ms: Millis,
) -> Merge {
    use std::collections::{BTreeMap, BTreeSet};
    let by_sku: BTreeMap<&Sku, &CatalogueEntry> = existing.iter().map(|e| (&e.sku, e)).collect();
    let mut listed_ids: BTreeSet<u64> = listed.iter().filter_map(|e| e.ids.get(platform)).collect();
    let (taken, held) = hold_back(existing, platform, listed);
    // What is held is still listed: an entry it touches is not ended.
    let mut listed_skus: BTreeSet<Sku> = taken.iter().map(|e| e.sku.clone()).collect();
    for h in &held {
        if let Held::Clash { sku, items } = h {
            listed_skus.insert(sku.clone());
            listed_ids.extend(items.iter().map(|(id, _)| *id));
        }
    }
    let mut changes = Vec::new();
    for item in taken {
        match by_sku.get(&item.sku) {
            None => changes.push(Change::New(item)),
            Some(was) => {
                let mut now = (*was).clone();
                now.name = item.name;
                now.product_url = item.product_url.or(now.product_url);
                now.checkout_url = item.checkout_url.or(now.checkout_url);
                now.ids.set(platform, item.ids.get(platform));
                now.ended = None;
                if now != **was {
                    changes.push(Change::Changed {
                        was: Box::new((*was).clone()),
                        now: Box::new(now),
                    });
                }
            }
        }
    }
    for was in existing {
        let unlisted = was
            .ids
            .get(platform)
            .is_some_and(|id| !listed_ids.contains(&id));
        if unlisted && !listed_skus.contains(&was.sku) {
            changes.extend(unlisted_change(was, platform, now_ms));
        }
    }
    Merge { changes, held }
}

/// The items listed that can be taken as they are, and those [`Held`]:
/// several sharing a SKU, or one whose id the catalogue has under another
/// SKU.
fn hold_back(
    existing: &[CatalogueEntry],
    platform: Platform,
    listed: Vec<CatalogueEntry>,
) -> (Vec<CatalogueEntry>, Vec<Held>) {
    let by_id: std::collections::BTreeMap<u64, &CatalogueEntry> = existing
        .iter()
        .filter_map(|e| e.ids.get(platform).map(|id| (id, e)))
        .collect();
    let mut sharing: std::collections::BTreeMap<Sku, Vec<CatalogueEntry>> = Default::default();
    for item in listed {
        sharing.entry(item.sku.clone()).or_default().push(item);
    }
    let (mut taken, mut held) = (Vec::new(), Vec::new());
    for (sku, mut items) in sharing {
        // Variants of one inventory item (Shopify since 2026-01) are one item.
        let first = items[0].ids.get(platform);
        if items
            .iter()
            .all(|e| first.is_some() && e.ids.get(platform) == first)
        {
            items.truncate(1);
        }
        if items.len() > 1 {
            held.push(Held::Clash {
                sku,
                items: items
                    .iter()
                    .map(|e| (e.ids.get(platform).unwrap_or_default(), e.name.clone()))
                    .collect(),
            });
            continue;
        }
        let item = items.remove(0);
        match item
            .ids
            .get(platform)
            .and_then(|id| by_id.get(&id).map(|e| (id, e)))
        {
            Some((id, was)) if was.sku != item.sku => held.push(Held::Renamed {
                id,
                was: was.sku.clone(),
                now: item.sku,
            }),
            _ => taken.push(item),
        }
    }
    (taken, held)
}

/// What becomes of an entry with `platform`'s id that the platform no
/// longer lists: it loses that id if another platform still names it, and
/// is otherwise ended (once).
fn unlisted_change(was: &CatalogueEntry, platform: Platform, now_ms: Millis) -> Option<Change> {
    let mut now = was.clone();
    now.ids.set(platform, None);
    if now.ids.iter().next().is_some() {
        // Still sold elsewhere: only this platform's id goes.
        Some(Change::Changed {
            was: Box::new(was.clone()),
            now: Box::new(now),
        })
    } else if was.ended.is_none() {
        Some(Change::Ended(CatalogueEntry {
            ended: Some(now_ms),
            ..was.clone()
        }))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The changes alone.
    fn merged(
        existing: &[CatalogueEntry],
        platform: Platform,
        listed: Vec<CatalogueEntry>,
        now_ms: Millis,
    ) -> Vec<Change> {
        let merge = merge_listed(existing, platform, listed, now_ms);
        assert_eq!(merge.held, [], "nothing held");
        merge.changes
    }

    #[test]
    fn variants_of_one_inventory_item_are_one_item() {
        let sku = |s: &str| Sku::try_from(s).unwrap();
        let with_id = |s: &str, name: &str, id: Option<u64>| {
            let mut e = CatalogueEntry::new(sku(s), name);
            e.ids.set(Platform::Shopify, id);
            e
        };
        // One inventory item (7) sold as two variants: one queue, one level.
        let merge = merge_listed(
            &[],
            Platform::Shopify,
            vec![
                with_id("CANDLE", "Candle — Single", Some(7)),
                with_id("CANDLE", "Candle — Gift wrapped", Some(7)),
            ],
            1_000,
        );
        assert_eq!(merge.held, []);
        assert_eq!(
            merge.changes,
            [Change::New(with_id("CANDLE", "Candle — Single", Some(7)))]
        );
        // Different items, or items with no id there, still clash.
        for second in [Some(8), None] {
            let merge = merge_listed(
                &[],
                Platform::Shopify,
                vec![
                    with_id("CANDLE", "Candle — Single", Some(7)),
                    with_id("CANDLE", "Candle — Large", second),
                ],
                1_000,
            );
            assert_eq!(merge.changes, [], "{second:?}");
            assert!(matches!(merge.held[..], [Held::Clash { .. }]), "{second:?}");
        }
        let merge = merge_listed(
            &[],
            Platform::Shopify,
            vec![
                with_id("CANDLE", "Candle — Single", None),
                with_id("CANDLE", "Candle — Large", None),
            ],
            1_000,
        );
        assert!(matches!(merge.held[..], [Held::Clash { .. }]));
    }

    #[test]
    fn items_sharing_a_sku_and_an_item_renamed_are_held_for_the_team_while_the_rest_come_in() {
        let sku = |s: &str| Sku::try_from(s).unwrap();
        let with_id = |s: &str, name: &str, id: u64| {
            let mut e = CatalogueEntry::new(sku(s), name);
            e.ids.set(Platform::Shopify, Some(id));
            e
        };
        let existing = vec![with_id("TEE", "Tee", 1), with_id("MUG", "Mug", 2)];
        let listing = || {
            vec![
                with_id("TEE", "Tee — Blue", 1),
                with_id("TEE", "Tee — Red", 3),
                with_id("MUG-2026", "Mug", 2),
                with_id("RUG", "Rug", 4),
            ]
        };
        let merge = merge_listed(&existing, Platform::Shopify, listing(), 1_000);
        assert_eq!(
            merge.changes,
            [Change::New(with_id("RUG", "Rug", 4))],
            "the rest come in; nothing ends"
        );
        assert_eq!(
            merge.held,
            [
                Held::Renamed {
                    id: 2,
                    was: sku("MUG"),
                    now: sku("MUG-2026")
                },
                Held::Clash {
                    sku: sku("TEE"),
                    items: vec![(1, "Tee — Blue".into()), (3, "Tee — Red".into())]
                },
            ]
        );
        let said: Vec<String> = merge
            .held
            .iter()
            .map(|h| h.describe(Platform::Shopify))
            .collect();
        assert!(
            said[0].contains("its queue stays on MUG")
                && said[0].contains("set the SKU back to MUG on Shopify"),
            "{}",
            said[0]
        );
        assert!(
            said[1].contains("1 Tee — Blue, 3 Tee — Red")
                && said[1].contains("give each its own SKU"),
            "{}",
            said[1]
        );
        // Applied, a second run changes nothing and holds the same: it settles.
        let mut applied = existing.clone();
        applied.push(with_id("RUG", "Rug", 4));
        let again = merge_listed(&applied, Platform::Shopify, listing(), 2_000);
        assert_eq!((again.changes, again.held), (vec![], merge.held));
    }

    #[test]
    fn a_launch_reads_with_its_offset_and_is_checked() {
        let csv = "sku,name,launch_at\nRUNNER-X,Limited runner,2026-12-10T09:00:00-05:00\nTHROW-OAT,Linen throw,\n";
        let entries = parse_csv(csv).unwrap();
        let at = 1_796_911_200_000; // 2026-12-10T14:00:00Z
        assert_eq!(entries[0].launch_at, Some(at));
        assert!(!entries[0].launched(at - 1) && entries[0].launched(at));
        assert_eq!(entries[1].launch_at, None);
        assert!(entries[1].launched(0));
        let bad = parse_csv("sku,name,launch_at\nRUNNER-X,Limited runner,10 December 9am\n");
        assert_eq!(
            bad.unwrap_err().to_string(),
            "catalogue line 2, `launch_at`: a time with its offset, such as 2026-12-10T09:00:00-05:00"
        );
    }

    #[test]
    fn a_full_catalogue_reads() {
        let csv = format!(
            "{}\nCHAIR-WAL,Walnut dining chair,https://loomandlast.co.uk/p/chair,https://loomandlast.co.uk/cart/4242:1?attributes[hold]={{hold}},2,271878346596884015,799,4,\nTHROW-OAT,Linen throw,,,,,,,\n",
            csv_header()
        );
        let entries = parse_csv(&csv).unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(
            entries[0].ids.get(Platform::Shopify),
            Some(271_878_346_596_884_015)
        );
        assert_eq!(entries[0].ids.get(Platform::WooCommerce), Some(799));
        assert_eq!(entries[0].shards, 4);
        assert_eq!(entries[1].shards, 1);
        let hold = HoldId::from_random([1; 16]);
        assert!(
            entries[0]
                .checkout_for(&hold)
                .unwrap()
                .ends_with(&format!("attributes[hold]={hold}"))
        );
        assert_eq!(entries[1].checkout_for(&hold), None);
    }

    #[test]
    fn a_product_url_alone_still_carries_the_hold_to_the_shop() {
        let hold = HoldId::from_random([7; 16]);
        let mut entry = CatalogueEntry::new(Sku::try_from("LAMP-BRASS").unwrap(), "Lamp");
        entry.product_url = Some(Url::parse("https://shop.example/p/lamp").unwrap());
        assert_eq!(
            entry.checkout_for(&hold).unwrap(),
            format!("https://shop.example/p/lamp?hold={hold}")
        );
        // A product URL that already has a query keeps it.
        entry.product_url = Some(Url::parse("https://shop.example/p?id=9").unwrap());
        assert_eq!(
            entry.checkout_for(&hold).unwrap(),
            format!("https://shop.example/p?id=9&hold={hold}")
        );
    }

    #[test]
    fn only_sku_and_name_are_required() {
        let entries = parse_csv("sku,name\nA-1,Thing\n").unwrap();
        assert_eq!(
            entries[0],
            CatalogueEntry::new(Sku::try_from("A-1").unwrap(), "Thing")
        );
    }

    #[test]
    fn bad_rows_say_where() {
        let cases = [
            ("sku,name\nA 1,Thing\n", 2, "sku"),
            ("sku,name,shards\nA,Thing,0\n", 2, "shards"),
            (
                "sku,name,checkout_url\nA,Thing,https://x.example/cart\n",
                2,
                "checkout_url",
            ),
            ("sku,name\nA,Thing\nA,Again\n", 3, "sku"),
            ("sku,name,threshold\nA,Thing,lots\n", 2, "threshold"),
            ("sku,name,threshold\nA,Thing,0\n", 2, "threshold"),
            ("sku,name,shards\nA,Thing,65\n", 2, "shards"),
            ("sku,name,shards\nA,Thing,70000\n", 2, "shards"),
            (
                "sku,name,checkout_url\nA,Thing,javascript:alert(1)//{hold}\n",
                2,
                "checkout_url",
            ),
            (
                "sku,name,product_url\nA,Thing,ftp://files.example/p\n",
                2,
                "product_url",
            ),
        ];
        for (csv, line, field) in cases {
            let e = parse_csv(csv).unwrap_err();
            assert_eq!((e.line, e.field), (line, field), "{e}");
        }
    }

    /// Entries that reach the store another way than the CSV (the admin
    /// command, the local server's admin endpoint) are held to the same
    /// rules.
    #[test]
    fn entries_from_anywhere_are_checked_as_the_import_checks_them() {
        let good = |sku: &str| CatalogueEntry::new(Sku::try_from(sku).unwrap(), "Thing");
        assert_eq!(check_entries(&[good("A"), good("B")]), Ok(()));
        let mut zero = good("B");
        zero.shards = 0;
        let mut script = good("C");
        script.checkout_url = Some("javascript:alert(1)//{hold}".into());
        let mut no_hold = good("C");
        no_hold.checkout_url = Some("https://shop.example/cart".into());
        let mut nameless = good("C");
        nameless.name = " ".into();
        let mut page = good("C");
        page.product_url = Some(Url::parse("javascript:alert(1)").unwrap());
        for (entries, line, field) in [
            (vec![good("A"), zero], 3, "shards"),
            (vec![script], 2, "checkout_url"),
            (vec![no_hold], 2, "checkout_url"),
            (vec![nameless], 2, "name"),
            (vec![page], 2, "product_url"),
            (vec![good("A"), good("A")], 3, "sku"),
        ] {
            let e = check_entries(&entries).unwrap_err();
            assert_eq!((e.line, e.field), (line, field), "{e}");
        }
    }

    #[test]
    fn a_platform_s_listing_adds_new_items_and_updates_known_ones_keeping_their_own_settings() {
        let sku = |s: &str| Sku::try_from(s).unwrap();
        let mut chair = CatalogueEntry::new(sku("CHAIR-WAL"), "Walnut chair");
        chair.threshold = Some(3);
        chair.shards = 8;
        chair.ids.set(Platform::WooCommerce, Some(799));
        let lamp = CatalogueEntry::new(sku("LAMP"), "Lamp");
        let existing = vec![chair.clone(), lamp.clone()];
        let listed = |name: &str, id: u64| {
            let mut e = CatalogueEntry::new(sku("CHAIR-WAL"), name);
            e.ids.set(Platform::Shopify, Some(id));
            e.checkout_url = Some("https://s.example/cart/1:1?attributes[hold]={hold}".into());
            e
        };
        let mut rug = CatalogueEntry::new(sku("RUG"), "Rug — Large");
        rug.ids.set(Platform::Shopify, Some(9));
        let changes = merged(
            &existing,
            Platform::Shopify,
            vec![listed("Walnut chair — Oak", 7), rug.clone()],
            1_000,
        );
        assert_eq!(changes.len(), 2, "{changes:?}");
        let Change::Changed { was, now } = &changes[0] else {
            panic!("{:?}", changes[0])
        };
        assert_eq!(**was, chair);
        assert_eq!(now.name, "Walnut chair — Oak");
        assert_eq!(
            (now.threshold, now.shards),
            (Some(3), 8),
            "its own settings stay"
        );
        assert_eq!(now.ids.get(Platform::Shopify), Some(7));
        assert_eq!(
            now.ids.get(Platform::WooCommerce),
            Some(799),
            "other platforms' ids stay"
        );
        assert!(
            changes[0]
                .describe()
                .starts_with("~ CHAIR-WAL  name: \"Walnut chair\" -> \"Walnut chair — Oak\""),
            "{}",
            changes[0].describe()
        );
        assert!(
            changes[0]
                .describe()
                .contains("shopify_inventory_item_id: \"\" -> \"7\"")
        );
        assert_eq!(changes[1], Change::New(rug.clone()));
        assert_eq!(changes[1].describe(), "+ RUG  Rug — Large");
        // Applied, the same listing changes nothing; the lamp was never touched.
        let applied: Vec<CatalogueEntry> =
            vec![changes[0].entry().clone(), lamp, changes[1].entry().clone()];
        assert!(
            merged(
                &applied,
                Platform::Shopify,
                vec![listed("Walnut chair — Oak", 7), rug],
                2_000,
            )
            .is_empty()
        );
    }

    #[test]
    fn an_item_the_platform_stops_listing_ends_once_and_listing_it_again_carries_on() {
        let sku = |s: &str| Sku::try_from(s).unwrap();
        let with_id = |s: &str, platform: Platform, id: u64| {
            let mut e = CatalogueEntry::new(sku(s), s.to_lowercase());
            e.ids.set(platform, Some(id));
            e
        };
        let mut tall = with_id("TEE-L", Platform::Shopify, 3);
        tall.threshold = Some(2);
        let mut both = with_id("MUG", Platform::Shopify, 2);
        both.ids.set(Platform::WooCommerce, Some(813));
        let existing = vec![
            with_id("TEE-S", Platform::Shopify, 1),
            tall.clone(),
            with_id("THROW", Platform::WooCommerce, 812),
            CatalogueEntry::new(sku("HAND-MADE"), "hand-made"),
            both.clone(),
        ];
        // Shopify lists only the small tee: the large one ends; the mug,
        // still on WooCommerce, only loses its Shopify id; the other
        // platform's item and the one without an id are not Shopify's.
        let mut changes = merged(
            &existing,
            Platform::Shopify,
            vec![with_id("TEE-S", Platform::Shopify, 1)],
            5_000,
        );
        assert_eq!(tally(&changes), "0 new, 1 changed, 1 ended");
        let mug = changes.remove(1);
        assert!(
            matches!(&mug, Change::Changed { now, .. } if now.ids.get(Platform::Shopify).is_none()
                && now.ids.get(Platform::WooCommerce) == Some(813) && now.ended.is_none()),
            "{mug:?}"
        );
        assert_eq!(
            changes,
            [Change::Ended(CatalogueEntry {
                ended: Some(5_000),
                ..tall.clone()
            })]
        );
        assert_eq!(
            changes[0].describe(),
            "- TEE-L  tee-l: no longer listed, so ended (no sign-ups, nobody told; its queue is kept)"
        );
        // Ended once: the next sync that still does not list it changes nothing.
        let ended = changes[0].entry().clone();
        let after = vec![existing[0].clone(), ended.clone()];
        assert!(
            merged(
                &after,
                Platform::Shopify,
                vec![with_id("TEE-S", Platform::Shopify, 1)],
                9_000
            )
            .is_empty()
        );
        // Listed again (even under a new id): no longer ended, its own
        // threshold kept.
        let again = merged(
            &after,
            Platform::Shopify,
            vec![
                with_id("TEE-S", Platform::Shopify, 1),
                with_id("TEE-L", Platform::Shopify, 4),
            ],
            9_000,
        );
        let [Change::Changed { was, now }] = again.as_slice() else {
            panic!("{again:?}")
        };
        assert_eq!(**was, ended);
        assert_eq!((now.ended, now.threshold), (None, Some(2)));
        assert!(
            again[0]
                .describe()
                .contains("state: \"ended\" -> \"listed\""),
            "{}",
            again[0].describe()
        );
        // An ended entry reads back as it was written; an entry written
        // before entries could end reads as listed.
        let json = serde_json::to_string(&ended).unwrap();
        assert_eq!(
            serde_json::from_str::<CatalogueEntry>(&json).unwrap(),
            ended
        );
        let old = serde_json::to_string(&existing[0]).unwrap();
        assert!(!old.contains("ended"), "{old}");
    }
}
