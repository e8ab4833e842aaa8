//! The `restock` binary against a DynamoDB API (moto): what an operator runs
//! after `sam deploy`, with `--table` and `--endpoint-url`.

use std::process::{Command, Output};

use restock_store::prelude::*;
use restock_store_dynamo::testing;

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

fn event_sku(event: &restock_core::StockEvent) -> restock_core::Sku {
    match &event.item {
        restock_core::ItemRef::Sku { sku } => sku.clone(),
        other => panic!("not a SKU reference: {other:?}"),
    }
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
        &["catalogue", "import", "examples/catalogue.csv"],
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
    assert_eq!(stats["mail"]["sent"], 0, "{stats}");
    let skus: Vec<&str> = stats["skus"]
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

    // A suspicious restock (1,500 at once, above max_jump) waits for the
    // team; releasing it says what was released in words, not a debug value.
    let rules = restock_core::Rules {
        threshold: 1,
        max_jump: 500,
        max_level: 100_000,
    };
    let event = restock_core::StockEvent {
        delivery_id: "drop-1".into(),
        item: restock_core::ItemRef::Sku {
            sku: restock_core::Sku::try_from("SNEAKER-DROP").unwrap(),
        },
        location: "default".into(),
        level: restock_core::Level::Tracked(1_500),
        at: time::OffsetDateTime::now_utc(),
        untimed: false,
    };
    let applied = store
        .apply_stock(&event_sku(&event), &event, &rules, 0)
        .await
        .unwrap();
    assert!(
        matches!(
            applied,
            restock_store::ApplyOutcome::Applied {
                outcome: restock_core::StockOutcome::Escalated { .. },
                ..
            }
        ),
        "{applied:?}"
    );
    let shown = ok(&restock(&table, &["catalog", "show", "SNEAKER-DROP"]));
    assert!(shown.contains("1500 units"), "{shown}");
    let released = ok(&restock(&table, &["release", "SNEAKER-DROP"]));
    assert_eq!(
        released.trim(),
        "SNEAKER-DROP: released (restock #1 at 1500 units); notify offers its units now"
    );
    assert!(
        !released.contains('{') && !released.contains("episode"),
        "{released}"
    );
    let again: serde_json::Value = serde_json::from_str(&ok(&restock(
        &table,
        &["--json", "release", "SNEAKER-DROP"],
    )))
    .unwrap();
    assert_eq!(again["released"], false);

    // `restock rewake`: two chairs back and three waiting, the wake lost;
    // each run records a wake notify takes as a restock's.
    let chair = restock_core::Sku::try_from("CHAIR-WAL").unwrap();
    let now = time::OffsetDateTime::now_utc().unix_timestamp() * 1000;
    let waiting: Vec<_> = (0..3)
        .map(|i| testing::waiting_request(i, &chair, now - 60_000 + i as i64, 1, b"pepper"))
        .collect();
    store.import_waiting(&waiting, 1).await.unwrap();
    let event = restock_core::StockEvent {
        delivery_id: "chair-1".into(),
        item: restock_core::ItemRef::Sku { sku: chair.clone() },
        location: "default".into(),
        level: restock_core::Level::Tracked(2),
        at: time::OffsetDateTime::now_utc(),
        untimed: false,
    };
    store
        .apply_stock(&chair, &event, &rules, now)
        .await
        .unwrap();
    let wakes = store.wakes(&chair).await.unwrap().len();
    let woken = ok(&restock(&table, &["rewake", "CHAIR-WAL"]));
    assert!(
        woken.contains("notify offers 2 of 2 free units to the 3 waiting, oldest first"),
        "{woken}"
    );
    let again: serde_json::Value =
        serde_json::from_str(&ok(&restock(&table, &["--json", "rewake", "CHAIR-WAL"]))).unwrap();
    assert_eq!(
        (again[0]["free"].as_u64(), again[0]["waiting"].as_u64()),
        (Some(2), Some(3))
    );
    assert_eq!(store.wakes(&chair).await.unwrap().len(), wakes + 2);
    let none = restock(&table, &["rewake"]);
    assert_eq!(none.status.code(), Some(2), "an item must be named");

    // Clear errors, each kind with its exit code (docs/CLI.md).
    let unknown = restock(&table, &["queue", "NOPE"]);
    assert_eq!(unknown.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("NOPE is not in the catalogue"));
    let no_pepper = restock(&table, &["optout", "add", "ann@example.com"]);
    assert_eq!(no_pepper.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&no_pepper.stderr).contains("--secret-id"));
    // A table that does not exist: the message says why, not only which call.
    let missing = restock("no-such-table", &["stats"]);
    assert_eq!(missing.status.code(), Some(3), "not found, not a retry");
    let said = String::from_utf8_lossy(&missing.stderr);
    assert!(said.contains("DynamoDB Query failed"), "{said}");
    assert!(said.contains("ResourceNotFoundException"), "{said}");
    assert!(!said.contains("Backend {"), "{said}");
    let bad = restock(&table, &["settings", "put", "examples/catalogue.csv"]);
    assert_eq!(bad.status.code(), Some(5));
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
    // The local server on another port: --local, or RESTOCK_LOCAL_URL, is
    // where the signed delivery goes; --url still wins.
    let sign = |args: &[&str], env: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_restock"));
        cmd.args(["sign-webhook", "stock", "--sku", "CHAIR-WAL"])
            .args(args);
        match env {
            Some(url) => cmd.env("RESTOCK_LOCAL_URL", url),
            None => cmd.env_remove("RESTOCK_LOCAL_URL"),
        };
        ok(&cmd.output().unwrap())
    };
    assert!(
        sign(&["--local", "http://127.0.0.1:4123"], None)
            .starts_with("curl -sS -X POST 'http://127.0.0.1:4123/webhooks/stock'")
    );
    assert!(
        sign(&[], Some("http://127.0.0.1:4124/"))
            .starts_with("curl -sS -X POST 'http://127.0.0.1:4124/webhooks/stock'")
    );
    assert!(
        sign(
            &["--url", "https://detect.example"],
            Some("http://127.0.0.1:4124")
        )
        .starts_with("curl -sS -X POST 'https://detect.example/webhooks/stock'")
    );

    let missing = Command::new(env!("CARGO_BIN_EXE_restock"))
        .args(["sign-webhook", "stock"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("--sku"));
}

/// `restock export`: every request as CSV, page by page (1,100 requests
/// take three), contacts masked unless asked for; per-day figures from the
/// same rows.
#[tokio::test]
async fn an_operator_exports_requests_and_daily_figures() {
    const T0: i64 = 1_796_374_800_000; // 2026-12-04T09:00:00Z
    let store = testing::dynamo_store().await;
    let table = store.table().to_owned();
    ok(&restock(
        &table,
        &["catalogue", "import", "examples/catalogue.csv"],
    ));
    for (sku, from, count) in [("CHAIR-WAL", 0, 700), ("LAMP-BRASS", 700, 400)] {
        let sku = restock_core::Sku::try_from(sku).unwrap();
        let requests: Vec<_> = (from..from + count)
            .map(|i| {
                // Half of them a day later.
                let day = if i % 2 == 0 { 0 } else { 86_400_000 };
                testing::waiting_request(i, &sku, T0 + day + i as i64, 1, b"pepper")
            })
            .collect();
        store.import_waiting(&requests, 1).await.unwrap();
    }
    let dir = std::env::temp_dir().join(testing::unique_table("export"));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("chairs.csv");
    let said = ok(&restock(
        &table,
        &[
            "export",
            "requests",
            "CHAIR-WAL",
            "--out",
            file.to_str().unwrap(),
        ],
    ));
    assert!(said.contains("700 requests exported"), "{said}");
    let csv = std::fs::read_to_string(&file).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "item,request,state,joined,confirmed,told,held,bought,ended,language,contact"
    );
    let rows: Vec<_> = lines.collect();
    assert_eq!(rows.len(), 700);
    assert!(rows.iter().all(|r| r.starts_with("CHAIR-WAL,")));
    assert!(
        rows.iter().all(|r| r.contains(",waiting,2026-12-0")),
        "{}",
        rows[0]
    );
    assert!(
        rows.iter()
            .all(|r| r.ends_with("@example.com") && r.contains("***")),
        "masked: {}",
        rows[0]
    );

    // Everything, to standard output, with contacts: said on stderr.
    let out = restock(&table, &["export", "requests", "--with-contacts"]);
    let csv = ok(&out);
    assert_eq!(csv.lines().count(), 1 + 1_100);
    assert!(csv.contains(",fan3@example.com\n"), "in the clear");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("contacts are in the clear"),
        "the operator is told"
    );

    let days = ok(&restock(&table, &["export", "days"]));
    assert_eq!(
        days.lines().collect::<Vec<_>>(),
        [
            "day,item,sign_ups,confirmed,told,held,bought",
            "2026-12-04,CHAIR-WAL,350,0,0,0,0",
            "2026-12-04,LAMP-BRASS,200,0,0,0,0",
            "2026-12-05,CHAIR-WAL,350,0,0,0,0",
            "2026-12-05,LAMP-BRASS,200,0,0,0,0",
        ]
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `restock dashboard` on the stack's table: served on 127.0.0.1 from the
/// operator's machine, showing what the table holds, refusing other hosts
/// and forged actions, and running a real one.
#[tokio::test]
async fn an_operator_opens_the_dashboard_on_the_table() {
    use std::io::{BufRead, BufReader};
    let store = testing::dynamo_store().await;
    let table = store.table().to_owned();
    ok(&restock(
        &table,
        &["catalogue", "import", "examples/catalogue.csv"],
    ));
    let now = time::OffsetDateTime::now_utc().unix_timestamp() * 1000;
    let sku = restock_core::Sku::try_from("CHAIR-WAL").unwrap();
    let requests: Vec<_> = (0..120)
        .map(|i| testing::waiting_request(i, &sku, now - 5 * 86_400_000 + i as i64, 1, b"pepper"))
        .collect();
    store.import_waiting(&requests, 1).await.unwrap();

    let mut child = Command::new(env!("CARGO_BIN_EXE_restock"))
        .args(["--table", &table, "--endpoint-url", &testing::endpoint()])
        .args(["dashboard", "--port", "0", "--no-open"])
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_REGION", "eu-west-2")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("restock dashboard starts");
    let mut said = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut said)
        .unwrap();
    let base = said
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("the address: {said}"))
        .trim_end_matches('/')
        .to_owned();
    let pages = tokio::task::spawn_blocking(move || {
        let get = |path: &str| {
            let mut r = ureq::get(format!("{base}{path}"))
                .config()
                .http_status_as_error(false)
                .build()
                .call()
                .unwrap();
            (r.status().as_u16(), r.body_mut().read_to_string().unwrap())
        };
        let overview = get("/");
        let item = get("/items/CHAIR-WAL");
        let post = |body: &str| {
            let mut r = ureq::post(format!("{base}/reconcile"))
                .config()
                .http_status_as_error(false)
                .build()
                .content_type("application/x-www-form-urlencoded")
                .send(body)
                .unwrap();
            (r.status().as_u16(), r.body_mut().read_to_string().unwrap())
        };
        let at = overview.1.find("name=\"csrf\" value=\"").unwrap() + 19;
        let csrf = overview.1[at..at + 32].to_owned();
        let forged = post("csrf=0123&sku=CHAIR-WAL");
        let done = post(&format!("csrf={csrf}&sku=CHAIR-WAL"));
        (overview, item, forged, done)
    })
    .await
    .unwrap();
    child.kill().ok();
    child.wait().ok();
    let ((status, overview), (_, item), (forged, _), (status_done, done)) = pages;
    assert_eq!(status, 200, "{overview}");
    assert!(
        overview.contains("Walnut lounge chair</span></td><td>120</td>"),
        "120 waiting: {overview}"
    );
    assert!(
        item.contains("Sign-ups — 120 in 30 days, at most 120 a day"),
        "{item}"
    );
    assert!(item.contains("***@example.com") && !item.contains("fan0@example.com"));
    // No settings in the table: the banner says so, with the fix.
    assert!(
        overview.contains("findings block notices")
            && overview.contains("<b>Blocks notices</b>: settings: none stored")
            && overview.contains("settings put settings.toml"),
        "{overview}"
    );
    assert_eq!(forged, 403);
    assert_eq!(status_done, 200);
    assert!(done.contains("CHAIR-WAL</td><td>counters match"), "{done}");
}

/// The headers and body of a printed curl command.
fn curl_parts(text: &str) -> (String, Vec<(String, String)>, String) {
    let url = text.split('\'').nth(1).unwrap().to_owned();
    let headers = text
        .split("-H '")
        .skip(1)
        .map(|h| {
            let h = h.split('\'').next().unwrap();
            let (k, v) = h.split_once(": ").unwrap();
            (k.to_owned(), v.to_owned())
        })
        .collect();
    let body = text
        .split("--data-raw '")
        .nth(1)
        .unwrap()
        .trim_end()
        .trim_end_matches('\'')
        .replace(r"'\''", "'");
    (url, headers, body)
}

/// `restock sign-webhook --stack NAME`: signs with the stack's current key
/// from its keys secret and addresses its DetectUrl, both read from the
/// stack's outputs; the signature verifies with that key and no other.
#[tokio::test]
async fn sign_webhook_signs_for_a_deployed_stack_with_its_own_key() {
    let endpoint = testing::endpoint();
    let sdk = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .endpoint_url(&endpoint)
        .region(aws_config::Region::new("eu-west-2"))
        .credentials_provider(aws_sdk_dynamodb::config::Credentials::new(
            "testing", "testing", None, None, "tests",
        ))
        .load()
        .await;
    let key = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let stack = testing::unique_table("restock-stack");
    // The keys secret as the stack made it, and a stack with the outputs a
    // restock stack has (moto's CloudFormation does not resolve a secret's
    // Ref into an output, so the ARN is written in).
    let arn = aws_sdk_secretsmanager::Client::new(&sdk)
        .create_secret()
        .name(format!("{stack}-keys"))
        .secret_string(
            serde_json::json!({"shopify": [], "woocommerce": [], "stock": [key, "whsec_b2xkb2xkb2xkb2xkb2xkb2xkb2xkb2xk"], "contact_pepper": "pepper-pepper-pepper"}).to_string(),
        )
        .send()
        .await
        .expect("secret created")
        .arn
        .expect("an ARN");
    // The stack's table, empty (no settings yet).
    let table = testing::dynamo_store().await.table().to_owned();
    let template = serde_json::json!({
        "Resources": {
            "Topic": {"Type": "AWS::SNS::Topic"},
            "DeadLetters": {"Type": "AWS::SQS::Queue"},
            "DeadLettersAlarm": {"Type": "AWS::CloudWatch::Alarm", "Properties": {
                "AlarmName": format!("{stack}-DeadLettersAlarm-1X2Y3Z"),
                "AlarmDescription": "Work failed after its retries: see DeadLettersAlarm in docs/DEPLOY.md",
                "Namespace": "AWS/SQS", "MetricName": "ApproximateNumberOfMessagesVisible",
                "Statistic": "Maximum", "Period": 60, "EvaluationPeriods": 1,
                "Threshold": 0, "ComparisonOperator": "GreaterThanThreshold"
            }}
        },
        "Outputs": {
            "DeadLetterQueueUrl": {"Value": {"Ref": "DeadLetters"}},
            "KeysSecretArn": {"Value": arn},
            "DetectUrl": {"Value": "https://detect.example.lambda-url.eu-west-2.on.aws/"},
            "CaptureUrl": {"Value": "https://capture.example.lambda-url.eu-west-2.on.aws/"},
            "TableName": {"Value": table},
            "AlertTopicArn": {"Value": {"Ref": "Topic"}}
        }
    });
    aws_sdk_cloudformation::Client::new(&sdk)
        .create_stack()
        .stack_name(&stack)
        .template_body(template.to_string())
        .send()
        .await
        .expect("stack created");

    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_restock"))
            .args(args)
            .args(["--endpoint-url", &endpoint])
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("AWS_REGION", "eu-west-2")
            .env_remove("RESTOCK_TABLE")
            .env_remove("RESTOCK_SECRET_ID")
            .output()
            .unwrap()
    };
    let text = ok(&run(&[
        "sign-webhook",
        "stock",
        "--sku",
        "CHAIR-WAL",
        "--level",
        "3",
        "--stack",
        &stack,
    ]));
    let (url, headers, body) = curl_parts(&text);
    assert_eq!(
        url,
        "https://detect.example.lambda-url.eu-west-2.on.aws/webhooks/stock"
    );
    let now = time::OffsetDateTime::now_utc();
    let verify = |k: &str| {
        let keys = restock_core::webhook::Keys::raw([
            restock_core::platform::standard::decode_key(k).unwrap(),
        ]);
        restock_core::platform::standard::verify(&keys, &headers, body.as_bytes(), now).is_ok()
    };
    assert!(verify(key), "signed with the stack's current key: {text}");
    assert!(
        !verify(&restock_app::admin::dev_key(
            restock_core::Platform::Standard
        )),
        "not the laptop's dev key"
    );

    // --table needs to be told the secret and the URL, and says so.
    let said = run(&[
        "--table",
        "t",
        "sign-webhook",
        "stock",
        "--sku",
        "CHAIR-WAL",
    ]);
    assert_eq!(said.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&said.stderr).contains("--secret-id"),
        "{said:?}"
    );
    let said = run(&[
        "--table",
        "t",
        "--secret-id",
        &arn,
        "sign-webhook",
        "stock",
        "--sku",
        "CHAIR-WAL",
    ]);
    assert!(
        String::from_utf8_lossy(&said.stderr).contains("--url"),
        "{said:?}"
    );
    let text = ok(&run(&[
        "--table",
        "t",
        "--secret-id",
        &arn,
        "sign-webhook",
        "stock",
        "--sku",
        "CHAIR-WAL",
        "--url",
        "https://d.example",
    ]));
    let (url, headers2, body2) = curl_parts(&text);
    assert_eq!(url, "https://d.example/webhooks/stock");
    let keys =
        restock_core::webhook::Keys::raw([
            restock_core::platform::standard::decode_key(key).unwrap()
        ]);
    assert!(
        restock_core::platform::standard::verify(&keys, &headers2, body2.as_bytes(), now).is_ok()
    );

    // A stack that is not there: said, exit 3 (not found).
    let said = run(&[
        "sign-webhook",
        "stock",
        "--sku",
        "CHAIR-WAL",
        "--stack",
        "no-such-stack",
    ]);
    assert_eq!(said.status.code(), Some(3));
    assert!(
        String::from_utf8_lossy(&said.stderr).contains("could not read the stack no-such-stack"),
        "{said:?}"
    );

    // `restock doctor` on that stack: its table has no settings, which
    // blocks everything; the report goes to stdout and the exit code says so.
    // A failed batch waits in the dead-letter queue and its alarm fires:
    // both are findings, the alarm's with what its description says to do.
    let queue = format!("{endpoint}/123456789012/{stack}-DeadLetters");
    let sqs = aws_sdk_sqs::Client::new(&sdk);
    let queue = sqs
        .list_queues()
        .send()
        .await
        .unwrap()
        .queue_urls()
        .iter()
        .find(|q| q.contains(&stack))
        .cloned()
        .unwrap_or(queue);
    sqs.send_message()
        .queue_url(&queue)
        .message_body(r#"{"requestContext": {"condition": "RetryAttemptsExhausted"}}"#)
        .send()
        .await
        .unwrap();
    let alarms = cloudwatch_fake(&stack);
    // Every service on moto but CloudWatch, which the SDK sends to its own
    // endpoint (`AWS_ENDPOINT_URL_CLOUDWATCH` outranks `AWS_ENDPOINT_URL`).
    let doctor = Command::new(env!("CARGO_BIN_EXE_restock"))
        .args(["doctor", "--stack", &stack])
        .env("AWS_ENDPOINT_URL", &endpoint)
        .env("AWS_ENDPOINT_URL_CLOUDWATCH", &alarms)
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_REGION", "eu-west-2")
        .env_remove("AWS_ENDPOINT_URL_DYNAMODB")
        .env_remove("RESTOCK_TABLE")
        .output()
        .unwrap();
    assert_eq!(doctor.status.code(), Some(1), "{doctor:?}");
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert!(report.contains("FAIL settings: none stored"), "{report}");
    assert!(report.contains("FAIL dead letters: 1 messages"), "{report}");
    assert!(
        report.contains(&format!(
            "warn alarm {stack}-DeadLettersAlarm-1X2Y3Z: in ALARM since"
        )) && report.contains("Threshold Crossed")
            && report.contains("fix: Work failed after its retries: see DeadLettersAlarm"),
        "{report}"
    );
    let json = run(&["--json", "doctor", "--stack", &stack]);
    assert_eq!(json.status.code(), Some(1));
    let findings: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        findings["findings"][0]["severity"], "blocking",
        "{findings}"
    );

    // `restock dashboard --stack`: on the stack's table, its banner fed by
    // the same checks (the dead letters are the doctor's alone).
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(env!("CARGO_BIN_EXE_restock"))
        .args(["dashboard", "--stack", &stack, "--port", "0", "--no-open"])
        .env("AWS_ENDPOINT_URL", &endpoint)
        .env("AWS_ENDPOINT_URL_CLOUDWATCH", &alarms)
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_REGION", "eu-west-2")
        .env_remove("AWS_ENDPOINT_URL_DYNAMODB")
        .env_remove("RESTOCK_TABLE")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("restock dashboard starts");
    let mut said = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut said)
        .unwrap();
    let base = said
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("the address: {said}"))
        .to_owned();
    let overview = tokio::task::spawn_blocking(move || {
        ureq::get(base)
            .call()
            .unwrap()
            .body_mut()
            .read_to_string()
            .unwrap()
    })
    .await
    .unwrap();
    child.kill().ok();
    child.wait().ok();
    assert!(
        overview.contains("<b>Blocks notices</b>: settings: none stored")
            && overview.contains("<b>Blocks notices</b>: dead letters: 1 messages")
            && overview.contains(&format!("alarm {stack}-DeadLettersAlarm-1X2Y3Z")),
        "{overview}"
    );

    // The stack is there but the shop does not answer: unavailable (6),
    // which a retrying script tries again, not refused (5). Sync with no
    // platform's access yet is refused, and answers JSON with --json.
    let json_error = |out: &Output| -> (i32, String) {
        let said: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
        (
            out.status.code().unwrap(),
            said["error"].as_str().unwrap_or_default().to_owned(),
        )
    };
    let (code, error) = json_error(&run(&["--json", "catalogue", "sync", "--stack", &stack]));
    assert_eq!((code, error.as_str()), (5, "refused"));
    let app = std::env::temp_dir().join(format!("restock-app-{stack}"));
    let connect = Command::new(env!("CARGO_BIN_EXE_restock"))
        .args([
            "--json",
            "connect",
            "shopify",
            "--shop",
            "http://127.0.0.1:9",
        ])
        .args(["--stack", &stack, "--client-id", "app-id"])
        .args(["--app", app.to_str().unwrap()])
        .args(["--endpoint-url", &endpoint])
        .env("SHOPIFY_CLIENT_SECRET", "shpss_test")
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_REGION", "eu-west-2")
        .env_remove("RESTOCK_TABLE")
        .output()
        .unwrap();
    let (code, error) = json_error(&connect);
    assert_eq!((code, error.as_str()), (6, "unavailable"), "{connect:?}");
    // The Shopify app was written first, for this stack.
    let config = std::fs::read_to_string(app.join("shopify.app.toml")).unwrap();
    assert!(
        config.contains("client_id = \"app-id\"") && config.contains("/webhooks/shopify\""),
        "{config}"
    );
    assert!(
        app.join("extensions/restock-notify/assets/restock-widget.js")
            .exists()
    );
}

/// CloudWatch as the SDK speaks to it today (Smithy RPC v2 CBOR: `POST
/// /service/GraniteServiceVersion20100801/operation/DescribeAlarms`, CBOR
/// both ways, the `smithy-protocol` header), which moto does not: its
/// `DescribeAlarms` answers the stack's firing alarm to a request for
/// alarms in ALARM whose names start `{stack}-`, and nothing otherwise.
/// Its base URL.
fn cloudwatch_fake(stack: &str) -> String {
    use ciborium::Value;
    let stack = stack.to_owned();
    let describe = move |body: axum::body::Bytes| {
        let stack = stack.clone();
        async move {
            let asked: Value = ciborium::from_reader(body.as_ref()).unwrap_or(Value::Null);
            let field = |name: &str| {
                asked
                    .as_map()
                    .and_then(|m| m.iter().find(|(k, _)| k.as_text() == Some(name)))
                    .and_then(|(_, v)| v.as_text().map(str::to_owned))
            };
            let matches = field("StateValue").as_deref() == Some("ALARM")
                && field("AlarmNamePrefix") == Some(format!("{stack}-"));
            let text = |s: &str| Value::Text(s.to_owned());
            let alarms = if matches {
                vec![Value::Map(vec![
                    (
                        text("AlarmName"),
                        text(&format!("{stack}-DeadLettersAlarm-1X2Y3Z")),
                    ),
                    (
                        text("AlarmDescription"),
                        text(
                            "Work failed after its retries: see DeadLettersAlarm in docs/DEPLOY.md",
                        ),
                    ),
                    (text("StateValue"), text("ALARM")),
                    (
                        text("StateReason"),
                        text(
                            "Threshold Crossed: 1 datapoint [1.0] was greater than the threshold (0.0).",
                        ),
                    ),
                    (
                        text("StateUpdatedTimestamp"),
                        Value::Tag(1, Box::new(Value::Float(1_796_500_000.0))),
                    ),
                ])]
            } else {
                Vec::new()
            };
            let mut out = Vec::new();
            ciborium::into_writer(
                &Value::Map(vec![(text("MetricAlarms"), Value::Array(alarms))]),
                &mut out,
            )
            .unwrap();
            (
                [
                    ("content-type", "application/cbor"),
                    ("smithy-protocol", "rpc-v2-cbor"),
                ],
                out,
            )
        }
    };
    let app = axum::Router::new().route(
        "/service/GraniteServiceVersion20100801/operation/DescribeAlarms",
        axum::routing::post(describe),
    );
    // On a thread of its own: the test waits for the binary without yielding.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                axum::serve(listener, app).await.unwrap();
            });
    });
    url
}

/// The CLI's contract for scripts (docs/CLI.md): each kind of failure has
/// its own exit code, and with `--json` the error is a JSON object on
/// standard output with a stable `error` code and a message.
#[tokio::test]
async fn each_kind_of_failure_has_its_exit_code_and_a_json_error() {
    let store = testing::dynamo_store().await;
    let table = store.table().to_owned();
    ok(&restock(
        &table,
        &["catalogue", "import", "examples/catalogue.csv"],
    ));
    let failed = |out: &Output| -> (i32, serde_json::Value) {
        let json = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
        (out.status.code().unwrap(), json)
    };

    // 2: the command line is wrong (clap's own error, as JSON).
    let (code, json) = failed(&restock(&table, &["--json", "queue"]));
    assert_eq!((code, json["error"].as_str()), (2, Some("usage")), "{json}");
    assert!(json["message"].as_str().unwrap().contains("SKU"), "{json}");
    // Without --json, clap's own text on stderr, still 2.
    let plain = restock(&table, &["queue"]);
    assert_eq!(plain.status.code(), Some(2));
    assert!(plain.stdout.is_empty());

    // 3: nothing by that name.
    let (code, json) = failed(&restock(
        &table,
        &["--json", "catalogue", "show", "NO-SUCH-SKU"],
    ));
    assert_eq!(
        (code, json["error"].as_str()),
        (3, Some("not_found")),
        "{json}"
    );
    assert!(json["message"].as_str().unwrap().contains("NO-SUCH-SKU"));

    // 5: the backend refuses the change (queue shards cannot be lowered).
    let lowered = std::env::temp_dir().join(format!("{table}-lowered.csv"));
    std::fs::write(
        &lowered,
        "sku,name,shards\nSNEAKER-DROP,Limited runner (hyped),2\n",
    )
    .unwrap();
    let (code, json) = failed(&restock(
        &table,
        &["--json", "catalogue", "import", lowered.to_str().unwrap()],
    ));
    assert_eq!(
        (code, json["error"].as_str()),
        (5, Some("refused")),
        "{json}"
    );
    assert!(
        json["message"]
            .as_str()
            .unwrap()
            .contains("can be raised but not lowered"),
        "{json}"
    );

    // 6: the backend cannot be reached.
    let out = Command::new(env!("CARGO_BIN_EXE_restock"))
        .args(["--table", &table, "--endpoint-url", "http://127.0.0.1:9"])
        .args(["--json", "stats"])
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_REGION", "eu-west-2")
        .env("AWS_MAX_ATTEMPTS", "1")
        .output()
        .unwrap();
    let (code, json) = failed(&out);
    assert_eq!(
        (code, json["error"].as_str()),
        (6, Some("unavailable")),
        "{json}"
    );

    // Without --json, the same codes, the message on stderr.
    let plain = restock(&table, &["catalogue", "show", "NO-SUCH-SKU"]);
    assert_eq!(plain.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&plain.stderr).starts_with("restock: "));
}
