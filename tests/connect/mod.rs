//! `restock connect shopify` (`restock_aws::connect::shopify`, what the CLI
//! runs) against a stack on moto (its keys secret and table) and the
//! Shopify fake (the client credentials grant, webhook subscriptions,
//! product variants by cursor, throttling): from nothing to a connected
//! shop, then again changing nothing.

use restock_aws::connect::{self, ShopifyAccess, Stack};
use restock_core::catalogue::Change;
use restock_core::{Platform, Sku};
use restock_e2e::*;
use restock_store::prelude::*;

const DETECT: &str = "https://detect.example.lambda-url.eu-west-2.on.aws/";

/// A Shopify `ProductVariant` node as Admin GraphQL gives it.
fn variant(
    id: u64,
    sku: &str,
    title: &str,
    product: (&str, &str, bool),
    item: u64,
) -> serde_json::Value {
    let (product_title, handle, only_default) = product;
    serde_json::json!({
        "id": format!("gid://shopify/ProductVariant/{id}"),
        "sku": sku,
        "title": title,
        "inventoryItem": {"id": format!("gid://shopify/InventoryItem/{item}")},
        "product": {
            "title": product_title,
            "handle": handle,
            "onlineStoreUrl": format!("https://loomandlast.co.uk/products/{handle}"),
            "hasOnlyDefaultVariant": only_default,
        },
    })
}

async fn keys(sdk: &aws_config::SdkConfig, secret: &str) -> serde_json::Value {
    let value = aws_sdk_secretsmanager::Client::new(sdk)
        .get_secret_value()
        .secret_id(secret)
        .send()
        .await
        .unwrap();
    serde_json::from_str(value.secret_string().unwrap()).unwrap()
}

#[tokio::test]
async fn connect_shopify_takes_a_shop_from_nothing_to_connected_and_again_changes_nothing() {
    let fake = PlatformFake::start().await;
    let chair = ("Walnut dining chair", "walnut-chair", false);
    *fake.variants.lock().unwrap() = vec![
        // The fixture catalogue's chair: now a size of a product.
        variant(4242, CHAIR, "Standard", chair, CHAIR_SHOPIFY_ID),
        variant(
            4243,
            "CHAIR-WAL-TALL",
            "Tall",
            chair,
            271_878_346_596_884_016,
        ),
        variant(
            5150,
            "LAMP-BRASS",
            "Default Title",
            ("Brass lamp", "brass-lamp", true),
            5151,
        ),
        variant(
            6000,
            "",
            "Default Title",
            ("Gift card", "gift-card", true),
            6001,
        ),
    ];
    let d = Deployment::create(settings()).await;
    let sdk = aws_config(&d.endpoint).await;
    let stack = Stack {
        keys_secret: d.secret.clone(),
        detect_url: DETECT.into(),
        table: d.store.table().to_owned(),
    };
    let app = || ShopifyAccess::App {
        client_id: SHOPIFY_APP.0.into(),
        client_secret: SHOPIFY_APP.1.into(),
    };
    let catalogue_before = d.store.catalogue().await.unwrap();
    let keys_before = keys(&sdk, &d.secret).await;

    // A dry run says what it would do and changes nothing.
    let dry = connect::shopify(&sdk, &stack, &fake.url, app(), true)
        .await
        .unwrap();
    let said = dry.describe(true);
    assert!(
        said.contains("would subscribe") && said.contains("2 new, 1 changed"),
        "{said}"
    );
    assert!(said.contains("1 variants without a SKU left out"), "{said}");
    assert!(fake.subscriptions.lock().unwrap().is_empty());
    assert_eq!(keys(&sdk, &d.secret).await, keys_before);
    assert_eq!(d.store.catalogue().await.unwrap(), catalogue_before);

    // Connected, through two throttled answers.
    *fake.throttle.lock().unwrap() = 2;
    let done = connect::shopify(&sdk, &stack, &fake.url, app(), false)
        .await
        .unwrap();
    assert_eq!(fake.count("shopify-throttled"), 2, "waited and retried");
    let keys_now = keys(&sdk, &d.secret).await;
    assert_eq!(
        keys_now["shopify_admin"],
        serde_json::json!({"shop": fake.url, "client_id": SHOPIFY_APP.0, "client_secret": SHOPIFY_APP.1})
    );
    let mut expected = vec![serde_json::json!(SHOPIFY_APP.1)];
    expected.extend(keys_before["shopify"].as_array().unwrap().iter().cloned());
    assert_eq!(
        keys_now["shopify"],
        serde_json::Value::Array(expected),
        "the app's secret signs; the old keys stay after it"
    );
    assert_eq!(keys_now["contact_pepper"], keys_before["contact_pepper"]);
    let uri = format!("{DETECT}webhooks/shopify");
    let subscribed: Vec<(String, String)> = fake
        .subscriptions
        .lock()
        .unwrap()
        .iter()
        .map(|(_, topic, uri)| (topic.clone(), uri.clone()))
        .collect();
    assert_eq!(
        subscribed,
        [
            ("INVENTORY_LEVELS_UPDATE".into(), uri.clone()),
            ("ORDERS_PAID".into(), uri)
        ]
    );
    assert_eq!(done.catalogue.len(), 3, "{}", done.describe(false));
    let entry = |sku: &str| {
        let store = &d.store;
        let sku = Sku::try_from(sku).unwrap();
        async move { store.catalogue_entry(&sku).await.unwrap().unwrap() }
    };
    let tall = entry("CHAIR-WAL-TALL").await;
    assert_eq!(tall.name, "Walnut dining chair — Tall");
    assert_eq!(
        tall.product_url.unwrap().as_str(),
        "https://loomandlast.co.uk/products/walnut-chair?variant=4243"
    );
    assert_eq!(
        tall.checkout_url.as_deref(),
        Some("https://loomandlast.co.uk/cart/4243:1?attributes[hold]={hold}")
    );
    assert_eq!(
        tall.ids.get(Platform::Shopify),
        Some(271_878_346_596_884_016)
    );
    assert_eq!(
        entry("LAMP-BRASS").await.name,
        "Brass lamp",
        "no options: the product's name"
    );
    let chair_now = entry(CHAIR).await;
    let chair_was = catalogue_before
        .iter()
        .find(|e| e.sku.as_str() == CHAIR)
        .unwrap();
    assert_eq!(chair_now.name, "Walnut dining chair — Standard");
    assert_eq!(
        (chair_now.shards, chair_now.threshold),
        (chair_was.shards, chair_was.threshold),
        "the item's own settings stay"
    );
    assert_eq!(
        chair_now.ids.get(Platform::WooCommerce),
        chair_was.ids.get(Platform::WooCommerce)
    );
    assert!(
        done.catalogue
            .iter()
            .any(|c| matches!(c, Change::Changed { .. }))
    );

    // Again: nothing changes, no duplicate subscription.
    let again = connect::shopify(&sdk, &stack, &fake.url, app(), false)
        .await
        .unwrap();
    let said = again.describe(false);
    assert!(
        said.contains("unchanged") && said.contains("0 new, 0 changed"),
        "{said}"
    );
    assert_eq!(said.matches("already delivers to").count(), 2, "{said}");
    assert_eq!(fake.subscriptions.lock().unwrap().len(), 2);
    assert_eq!(fake.count("shopify-token"), 3, "one grant a run");

    // A wrong secret stops before anything is changed, saying what to check.
    let wrong = ShopifyAccess::App {
        client_id: SHOPIFY_APP.0.into(),
        client_secret: "shpss_wrong".into(),
    };
    let e = connect::shopify(&sdk, &stack, &fake.url, wrong, false)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("Shopify's Admin API") && e.contains("invalid_client"),
        "{e}"
    );
    assert!(!e.contains("shpss_wrong"), "{e}");
    assert_eq!(keys(&sdk, &d.secret).await, keys_now);

    // A delivery signed with the app's secret is one detect accepts.
    let signed = Platform::Shopify
        .sign_test(
            &restock_core::platform::TestEvent::Stock {
                id: Some(271_878_346_596_884_016),
                sku: None,
                level: 2,
                location: None,
            },
            SHOPIFY_APP.1,
            "connect-1",
            time::OffsetDateTime::now_utc().unix_timestamp(),
        )
        .unwrap();
    let webhooks = restock_core::webhook::WebhookKeys::from_json(&keys_now.to_string()).unwrap();
    let verified = Platform::Shopify.keys(&webhooks).unwrap();
    assert!(
        Platform::Shopify
            .parse(
                &verified,
                signed.path,
                &signed.headers,
                signed.body.as_bytes(),
                time::OffsetDateTime::now_utc()
            )
            .is_ok()
    );
}
