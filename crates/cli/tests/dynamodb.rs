//! The `restock` binary against a DynamoDB API (moto): what an operator runs
//! after `sam deploy`, with `--table` and `--endpoint-url`.

use std::process::{Command, Output};

use restock_store::testing;

fn restock(table: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_restock"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .args(["--table", table, "--endpoint-url", &testing::endpoint()])
        .args(args)
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_REGION", "eu-west-2")
        .env_remove("RESTOCK_SECRET_ID")
        .output()
        .expect("restock runs")
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "restock failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[tokio::test]
async fn an_operator_sets_up_a_stack_from_the_command_line() {
    let store = testing::dynamo_store().await;
    let table = store.table().to_owned();

    let imported = ok(&restock(
        &table,
        &["catalog", "import", "examples/catalog.csv"],
    ));
    assert!(
        imported.contains("3 catalogue entries imported"),
        "{imported}"
    );
    ok(&restock(
        &table,
        &["settings", "put", "examples/settings.toml"],
    ));
    assert!(ok(&restock(&table, &["settings", "show"])).contains("Example Shop"));

    let stats: serde_json::Value =
        serde_json::from_str(&ok(&restock(&table, &["--json", "stats"]))).unwrap();
    let skus: Vec<&str> = stats
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sku"].as_str().unwrap())
        .collect();
    assert_eq!(skus, ["CHAIR-WAL", "LAMP-BRASS", "SNEAKER-DROP"]);

    let shown = ok(&restock(&table, &["catalog", "show", "SNEAKER-DROP"]));
    assert!(
        shown.contains("Limited runner") && shown.contains("16"),
        "{shown}"
    );
    assert!(ok(&restock(&table, &["queue", "CHAIR-WAL"])).contains("0 waiting"));
    assert!(ok(&restock(&table, &["release", "CHAIR-WAL"])).contains("nothing is paused"));
    assert!(ok(&restock(&table, &["reconcile"])).contains("counters match"));

    // Clear errors, exit code 1.
    let unknown = restock(&table, &["queue", "NOPE"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("NOPE is not in the catalogue"));
    let no_pepper = restock(&table, &["optout", "add", "ann@example.com"]);
    assert_eq!(no_pepper.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&no_pepper.stderr).contains("--secret-id"));
    let bad = restock(&table, &["settings", "put", "examples/catalog.csv"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("settings are not valid"));
}

#[test]
fn sign_webhook_prints_a_curl_command_for_each_format() {
    for args in [
        &[
            "sign-webhook",
            "stock",
            "--sku",
            "CHAIR-WAL",
            "--level",
            "3",
        ][..],
        &["sign-webhook", "shopify", "--id", "44120133468435"][..],
        &["sign-webhook", "woocommerce", "--id", "381"][..],
        &["sign-webhook", "order", "--hold", "AAAAAAAAAAAAAAAAAAAAAA"][..],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_restock"))
            .args(args)
            .output()
            .unwrap();
        let text = ok(&out);
        assert!(
            text.starts_with("curl -sS -X POST 'http://127.0.0.1:3000/webhooks/"),
            "{text}"
        );
    }
    let missing = Command::new(env!("CARGO_BIN_EXE_restock"))
        .args(["sign-webhook", "stock"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("--sku"));
}
