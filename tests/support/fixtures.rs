//! The fixtures every test starts from: the clock's start, the documented
//! test keys, the keys secret, the settings and the catalogue.

use restock_core::{CatalogueEntry, Settings};

/// 2026-11-29T09:00:00Z: every world's clock starts here.
pub const T0: i64 = 1_796_374_800_000;
/// One minute in ms.
pub const MIN: i64 = 60_000;
/// The documented test key for Shopify webhooks (also in `events/`).
pub const SHOPIFY_KEY: &str = "shpss_restock_test_key";
/// The documented test key for WooCommerce webhooks.
pub const WOO_KEY: &str = "wc_restock_test_key";
/// The documented test key for the generic stock and order webhooks.
pub const STOCK_KEY: &str = "whsec_cmVzdG9jay10ZXN0LXN0b2NrLWtleQ==";
/// The chair's Shopify inventory item id.
pub const CHAIR_SHOPIFY_ID: u64 = 271_878_346_596_884_015;
/// The chair's SKU.
pub const CHAIR: &str = "CHAIR-WAL";

/// The secret's JSON as the template would hold it once keys are set.
pub fn secrets_json() -> String {
    serde_json::json!({
        "shopify": ["shpss_new_key_not_yet_used", SHOPIFY_KEY],
        "woocommerce": [WOO_KEY],
        "stock": [STOCK_KEY],
        "contact_pepper": "restock-test-contact-pepper-0123456789",
    })
    .to_string()
}

/// The hold id a checkout URL carries (`?hold=`, or Shopify's cart
/// attribute `attributes[hold]=`), whatever else its query has (UTM tags).
pub fn hold_in(location: &str) -> String {
    url::Url::parse(location)
        .unwrap_or_else(|e| panic!("{location}: {e}"))
        .query_pairs()
        .find(|(k, _)| k == "hold" || k == "attributes[hold]")
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| panic!("no hold in {location}"))
}

/// The contact pepper of [`secrets_json`], for the admin commands that key contacts.
pub fn pepper() -> Vec<u8> {
    restock_app::ports::Secrets::from_json(&secrets_json())
        .expect("the test secret")
        .contact_pepper
}

/// The settings every world starts with (fast sends so tests do not wait).
pub fn settings() -> Settings {
    Settings::from_toml(
        r#"
store_name = "Loom & Last"
public_base_url = "https://notify.loomandlast.co.uk"
email_from = "Loom & Last <hello@loomandlast.co.uk>"
sms_sender_id = "LoomLast"
offer_window = "15m"
hold_window = "15m"
sends_per_second = 1000
storefront_origins = ["https://loomandlast.co.uk"]
# +44 numbers span Great Britain and the Crown Dependencies (+44 7911 is Guernsey).
sms_countries = ["GB", "GG", "JE", "IM"]
# Most suites start from a confirmed sign-up; tests/confirm walks double opt-in.
confirm = false

# The compiled binaries read the wall clock, so texts would wait for morning
# at some hours of the day: quiet hours are off here, and tests/quiet turns
# them on with clocks it sets.
[quiet_hours]
sms = ""
"#,
    )
    .expect("test settings are valid")
}

/// The chair and a throw, as the catalogue CSV would give them.
pub fn catalogue() -> Vec<CatalogueEntry> {
    let csv = format!(
        "sku,name,product_url,checkout_url,threshold,shopify_inventory_item_id,woocommerce_product_id,shards\n\
         {CHAIR},Walnut dining chair,https://loomandlast.co.uk/products/walnut-chair,https://loomandlast.co.uk/cart/4242:1?attributes[hold]={{hold}},,{CHAIR_SHOPIFY_ID},799,2\n\
         THROW-OAT,Linen throw,https://loomandlast.co.uk/products/linen-throw,,,,812,\n"
    );
    restock_core::catalogue::parse_csv(&csv).expect("test catalogue is valid")
}
