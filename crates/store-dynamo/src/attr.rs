//! Every attribute name the store writes, in one place.
//!
//! Stored names are short (items are billed by size) and avoid DynamoDB's
//! reserved words (`hold`, `name`, `level`, `at` are reserved), so
//! expressions need no aliases. Expressions are built with `format!` from
//! these constants; values always go through placeholders.

/// The table's partition key.
pub const PK: &str = "pk";
/// The table's sort key.
pub const SK: &str = "sk";

// --- requests ---------------------------------------------------------------

/// A request's id.
pub const REQUEST_ID: &str = "rid";
/// The SKU (requests, wakes, hold pointers, platform id mappings).
pub const SKU: &str = "sku";
/// The shopper's name.
pub const NAME: &str = "nm";
/// `email` or `sms`.
pub const CHANNEL: &str = "ch";
/// The email address or phone number.
pub const ADDRESS: &str = "addr";
/// The contact's keyed hash.
pub const CONTACT_KEY: &str = "ckey";
/// The join key (join time and tie-break), the queue order.
pub const JOIN_KEY: &str = "jk";
/// The queue shard.
pub const SHARD: &str = "shd";
/// When a waiting request goes stale.
pub const STALE_AT: &str = "stale_at";
/// The lifecycle status.
pub const STATUS: &str = "st";
/// The restock an offer or hold belongs to.
pub const EPISODE: &str = "epi";
/// When an offer or hold ends.
pub const EXPIRES: &str = "exp";
/// A hold's id.
pub const HOLD: &str = "hid";
/// The restock a request was last offered in (once per restock).
pub const LAST_EPISODE: &str = "last_epi";
/// The reserve link secret's hash.
pub const RESERVE_HASH: &str = "rh";
/// The opt-out link secret's hash.
pub const OPTOUT_HASH: &str = "oh";
/// The manage secret's hash.
pub const MANAGE_HASH: &str = "mh";
/// The language the shopper is spoken to in (a BCP 47 tag; absent: the shop's default).
pub const LANGUAGE: &str = "lg";
/// When the offer's one reminder is due (ms; set once its notice is sent).
pub const REMIND_AT: &str = "rmd_at";
/// The reminder's reserve link secret's hash (it holds as `rh` does).
pub const REMIND_HASH: &str = "rmh";
/// The provider's message id of the reminder sent (recorded once).
pub const REMINDED: &str = "rmd_id";
/// The shopper's clock for quiet hours (a tz database name, or a country
/// code for every zone of it; absent: the shop's `time_zone`).
pub const ZONE: &str = "tz";
/// When the request's notice went out (ms).
pub const TOLD_AT: &str = "told_at";
/// When it took a hold (ms).
pub const HELD_AT: &str = "held_at";
/// When it ended (ms).
pub const ENDED_AT: &str = "ended_at";
/// The start of a story chapter's attribute: `story_<slot>` holds the
/// chapter of that slot as JSON (`restock_core::story`), so a transition
/// sets its chapter with no read and a story stays as bounded as its slots.
pub const STORY: &str = "story_";
/// The hashes of the manage links sent to the shopper's inbox (a set).
pub const INBOX_HASH: &str = "ih";
/// The confirmation link secret's hash (double opt-in).
pub const CONFIRM_HASH: &str = "cfh";
/// The consent on record (JSON).
pub const CONSENT: &str = "consent";
/// The current offer's notice outcome (JSON).
pub const NOTICE: &str = "notice";
/// The request's ticket: its number in its shard and what its join saw of
/// every shard (`7|3,5,2-4`: see `codec::write_ticket`).
pub const TICKET: &str = "tk";

// --- a shard's tickets (positions at constant cost) ---------------------------

/// The shard's next ticket number (the ticket counter).
pub const NEXT_TICKET: &str = "nx";
/// The join key of the shard's last ticket dealt (the ticket counter).
pub const LAST_KEY: &str = "lk";
/// Prefix of a presence block's words: `b<w>` holds one bit per ticket of
/// the block's `w`th run of 64, set while that ticket's request waits.
pub const PRESENCE_WORD: &str = "b";
/// A presence block's count of bits set (it is deleted at zero).
pub const PRESENCE_COUNT: &str = "n";
/// Import marker: the import's fingerprint (its size, first and last id).
pub const IMPORT: &str = "imp";
/// Import marker: how many of the import's requests are in.
pub const IMPORTED: &str = "done";

// --- sparse index keys (present only while the request is in the index) ------

/// `due` index partition: one of the due shards.
pub const DUE_PK: &str = "dpk";
/// `due` index sort key: the deadline.
pub const DUE: &str = "due";
/// Every sparse index attribute: removed together when a request ends.
pub const INDEX_KEYS: [&str; 2] = [DUE_PK, DUE];

// --- SKU state ----------------------------------------------------------------

/// The stock state machine (JSON).
pub const STOCK: &str = "stock";
/// The SKU level.
pub const LEVEL: &str = "lvl";
/// Units out with shoppers: live offers and live holds (a hold keeps its
/// offer's unit, so a click does not write the SKU's state item).
pub const OUT: &str = "units_out";
/// How many hold slots the SKU's allowance is spread over (`HS#<sku>#<n>`).
pub const HOLD_SLOTS: &str = "hs";
/// A hold slot's share of `level - held` (see `restock_core::allowance`).
pub const ALLOWANCE: &str = "fr";
/// Units bought with a hold.
pub const BOUGHT: &str = "bought";
/// Orders counted as assisted revenue (orders without a hold by a contact told).
pub const ASSISTED: &str = "assisted";
/// What those orders paid, per currency (`arev_EUR`, thousandths).
pub const ASSISTED_REVENUE_PREFIX: &str = "arev_";
/// When a contact was last sent a notice for an item (a told marker, ms).
pub const TOLD: &str = "told";
/// Offers that lapsed.
pub const LAPSED: &str = "lapsed";
/// SKU state: what bought holds brought in, one attribute per currency
/// (`rev_EUR`, thousandths of the unit).
pub const REVENUE_PREFIX: &str = "rev_";
/// SKU state: times reconcile corrected the counters.
pub const DRIFTS: &str = "drifts";
/// Bumped by every write that can raise `units_out` or move the level.
pub const VERSION: &str = "ver";
/// When a counter last moved (reconcile waits for quiet).
pub const TOUCHED: &str = "touched";
/// The restock's phrase, per language (`phrase_de`).
pub const PHRASE: &str = "phrase";
/// The restock the phrase was written for, per language (`phrase_epi_de`).
pub const PHRASE_EPISODE: &str = "phrase_epi";

// --- other items ----------------------------------------------------------------

/// The settings document (TOML).
pub const DOC: &str = "doc";
/// A catalogue entry (JSON).
pub const ENTRY: &str = "ent";
/// A wake's kind.
pub const KIND: &str = "kind";
/// When a wake or opt-out was written.
pub const WRITTEN_AT: &str = "wat";
/// How an opt-out came (`restock_core::OptOutVia`).
pub const VIA: &str = "via";
/// A day's notices sent (mail health).
pub const MAIL_SENT: &str = "sent";
/// Of a day's notices sent, texts.
pub const MAIL_TEXTS_SENT: &str = "texts_sent";
/// A day's permanent bounces.
pub const MAIL_BOUNCED: &str = "bounced";
/// A day's complaints.
pub const MAIL_COMPLAINED: &str = "complained";
/// A mail day's soft bounces.
pub const MAIL_SOFT_BOUNCED: &str = "soft_bounced";
/// A mail day's confirmations sent.
pub const MAIL_CONFIRM_SENT: &str = "confirm_sent";
/// A mail day's sign-ups confirmed.
pub const MAIL_CONFIRMED: &str = "confirmed";
/// A mail day's sign-ups never confirmed.
pub const MAIL_CONFIRM_EXPIRED: &str = "confirm_expired";
/// A day's stock deliveries for items not in the catalogue.
pub const MAIL_UNKNOWN_ITEMS: &str = "unknown_items";
/// The next free send slot (ms) on the account-wide schedule.
pub const NEXT_SEND: &str = "next_send";
/// When the sender's pause opened.
pub const PAUSE_FROM: &str = "pause_from";
/// When the sender's pause ends by itself.
pub const PAUSE_TO: &str = "pause_to";
/// The provider's reason for the pause.
pub const PAUSE_WHY: &str = "why";
/// The items held back by the pause (a string set).
pub const HELD_SKUS: &str = "held_skus";
/// When a source's current silence was alerted.
pub const ALERTED_AT: &str = "alerted";
/// Until when an address sent a confirmation is not asked again (ms).
pub const ASK_UNTIL: &str = "ask_until";
/// On a pending confirmation's marker: not claimed before this (ms), the
/// end of the address's day that covered it.
pub const AFTER: &str = "ask_after";
/// A rate-limit window's hit count.
pub const HITS: &str = "hits";
/// The TTL attribute (seconds since the epoch).
pub const TTL: &str = "expires_at";
