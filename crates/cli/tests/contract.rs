//! The CLI's contract for scripts (docs/CLI.md, "Exit codes and errors"),
//! held by every command: with `--json`, a failure is one JSON object on
//! standard output whose `error` and `exit` match the exit status, and a
//! backend that cannot be reached is `unavailable` (6), which a retrying
//! script tries again, never `refused` (5), which it gives up on.

use std::process::Command;

/// A loopback port nothing listens on: every connection is refused at once.
const NOWHERE: &str = "http://127.0.0.1:9";

/// One invocation of every command the binary has, each with what it
/// needs to get as far as its backend.
fn invocations() -> Vec<Vec<&'static str>> {
    vec![
        vec!["settings", "show"],
        vec!["catalogue", "show"],
        vec!["catalogue", "show", "CHAIR-WAL"],
        vec!["catalogue", "sync", "--stack", "restock"],
        vec!["queue", "CHAIR-WAL"],
        vec!["holds", "CHAIR-WAL"],
        vec!["escalations"],
        vec!["release", "CHAIR-WAL"],
        vec!["reject", "CHAIR-WAL"],
        vec!["rewake", "CHAIR-WAL"],
        vec!["pause", "--reason", "stocktake"],
        vec!["resume"],
        vec!["stats"],
        vec!["reconcile"],
        vec!["optout", "add", "ann@example.com"],
        vec!["optout", "remove", "ann@example.com"],
        vec!["export", "requests", "--out", "/dev/null"],
        vec!["export", "days", "--out", "/dev/null"],
        vec!["export", "items", "--out", "/dev/null"],
        vec!["show", "ann@example.com"],
        vec!["forget", "ann@example.com"],
        vec![
            "connect",
            "shopify",
            "--shop",
            "loom.myshopify.com",
            "--stack",
            "restock",
            "--client-id",
            "id",
        ],
        vec![
            "connect",
            "woocommerce",
            "--site",
            "https://shop.example",
            "--stack",
            "restock",
            "--consumer-key",
            "ck_x",
        ],
        vec!["connect", "klaviyo", "--stack", "restock"],
        vec!["doctor", "--stack", "restock"],
        vec!["dlq", "list", "--stack", "restock"],
        vec!["dlq", "redrive", "--stack", "restock"],
        vec![
            "sign-webhook",
            "stock",
            "--sku",
            "CHAIR-WAL",
            "--level",
            "2",
            "--stack",
            "restock",
        ],
    ]
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_restock"))
        .args(args)
        .args(["--json", "--local", NOWHERE, "--endpoint-url", NOWHERE])
        .env_remove("RESTOCK_TABLE")
        .env_remove("RESTOCK_SECRET_ID")
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_REGION", "eu-west-2")
        .env("SHOPIFY_CLIENT_SECRET", "shpss_test")
        .env("WOOCOMMERCE_CONSUMER_SECRET", "cs_test")
        .env("KLAVIYO_PRIVATE_KEY", "pk_test")
        // The SDK's retries would only wait longer for the same refusal.
        .env("AWS_MAX_ATTEMPTS", "1")
        .output()
        .expect("restock runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every command, its backend unreachable: exit 6, `unavailable`, as JSON.
#[test]
fn every_command_with_its_backend_unreachable_is_unavailable_as_json() {
    let mut failures = vec![];
    for args in invocations() {
        let (code, stdout, stderr) = run(&args);
        let said: Option<serde_json::Value> = serde_json::from_str(stdout.trim()).ok();
        let error = said.as_ref().and_then(|s| s["error"].as_str());
        let exit = said.as_ref().and_then(|s| s["exit"].as_i64());
        if code != 6 || error != Some("unavailable") || exit != Some(6) {
            failures.push(format!(
                "restock {}: exit {code}, stdout {stdout:?}, stderr {stderr:?}",
                args.join(" ")
            ));
        }
    }
    println!("commands checked: {}", invocations().len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A command line that is wrong is `usage` (2), as JSON, whatever the command.
#[test]
fn a_wrong_command_line_is_usage_as_json() {
    for args in [
        vec!["queue"],
        vec!["settings", "put", "/nonexistent/settings.toml"],
        vec!["catalogue", "import", "/nonexistent/catalogue.csv"],
        vec!["sign-webhook", "order"],
        vec!["queue", "CHAIR-WAL", "--limit", "0"],
    ] {
        let (code, stdout, _) = run(&args);
        let said: serde_json::Value = serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("restock {}: {e}: {stdout:?}", args.join(" ")));
        assert_eq!(
            (code, said["error"].as_str(), said["exit"].as_i64()),
            (2, Some("usage"), Some(2)),
            "restock {}: {said}",
            args.join(" ")
        );
    }
}
