//! The on-call engineer's kit through the handlers and the operator's
//! commands (`restock_app::admin`, what the CLI and the dashboard run):
//! waking an item whose wake was lost, pausing, listing holds, the
//! dead-letter queue, and why a shopper was not told (`restock show`).

use restock_app::admin::{Admin, Command};
use restock_app::ports::Clock;
use restock_core::Sku;
use restock_e2e::*;

use crate::reliability::faults::{Backend, Fault, rig};

fn chair() -> Sku {
    Sku::try_from(CHAIR).unwrap()
}

/// A notify pass that fails on every retry loses its wake: the units stay
/// free and nobody is told. `restock rewake` wakes the item again and the
/// next pass offers them, oldest first; run twice, or beside another pass,
/// it never offers more than the units free.
async fn a_lost_wake_is_given_back_by_rewake_on(backend: Backend) {
    let rig = rig(backend).await;
    let w = &rig.world;
    for name in ["Ann", "Bea", "Cat"] {
        assert_eq!(w.join(name).await.status, 201);
        w.advance(1);
    }
    assert_eq!(w.shopify(Some(2), "s-1").await.status, 200);
    // The pass fails before it offers anything (the store is down).
    rig.plan.arm(1, Some(Fault::FailBefore));
    assert!(
        restock_app::notify::notify_sku(&w.services, &chair())
            .await
            .is_err()
    );
    rig.plan.disarm();
    assert!(
        rig.outbox.sent().is_empty(),
        "the wake is lost: nobody told"
    );

    let admin = Admin {
        store: w.store.clone(),
        pepper: None,
    };
    let now = w.clock.now_ms();
    for _ in 0..2 {
        let woken = admin
            .run(
                Command::Rewake {
                    skus: vec![chair()],
                },
                now,
            )
            .await
            .unwrap();
        assert_eq!(woken.json[0]["free"], 2, "{:?}", woken.json);
    }
    // Two passes side by side, one per wake.
    let sku = chair();
    let (a, b) = tokio::join!(
        restock_app::notify::notify_sku(&w.services, &sku),
        restock_app::notify::notify_sku(&w.services, &sku)
    );
    assert_eq!(a.unwrap().sent + b.unwrap().sent, 2);
    let told: Vec<String> = rig.outbox.sent().iter().map(|s| format!("{s:?}")).collect();
    assert_eq!(told.len(), 2);
    assert!(
        told.iter().any(|t| t.contains("ann.")) && told.iter().any(|t| t.contains("bea.")),
        "oldest first: {told:?}"
    );
    w.assert_never_oversold().await;
    // Nothing free: a rewake says so and offers nobody.
    let woken = admin
        .run(
            Command::Rewake {
                skus: vec![chair()],
            },
            now,
        )
        .await
        .unwrap();
    assert!(
        woken.rows[0][1].contains("no unit is free"),
        "{:?}",
        woken.rows
    );
    restock_app::notify::notify_sku(&w.services, &chair())
        .await
        .unwrap();
    assert_eq!(rig.outbox.sent().len(), 2);
}

#[tokio::test]
async fn a_lost_wake_is_given_back_by_rewake_in_memory() {
    a_lost_wake_is_given_back_by_rewake_on(Backend::Memory).await;
}

#[tokio::test]
async fn a_lost_wake_is_given_back_by_rewake_on_dynamodb() {
    a_lost_wake_is_given_back_by_rewake_on(Backend::Dynamo).await;
}

/// The operator's `restock` binary on a world's DynamoDB table: `args`
/// after `--table`, its standard output (it must succeed).
pub(crate) fn restock_on(table: &str, args: &[&str]) -> String {
    let out = restock_run(table, args);
    assert!(
        out.status.success(),
        "restock {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The operator's `restock` binary on a world's DynamoDB table, as it ended.
fn restock_run(table: &str, args: &[&str]) -> std::process::Output {
    let path = binary("restock", "debug");
    assert!(
        path.exists(),
        "{} is missing: `cargo build --workspace --bins` first",
        path.display()
    );
    std::process::Command::new(path)
        .args(["--table", table, "--endpoint-url"])
        .arg(restock_store_dynamo::testing::endpoint())
        .args(args)
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_REGION", "eu-west-2")
        .env_remove("RESTOCK_SECRET_ID")
        .output()
        .expect("restock runs")
}

/// A world on its own DynamoDB table, and the table's name.
pub(crate) async fn dynamo_world() -> (World, std::sync::Arc<restock_app::ports::Outbox>, String) {
    world_on(restock_store_dynamo::testing::dynamo_store().await).await
}

/// A world on `store`, with an outbox, a model that answers and the test
/// secret; and the store's table.
async fn world_on(
    store: restock_store_dynamo::DynamoStore,
) -> (World, std::sync::Arc<restock_app::ports::Outbox>, String) {
    use std::sync::Arc;
    let table = store.table().to_owned();
    let outbox = Arc::new(restock_app::ports::Outbox::default());
    let world = World::new(
        Arc::new(store),
        outbox.clone(),
        Arc::new(restock_app::ports::FixedPhraser(Ok("It is back.".into()))),
        Arc::new(restock_app::ports::StaticKeyring(Arc::new(
            restock_app::ports::Secrets::from_json(&secrets_json()).unwrap(),
        ))),
    )
    .await;
    (world, outbox, table)
}

/// "What is held right now": `restock holds SKU` lists the live offers
/// and holds, soonest to run out first, contacts masked, with the hold id
/// checkout carries; an offer run out says the sweep passes it on.
#[tokio::test]
async fn holds_lists_what_is_offered_and_held_right_now() {
    let (w, outbox, table) = dynamo_world().await;
    for name in ["Ann", "Bea", "Cat"] {
        assert_eq!(w.join(name).await.status, 201);
        w.advance(1);
    }
    assert_eq!(w.shopify(Some(2), "s-1").await.status, 200);
    w.pump().await;
    assert_eq!(outbox.sent().len(), 2);
    // A minute later Bea clicks her link: a hold, running out after Ann's offer.
    w.advance(60_000);
    let bea = outbox
        .sent()
        .into_iter()
        .find(|s| format!("{s:?}").contains("bea."))
        .unwrap();
    let held = w
        .capture("POST", &path_of(&bea.reserve_link().unwrap()))
        .await;
    assert_eq!(held.status, 303);

    let said = restock_on(&table, &["holds", CHAIR]);
    assert!(said.contains("CHAIR-WAL: 1 offered, 1 held"), "{said}");
    let lines: Vec<&str> = said
        .lines()
        .filter(|l| l.contains("a***@") || l.contains("b***@"))
        .collect();
    assert_eq!(lines.len(), 2, "{said}");
    assert!(
        lines[0].contains("offered") && lines[0].contains("sent"),
        "{said}"
    );
    assert!(lines[1].contains("held"), "{said}");
    assert!(
        !said.contains("ann.") && !said.contains("bea."),
        "masked: {said}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&restock_on(&table, &["--json", "holds", CHAIR])).unwrap();
    assert_eq!(json[0]["state"], "offered");
    assert_eq!(json[1]["state"], "held");
    assert!(json[1]["hold"].as_str().is_some_and(|h| !h.is_empty()));
    assert!(json[0]["expires_ms"].as_i64() <= json[1]["expires_ms"].as_i64());
    // At the world's own time, each says how long it has left.
    let admin = Admin {
        store: w.store.clone(),
        pepper: None,
    };
    let now = w.clock.now_ms();
    let shown = admin
        .run(Command::Holds { sku: chair() }, now)
        .await
        .unwrap();
    let left: Vec<&str> = shown.rows.iter().map(|r| r[6].as_str()).collect();
    assert_eq!(left, ["in 14 min", "in 15 min"]);
}

/// The keys secret `w` signs with, in the strict double's Secrets Manager:
/// its ARN, for `--secret-id`.
async fn keys_secret() -> String {
    let sdk = aws_config(&restock_store_dynamo::testing::endpoint()).await;
    aws_sdk_secretsmanager::Client::new(&sdk)
        .create_secret()
        .name(restock_store_dynamo::testing::unique_table("restock-keys"))
        .secret_string(secrets_json())
        .send()
        .await
        .expect("secret created")
        .arn
        .expect("an ARN")
}

/// "Why was this shopper not told?": `restock show` answers from the
/// table alone, for an address (with the keys secret's pepper) or a
/// request id: where each request stands and why, and its story as it
/// happened, masked unless asked for in the clear.
#[tokio::test]
async fn show_tells_why_a_shopper_was_not_told_from_her_story() {
    let (w, outbox, table) = dynamo_world().await;
    let arn = keys_secret().await;
    let mut ids = Vec::new();
    for name in ["Ann", "Bea"] {
        let joined = w.join(name).await;
        assert_eq!(joined.status, 201);
        ids.push(joined.json()["request_id"].as_str().unwrap().to_owned());
        w.advance(1_000);
    }
    // One unit: Ann is told, Bea waits.
    assert_eq!(w.shopify(Some(1), "s-1").await.status, 200);
    w.pump().await;
    assert_eq!(outbox.sent().len(), 1);

    // Ann's story by her request id: no pepper needed.
    let ann = restock_on(&table, &["show", &ids[0]]);
    assert!(
        ann.contains("CHAIR-WAL · a***@example.com (email, the shop's clock, UTC) · offered"),
        "{ann}"
    );
    for said in [
        "now: told: offered a unit in restock 1 until",
        "its notice was sent (provider message id outbox-1)",
        "joined the queue",
        "offered a unit in restock 1, reserve link good until",
        "notice of restock 1 sent (provider message id outbox-1)",
    ] {
        assert!(ann.contains(said), "{said}: {ann}");
    }
    let order = |text: &str, a: &str, b: &str| text.find(a).unwrap() < text.find(b).unwrap();
    assert!(
        order(&ann, "joined the queue", "offered a unit in restock 1,"),
        "{ann}"
    );

    // Bea's, by her address: why she was not told.
    let bea_address = w.email("Bea");
    let bea = restock_on(&table, &["--secret-id", &arn, "show", &bea_address]);
    assert!(
        bea.contains(
            "now: waiting, number 1 in line; restock 1 since it joined told 1 person ahead of it"
        ),
        "{bea}"
    );
    assert!(
        !bea.contains(&bea_address) && bea.contains("b***@example.com"),
        "masked: {bea}"
    );
    // The item paused: the line says so.
    restock_on(
        &table,
        &["pause", "--sku", CHAIR, "--reason", "recall of batch 7"],
    );
    let paused = restock_on(&table, &["--secret-id", &arn, "show", &bea_address]);
    assert!(
        paused.contains("the item is paused by the team since"),
        "{paused}"
    );
    assert!(paused.contains("recall of batch 7"), "{paused}");
    // In the clear only when asked; as JSON for scripts.
    let clear = restock_on(
        &table,
        &[
            "--secret-id",
            &arn,
            "--json",
            "show",
            &bea_address,
            "--with-contacts",
        ],
    );
    let json: serde_json::Value = serde_json::from_str(&clear).unwrap();
    let request = &json["requests"][0];
    assert_eq!(request["contact"], bea_address.as_str());
    assert_eq!(request["request_id"], ids[1].as_str());
    assert_eq!(request["position"], 1);
    assert_eq!(request["story"][0]["what"], "joined");
    assert_eq!(request["story"][0]["text"], "joined the queue");

    // Opted out by the team: the line says how and when.
    restock_on(
        &table,
        &["--secret-id", &arn, "optout", "add", &bea_address],
    );
    let opted = restock_on(&table, &["--secret-id", &arn, "show", &bea_address]);
    assert!(
        opted.contains("now: opted out by the shop's team at "),
        "{opted}"
    );

    // Someone who never signed up: not found (exit 3), and the address
    // needs the pepper (exit 5, naming --secret-id).
    let run = |args: &[&str]| restock_run(&table, args);
    // Contacts in the clear are said where the operator sees them.
    let clear = run(&["--secret-id", &arn, "show", &bea_address, "--with-contacts"]);
    assert!(
        String::from_utf8_lossy(&clear.stderr).contains("contacts are in the clear"),
        "{clear:?}"
    );
    let nobody = run(&["--secret-id", &arn, "show", "nobody@example.com"]);
    assert_eq!(nobody.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&nobody.stderr).contains("no request of n***@example.com"));
    let no_pepper = run(&["show", &bea_address]);
    assert_eq!(no_pepper.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&no_pepper.stderr).contains("--secret-id"));
}

/// "Stop notices for this item": paused, a restock that comes tells
/// nobody, sign-ups go on, an offer already sent still holds a unit; resumed,
/// what came meanwhile is offered in full, oldest first. Pausing all
/// sending does the same for every item.
async fn a_paused_item_tells_nobody_until_resumed_on(backend: Backend) {
    let rig = rig(backend).await;
    let w = &rig.world;
    let admin = Admin {
        store: w.store.clone(),
        pepper: None,
    };
    let run = |command: Command| {
        let admin = &admin;
        let now = w.clock.now_ms();
        async move { admin.run(command, now).await.unwrap() }
    };
    for name in ["Ann", "Bea", "Cat"] {
        assert_eq!(w.join(name).await.status, 201);
        w.advance(1);
    }
    assert_eq!(w.shopify(Some(1), "s-1").await.status, 200);
    w.pump().await;
    let ann = rig.outbox.sent()[0].reserve_link().unwrap();

    let paused = run(Command::Pause {
        sku: Some(chair()),
        reason: "wrong price on the product page".into(),
    })
    .await;
    assert_eq!(paused.json["paused"], true, "{}", paused.message);
    // Ann's offer, sent before, still holds a unit.
    assert_eq!(w.capture("POST", &path_of(&ann)).await.status, 303);
    // Three more come back, and Dan signs up: nobody is told.
    w.advance(MIN);
    assert_eq!(w.shopify(Some(4), "s-2").await.status, 200);
    assert_eq!(w.join("Dan").await.status, 201);
    let reports = w.pump().await;
    assert!(
        reports.iter().all(|r| r.paused && r.sent == 0),
        "{reports:?}"
    );
    assert_eq!(rig.outbox.sent().len(), 1);
    let shown = run(Command::CatalogueShow { sku: chair() }).await;
    assert!(
        shown
            .rows
            .iter()
            .any(|r| r[0] == "notices" && r[1].contains("wrong price")),
        "{:?}",
        shown.rows
    );

    // Resumed: the three units go to Bea, Cat and Dan, oldest first.
    let resumed = run(Command::Resume { sku: Some(chair()) }).await;
    assert_eq!(resumed.json["resumed"], true);
    w.pump().await;
    let told: Vec<String> = rig
        .outbox
        .sent()
        .iter()
        .skip(1)
        .map(|s| format!("{s:?}"))
        .collect();
    assert_eq!(told.len(), 3, "{told:?}");
    for (said, name) in told.iter().zip(["bea.", "cat.", "dan."]) {
        assert!(said.contains(name), "{name}: {said}");
    }
    w.assert_never_oversold().await;
    let again = run(Command::Resume { sku: Some(chair()) }).await;
    assert_eq!(again.json["resumed"], false);

    // All sending: the sender's pause, opened by the team.
    let all = run(Command::Pause {
        sku: None,
        reason: "stocktake tonight".into(),
    })
    .await;
    assert_eq!(all.json["paused"], true, "{}", all.message);
    let pause = w.store.sender_pause().await.unwrap().unwrap();
    assert_eq!(pause.reason, "paused by the team: stocktake tonight");
    assert_eq!(w.join("Eve").await.status, 201);
    w.advance(MIN);
    assert_eq!(w.shopify(Some(5), "s-3").await.status, 200);
    w.pump().await;
    assert_eq!(rig.outbox.sent().len(), 4, "nobody told while paused");
    let resumed = run(Command::Resume { sku: None }).await;
    assert_eq!(resumed.json["resumed"], true, "{}", resumed.message);
    w.pump().await;
    let sent = rig.outbox.sent();
    assert_eq!(sent.len(), 5);
    assert!(format!("{:?}", sent[4]).contains("eve."));
}

#[tokio::test]
async fn a_paused_item_tells_nobody_until_resumed_in_memory() {
    a_paused_item_tells_nobody_until_resumed_on(Backend::Memory).await;
}

#[tokio::test]
async fn a_paused_item_tells_nobody_until_resumed_on_dynamodb() {
    a_paused_item_tells_nobody_until_resumed_on(Backend::Dynamo).await;
}

/// The team pauses all sending while a provider's pause is open (SES in
/// the sandbox, say): the team's pause takes it over and lasts as long as
/// the team said, not the provider's five minutes; nothing goes out until
/// `restock resume`, and then what both held back is offered.
async fn the_team_s_pause_wins_over_a_provider_s_on(backend: Backend) {
    let rig = rig(backend).await;
    let w = &rig.world;
    let admin = Admin {
        store: w.store.clone(),
        pepper: None,
    };
    let run = |command: Command| {
        let admin = &admin;
        let now = w.clock.now_ms();
        async move { admin.run(command, now).await.unwrap() }
    };
    assert_eq!(w.join("Ann").await.status, 201);
    let now = w.clock.now_ms();
    // The provider refused the sender: notify opened its five-minute pause.
    assert!(
        w.store
            .pause_sender(
                "SES: the account is in the sandbox",
                now + 5 * MIN,
                &chair(),
                now
            )
            .await
            .unwrap()
    );
    let paused = run(Command::Pause {
        sku: None,
        reason: "stocktake tonight".into(),
    })
    .await;
    assert_eq!(paused.json["paused"], true, "{}", paused.message);
    let pause = w.store.sender_pause().await.unwrap().unwrap();
    assert_eq!(pause.reason, "paused by the team: stocktake tonight");
    assert!(pause.until > now + 29 * 24 * 60 * MIN, "{pause:?}");
    // Past the provider's five minutes the sweep leaves the team's pause.
    w.advance(6 * MIN);
    assert!(!w.sweep().await.resumed);
    assert_eq!(w.shopify(Some(1), "s-1").await.status, 200);
    w.pump().await;
    assert_eq!(
        rig.outbox.sent().len(),
        0,
        "nothing goes out while the team's pause holds"
    );
    let again = run(Command::Pause {
        sku: None,
        reason: "still counting".into(),
    })
    .await;
    assert_eq!(again.json["paused"], false, "{}", again.message);
    let resumed = run(Command::Resume { sku: None }).await;
    assert_eq!(resumed.json["resumed"], true, "{}", resumed.message);
    w.pump().await;
    assert_eq!(rig.outbox.sent().len(), 1, "Ann is told once resumed");
}

#[tokio::test]
async fn the_team_s_pause_wins_over_a_provider_s_in_memory() {
    the_team_s_pause_wins_over_a_provider_s_on(Backend::Memory).await;
}

#[tokio::test]
async fn the_team_s_pause_wins_over_a_provider_s_on_dynamodb() {
    the_team_s_pause_wins_over_a_provider_s_on(Backend::Dynamo).await;
}

/// `restock pause` and `restock resume` through the binary on DynamoDB.
#[tokio::test]
async fn pause_and_resume_run_from_the_command_line() {
    let (w, _outbox, table) = dynamo_world().await;
    assert_eq!(w.join("Ann").await.status, 201);
    let said = restock_on(
        &table,
        &["pause", "--sku", CHAIR, "--reason", "wrong price"],
    );
    assert!(
        said.contains("CHAIR-WAL: notices paused (wrong price)"),
        "{said}"
    );
    let shown = restock_on(&table, &["catalogue", "show", CHAIR]);
    assert!(shown.contains("paused by the team since"), "{shown}");
    let said = restock_on(&table, &["resume", "--sku", CHAIR]);
    assert!(said.contains("CHAIR-WAL: notices resumed"), "{said}");
    let said = restock_on(&table, &["pause", "--reason", "stocktake"]);
    assert!(
        said.contains("all notices paused until `restock resume`"),
        "{said}"
    );
    let said = restock_on(&table, &["resume"]);
    assert!(said.contains("sending resumed"), "{said}");
}

/// Every held-back restock across items, from the command line, and each
/// released or rejected: a rejected one offers nothing; the next believable
/// report is a restock.
#[tokio::test]
async fn escalations_are_listed_across_items_and_released_or_rejected() {
    let (w, outbox, table) = dynamo_world().await;
    assert_eq!(w.join("Ann").await.status, 201);
    let said = restock_on(&table, &["escalations"]);
    assert!(said.contains("no restock waits for the team"), "{said}");
    // A jump of 1,000 at once: held back for the team.
    let jump = w.shopify(Some(1_000), "s-1").await;
    assert_eq!(jump.json()["results"][0]["outcome"]["outcome"], "escalated");
    let listed: serde_json::Value =
        serde_json::from_str(&restock_on(&table, &["--json", "escalations"])).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(
        (
            listed[0]["sku"].as_str(),
            listed[0]["level"].as_u64(),
            listed[0]["waiting"].as_u64()
        ),
        (Some(CHAIR), Some(1_000), Some(1))
    );
    let said = restock_on(&table, &["reject", CHAIR]);
    assert!(
        said.contains("the restock at 1000 units is rejected"),
        "{said}"
    );
    w.pump().await;
    assert!(outbox.sent().is_empty(), "a rejected level offers nothing");
    assert!(restock_on(&table, &["escalations"]).contains("no restock waits"));
    // The shop reports its real level: a restock, and Ann is told.
    w.advance(MIN);
    assert_eq!(w.shopify(Some(2), "s-2").await.status, 200);
    w.pump().await;
    assert_eq!(outbox.sent().len(), 1);
    assert!(restock_on(&table, &["reject", CHAIR]).contains("nothing is paused"));
}

/// One call of moto's DynamoDB Streams API (JSON, as the SDK sends it).
async fn streams(action: &str, body: serde_json::Value) -> serde_json::Value {
    aws_json(
        &restock_store_dynamo::testing::endpoint(),
        "dynamodb",
        &format!("DynamoDBStreams_20120810.{action}"),
        body,
    )
    .await
}

/// "The dead-letter alarm fired: what was lost, and get it back": a notify
/// batch whose wake was never acted on, one the stream no longer has, an
/// event the events endpoint refused for a day, and a sweep run that
/// failed, each written as Lambda and EventBridge write them; `restock dlq
/// list` names each and what a redrive does, `restock dlq redrive` does it:
/// the item is woken and its shopper told, the event is on the bus again,
/// and the queue is empty.
#[tokio::test]
async fn the_dead_letter_queue_is_listed_and_what_it_names_got_back() {
    let endpoint = restock_store_dynamo::testing::endpoint();
    let (w, outbox, table) =
        world_on(restock_store_dynamo::testing::streamed_dynamo_store().await).await;
    let sdk = aws_config(&endpoint).await;
    let stack = restock_store_dynamo::testing::unique_table("restock-dlq");
    // The stack hands events to Klaviyo too (KlaviyoEvents on, the key in
    // its keys secret).
    let klaviyo = KlaviyoFake::start().await;
    let mut keys: serde_json::Value = serde_json::from_str(&secrets_json()).unwrap();
    keys["klaviyo"] = klaviyo.access(KLAVIYO_KEY);
    let secrets = aws_sdk_secretsmanager::Client::new(&sdk);
    let secret = secrets
        .create_secret()
        .name(format!("{stack}-keys"))
        .secret_string(keys.to_string())
        .send()
        .await
        .unwrap()
        .arn
        .unwrap();
    let queue = aws_json(
        &endpoint,
        "sqs",
        "AmazonSQS.CreateQueue",
        serde_json::json!({ "QueueName": format!("{stack}-dead-letters") }),
    )
    .await["QueueUrl"]
        .as_str()
        .unwrap()
        .to_owned();
    let (bus, bus_queue) = event_bus_to_queue(&endpoint).await;
    let template = serde_json::json!({
        "Parameters": {"KlaviyoEvents": {"Type": "String", "Default": "off"}},
        "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {
            "KeysSecretArn": {"Value": secret},
            "DetectUrl": {"Value": "https://detect.example.lambda-url.eu-west-2.on.aws/"},
            "CaptureUrl": {"Value": "https://capture.example.lambda-url.eu-west-2.on.aws/"},
            "TableName": {"Value": table},
            "AlertTopicArn": {"Value": {"Ref": "Topic"}},
            "DeadLetterQueueUrl": {"Value": queue},
            "EventBusName": {"Value": bus}
        }
    });
    aws_sdk_cloudformation::Client::new(&sdk)
        .create_stack()
        .stack_name(&stack)
        .template_body(template.to_string())
        .parameters(
            aws_sdk_cloudformation::types::Parameter::builder()
                .parameter_key("KlaviyoEvents")
                .parameter_value("on")
                .build(),
        )
        .send()
        .await
        .unwrap();

    // Ann waits; the chair comes back; notify's pass failed every retry.
    // Ben signed up too, and was later erased with `restock forget`.
    assert_eq!(w.join("Ann").await.status, 201);
    let ben = w.join("Ben").await.json()["request_id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Cat asked Shopify to erase her; the sweep's run failed every retry.
    let cat: restock_core::RequestId = w.join("Cat").await.json()["request_id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(w.shopify(Some(1), "s-1").await.status, 200);
    let arn = aws_sdk_dynamodb::Client::new(&sdk)
        .describe_table()
        .table_name(&table)
        .send()
        .await
        .unwrap()
        .table
        .unwrap()
        .latest_stream_arn
        .unwrap();
    let shard = streams("DescribeStream", serde_json::json!({ "StreamArn": arn })).await
        ["StreamDescription"]["Shards"][0]["ShardId"]
        .as_str()
        .unwrap()
        .to_owned();
    let iterator = streams(
        "GetShardIterator",
        serde_json::json!({ "StreamArn": arn, "ShardId": shard, "ShardIteratorType": "TRIM_HORIZON" }),
    )
    .await["ShardIterator"]
        .clone();
    let records = streams(
        "GetRecords",
        serde_json::json!({ "ShardIterator": iterator }),
    )
    .await;
    let wake = records["Records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            r["dynamodb"]["Keys"]["pk"]["S"]
                .as_str()
                .is_some_and(|pk| pk.starts_with("WAKE#"))
        })
        .expect("the restock's wake record");
    let seq = wake["dynamodb"]["SequenceNumber"].as_str().unwrap();
    // The events subscription's batch: the stock state's write (a restock).
    let state = records["Records"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|r| r["dynamodb"]["Keys"]["sk"]["S"] == "STATE")
        .expect("the stock state's record");
    let state_seq = state["dynamodb"]["SequenceNumber"].as_str().unwrap();
    let state_id = state["eventID"].as_str().unwrap().to_owned();
    // The events subscription's batch of Ben's sign-up, which carries his
    // address in its image.
    let bens = records["Records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["dynamodb"]["Keys"]["pk"]["S"] == format!("REQ#{ben}").as_str())
        .expect("Ben's sign-up record");
    let bens_seq = bens["dynamodb"]["SequenceNumber"].as_str().unwrap();
    let forgot = Admin {
        store: w.store.clone(),
        pepper: Some(pepper()),
    }
    .run(
        Command::Forget {
            contact: w.email("Ben"),
        },
        w.clock.now_ms(),
    )
    .await
    .unwrap();
    assert_eq!(forgot.json["erased"], 1, "{}", forgot.message);
    let batch_of = |stream: &str, seq: &str| {
        serde_json::json!({
            "requestContext": {
                "requestId": "c9b8a7d6-5e4f-4a3b-9c2d-1e0f9a8b7c6d",
                "functionArn": "arn:aws:lambda:eu-west-2:123456789012:function:restock-NotifyFunction",
                "condition": "RetryAttemptsExhausted",
                "approximateInvokeCount": 4
            },
            "responseContext": {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
            "version": "1.0",
            "timestamp": "2026-12-04T09:05:00.000Z",
            "DDBStreamBatchInfo": {
                "shardId": shard, "startSequenceNumber": seq, "endSequenceNumber": seq,
                "approximateArrivalOfFirstRecord": "2026-12-04T09:00:00Z",
                "approximateArrivalOfLastRecord": "2026-12-04T09:00:00Z",
                "batchSize": 1, "streamArn": stream
            }
        })
    };
    let send = |body: serde_json::Value, attributes: serde_json::Value| {
        let queue = queue.clone();
        let endpoint = endpoint.clone();
        async move {
            aws_json(
                &endpoint,
                "sqs",
                "AmazonSQS.SendMessage",
                serde_json::json!({ "QueueUrl": queue, "MessageBody": body.to_string(), "MessageAttributes": attributes }),
            )
            .await;
        }
    };
    send(batch_of(&arn, seq), serde_json::json!({})).await;
    send(batch_of(&arn, state_seq), serde_json::json!({})).await;
    send(batch_of(&arn, bens_seq), serde_json::json!({})).await;
    send(
        batch_of(
            "arn:aws:dynamodb:eu-west-2:123456789012:table/gone/stream/2026-11-01T00:00:00.000",
            seq,
        ),
        serde_json::json!({}),
    )
    .await;
    // The events endpoint refused an event for a day (the rule's DLQ).
    let refused = serde_json::json!({
        "version": "0", "id": "5d1f0e8c-2b3a-4c5d-8e9f-0a1b2c3d4e5f", "detail-type": "Restock detected",
        "source": "restock", "account": "123456789012", "time": "2026-12-04T09:00:00Z",
        "region": "eu-west-2", "resources": [],
        "detail": {"version": 1, "id": "7e3a-0", "at": "2026-12-04T09:00:00Z", "sku": "CHAIR-WAL", "restock": 1, "level": 1}
    });
    let text = |v: &str| serde_json::json!({ "DataType": "String", "StringValue": v });
    send(
        refused,
        serde_json::json!({
            "RULE_ARN": text("arn:aws:events:eu-west-2:123456789012:rule/restock-bus/restock-EventsToEndpoint"),
            "TARGET_ARN": text("arn:aws:events:eu-west-2:123456789012:api-destination/restock-events/1"),
            "ERROR_CODE": text("SDK_CLIENT_ERROR"),
            "ERROR_MESSAGE": text("Unable to invoke ApiDestination endpoint: The endpoint responded 503."),
        }),
    )
    .await;
    // A sweep run that failed every retry (its on-failure destination).
    send(
        serde_json::json!({
            "version": "1.0", "timestamp": "2026-12-04T09:03:00.000Z",
            "requestContext": {
                "requestId": "e1d2c3b4-a5f6-4789-8a9b-0c1d2e3f4a5b",
                "functionArn": "arn:aws:lambda:eu-west-2:123456789012:function:restock-SweepFunction:$LATEST",
                "condition": "RetriesExhausted", "approximateInvokeCount": 3
            },
            "requestPayload": {"version": "0", "id": "a", "detail-type": "Scheduled Event", "source": "aws.events", "detail": {}},
            "responseContext": {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
            "responsePayload": {"errorMessage": "DynamoDB Query failed", "errorType": "&alloc::boxed::Box<dyn core::error::Error>"}
        }),
        serde_json::json!({}),
    )
    .await;

    let cats = restock_core::Contact::Email(restock_core::Email::try_from(w.email("Cat")).unwrap());
    send(
        serde_json::json!({
            "version": "1.0", "timestamp": "2026-12-04T09:04:00.000Z",
            "requestContext": {
                "requestId": "f2e3d4c5-b6a7-4890-9bac-1d2e3f4a5b6c",
                "functionArn": "arn:aws:lambda:eu-west-2:123456789012:function:restock-SweepFunction:$LATEST",
                "condition": "RetriesExhausted", "approximateInvokeCount": 1
            },
            "requestPayload": {
                "version": "0", "id": "b", "detail-type": "Erasure requested", "source": "restock.privacy",
                "detail": {"contact_keys": [cats.key(&pepper())], "customer_id": 5}
            },
            "responseContext": {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
            "responsePayload": {"errorMessage": "DynamoDB Scan failed", "errorType": "&alloc::boxed::Box<dyn core::error::Error>"}
        }),
        serde_json::json!({}),
    )
    .await;

    // The mail domain's DNS, which doctor asks through RESTOCK_DNS_SERVER.
    let dns = DnsFake::start().await;
    dns.txt("_dmarc.loomandlast.co.uk", "v=DMARC1; p=reject");
    let dlq = |args: &[&str]| {
        let out = std::process::Command::new(binary("restock", "debug"))
            .args(["--endpoint-url", &endpoint])
            .args(args)
            .args(["--stack", &stack])
            .env("RESTOCK_DNS_SERVER", dns.at.to_string())
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("AWS_REGION", "eu-west-2")
            .env_remove("RESTOCK_TABLE")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let (code, listed) = dlq(&["dlq", "list"]);
    assert_eq!(code, Some(0), "{listed}");
    for said in [
        "notify: a batch of 1 stream records",
        "RetryAttemptsExhausted: Unhandled",
        "the events endpoint: Restock detected 7e3a-0",
        "SDK_CLIENT_ERROR: Unable to invoke ApiDestination",
        "sweep: a run",
        "RetriesExhausted: DynamoDB Query failed",
        "sweep: an erasure (a customer's or the shop's)",
        "7 messages",
    ] {
        assert!(listed.contains(said), "{said}: {listed}");
    }
    assert_eq!(dlq(&["dlq", "list"]).1, listed, "listing takes nothing out");

    let wakes = w.store.wakes(&chair()).await.unwrap().len();
    let (code, redriven) = dlq(&["dlq", "redrive"]);
    assert_eq!(code, Some(0), "{redriven}");
    for said in [
        "woke CHAIR-WAL",
        "the stream no longer has its records (ResourceNotFoundException: Requested resource not found)",
        "woke every item someone waits for (CHAIR-WAL)",
        "put on the bus again: Restock detected 7e3a-0",
        "nothing to do again",
        "published 1 events again (to the bus and Klaviyo)",
        "left out 1 events of requests no longer in the table",
        "erased 1 requests",
        "7 messages done again and deleted, 0 left",
    ] {
        assert!(redriven.contains(said), "{said}: {redriven}");
    }
    assert!(
        !redriven.contains("ServiceError") && !redriven.contains("HeaderValue"),
        "what the service said in a line, not its raw answer: {redriven}"
    );
    assert!(
        w.store.wakes(&chair()).await.unwrap().len() > wakes,
        "woken again"
    );
    assert!(w.store.request(&cat).await.unwrap().is_none(), "Cat erased");
    w.pump().await;
    assert_eq!(outbox.sent().len(), 1, "Ann is told");
    let events = queued_events(&endpoint, &bus_queue).await;
    assert!(
        events
            .iter()
            .any(|e| e["detail-type"] == "Restock detected" && e["detail"]["id"] == "7e3a-0"),
        "{events:?}"
    );
    assert!(
        events.iter().any(|e| e["detail-type"] == "Restock detected"
            && e["detail"]["id"] == format!("{state_id}-0").as_str()),
        "published again with the id notify gave it: {events:?}"
    );
    assert!(
        !format!("{events:?}").contains(&w.email("Ben")),
        "an erased shopper's address is not published again: {events:?}"
    );
    assert!(
        !klaviyo
            .accepted
            .lock()
            .unwrap()
            .iter()
            .any(|e| e.body.to_string().contains(&w.email("Ben"))),
        "nor handed to Klaviyo"
    );
    assert!(
        dlq(&["dlq", "list"])
            .1
            .contains("the dead-letter queue is empty")
    );
    // The doctor checks Klaviyo's key is there while KlaviyoEvents is on,
    // and reads the mail domain's DMARC record from the DNS it is given.
    let (_, doctor) = dlq(&["doctor"]);
    assert!(
        doctor.contains("on, with a private key in the keys secret"),
        "{doctor}"
    );
    assert!(
        doctor.contains("ok   DMARC record: _dmarc.loomandlast.co.uk: p=reject"),
        "{doctor}"
    );
    secrets
        .put_secret_value()
        .secret_id(&secret)
        .secret_string(secrets_json())
        .send()
        .await
        .unwrap();
    let (_, doctor) = dlq(&["doctor"]);
    assert!(
        doctor.contains("KlaviyoEvents is on but the keys secret has no klaviyo.private_key"),
        "{doctor}"
    );
}

/// `restock show` on the in-memory store: a sign-up not yet confirmed says
/// so, with when it was asked; a notice the provider refused says why, the
/// address in the provider's words masked unless asked for in the clear.
#[tokio::test]
async fn show_says_why_on_memory_and_masks_what_a_provider_said() {
    use restock_store::NoticeOutcome;
    let (w, outbox) = World::memory().await;
    let mut settings = settings();
    settings.confirm = true;
    settings.consent_version = "2026-11".into();
    w.store.put_settings(&settings).await.unwrap();
    let admin = Admin {
        store: w.store.clone(),
        pepper: Some(pepper()),
    };
    let show = |who: String, with_contacts: bool| {
        let admin = &admin;
        let now = w.clock.now_ms();
        async move {
            admin
                .run(Command::Show { who, with_contacts }, now)
                .await
                .unwrap()
        }
    };
    let ann = w.join("Ann").await.json()["request_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let said = show(ann.clone(), false).await.message;
    assert!(
        said.contains("now: signed up; the confirmation message has not gone yet"),
        "{said}"
    );
    w.pump().await;
    let said = show(w.email("Ann"), false).await.message;
    assert!(
        said.contains("now: signed up but not confirmed: the confirmation went at"),
        "{said}"
    );
    assert!(said.contains("sent the confirmation message"), "{said}");

    // Confirmed and told; then the provider bounces the notice, naming her.
    let link = outbox.sent()[0].confirm_link().unwrap();
    let path = format!("/c/{}", link.split_once("/c/").unwrap().1);
    assert_eq!(w.capture("POST", &path).await.status, 200);
    assert_eq!(w.shopify(Some(1), "s-1").await.status, 200);
    w.pump().await;
    let reason = format!("550 5.1.1 <{}>: mailbox unknown", w.email("Ann"));
    w.store
        .record_notice(
            &ann.parse().unwrap(),
            1,
            NoticeOutcome::Failed {
                reason: reason.clone(),
            },
            w.clock.now_ms(),
        )
        .await
        .unwrap();
    let masked = show(ann.clone(), false).await;
    assert!(
        masked
            .message
            .contains("now: the notice could not be delivered: 550 5.1.1 <a***@example.com>"),
        "{}",
        masked.message
    );
    assert!(
        masked
            .message
            .contains("notice of restock 1 not sent: 550 5.1.1 <a***@example.com>"),
        "{}",
        masked.message
    );
    assert!(masked.message.contains("ended: undeliverable"));
    assert!(
        !masked.message.contains(&w.email("Ann")),
        "{}",
        masked.message
    );
    assert!(
        !masked.json.to_string().contains(&w.email("Ann")),
        "{}",
        masked.json
    );
    let clear = show(ann, true).await;
    assert!(clear.message.contains(&reason), "{}", clear.message);
    // Ann's story in order: joined, asked, confirmed, offered, not sent, ended.
    let kinds: Vec<_> = clear.json["requests"][0]["story"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["what"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        kinds,
        [
            "joined",
            "asked",
            "confirmed",
            "offered",
            "not_sent",
            "ended"
        ]
    );
}
