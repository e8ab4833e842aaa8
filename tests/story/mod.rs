//! DESIGN §1 end to end, on the AWS adapters: DynamoDB, SES v2, SNS and
//! Secrets Manager are moto's; Bedrock is a local fake speaking Converse.
//! Notices are read back from what moto's SES recorded.

pub(crate) mod helpers;

use std::time::Duration;

use helpers::*;
use restock_e2e::*;

const DAY: i64 = 86_400_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_walnut_chair_comes_back_and_della_holds_one() {
    let fake = BedrockFake::start(ModelMode::Answer(
        "The walnut chair is home again, and one is set aside for you.".into(),
    ))
    .await;
    let aws = AwsWorld::start(&fake).await;
    let w = &aws.world;

    // Thirteen join over two weeks. The first three joined long ago.
    let names = [
        "Ann", "Bea", "Cal", "Dov", "Eli", "Fay", "Della", "Marcus", "Ike", "Jo", "Kit", "Lu", "Mo",
    ];
    let mut tokens = Vec::new();
    w.clock.set_ms(T0 - 100 * DAY);
    for (i, name) in names.iter().enumerate() {
        if i == 3 {
            w.clock.set_ms(T0 - 14 * DAY);
        }
        let reply = w.join(name).await;
        assert_eq!(reply.status, 201, "{}", reply.body);
        assert_eq!(reply.json()["position"], i + 1);
        tokens.push(reply.json()["manage_token"].as_str().unwrap().to_owned());
        w.advance(DAY);
    }
    w.clock.set_ms(T0);
    // One cancels, one opts out of everything, one has gone stale.
    assert_eq!(w.manage("DELETE", &tokens[0]).await.status, 200);
    aws.opt_out(&w.email("Bea")).await;
    let swept = w.sweep().await;
    assert_eq!(
        swept.stale, 1,
        "Cal's request has outlived the 90-day lifetime"
    );
    let della = w.manage("GET", &tokens[6]).await.json();
    assert_eq!(
        (della["status"].as_str(), della["position"].as_u64()),
        (Some("waiting"), Some(4))
    );
    assert_eq!(
        w.manage("GET", &tokens[7]).await.json()["position"],
        5,
        "Marcus is fifth"
    );

    // A delivery lands: the shop reports the chair back at 4.
    let reply = w.shopify(Some(4), "delivery-0001").await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json()["results"][0]["outcome"]["outcome"], "restock");
    w.pump().await;
    w.assert_never_oversold().await;
    assert_eq!(fake.calls(), 1, "one Bedrock call phrases the batch");

    let told = aws.emails_to(w).await;
    let expected: Vec<String> = ["Dov", "Eli", "Fay", "Della"]
        .iter()
        .map(|n| w.email(n))
        .collect();
    assert_eq!(
        told.iter().map(|m| m.0.clone()).collect::<Vec<_>>(),
        expected,
        "the first four still waiting, in join order"
    );
    for (_, subject, html) in &told {
        assert_eq!(
            subject,
            "Walnut dining chair is back at Loom &amp; Last"
                .replace("&amp;", "&")
                .as_str()
        );
        assert!(
            html.contains("The walnut chair is home again"),
            "the model's words are used"
        );
        assert!(html.contains("15 minutes"));
        assert!(html.contains("/o/CHAIR-WAL~"), "an opt-out link");
    }
    assert!(
        !told.iter().any(|m| m.0 == w.email("Marcus")),
        "Marcus hears nothing yet"
    );

    // Della taps her link: the page changes nothing, the button holds a chair.
    let della_link = reserve_link_in(&told[3].2).expect("a reserve link");
    let page = w.capture("GET", &path_of(&della_link)).await;
    assert_eq!(page.status, 200);
    assert!(
        page.body.contains("Walnut dining chair") && page.body.contains("15 minutes"),
        "{}",
        page.body
    );
    assert_eq!(
        w.store.snapshot(&chair()).await.unwrap().counters.held,
        0,
        "a GET holds nothing"
    );
    w.advance(2 * MIN);
    let held = w.capture("POST", &path_of(&della_link)).await;
    assert_eq!(held.status, 303);
    let checkout = held.header("location").unwrap();
    assert!(
        checkout.starts_with("https://loomandlast.co.uk/cart/4242:1?attributes[hold]="),
        "{checkout}"
    );
    // The shop's analytics sees what restock brought (settings' `utm`).
    assert!(
        checkout.ends_with(
            "&utm_source=restock&utm_medium=email&utm_campaign=back-in-stock&utm_content=CHAIR-WAL"
        ),
        "{checkout}"
    );
    assert_eq!(hold_in(checkout).len(), 22);
    w.assert_never_oversold().await;

    // Two others tap too; one never does.
    for m in &told[1..3] {
        assert_eq!(
            w.capture("POST", &path_of(&reserve_link_in(&m.2).unwrap()))
                .await
                .status,
            303
        );
    }
    w.assert_never_oversold().await;
    w.advance(14 * MIN);
    let swept = w.sweep().await;
    assert_eq!(swept.lapsed, 1, "Dov's offer expired");
    w.pump().await;
    w.assert_never_oversold().await;
    let told = aws.emails_to(w).await;
    assert_eq!(told.len(), 5);
    assert_eq!(told[4].0, w.email("Marcus"), "Marcus, fifth, is told next");
    assert_eq!(fake.calls(), 1, "later waves reuse the restock's phrase");
    let c = w.store.snapshot(&chair()).await.unwrap().counters;
    assert_eq!((c.level, c.offered, c.held), (4, 1, 3));
    // Dov's old link now says it ended, with a way back into the queue.
    let late = w
        .capture(
            "POST",
            &path_of(&reserve_link_in(&aws.emails_to(w).await[0].2).unwrap()),
        )
        .await;
    assert_eq!(late.status, 410);
    assert!(late.body.contains("Put me back in the queue"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flapping_level_notifies_nobody_twice_and_duplicates_are_no_ops() {
    let fake = BedrockFake::start(ModelMode::Answer("Back on the shelf for you.".into())).await;
    let aws = AwsWorld::start(&fake).await;
    let w = &aws.world;
    for name in ["Ann", "Bea", "Cal"] {
        assert_eq!(w.join(name).await.status, 201);
        w.advance(1_000);
    }
    assert_eq!(w.shopify(Some(2), "flap-1").await.status, 200);
    let again = w.shopify(Some(2), "flap-1").await;
    assert_eq!(
        (again.status.as_u16(), again.json()["status"].as_str()),
        (200, Some("duplicate"))
    );
    w.pump().await;
    for (i, level) in [0, 2, 0, 2].iter().enumerate() {
        w.advance(1_000);
        assert_eq!(
            w.shopify(Some(*level), &format!("flap-{}", i + 2))
                .await
                .status,
            200
        );
        let reports = w.pump().await;
        // The shop may drop below the live offers (clicks then find it sold
        // out again); what must never happen is a new offer beyond the level.
        assert!(
            reports.iter().all(|r| r.offers == 0),
            "no new offers while flapping: {reports:?}"
        );
    }
    let told = aws.emails_to(w).await;
    let mut recipients: Vec<_> = told.iter().map(|m| m.0.clone()).collect();
    recipients.sort();
    recipients.dedup();
    assert_eq!(recipients.len(), told.len(), "nobody is told twice");
    assert_eq!(recipients, vec![w.email("Ann"), w.email("Bea")]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_opt_out_between_restock_and_send_is_honoured() {
    let fake = BedrockFake::start(ModelMode::Answer("Back again.".into())).await;
    let aws = AwsWorld::start(&fake).await;
    let w = &aws.world;
    for name in ["Ann", "Bea", "Cal"] {
        assert_eq!(w.join(name).await.status, 201);
        w.advance(1_000);
    }
    assert_eq!(w.shopify(Some(1), "d-1").await.status, 200);
    // Ann opts out (from a message of another shop's campaign, say) before notify runs.
    aws.opt_out(&w.email("Ann")).await;
    w.pump().await;
    w.pump().await; // the unit her offer freed wakes notify again
    let told: Vec<_> = aws.emails_to(w).await.into_iter().map(|m| m.0).collect();
    assert_eq!(
        told,
        vec![w.email("Bea")],
        "Ann is skipped on every channel; the unit goes to Bea"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_bedrock_down_or_slow_the_fixed_template_goes_out() {
    let fake = BedrockFake::start(ModelMode::Fail).await;
    let aws = AwsWorld::start(&fake).await;
    let w = &aws.world;
    assert_eq!(w.join("Ann").await.status, 201);
    assert_eq!(w.shopify(Some(1), "d-1").await.status, 200);
    let reports = w.pump().await;
    assert!(!reports[0].phrased_by_model);
    let told = aws.emails_to(w).await;
    assert_eq!(told.len(), 1);
    assert!(
        told[0].2.contains(
            restock_core::notice::Phrase::fallback(&english())
                .as_str()
                .replace('\'', "&#39;")
                .as_str()
        )
    );

    // A slow model: the fixed template goes out within the two-second timeout.
    let fake_slow = BedrockFake::start(ModelMode::Slow(Duration::from_secs(5))).await;
    let aws = AwsWorld::start(&fake_slow).await;
    let w = &aws.world;
    assert_eq!(w.join("Bea").await.status, 201);
    assert_eq!(w.shopify(Some(1), "d-1").await.status, 200);
    // The model's call is timed where it is held, in the fake: the pass
    // around it also waits on the store, which on the faulted double may
    // back off and retry for a second or more.
    let chair = restock_core::Sku::try_from(CHAIR).unwrap();
    let report = restock_app::notify::notify_sku(&w.services, &chair)
        .await
        .expect("notify pass");
    assert!(!report.phrased_by_model);
    // The server sees the hang-up when it next reads the connection.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let held = fake_slow.held.lock().unwrap().clone();
    assert_eq!(held.len(), 1, "one call to the model: {held:?}");
    assert!(
        held[0] < Duration::from_secs(3),
        "gave up on the model after its two-second timeout, not the five it would take: {held:?}"
    );
    assert_eq!(aws.emails_to(w).await.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permanent_send_failure_passes_the_unit_on_and_tells_the_team() {
    let fake = BedrockFake::start(ModelMode::Answer("Back again.".into())).await;
    let aws = AwsWorld::start_failing_for(&fake, "ann").await;
    let w = &aws.world;
    for name in ["Ann", "Bea"] {
        assert_eq!(w.join(name).await.status, 201);
        w.advance(1_000);
    }
    assert_eq!(w.shopify(Some(1), "d-1").await.status, 200);
    let report = &w.pump().await[0];
    assert_eq!(report.failed, 1);
    let alerts = w.alerts.all();
    assert_eq!(alerts.len(), 1);
    assert!(
        alerts[0].body.contains("Walnut dining chair")
            && alerts[0].body.contains("a***@example.com"),
        "{}",
        alerts[0].body
    );
    assert!(
        !alerts[0].body.contains(&w.email("Ann")),
        "the team sees a masked address"
    );
    w.pump().await;
    let told: Vec<_> = aws.emails_to(w).await.into_iter().map(|m| m.0).collect();
    assert_eq!(told, vec![w.email("Bea")], "the unit passed to Bea");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sms_goes_through_sns_and_an_opted_out_number_is_recorded() {
    let fake = BedrockFake::start(ModelMode::Answer("Back again.".into())).await;
    let aws = AwsWorld::start(&fake).await;
    let w = &aws.world;
    // moto's SNS treats numbers ending in 99 as opted out.
    for (name, phone) in [("Ann", "+447911123499"), ("Bea", "+447911123456")] {
        let reply = w
            .capture_json(
                "POST",
                "/requests",
                serde_json::json!({"sku": CHAIR, "name": name, "phone": phone, "consent": true}),
            )
            .await;
        assert_eq!(reply.status, 201, "{}", reply.body);
        w.advance(1_000);
    }
    assert_eq!(w.shopify(Some(1), "d-1").await.status, 200);
    let report = &w.pump().await[0];
    assert_eq!(report.opted_out, 1, "{report:?}");
    w.pump().await;
    let ann = restock_core::Contact::Sms(restock_core::Phone::parse("+447911123499").unwrap());
    let pepper = pepper();
    assert!(w.store.is_opted_out(&ann.key(&pepper)).await.unwrap());
    let again = w
        .capture_json("POST", "/requests", serde_json::json!({"sku": CHAIR, "name": "Ann", "phone": "+447911123499", "consent": true}))
        .await;
    assert_eq!(again.status, 409, "opted out for good");
    let bea = w.store.queue(&chair(), 2, 10).await.unwrap();
    assert!(bea.is_empty(), "Bea was offered the unit");
}

#[tokio::test]
async fn a_transient_send_failure_is_retried_with_fresh_links_and_sent_once() {
    // On a store whose indexes lag: the redelivery comes at once, and the
    // claim given back must be found without waiting for an index.
    let (w, outbox) = World::memory_lagging().await;
    assert_eq!(w.join("Ann").await.status, 201);
    assert_eq!(w.shopify(Some(1), "d-1").await.status, 200);
    outbox.fail_transiently.lock().unwrap().push(w.email("Ann"));
    let event: aws_lambda_events::event::dynamodb::Event = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../events/notify-restock-record.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let response = restock_aws::stream::handle(&w.services, event.clone()).await;
    assert_eq!(
        response.batch_item_failures.len(),
        1,
        "the record is reported for retry"
    );
    assert!(outbox.sent().is_empty());
    // Lambda redelivers the record once SES recovers.
    outbox.fail_transiently.lock().unwrap().clear();
    let response = restock_aws::stream::handle(&w.services, event.clone()).await;
    assert!(response.batch_item_failures.is_empty());
    assert_eq!(outbox.sent().len(), 1);
    let link = outbox.sent()[0].reserve_link().unwrap();
    assert_eq!(
        w.capture("POST", &path_of(&link)).await.status,
        303,
        "the re-armed link works"
    );
    // A third delivery of the same record sends nothing more.
    restock_aws::stream::handle(&w.services, event).await;
    assert_eq!(outbox.sent().len(), 1, "at most once per offer");
}

#[tokio::test]
async fn team_alerts_publish_to_the_sns_topic() {
    use restock_app::ports::Alerts;
    let sdk = aws_config(&restock_store_dynamo::testing::endpoint()).await;
    let sns = aws_sdk_sns::Client::new(&sdk);
    let topic = sns
        .create_topic()
        // A topic of its own: a subscriber left by an earlier run would be
        // delivered to first.
        .name(restock_store_dynamo::testing::unique_table(
            "restock-team-alerts",
        ))
        .send()
        .await
        .unwrap()
        .topic_arn
        .unwrap();
    // The team's inbox: an HTTP subscription moto delivers to, so the test
    // reads the alert that arrived, not only the publish call.
    let (arrived, mut inbox) = tokio::sync::mpsc::unbounded_channel::<String>();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let inbox_url = format!("http://{}/team", listener.local_addr().unwrap());
    tokio::spawn(
        axum::serve(
            listener,
            axum::Router::new().route(
                "/team",
                axum::routing::post(move |body: String| {
                    let arrived = arrived.clone();
                    async move {
                        let _ = arrived.send(body);
                    }
                }),
            ),
        )
        .into_future(),
    );
    sns.subscribe()
        .topic_arn(&topic)
        .protocol("http")
        .endpoint(&inbox_url)
        .send()
        .await
        .unwrap();
    let alerts = restock_aws::SnsAlerts::new(sns.clone(), topic);
    let entry = &catalogue()[0];
    let alert = restock_app::alerts::paused_restock(
        entry,
        1_000,
        1_000,
        restock_core::Escalation::Jump,
        12,
    );
    alerts.alert(&alert).await.expect("published");
    let notification = loop {
        let body = tokio::time::timeout(std::time::Duration::from_secs(10), inbox.recv())
            .await
            .expect("the alert reaches the topic's subscriber")
            .expect("the inbox is open");
        let json: serde_json::Value = serde_json::from_str(&body).expect("SNS's JSON");
        // A subscription's confirmation request is not the alert.
        if json["Type"] == "Notification" {
            break json;
        }
    };
    let subject = restock_aws::sns_subject(&alert.subject);
    assert!(subject.contains(&entry.name), "{subject}");
    assert_eq!(notification["Subject"].as_str(), Some(subject.as_str()));
    assert_eq!(notification["Message"].as_str(), Some(alert.body.as_str()));
    let missing = restock_aws::SnsAlerts::new(
        sns,
        "arn:aws:sns:eu-west-2:123456789012:no-such-topic".into(),
    );
    assert!(
        missing.alert(&alert).await.is_err(),
        "a missing topic is reported, not swallowed"
    );
}

/// The words of a shopper spoken to in English, the default.
fn english() -> restock_core::Texts {
    let en = restock_core::Language::english();
    restock_core::Texts::new(&en, &en, &restock_core::lang::Overrides::new())
}
