//! `restock connect shopify` (`restock_aws::connect::shopify`, what the CLI
//! runs) against a stack on moto (its keys secret and table) and the
//! Shopify fake (the client credentials grant, webhook subscriptions,
//! product variants by cursor, throttling): from nothing to a connected
//! shop, then again changing nothing.

use restock_aws::connect::{self, ShopifyAccess, Stack, Webhooks};
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
            "status": "ACTIVE",
            "onlineStoreUrl": format!("https://loomandlast.co.uk/products/{handle}"),
            "hasOnlyDefaultVariant": only_default,
        },
    })
}

/// The stack's outputs as `connect` reads them, for deployment `d`.
pub(crate) fn stack_of(d: &Deployment) -> Stack {
    Stack {
        name: "restock".into(),
        model_id: Some("amazon.nova-micro-v1:0".into()),
        keys_secret: d.secret.clone(),
        detect_url: DETECT.into(),
        capture_url: "https://capture.example.lambda-url.eu-west-2.on.aws/".into(),
        table: d.store.table().to_owned(),
        alert_topic: "arn:aws:sns:eu-west-2:123456789012:restock-alerts".into(),
    }
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

/// With the app (`--app`), its configuration subscribes the webhooks for
/// every shop it is on: connect subscribes none of its own, so no delivery
/// comes twice.
#[tokio::test]
async fn connect_shopify_with_the_app_leaves_the_webhooks_to_the_app() {
    let fake = PlatformFake::start().await;
    let d = Deployment::create(settings()).await;
    let sdk = aws_config(&d.endpoint).await;
    let stack = stack_of(&d);
    let alerts = restock_app::ports::RecordedAlerts::default();
    let app = ShopifyAccess::App {
        client_id: SHOPIFY_APP.0.into(),
        client_secret: SHOPIFY_APP.1.into(),
    };
    let done = connect::shopify(
        &sdk,
        &stack,
        &fake.url,
        app,
        (Webhooks::DeclaredByApp, false),
        &alerts,
    )
    .await
    .unwrap();
    assert!(fake.subscriptions.lock().unwrap().is_empty());
    assert_eq!(
        done.webhooks,
        [format!(
            "declared in the app's shopify.app.toml at {DETECT}webhooks/shopify: `shopify app deploy` subscribes them"
        )]
    );
    assert_eq!(
        keys(&sdk, &d.secret).await["shopify"][0],
        SHOPIFY_APP.1,
        "the app's secret signs what its subscriptions deliver"
    );
    // The Admin API lists none of the app's subscriptions: doctor reads
    // that the app declares them, instead of finding them missing.
    let report = restock_aws::doctor::check(&sdk, &stack, &d.reach(&sdk)).await;
    let shopify: Vec<(&str, restock_aws::doctor::Severity)> = report
        .findings
        .iter()
        .filter(|f| f.check.starts_with("shopify webhook"))
        .map(|f| (f.check.as_str(), f.severity))
        .collect();
    assert_eq!(
        shopify,
        [
            ("shopify webhook key", restock_aws::doctor::Severity::Ok),
            ("shopify webhooks", restock_aws::doctor::Severity::Ok)
        ],
        "{}",
        report.describe()
    );
    assert!(
        report
            .describe()
            .contains("declared in the app's shopify.app.toml"),
        "{}",
        report.describe()
    );
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
    let stack = stack_of(&d);
    let alerts = restock_app::ports::RecordedAlerts::default();
    let app = || ShopifyAccess::App {
        client_id: SHOPIFY_APP.0.into(),
        client_secret: SHOPIFY_APP.1.into(),
    };
    let catalogue_before = d.store.catalogue().await.unwrap();
    let keys_before = keys(&sdk, &d.secret).await;

    // A dry run says what it would do and changes nothing.
    let dry = connect::shopify(
        &sdk,
        &stack,
        &fake.url,
        app(),
        (Webhooks::Subscribe, true),
        &alerts,
    )
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

    // Connected, through two throttled answers; the shop counter's
    // units will tell nobody.
    fake.retail_only.lock().unwrap().insert(70_000_001);
    *fake.throttle.lock().unwrap() = 2;
    let done = connect::shopify(
        &sdk,
        &stack,
        &fake.url,
        app(),
        (Webhooks::Subscribe, false),
        &alerts,
    )
    .await
    .unwrap();
    assert_eq!(fake.count("shopify-throttled"), 2, "waited and retried");
    assert!(
        done.describe(false).contains(
            "locations: 0 fulfil online orders and count; 1 do not (70000001), so units there tell nobody"
        ),
        "{}",
        done.describe(false)
    );
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
    let again = connect::shopify(
        &sdk,
        &stack,
        &fake.url,
        app(),
        (Webhooks::Subscribe, false),
        &alerts,
    )
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
    let e = connect::shopify(
        &sdk,
        &stack,
        &fake.url,
        wrong,
        (Webhooks::Subscribe, false),
        &alerts,
    )
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

/// `restock connect woocommerce`: the REST key and a generated webhook
/// secret in the keys secret, the product and order webhooks registered
/// once and signed with that secret, simple products and every variation
/// (over several pages) in the catalogue.
/// A deployment whose keys secret has no WooCommerce webhook key yet (as
/// before `connect woocommerce`), with its SDK config and stack.
async fn deployed_without_woocommerce() -> (Deployment, aws_config::SdkConfig, Stack) {
    let mut secret: serde_json::Value = serde_json::from_str(&secrets_json()).unwrap();
    secret.as_object_mut().unwrap().remove("woocommerce");
    let d = Deployment::create_with_secret(settings(), &secret.to_string()).await;
    let sdk = aws_config(&d.endpoint).await;
    let stack = stack_of(&d);
    (d, sdk, stack)
}

#[tokio::test]
async fn connect_woocommerce_registers_signed_webhooks_and_imports_every_variation() {
    let fake = PlatformFake::start().await;
    // 150 simple products (two pages) and a variable one in two sizes.
    let mut products: Vec<serde_json::Value> = (0..150)
        .map(|i| {
            serde_json::json!({
                "id": 1000 + i, "name": format!("Mug {i}"), "type": "simple",
                "sku": format!("MUG-{i}"), "permalink": format!("https://shop.example/product/mug-{i}/"),
            })
        })
        .collect();
    products.push(serde_json::json!({
        "id": 810, "name": "Linen throw", "type": "variable", "sku": "",
        "permalink": "https://shop.example/product/linen-throw/",
    }));
    *fake.woo_products.lock().unwrap() = products;
    fake.woo_variations.lock().unwrap().insert(
        810,
        vec![
            serde_json::json!({"id": 812, "sku": "THROW-OAT", "permalink": "https://shop.example/product/linen-throw/?attribute_colour=Oat", "attributes": [{"id": 1, "name": "Colour", "option": "Oat"}]}),
            serde_json::json!({"id": 813, "sku": "", "permalink": "", "attributes": [{"id": 1, "name": "Colour", "option": "Sand"}]}),
        ],
    );
    let (d, sdk, stack) = deployed_without_woocommerce().await;
    let alerts = std::sync::Arc::new(restock_app::ports::RecordedAlerts::default());
    let run = |dry_run: bool| {
        let (sdk, stack, url) = (sdk.clone(), stack.clone(), fake.url.clone());
        let alerts = alerts.clone();
        async move {
            connect::woocommerce(
                &sdk,
                &stack,
                &url,
                WOO_API_KEY.0,
                WOO_API_KEY.1,
                dry_run,
                &*alerts,
            )
            .await
        }
    };
    let dry = run(true).await.unwrap().describe(true);
    assert!(
        dry.contains("would register") && dry.contains("150 new, 2 changed, 0 ended"),
        "{dry}"
    );
    assert!(fake.woo_webhooks.lock().unwrap().is_empty());

    let done = run(false).await.unwrap();
    let keys_now = keys(&sdk, &d.secret).await;
    let generated = keys_now["woocommerce"][0].as_str().unwrap().to_owned();
    assert_eq!(generated.len(), 64, "a generated secret");
    assert_eq!(keys_now["woocommerce_api"]["consumer_key"], WOO_API_KEY.0);
    let hooks = fake.woo_webhooks.lock().unwrap().clone();
    let url = format!("{DETECT}webhooks/woocommerce");
    let registered: Vec<(&str, &str, &str)> = hooks
        .iter()
        .map(|h| {
            (
                h["topic"].as_str().unwrap(),
                h["delivery_url"].as_str().unwrap(),
                h["secret"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        registered,
        [
            ("product.updated", url.as_str(), generated.as_str()),
            ("order.updated", url.as_str(), generated.as_str())
        ]
    );
    assert_eq!(done.without_sku, 1, "the Sand variation has no SKU");
    assert_eq!(done.catalogue.len(), 152, "{}", done.describe(false));
    // The fixture's chair, still on Shopify, is not listed by this site:
    // it keeps its place in the catalogue and loses only its WooCommerce id.
    let chair = d
        .store
        .catalogue_entry(&Sku::try_from(CHAIR).unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (
            chair.ids.get(Platform::WooCommerce),
            chair.ids.get(Platform::Shopify),
            chair.ended
        ),
        (None, Some(CHAIR_SHOPIFY_ID), None)
    );
    let oat = d
        .store
        .catalogue_entry(&Sku::try_from("THROW-OAT").unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(oat.name, "Linen throw — Oat");
    assert_eq!(oat.ids.get(Platform::WooCommerce), Some(812));
    assert_eq!(
        oat.checkout_url.as_deref(),
        Some(format!("{}/cart/?add-to-cart=812&hold={{hold}}", fake.url).as_str())
    );
    let mug = d
        .store
        .catalogue_entry(&Sku::try_from("MUG-149").unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        mug.ids.get(Platform::WooCommerce),
        Some(1149),
        "the second page too"
    );

    // Again: the same secret, no second webhook, nothing to import.
    let again = run(false).await.unwrap().describe(false);
    assert!(
        again.contains("unchanged") && again.contains("0 new, 0 changed"),
        "{again}"
    );
    assert_eq!(fake.woo_webhooks.lock().unwrap().len(), 2);
    assert_eq!(
        keys(&sdk, &d.secret).await["woocommerce"][0],
        generated.as_str()
    );

    // A disabled webhook is reported with what to do, not duplicated.
    fake.woo_webhooks.lock().unwrap()[0]["status"] = "disabled".into();
    let said = run(true).await.unwrap().describe(true);
    assert!(said.contains("registered but disabled"), "{said}");

    // A wrong key: WooCommerce's 401, said with what to check.
    let e = connect::woocommerce(
        &sdk,
        &stack,
        &fake.url,
        WOO_API_KEY.0,
        "cs_wrong",
        false,
        &*alerts,
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(e.contains("401") && e.contains("Read/Write"), "{e}");
    assert!(!e.contains("cs_wrong"), "{e}");

    // A product delivery signed with the generated secret is accepted.
    let signed = Platform::WooCommerce
        .sign_test(
            &restock_core::platform::TestEvent::Stock {
                id: Some(812),
                sku: Some("THROW-OAT".into()),
                level: 3,
                location: None,
            },
            &generated,
            "connect-woo-1",
            time::OffsetDateTime::now_utc().unix_timestamp(),
        )
        .unwrap();
    let webhooks = restock_core::webhook::WebhookKeys::from_json(&keys_now.to_string()).unwrap();
    assert!(
        Platform::WooCommerce
            .parse(
                &Platform::WooCommerce.keys(&webhooks).unwrap(),
                signed.path,
                &signed.headers,
                signed.body.as_bytes(),
                time::OffsetDateTime::now_utc()
            )
            .is_ok()
    );
}

/// From a fresh stack (no platform keys) to a passing doctor: `restock
/// doctor` names what blocks notices, `connect shopify` and `connect
/// woocommerce` fix it, and then it passes; a webhook the platform
/// disabled fails it again.
#[tokio::test]
async fn connect_takes_a_fresh_stack_to_a_passing_doctor() {
    let fake = PlatformFake::start().await;
    *fake.variants.lock().unwrap() = vec![variant(
        4242,
        CHAIR,
        "Standard",
        ("Walnut dining chair", "walnut-chair", false),
        CHAIR_SHOPIFY_ID,
    )];
    *fake.woo_products.lock().unwrap() = vec![serde_json::json!({
        "id": 812, "name": "Linen throw", "type": "simple", "sku": "THROW-OAT",
        "permalink": "https://shop.example/product/linen-throw/",
    })];
    let mut fresh: serde_json::Value = serde_json::from_str(&secrets_json()).unwrap();
    for key in ["shopify", "woocommerce", "shopify_admin", "woocommerce_api"] {
        fresh.as_object_mut().unwrap().remove(key);
    }
    let d = Deployment::create_with_secret(settings(), &fresh.to_string()).await;
    let sdk = aws_config(&d.endpoint).await;
    let stack = stack_of(&d);
    let alerts = restock_app::ports::RecordedAlerts::default();
    let failing = |report: &restock_aws::doctor::Report| {
        report
            .findings
            .iter()
            .filter(|f| f.severity == restock_aws::doctor::Severity::Blocking)
            .map(|f| f.check.clone())
            .collect::<Vec<_>>()
    };

    let before = restock_aws::doctor::check(&sdk, &stack, &d.reach(&sdk)).await;
    assert!(before.blocking(), "{}", before.describe());
    assert_eq!(
        failing(&before),
        ["shopify webhook key", "woocommerce webhook key"],
        "{}",
        before.describe()
    );
    assert!(
        before.describe().contains("fix: `restock connect shopify`"),
        "{}",
        before.describe()
    );

    // The app already delivers to 120 older stacks: its list is read to the
    // end (pages of 100), so this stack's subscription is seen as made.
    fake.subscriptions.lock().unwrap().extend((0..120).map(|i| {
        let topic = "INVENTORY_LEVELS_UPDATE".to_owned();
        (
            format!("gid://shopify/WebhookSubscription/{i}"),
            topic,
            format!("https://old-{i}.example/"),
        )
    }));
    let app = ShopifyAccess::App {
        client_id: SHOPIFY_APP.0.into(),
        client_secret: SHOPIFY_APP.1.into(),
    };
    connect::shopify(
        &sdk,
        &stack,
        &fake.url,
        app,
        (Webhooks::Subscribe, false),
        &alerts,
    )
    .await
    .unwrap();
    connect::woocommerce(
        &sdk,
        &stack,
        &fake.url,
        WOO_API_KEY.0,
        WOO_API_KEY.1,
        false,
        &alerts,
    )
    .await
    .unwrap();
    let after = restock_aws::doctor::check(&sdk, &stack, &d.reach(&sdk)).await;
    assert!(!after.blocking(), "{}", after.describe());
    let said = after.describe();
    for check in [
        "ok   shopify webhook INVENTORY_LEVELS_UPDATE: delivers to",
        "ok   shopify webhook ORDERS_PAID",
        "ok   woocommerce webhook product.updated",
        "ok   woocommerce webhook order.updated",
        "ok   shopify API access: answers",
        "ok   SES sender identity",
    ] {
        assert!(said.contains(check), "{check}: {said}");
    }
    assert!(said.contains("notices can reach shoppers"), "{said}");
    // WooCommerce's own back-in-stock sign-ups: absent (the feature off),
    // then on (a warning naming the switch), then off.
    assert!(
        said.contains(
            "ok   woocommerce stock notifications: this WooCommerce has no sign-ups of its own"
        ),
        "{said}"
    );
    let own = format!(
        "products/{}",
        restock_aws::platforms::woocommerce::OWN_SIGNUPS
    );
    fake.woo_settings
        .lock()
        .unwrap()
        .insert(own.clone(), "yes".into());
    let theirs_on = restock_aws::doctor::check(&sdk, &stack, &d.reach(&sdk)).await;
    assert!(!theirs_on.blocking(), "{}", theirs_on.describe());
    let finding = theirs_on
        .finding("woocommerce stock notifications")
        .unwrap();
    assert_eq!(
        finding.severity,
        restock_aws::doctor::Severity::Warning,
        "{finding:?}"
    );
    assert!(
        finding.fix.as_deref().unwrap().contains("Allow sign-ups"),
        "{finding:?}"
    );
    fake.woo_settings.lock().unwrap().insert(own, "no".into());
    let theirs_off = restock_aws::doctor::check(&sdk, &stack, &d.reach(&sdk)).await;
    assert!(
        theirs_off
            .describe()
            .contains("ok   woocommerce stock notifications: WooCommerce's own sign-ups are off"),
        "{}",
        theirs_off.describe()
    );
    assert!(
        said.contains("ok   Bedrock model: amazon.nova-micro-v1:0 answers"),
        "{said}"
    );
    // A model the account may not call: a warning (notices go out in the
    // fixed wording) that says where access is granted.
    d.model.set(ModelMode::Denied);
    let denied = restock_aws::doctor::check(&sdk, &stack, &d.reach(&sdk)).await;
    assert!(!denied.blocking(), "{}", denied.describe());
    let model = denied.finding("Bedrock model").unwrap();
    assert_eq!(model.severity, restock_aws::doctor::Severity::Warning);
    assert!(
        model.found.contains("AccessDenied")
            && model.fix.as_deref().unwrap().contains("Model access"),
        "{model:?}"
    );
    d.model.set(ModelMode::Answer("Back.".into()));
    // The settings text shoppers: SNS's sandbox and spending limit are looked at.
    assert!(
        said.contains("SNS SMS sandbox") && said.contains("SNS spending limit"),
        "{said}"
    );

    // `restock catalogue sync`: the shop renamed the throw and archived the
    // chair; the sync applies the name and ends the chair, telling the team
    // once.
    fake.woo_products.lock().unwrap()[0]["name"] = "Linen throw, oat".into();
    // The chair's product is archived (Shopify keeps listing its variants).
    for v in fake.variants.lock().unwrap().iter_mut() {
        v["product"]["status"] = "ARCHIVED".into();
    }
    let synced = connect::sync(&sdk, &stack, false, &alerts).await.unwrap();
    let by = |p: Platform| synced.iter().find(|s| s.platform == p).unwrap();
    let shopify = by(Platform::Shopify);
    let [Change::Ended(chair)] = shopify.catalogue.as_slice() else {
        panic!("{:?}", shopify.catalogue)
    };
    assert_eq!(chair.sku.as_str(), CHAIR);
    let woo = by(Platform::WooCommerce);
    assert_eq!(woo.catalogue.len(), 1);
    assert_eq!(woo.catalogue[0].entry().name, "Linen throw, oat");
    let throw = d
        .store
        .catalogue_entry(&Sku::try_from("THROW-OAT").unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(throw.name, "Linen throw, oat");
    let stored = d
        .store
        .catalogue_entry(&Sku::try_from(CHAIR).unwrap())
        .await
        .unwrap()
        .unwrap();
    assert!(stored.ended.is_some(), "ended, and kept");
    let told = alerts.all();
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(
        told[0]
            .subject
            .contains("1 items no longer listed on Shopify were ended")
            && told[0]
                .body
                .contains("Walnut dining chair — Standard (CHAIR-WAL): 0 waiting"),
        "{told:?}"
    );
    // Again: nothing more ends and the team is not told twice.
    let again = connect::sync(&sdk, &stack, false, &alerts).await.unwrap();
    assert!(again.iter().all(|s| s.catalogue.is_empty()), "{again:?}");
    assert_eq!(alerts.all().len(), 1);

    // WooCommerce disables a webhook after failed deliveries: blocking again.
    fake.woo_webhooks.lock().unwrap()[0]["status"] = "disabled".into();
    let disabled = restock_aws::doctor::check(&sdk, &stack, &d.reach(&sdk)).await;
    assert_eq!(
        failing(&disabled),
        ["woocommerce webhook product.updated"],
        "{}",
        disabled.describe()
    );
}

/// The story on an imported catalogue: a fresh stack connected to a shop
/// that sells a tee in three sizes. A shopper waits for the sold-out
/// medium; Shopify's own signed webhook (the app's client secret) brings
/// it back; she is told, and her reserve link holds a unit and leads to
/// the variant's cart with the hold. The shop then stops selling the
/// large: the sync ends it (the team told once), its sign-ups are refused
/// and its queue is told nothing on a restock; listed again, the queue
/// carries on and the units already back go to it.
#[tokio::test]
async fn the_story_runs_on_the_imported_catalogue_with_a_size_and_its_restock() {
    use std::sync::Arc;
    let fake = PlatformFake::start().await;
    let tee = ("Linen tee", "linen-tee", false);
    let sizes = [("S", 7101u64), ("M", 7102), ("L", 7103)];
    let tees: Vec<serde_json::Value> = sizes
        .iter()
        .enumerate()
        .map(|(i, (size, item))| variant(7001 + i as u64, &format!("TEE-{size}"), size, tee, *item))
        .collect();
    *fake.variants.lock().unwrap() = tees.clone();
    let mut fresh: serde_json::Value = serde_json::from_str(&secrets_json()).unwrap();
    for key in ["shopify", "shopify_admin"] {
        fresh.as_object_mut().unwrap().remove(key);
    }
    let d = Deployment::create_with_secret(settings(), &fresh.to_string()).await;
    let sdk = aws_config(&d.endpoint).await;
    let stack = stack_of(&d);
    let alerts = restock_app::ports::RecordedAlerts::default();
    // The functions, in process, on the stack's table and keys secret.
    let outbox = Arc::new(restock_app::ports::Outbox::default());
    let world = World::new(
        Arc::new(restock_store_dynamo::DynamoStore::new(
            aws_sdk_dynamodb::Client::new(&sdk),
            d.store.table(),
        )),
        outbox.clone(),
        Arc::new(restock_app::ports::FixedPhraser(Ok("It is back.".into()))),
        Arc::new(restock_aws::SecretsKeyring::new(
            aws_sdk_secretsmanager::Client::new(&sdk),
            d.secret.clone(),
        )),
    )
    .await;

    let app = ShopifyAccess::App {
        client_id: SHOPIFY_APP.0.into(),
        client_secret: SHOPIFY_APP.1.into(),
    };
    let done = connect::shopify(
        &sdk,
        &stack,
        &fake.url,
        app,
        (Webhooks::Subscribe, false),
        &alerts,
    )
    .await
    .unwrap();
    // The tees are new; the fixture's chair carries a Shopify id this shop
    // does not list, and a WooCommerce one: it loses only the Shopify id.
    assert!(
        done.describe(false).contains("3 new, 1 changed, 0 ended"),
        "{}",
        done.describe(false)
    );
    assert!(alerts.all().is_empty());
    let report = restock_aws::doctor::check(&sdk, &stack, &d.reach(&sdk)).await;
    assert!(!report.blocking(), "{}", report.describe());

    let sku = |s: &str| Sku::try_from(s).unwrap();
    let join = |name: &str, size: &str| {
        let body = serde_json::json!({
            "sku": format!("TEE-{size}"), "name": name, "email": world.email(name), "consent": true,
        });
        world.capture_json("POST", "/requests", body)
    };
    let restock = |item: u64, available: i64, id: &str| {
        let body = serde_json::json!({
            "inventory_item_id": item, "location_id": 24826418u64, "available": available,
            "updated_at": world.clock_rfc3339(),
        })
        .to_string();
        let request = shopify_delivery_signed(
            SHOPIFY_APP.1.as_bytes(),
            "inventory_levels/update",
            id,
            &body,
        );
        world.call(Api::Detect, request)
    };
    let told = |s: &str| {
        let sku = sku(s);
        let services = world.services.clone();
        async move {
            restock_app::notify::notify_sku(&services, &sku)
                .await
                .unwrap()
        }
    };

    // A size sold out, a sign-up for it, and its restock.
    assert_eq!(join("Ada", "M").await.status, 201);
    assert_eq!(join("Bea", "L").await.status, 201);
    assert_eq!(join("Dan", "L").await.status, 201);
    let reply = restock(7102, 1, "delivery-m-1").await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(told("TEE-M").await.sent, 1);
    let sent = outbox.sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    let link = sent[0].reserve_link().expect("a reserve link");
    let held = world.capture("POST", &path_of(&link)).await;
    assert_eq!(held.status, 303, "{}", held.body);
    let checkout = held.header("location").unwrap();
    assert!(
        checkout.starts_with("https://loomandlast.co.uk/cart/7002:1?attributes[hold]="),
        "the medium's cart, carrying the hold: {checkout}"
    );
    // One large comes back: Bea, first in line, is offered it.
    restock(7103, 1, "delivery-l-1").await;
    assert_eq!(told("TEE-L").await.sent, 1);
    let bea_link = outbox.sent()[1].reserve_link().expect("Bea's link");

    // The shop stops selling the large: ended, the team told once.
    fake.variants.lock().unwrap().pop();
    let synced = connect::sync(&sdk, &stack, false, &alerts).await.unwrap();
    assert_eq!(
        restock_core::catalogue::tally(&synced[0].catalogue),
        "0 new, 0 changed, 1 ended"
    );
    let team = alerts.all();
    assert_eq!(team.len(), 1, "{team:?}");
    assert!(
        team[0].body.contains("Linen tee — L (TEE-L): 1 waiting"),
        "{}",
        team[0].body
    );
    // Bea's link no longer holds a unit; a new sign-up is refused.
    let refused = world.capture("POST", &path_of(&bea_link)).await;
    assert_eq!(refused.status, 410, "{}", refused.body);
    assert!(refused.body.contains("no longer sells"), "{}", refused.body);
    assert_eq!(
        world
            .store
            .snapshot(&sku("TEE-L"))
            .await
            .unwrap()
            .counters
            .held,
        0
    );
    // A warm capture sees the item ended within its entry's time.
    world.advance(restock_app::ENTRY_TTL.as_millis() as i64);
    let refused = join("Cat", "L").await;
    assert_eq!(refused.status, 410, "{}", refused.body);
    assert!(refused.body.contains("no longer sells"), "{}", refused.body);
    // A restock of it tells nobody; Dan keeps his place.
    world.advance(60_000);
    let reply = restock(7103, 3, "delivery-l-2").await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(told("TEE-L").await.sent, 0);
    assert_eq!(outbox.sent().len(), 2);
    assert_eq!(
        world.store.counts(&sku("TEE-L"), 1).await.unwrap().waiting,
        1
    );

    // Listed again: the queue carries on with the units already back.
    *fake.variants.lock().unwrap() = tees;
    let synced = connect::sync(&sdk, &stack, false, &alerts).await.unwrap();
    assert_eq!(
        restock_core::catalogue::tally(&synced[0].catalogue),
        "0 new, 1 changed, 0 ended"
    );
    assert_eq!(alerts.all().len(), 1, "told once");
    assert_eq!(told("TEE-L").await.sent, 1);
    let sent = outbox.sent();
    assert_eq!(sent.len(), 3);
    assert!(format!("{:?}", sent[2]).contains("dan."), "{sent:?}");
}

/// Shops as they are: two Shopify variants share a SKU (Shopify does not
/// keep SKUs unique), and two WooCommerce variations without SKUs of their
/// own show their parent's (WooCommerce inherits it). `connect` takes every
/// other item, names the ones that clash and what to do, and tells the team;
/// a later rename of a SKU on Shopify leaves the queue on the SKU it had
/// (stock for the variant still reaches it) and says so; runs again settle.
#[tokio::test]
async fn connect_and_sync_take_every_other_item_when_skus_clash_or_move() {
    let fake = PlatformFake::start().await;
    let tee = ("Linen tee", "linen-tee", false);
    *fake.variants.lock().unwrap() = vec![
        variant(7001, "TEE", "Blue", tee, 7101),
        variant(7002, "TEE", "Red", tee, 7102),
        // Shopify takes any text as a SKU.
        variant(
            7003,
            "MUG / TALL",
            "Default Title",
            ("Tall mug", "tall-mug", true),
            7103,
        ),
        variant(
            5150,
            "LAMP-BRASS",
            "Default Title",
            ("Brass lamp", "brass-lamp", true),
            5151,
        ),
    ];
    *fake.woo_products.lock().unwrap() = vec![serde_json::json!({
        "id": 900, "name": "Wool rug", "type": "variable", "sku": "RUG",
        "permalink": "https://shop.example/product/wool-rug/",
    })];
    fake.woo_variations.lock().unwrap().insert(
        900,
        vec![
            serde_json::json!({"id": 901, "sku": "RUG", "permalink": "", "attributes": [{"id": 1, "name": "Size", "option": "S"}]}),
            serde_json::json!({"id": 902, "sku": "RUG", "permalink": "", "attributes": [{"id": 1, "name": "Size", "option": "L"}]}),
            serde_json::json!({"id": 903, "sku": "RUG-XL", "permalink": "", "attributes": [{"id": 1, "name": "Size", "option": "XL"}]}),
        ],
    );
    let (d, sdk, stack) = deployed_without_woocommerce().await;
    let alerts = restock_app::ports::RecordedAlerts::default();
    let app = ShopifyAccess::App {
        client_id: SHOPIFY_APP.0.into(),
        client_secret: SHOPIFY_APP.1.into(),
    };
    let has = |sku: &str| {
        let store = &d.store;
        let sku = Sku::try_from(sku).unwrap();
        async move { store.catalogue_entry(&sku).await.unwrap() }
    };

    let done = connect::shopify(
        &sdk,
        &stack,
        &fake.url,
        app,
        (Webhooks::Subscribe, false),
        &alerts,
    )
    .await
    .expect("the rest comes in");
    let said = done.describe(false);
    assert!(has("LAMP-BRASS").await.is_some(), "{said}");
    assert!(
        has("MUG-TALL").await.is_some(),
        "mapped, not dropped: {said}"
    );
    assert!(!said.contains("without a SKU"), "{said}");
    assert!(has("TEE").await.is_none(), "neither tee is taken: {said}");
    assert!(
        said.contains(
            "! TEE  shared by 2 items on Shopify (7101 Linen tee — Blue, 7102 Linen tee — Red)"
        ) && said.contains("give each its own SKU there"),
        "{said}"
    );
    let woo = connect::woocommerce(
        &sdk,
        &stack,
        &fake.url,
        WOO_API_KEY.0,
        WOO_API_KEY.1,
        false,
        &alerts,
    )
    .await
    .expect("the rest comes in");
    let said = woo.describe(false);
    assert!(has("RUG-XL").await.is_some(), "{said}");
    assert!(has("RUG").await.is_none(), "{said}");
    assert!(
        said.contains("! RUG  shared by 2 items on WooCommerce"),
        "{said}"
    );
    // (The fixture's WooCommerce items this shop does not list end, as ever.)
    let told: Vec<_> = alerts
        .all()
        .into_iter()
        .filter(|a| a.subject.contains("need the team"))
        .collect();
    assert_eq!(told.len(), 2, "{told:?}");
    assert!(
        told[0].subject.contains("1 items on Shopify need the team")
            && told[0].body.contains("! TEE"),
        "{told:?}"
    );

    // The lamp's SKU is renamed on Shopify: its queue stays where it is.
    fake.variants.lock().unwrap()[3]["sku"] = "LAMP-BRASS-2026".into();
    let synced = connect::sync(&sdk, &stack, false, &alerts).await.unwrap();
    let shopify = synced
        .iter()
        .find(|s| s.platform == Platform::Shopify)
        .unwrap();
    assert!(shopify.catalogue.is_empty(), "{:?}", shopify.catalogue);
    assert!(
        shopify.held.iter().any(|l| l.contains(
            "! LAMP-BRASS  item 5151 is LAMP-BRASS-2026 on Shopify now: its queue stays on LAMP-BRASS"
        )),
        "{:?}",
        shopify.held
    );
    let lamp = has("LAMP-BRASS").await.unwrap();
    assert_eq!(lamp.ended, None, "not ended");
    assert!(
        has("LAMP-BRASS-2026").await.is_none(),
        "not added beside it"
    );
    // Again: nothing changes, the same items are held.
    let again = connect::sync(&sdk, &stack, false, &alerts).await.unwrap();
    assert!(again.iter().all(|s| s.catalogue.is_empty()), "{again:?}");
    assert_eq!(
        again.iter().map(|s| s.held.clone()).collect::<Vec<_>>(),
        synced.iter().map(|s| s.held.clone()).collect::<Vec<_>>()
    );
}
