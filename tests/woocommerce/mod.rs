//! The WordPress plugin `restock connect woocommerce --plugin` writes, run:
//! PHP parses it, its hooks run against stand-ins for WordPress's and
//! WooCommerce's functions (`harness.php` beside this file), and an order
//! from the Checkout block, carrying the meta the plugin gave it, ends the
//! hold through detect.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use restock_core::Sku;
use restock_e2e::*;

/// `php` with `args`; a machine without it is told how to get it.
fn php(args: &[&str]) -> Output {
    Command::new("php").args(args).output().unwrap_or_else(|e| {
        panic!(
            "php: {e}: install PHP's command line (apt-get install php-cli; scripts/deps.sh does)"
        )
    })
}

/// The plugin as `restock connect woocommerce --plugin` writes it, in a
/// file of its own.
fn written_plugin(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("restock-plugin-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("restock.php");
    let plugin = restock_aws::platforms::woocommerce::plugin("https://capture.example/");
    std::fs::write(&file, plugin).unwrap();
    file
}

fn harness() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("woocommerce/harness.php")
        .display()
        .to_string()
}

#[test]
fn the_plugin_parses_and_its_hooks_do_what_they_say() {
    let file = written_plugin("hooks");
    let file = file.to_str().unwrap();
    let lint = php(&["-l", file]);
    assert!(lint.status.success(), "{lint:?}");
    let run = php(&[&harness(), "check", file]);
    let said = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success() && !said.contains("FAILED"),
        "{said}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(said.matches("  ok  ").count() >= 15, "{said}");
}

#[tokio::test]
async fn an_order_from_the_checkout_block_ends_the_hold_through_detect() {
    let (w, hold) = crate::inputs::ann_holds_the_chair().await;
    let file = written_plugin("order");
    // The Checkout block's order after Ann's reserve link, as the plugin
    // left it: its meta as WooCommerce's REST API (and so the webhook)
    // shows it.
    let run = php(&[&harness(), "order", file.to_str().unwrap(), &hold]);
    assert!(run.status.success(), "{run:?}");
    let meta: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let order = |meta: serde_json::Value| {
        serde_json::json!({
            "id": 728, "status": "processing", "created_via": "store-api", "currency": "GBP",
            "meta_data": meta,
            "line_items": [{"sku": CHAIR, "quantity": 1, "price": 249.0, "total": "249.00"}],
        })
    };
    let held = |w: &World| {
        let store = w.store.clone();
        async move {
            let stats = store
                .stats(&Sku::try_from(CHAIR).unwrap(), 2)
                .await
                .unwrap();
            (stats.held, stats.bought)
        }
    };
    // As the plugin before the Store API hook left it: no hold on the
    // order, so the unit stays held for someone who has bought it.
    let without = w
        .call(
            Api::Detect,
            woocommerce_delivery(
                "order.updated",
                "d-1",
                &order(serde_json::json!([])).to_string(),
            ),
        )
        .await;
    assert_eq!(without.status, 202, "{}", without.body);
    assert_eq!(held(&w).await, (1, 0));
    let with = w
        .call(
            Api::Detect,
            woocommerce_delivery("order.updated", "d-2", &order(meta).to_string()),
        )
        .await;
    assert_eq!(with.status, 200, "{}", with.body);
    assert_eq!(with.json()["status"], "bought");
    assert_eq!(held(&w).await, (0, 1), "the order ended the hold");
}
