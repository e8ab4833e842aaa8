//! restock's events handed to Klaviyo (`restock_aws::klaviyo`), against a
//! fake that speaks Klaviyo's Events API: the four events a shop's flows
//! use arrive as metrics on the shopper's profile, at least once and kept
//! once (`unique_id`); a 429 is waited out as `Retry-After` says; what is
//! not accepted goes back to the stream with its record.

use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_lambda_events::event::dynamodb::Event as StreamEvent;
use restock_app::Services;
use restock_app::ports::{Disabled, EventLog, OsEntropy, Secrets, StaticKeyring};
use restock_aws::klaviyo::{KlaviyoSink, REVISION};
use restock_e2e::*;
use serde_json::{Value, json};

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{}/../events/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// notify's services on `w`'s store, its events going to a log (the bus)
/// and to Klaviyo with `klaviyo` in the keys secret.
fn services(w: &World, klaviyo: Option<Value>) -> (Services, Arc<EventLog>) {
    let mut secret: Value = serde_json::from_str(&secrets_json()).unwrap();
    if let Some(k) = klaviyo {
        secret["klaviyo"] = k;
    }
    let keyring = Arc::new(StaticKeyring(Arc::new(
        Secrets::from_json(&secret.to_string()).unwrap(),
    )));
    let mut s = Services::new(
        w.store.clone(),
        Arc::new(Disabled),
        Arc::new(Disabled),
        Arc::new(Disabled),
        Arc::new(Disabled),
        w.clock.clone(),
        Arc::new(OsEntropy),
    );
    let bus = Arc::new(EventLog::default());
    s.events = Arc::new(KlaviyoSink::new(bus.clone(), keyring));
    (s, bus)
}

/// notify's second subscription on the changes fixture (a hold created,
/// the sender paused): the records it asks to be delivered again.
async fn deliver(s: &Services) -> Vec<String> {
    let event: StreamEvent = serde_json::from_str(&fixture("notify-changes-record.json")).unwrap();
    restock_aws::stream::handle(s, event)
        .await
        .batch_item_failures
        .into_iter()
        .map(|f| f.item_identifier.unwrap())
        .collect()
}

/// The JSON block under `## Klaviyo` in docs/EVENTS.md.
fn documented() -> Value {
    let doc = std::fs::read_to_string(format!("{}/../docs/EVENTS.md", env!("CARGO_MANIFEST_DIR")))
        .unwrap();
    let section = &doc[doc.find("## Klaviyo").expect("a Klaviyo section")..];
    let start = section.find("```json\n").unwrap() + 8;
    let end = start + section[start..].find("```").unwrap();
    serde_json::from_str(&section[start..end]).unwrap()
}

#[tokio::test]
async fn a_hold_reaches_klaviyo_as_a_metric_on_the_shopper_s_profile() {
    let fake = KlaviyoFake::start().await;
    let (w, _) = World::memory().await;
    let (s, bus) = services(&w, Some(fake.access(KLAVIYO_KEY)));
    assert!(deliver(&s).await.is_empty(), "both records done");
    let kinds: Vec<_> = bus
        .published
        .lock()
        .unwrap()
        .iter()
        .map(|e| e.detail_type)
        .collect();
    assert_eq!(
        kinds,
        ["Hold created", "Sending paused"],
        "the bus has both"
    );
    let accepted = fake.accepted();
    assert_eq!(
        accepted.len(),
        1,
        "only the shopper's event goes to Klaviyo"
    );
    assert_eq!(accepted[0].revision, REVISION);
    let body = &accepted[0].body;
    eprintln!(
        "Klaviyo received: {}",
        serde_json::to_string_pretty(body).unwrap()
    );
    let a = &body["data"]["attributes"];
    assert_eq!(a["metric"]["data"]["attributes"]["name"], "Restock Held");
    assert_eq!(
        a["profile"]["data"]["attributes"],
        json!({"email": "della@example.com", "first_name": "Della"}),
        "the shopper's own address: Klaviyo's profile is keyed by it"
    );
    assert_eq!(
        a["unique_id"], "8a1f0e2d3c4b5a69788796a5b4c3d2e1-0",
        "the event's id"
    );
    assert_eq!(a["time"], "2026-12-04T09:01:00Z");
    assert_eq!(a["properties"]["sku"], "CHAIR-WAL");
    assert_eq!(a["properties"]["restock"], 1);
    assert_eq!(*body, documented(), "docs/EVENTS.md shows what is sent");

    // Delivered again (the stream's at-least-once): the same unique_id.
    assert!(deliver(&s).await.is_empty());
    let again = fake.accepted();
    assert_eq!(again.len(), 2);
    assert_eq!(
        again[1].body["data"]["attributes"]["unique_id"],
        a["unique_id"]
    );
}

#[tokio::test]
async fn a_429_is_waited_out_as_retry_after_says_and_a_503_tried_again() {
    let fake = KlaviyoFake::start().await;
    fake.script
        .lock()
        .unwrap()
        .extend([KlaviyoAnswer::RateLimited(1), KlaviyoAnswer::Unavailable]);
    let (w, _) = World::memory().await;
    let (s, _) = services(&w, Some(fake.access(KLAVIYO_KEY)));
    let began = Instant::now();
    assert!(deliver(&s).await.is_empty());
    assert!(began.elapsed() >= Duration::from_secs(1), "waited a second");
    assert_eq!(fake.answered(), [429, 503, 202]);
    assert_eq!(fake.accepted().len(), 1);
}

#[tokio::test]
async fn what_klaviyo_does_not_take_comes_back_with_its_record() {
    let record = "111100000000000000000002";
    // Asked to wait a minute: not waited in the function; the stream
    // delivers the record again.
    let fake = KlaviyoFake::start().await;
    fake.script
        .lock()
        .unwrap()
        .push_back(KlaviyoAnswer::RateLimited(60));
    let (w, _) = World::memory().await;
    let (s, bus) = services(&w, Some(fake.access(KLAVIYO_KEY)));
    let began = Instant::now();
    assert_eq!(deliver(&s).await, [record]);
    assert!(began.elapsed() < Duration::from_secs(5));
    assert_eq!(fake.answered(), [429]);
    assert_eq!(
        bus.published.lock().unwrap().len(),
        2,
        "the bus took its events"
    );
    // The next delivery gets through.
    assert!(deliver(&s).await.is_empty());
    assert_eq!(fake.accepted().len(), 1);

    // A wrong key: refused (401) every time, until it is fixed; the record
    // ends in the dead-letter queue as an endpoint's refused post does.
    let (s, _) = services(&w, Some(fake.access("pk_wrong")));
    assert_eq!(deliver(&s).await, [record]);
    assert_eq!(fake.answered().last(), Some(&401));
    // Turned on without a key in the secret: the same.
    let (s, _) = services(&w, None);
    assert_eq!(deliver(&s).await, [record]);
}

/// `restock connect klaviyo --stack`: the private key into the stack's
/// keys secret once Klaviyo takes it, through the real binary on moto's
/// CloudFormation and Secrets Manager; a key Klaviyo refuses changes
/// nothing, and the command says whether the stack's KlaviyoEvents is on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_klaviyo_puts_a_key_klaviyo_takes_in_the_keys_secret() {
    let fake = KlaviyoFake::start().await;
    let endpoint = restock_store_dynamo::testing::endpoint();
    let sdk = aws_config(&endpoint).await;
    let stack = restock_store_dynamo::testing::unique_table("restock-klaviyo");
    let secrets = aws_sdk_secretsmanager::Client::new(&sdk);
    let secret = secrets
        .create_secret()
        .name(format!("{stack}-keys"))
        .secret_string(secrets_json())
        .send()
        .await
        .unwrap()
        .arn
        .unwrap();
    let template = json!({
        "Parameters": {"KlaviyoEvents": {"Type": "String", "Default": "off"}},
        "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {
            "KeysSecretArn": {"Value": secret},
            "DetectUrl": {"Value": "https://detect.example.lambda-url.eu-west-2.on.aws/"},
            "CaptureUrl": {"Value": "https://capture.example.lambda-url.eu-west-2.on.aws/"},
            "TableName": {"Value": "restock-table"},
            "AlertTopicArn": {"Value": {"Ref": "Topic"}}
        }
    });
    aws_sdk_cloudformation::Client::new(&sdk)
        .create_stack()
        .stack_name(&stack)
        .template_body(template.to_string())
        .send()
        .await
        .unwrap();
    let run = |key: &str, extra: &[&str]| {
        let out = std::process::Command::new(binary("restock", "debug"))
            .args([
                "--endpoint-url",
                &endpoint,
                "connect",
                "klaviyo",
                "--stack",
                &stack,
            ])
            .args(["--api", &fake.url])
            .args(extra)
            .env("KLAVIYO_PRIVATE_KEY", key)
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("AWS_REGION", "eu-west-2")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let keys = || async {
        let s = secrets
            .get_secret_value()
            .secret_id(&secret)
            .send()
            .await
            .unwrap();
        serde_json::from_str::<Value>(s.secret_string().unwrap()).unwrap()
    };
    // Refused by Klaviyo: nothing written, exit 5 (refused).
    let (code, said) = run("pk_wrong", &[]);
    assert_eq!(code, Some(5), "{said}");
    assert!(said.contains("Klaviyo refused the key: HTTP 401"), "{said}");
    assert!(keys().await["klaviyo"].is_null());
    // A dry run says what it would do.
    let (code, said) = run(KLAVIYO_KEY, &["--dry-run"]);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("would set klaviyo"), "{said}");
    assert!(keys().await["klaviyo"].is_null());
    // Taken: written beside what the secret had; the stack's switch named.
    let (code, said) = run(KLAVIYO_KEY, &[]);
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.contains("Klaviyo takes the key") && said.contains("klaviyo set"),
        "{said}"
    );
    assert!(said.contains("KlaviyoEvents is off on"), "{said}");
    let written = keys().await;
    assert_eq!(written["klaviyo"]["private_key"], KLAVIYO_KEY);
    assert!(written["contact_pepper"].is_string(), "the rest kept");
    assert!(run(KLAVIYO_KEY, &[]).1.contains("unchanged"));
}
