//! The compiled binaries, run as Lambda runs them: each polls a Runtime API
//! emulator for events, reads its configuration from the environment, and
//! talks to moto (DynamoDB, Secrets Manager, SES, SNS) and the Bedrock fake
//! through the SDK's usual endpoint settings. This exercises the wiring that
//! handler tests cannot: `main.rs`, the typed config, the SDK clients, JSON logs.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use restock_core::Sku;
use restock_e2e::*;
use restock_store::prelude::*;
use tokio::io::AsyncReadExt;
use tokio::process::Child;

pub(crate) fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../events")
            .join(name),
    )
    .expect("fixture")
}

fn spawn(d: &Deployment, api: &RuntimeApi, name: &str, without: Option<&str>) -> Child {
    spawn_with(d, api, name, without, &[])
}

fn spawn_with(
    d: &Deployment,
    api: &RuntimeApi,
    name: &str,
    without: Option<&str>,
    env: &[(&str, &str)],
) -> Child {
    let mut command = d.command(api, name, "debug");
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    command.envs(env.iter().copied());
    if let Some(var) = without {
        command.env_remove(var);
    }
    command.spawn().expect("binary starts")
}

/// Shopify's delivery of `body` on `topic` as detect's function URL gets
/// it: the `detect-shopify.json` fixture with the body, its id and the
/// shop's signature.
fn shopify_event(topic: &str, webhook_id: &str, body: &str) -> String {
    let mut event: serde_json::Value =
        serde_json::from_str(&fixture("detect-shopify.json")).expect("the fixture");
    let headers = &mut event["headers"];
    headers["x-shopify-topic"] = topic.into();
    headers["x-shopify-webhook-id"] = webhook_id.into();
    headers["x-shopify-hmac-sha256"] =
        restock_core::platform::shopify::sign(SHOPIFY_KEY.as_bytes(), body.as_bytes()).into();
    event["body"] = body.into();
    event.to_string()
}

pub(crate) async fn run(d: &Deployment, name: &str, event: &str) -> (Outcome, String) {
    run_with(d, name, event, &[]).await
}

/// Runs binary `name` on one event with extra environment `env`; its
/// outcome and its logs.
pub(crate) async fn run_with(
    d: &Deployment,
    name: &str,
    event: &str,
    env: &[(&str, &str)],
) -> (Outcome, String) {
    run_clocked(d, name, event, env, 0).await
}

/// [`run_with`], the binary's clock set `offset_ms` from the wall clock
/// (by libfaketime in `env`), and its deadline on that clock.
async fn run_clocked(
    d: &Deployment,
    name: &str,
    event: &str,
    env: &[(&str, &str)],
    offset_ms: i128,
) -> (Outcome, String) {
    let api = RuntimeApi::start().await;
    api.clock_offset(offset_ms);
    let mut child = spawn_with(d, &api, name, None, env);
    let outcome = api.invoke(event).await;
    // What it writes after answering (its metrics) is part of its output.
    api.wait_idle(std::time::Duration::from_secs(5)).await;
    child.start_kill().ok();
    let mut logs = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut logs)
        .await
        .ok();
    child.wait().await.ok();
    (outcome, logs)
}

/// The CloudWatch embedded-metric-format documents in a binary's output,
/// each checked against the format: restock's namespace, and a value for
/// every metric it declares.
fn metric_docs(logs: &str) -> Vec<serde_json::Value> {
    let docs: Vec<serde_json::Value> = logs
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|d| d["_aws"].is_object())
        .collect();
    for doc in &docs {
        let directive = &doc["_aws"]["CloudWatchMetrics"][0];
        assert_eq!(directive["Namespace"], "restock/test", "{doc}");
        assert!(doc["_aws"]["Timestamp"].is_u64(), "{doc}");
        for dims in directive["Dimensions"].as_array().expect("dimension sets") {
            for dim in dims.as_array().unwrap() {
                assert!(doc[dim.as_str().unwrap()].is_string(), "{doc}");
            }
        }
        for m in directive["Metrics"].as_array().expect("metrics") {
            assert!(!doc[m["Name"].as_str().unwrap()].is_null(), "{doc}");
        }
    }
    docs
}

/// The total a binary's output counted of metric `name`.
fn counted(logs: &str, name: &str) -> f64 {
    metric_docs(logs)
        .iter()
        .filter_map(|d| d[name].as_f64())
        .sum()
}

fn http_status(outcome: &Outcome) -> (u64, serde_json::Value) {
    let Outcome::Response(body) = outcome else {
        panic!("the function failed: {outcome:?}")
    };
    let response: serde_json::Value = serde_json::from_str(body).expect("a Function URL response");
    let inner = serde_json::from_str(response["body"].as_str().unwrap_or("null"))
        .unwrap_or(serde_json::Value::Null);
    (response["statusCode"].as_u64().unwrap(), inner)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_four_binaries_serve_a_restock_end_to_end() {
    let d = Deployment::create(settings()).await;

    let (outcome, logs) = run(&d, "capture", &fixture("capture-notify-me.json")).await;
    let (status, body) = http_status(&outcome);
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["position"], 1);
    for line in logs.lines().filter(|l| !l.trim().is_empty()) {
        let entry: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|_| panic!("a JSON log line: {line}"));
        assert!(
            entry["level"].is_string() || entry["fields"].is_object() || entry["_aws"].is_object(),
            "a log entry or a metrics document: {line}"
        );
    }
    assert_eq!(counted(&logs, "SignUps"), 1.0, "{logs}");
    assert!(
        logs.contains("d***@example.com"),
        "the shopper appears masked: {logs}"
    );
    assert!(!logs.contains("della@example.com"), "never in the clear");

    let (outcome, logs) = run(&d, "detect", &fixture("detect-shopify.json")).await;
    let (status, body) = http_status(&outcome);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["results"][0]["outcome"]["outcome"], "restock");
    assert_eq!(counted(&logs, "Restocks"), 1.0, "{logs}");

    let (outcome, logs) = run(&d, "notify", &fixture("notify-restock-record.json")).await;
    assert_eq!(
        outcome,
        Outcome::Response("{\"batchItemFailures\":[]}".into()),
        "{logs}"
    );
    assert_eq!(d.model.calls(), 1);
    let sent: Vec<_> = ses_messages(&d.endpoint)
        .await
        .into_iter()
        .filter(|m| m.0 == "della@example.com")
        .collect();
    assert!(!sent.is_empty(), "the notice reached SES");
    assert!(
        sent.last().unwrap().2.contains("Home again"),
        "phrased by the model through the SDK"
    );
    assert!(
        !logs.contains("/r/CHAIR-WAL~"),
        "no reserve token in the logs"
    );
    assert_eq!(counted(&logs, "NoticesSent"), 1.0, "{logs}");
    assert_eq!(
        metric_docs(&logs)
            .iter()
            .filter(|d| d["PassDuration"].is_array())
            .count(),
        1,
        "one pass timed: {logs}"
    );

    let (outcome, _) = run(&d, "sweep", &fixture("sweep-schedule.json")).await;
    let Outcome::Response(report) = outcome else {
        panic!("sweep failed: {outcome:?}")
    };
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["lapsed"], 0, "nothing due yet: {report}");

    let c = d
        .store
        .snapshot(&Sku::try_from(CHAIR).unwrap())
        .await
        .unwrap()
        .counters;
    assert_eq!((c.level, c.offered), (4, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_variable_stops_the_binary_and_names_it() {
    let d = Deployment::create(settings()).await;
    for (name, var) in [
        ("capture", "RESTOCK_SECRET_ID"),
        ("notify", "RESTOCK_BEDROCK_MODEL_ID"),
        ("sweep", "RESTOCK_TABLE"),
    ] {
        let api = RuntimeApi::start().await;
        let mut child = spawn(&d, &api, name, Some(var));
        let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
            .await
            .expect("exits")
            .expect("status");
        assert!(!status.success());
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .await
            .ok();
        let mut stdout = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut stdout)
            .await
            .ok();
        assert!(
            stderr.contains(var) || stdout.contains(var),
            "{name} names {var}: {stderr}{stdout}"
        );
    }
}

/// The functions' roles as the template grants them: what a policy allows
/// goes through, what it does not is refused (AccessDenied), so a store
/// change that needs a new action fails here before it fails on AWS.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_outside_a_function_s_policy_is_refused() {
    let d = Deployment::create(settings()).await;
    let capture = dynamodb_as("capture", &d.endpoint).await;
    let allowed = capture
        .get_item()
        .table_name(d.store.table())
        .key(
            "pk",
            aws_sdk_dynamodb::types::AttributeValue::S("SETTINGS".into()),
        )
        .key("sk", aws_sdk_dynamodb::types::AttributeValue::S("_".into()))
        .send()
        .await;
    assert!(
        allowed.is_ok(),
        "GetItem is in capture's policy: {allowed:?}"
    );
    let refused = capture
        .scan()
        .table_name(d.store.table())
        .send()
        .await
        .expect_err("Scan is in no function's policy");
    let code = refused.as_service_error().and_then(|e| {
        use aws_sdk_dynamodb::error::ProvideErrorMetadata;
        e.code()
    });
    assert_eq!(code, Some("AccessDeniedException"), "{refused:?}");
}

/// notify's second subscription: the writes that are restock's events go
/// to the bus as EventBridge delivers them to a rule's target; a bus that
/// refuses them sends the records back to be delivered again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notify_puts_restock_s_events_on_the_bus_at_least_once() {
    let d = Deployment::create(settings()).await;
    let (outcome, logs) = run(&d, "notify", &fixture("notify-changes-record.json")).await;
    assert_eq!(
        outcome,
        Outcome::Response("{\"batchItemFailures\":[]}".into()),
        "{logs}"
    );
    let events = queued_events(&d.endpoint, &d.event_queue).await;
    let kinds: Vec<_> = events
        .iter()
        .map(|e| e["detail-type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["Hold created", "Sending paused"], "{events:?}");
    for e in &events {
        assert_eq!(e["source"], "restock");
        assert_eq!(e["time"], "2026-12-04T09:01:00Z", "the write's time");
        assert_eq!(e["detail"]["version"], 1);
    }
    assert_eq!(events[0]["detail"]["contact"], "d***@example.com", "masked");
    assert_eq!(
        events[0]["detail"]["id"],
        "8a1f0e2d3c4b5a69788796a5b4c3d2e1-0"
    );

    let (outcome, _) = run_with(
        &d,
        "notify",
        &fixture("notify-changes-record.json"),
        &[("RESTOCK_EVENT_BUS", "no-such-bus")],
    )
    .await;
    let Outcome::Response(body) = outcome else {
        panic!("notify failed: {outcome:?}")
    };
    let failures: serde_json::Value = serde_json::from_str(&body).unwrap();
    let again: Vec<_> = failures["batchItemFailures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["itemIdentifier"].as_str().unwrap())
        .collect();
    assert_eq!(
        again,
        ["111100000000000000000002", "111100000000000000000003"]
    );
    assert!(queued_events(&d.endpoint, &d.event_queue).await.is_empty());
}

/// With `RESTOCK_KLAVIYO_EVENTS=on` (the template's `KlaviyoEvents`),
/// notify also hands the shopper's events to Klaviyo, reading the private
/// key from the keys secret as its role allows; `off`, it does not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notify_hands_a_hold_to_klaviyo_when_it_is_on() {
    let fake = KlaviyoFake::start().await;
    let mut secret: serde_json::Value = serde_json::from_str(&secrets_json()).unwrap();
    secret["klaviyo"] = fake.access(KLAVIYO_KEY);
    let d = Deployment::create_with_secret(settings(), &secret.to_string()).await;
    let changes = fixture("notify-changes-record.json");
    let (outcome, logs) =
        run_with(&d, "notify", &changes, &[("RESTOCK_KLAVIYO_EVENTS", "on")]).await;
    assert_eq!(
        outcome,
        Outcome::Response("{\"batchItemFailures\":[]}".into()),
        "{logs}"
    );
    let accepted = fake.accepted();
    assert_eq!(accepted.len(), 1, "{logs}");
    let a = &accepted[0].body["data"]["attributes"];
    assert_eq!(a["metric"]["data"]["attributes"]["name"], "Restock Held");
    assert_eq!(
        a["profile"]["data"]["attributes"]["email"],
        "della@example.com"
    );
    assert_eq!(
        queued_events(&d.endpoint, &d.event_queue).await.len(),
        2,
        "and the bus"
    );
    let (outcome, logs) = run(&d, "notify", &changes).await;
    assert_eq!(
        outcome,
        Outcome::Response("{\"batchItemFailures\":[]}".into()),
        "{logs}"
    );
    assert_eq!(fake.accepted().len(), 1, "off: nothing more to Klaviyo");
}

/// A Function URL request to capture, from the notify-me fixture.
fn capture_event(method: &str, path: &str, query: &str, body: Option<String>) -> String {
    let mut event: serde_json::Value =
        serde_json::from_str(&fixture("capture-notify-me.json")).unwrap();
    event["rawPath"] = path.into();
    event["rawQueryString"] = query.into();
    event["requestContext"]["http"]["method"] = method.into();
    event["requestContext"]["http"]["path"] = path.into();
    event["body"] = body.map_or(serde_json::Value::Null, Into::into);
    event.to_string()
}

/// The path of the first `https://notify.loomandlast.co.uk{kind}…` link in
/// `text` (an email's HTML or a text message).
fn link_path(text: &str, kind: &str) -> String {
    let base = "https://notify.loomandlast.co.uk";
    let start = text
        .find(&format!("{base}{kind}"))
        .unwrap_or_else(|| panic!("no {kind} link in {text}"))
        + base.len();
    text[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || "/~._-".contains(*c))
        .collect()
}

/// A capture page through the binary: its status and HTML.
async fn page(d: &Deployment, method: &str, path: &str) -> (u64, String) {
    let (outcome, _) = run(d, "capture", &capture_event(method, path, "", None)).await;
    let Outcome::Response(body) = outcome else {
        panic!("capture failed: {outcome:?}")
    };
    let response: serde_json::Value = serde_json::from_str(&body).unwrap();
    (
        response["statusCode"].as_u64().unwrap(),
        response["body"].as_str().unwrap_or_default().to_owned(),
    )
}

/// Every shopper in their own language, through the compiled functions:
/// the widget's words, the sign-up, the confirmation and its page (double
/// opt-in), one model call per language, each shopper's notice, and the
/// reserve page (an Arabic text in UCS-2 within its budget, an Arabic page
/// right to left).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_shopper_is_told_in_their_language_by_the_binaries() {
    use restock_core::notice::{SmsEncoding, sms_budget, sms_segments};
    let mut multilingual = settings();
    multilingual.languages = ["en", "de", "ar"].map(|l| l.parse().unwrap()).to_vec();
    multilingual.confirm = true;
    multilingual.validate().expect("valid");
    let d = Deployment::create(multilingual).await;

    let (outcome, _) = run(
        &d,
        "capture",
        &capture_event("GET", "/widget", "language=de-AT", None),
    )
    .await;
    let (status, words) = http_status(&outcome);
    assert_eq!(status, 200, "{words}");
    assert_eq!(words["language"], "de");
    assert_eq!(words["words"]["submit"], "Benachrichtige mich");

    let (anke, badr, cyd) = ("anke@example.de", "+447400123456", "cyd@example.org");
    let shoppers = [
        serde_json::json!({"sku": CHAIR, "name": "Anke", "email": anke, "consent": true, "language": "de-DE"}),
        serde_json::json!({"sku": CHAIR, "name": "Badr", "phone": badr, "consent": true, "language": "ar"}),
        serde_json::json!({"sku": CHAIR, "name": "Cyd", "email": cyd, "consent": true, "language": "xx-YY"}),
    ];
    for shopper in &shoppers {
        let event = capture_event("POST", "/requests", "", Some(shopper.to_string()));
        let (outcome, _) = run(&d, "capture", &event).await;
        let (status, reply) = http_status(&outcome);
        assert_eq!(status, 201, "{reply}");
        assert_eq!(reply["status"], "unconfirmed");
    }

    // The join's confirm wake, as the stream hands it to notify.
    let mut wake: serde_json::Value =
        serde_json::from_str(&fixture("notify-restock-record.json")).unwrap();
    let image = &mut wake["Records"][0]["dynamodb"]["NewImage"];
    image["kind"]["S"] = "confirm".into();
    image["epi"]["N"] = "0".into();
    let (outcome, logs) = run(&d, "notify", &wake.to_string()).await;
    assert_eq!(
        outcome,
        Outcome::Response("{\"batchItemFailures\":[]}".into()),
        "{logs}"
    );
    // The latest of each: moto's SES and SNS hold what every test sent.
    let mail = ses_messages(&d.endpoint).await;
    let to = |mail: &[(String, String, String)], who: &str| {
        mail.iter()
            .rev()
            .find(|m| m.0 == who)
            .unwrap_or_else(|| panic!("{who} was written to: {mail:?}"))
            .clone()
    };
    let text_to = |texts: &[(String, String)]| {
        texts
            .iter()
            .rev()
            .find(|t| t.0 == badr)
            .unwrap_or_else(|| panic!("Badr was texted: {texts:?}"))
            .1
            .clone()
    };
    let (_, subject, html) = to(&mail, anke);
    assert!(subject.starts_with("Bestätigen:"), "{subject}");
    assert!(html.contains("<html lang=\"de\" dir=\"ltr\">"), "{html}");
    let confirm_text = text_to(&sns_texts(&d.endpoint).await);
    let (encoding, segments) = sms_segments(&confirm_text);
    assert_eq!(encoding, SmsEncoding::Ucs2, "{confirm_text}");
    assert!(segments <= sms_budget(encoding), "{confirm_text}");
    let mut confirm_links = vec![link_path(&html, "/c/"), link_path(&confirm_text, "/c/")];
    confirm_links.push(link_path(&to(&mail, cyd).2, "/c/"));
    for (i, link) in confirm_links.iter().enumerate() {
        let (status, html) = page(&d, "POST", link).await;
        assert_eq!(status, 200, "{html}");
        if i == 0 {
            assert!(
                html.contains("<html lang=\"de\" dir=\"ltr\">")
                    && html.contains("Du stehst auf der Liste"),
                "the confirmation page in German: {html}"
            );
        }
        if i == 1 {
            assert!(html.contains("dir=\"rtl\""), "in Arabic: {html}");
        }
    }

    let (outcome, _) = run(&d, "detect", &fixture("detect-shopify.json")).await;
    assert_eq!(http_status(&outcome).0, 200);
    let (outcome, logs) = run(&d, "notify", &fixture("notify-restock-record.json")).await;
    assert_eq!(
        outcome,
        Outcome::Response("{\"batchItemFailures\":[]}".into()),
        "{logs}"
    );

    let prompts = d.model.prompts.lock().unwrap().clone();
    assert_eq!(prompts.len(), 3, "one model call per language: {prompts:?}");
    for asked in [
        "German (language tag de)",
        "Arabic (language tag ar)",
        "English (language tag en)",
    ] {
        assert!(
            prompts.iter().any(|p| p.contains(asked)),
            "{asked}: {prompts:?}"
        );
    }
    let mail = ses_messages(&d.endpoint).await;
    let (_, subject, html) = to(&mail, anke);
    assert!(subject.contains("ist wieder da"), "{subject}");
    assert!(html.contains("<html lang=\"de\" dir=\"ltr\">"), "{html}");
    let (status, reserve) = page(&d, "GET", &link_path(&html, "/r/")).await;
    assert_eq!(status, 200, "{reserve}");
    assert!(
        reserve.contains("lang=\"de\""),
        "the reserve page in German: {reserve}"
    );
    let (_, subject, _) = to(&mail, cyd);
    assert!(
        subject.contains(" is back at "),
        "xx-YY gets the default: {subject}"
    );
    let text = text_to(&sns_texts(&d.endpoint).await);
    let (encoding, segments) = sms_segments(&text);
    assert_eq!(encoding, SmsEncoding::Ucs2, "{text}");
    assert!(
        segments <= sms_budget(encoding),
        "{segments} segments: {text}"
    );
    assert!(
        text.contains("احجز خلال") && text.contains("/r/CHAIR-WAL~") && text.contains("STOP"),
        "{text}"
    );
    let (status, reserve) = page(&d, "GET", &link_path(&text, "/r/")).await;
    assert_eq!(status, 200, "{reserve}");
    assert!(
        reserve.contains("<html lang=\"ar\" dir=\"rtl\">"),
        "the Arabic reserve page runs right to left: {reserve}"
    );
}

/// The sweep binary sends an offer's reminder (`remind_before`) under its
/// own role: SES's `SendEmail` as the template grants it, the request's
/// reminder claimed once and told in its story.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sweep_binary_sends_an_offer_s_reminder_under_its_role() {
    let mut s = settings();
    s.remind_before = Some(restock_core::Window::from_mins(5));
    let d = Deployment::create(s).await;
    let chair = Sku::try_from(CHAIR).unwrap();
    // The binaries read the wall clock: an offer made a moment ago whose
    // reminder time has come.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let contact =
        restock_core::Contact::Email(restock_core::Email::try_from("remy@example.com").unwrap());
    let id = restock_core::RequestId::from_random([9; 16]);
    let joined = d
        .store
        .join(restock_store::NewRequest {
            id,
            sku: chair.clone(),
            name: "Remy".try_into().unwrap(),
            contact_key: contact.key(&pepper()),
            contact,
            now: now - 60_000,
            shards: 2,
            lifetime_ms: 86_400_000,
            manage_hash: None,
            language: None,
            zone: None,
            confirm_window_ms: None,
            consent: None,
        })
        .await
        .unwrap();
    assert!(matches!(joined, restock_store::JoinOutcome::Joined(_)));
    let event = restock_core::StockEvent {
        delivery_id: "reminder-stock".into(),
        item: restock_core::ItemRef::Sku { sku: chair.clone() },
        location: "default".into(),
        level: restock_core::Level::Tracked(1),
        at: time::OffsetDateTime::from_unix_timestamp((now - 30_000) / 1000).unwrap(),
        untimed: false,
    };
    let rules = restock_core::Rules {
        threshold: 1,
        max_jump: 500,
        max_level: 100_000,
    };
    d.store
        .apply_stock(&chair, &event, &rules, now - 30_000)
        .await
        .unwrap();
    let params = restock_store::WaveParams {
        share: restock_core::ListShare::ALL,
        offer_window: restock_core::Window::from_mins(15),
        shards: 2,
        max_offers: 10,
        quiet_hours: restock_core::QuietHours::default(),
        shop_zone: restock_core::Zone::utc(),
    };
    let mut random = restock_store::port::seeded(3);
    let wave = d
        .store
        .create_offers(&chair, &params, now - 20_000, &mut random)
        .await
        .unwrap();
    let offer = &wave.offers[0];
    let r = &offer.request;
    d.store
        .claim_notice(
            &chair,
            &id,
            wave.episode,
            &offer.reserve.secret_hash(),
            &r.contact_key,
        )
        .await
        .unwrap();
    d.store
        .record_notice(
            &id,
            wave.episode,
            restock_store::NoticeOutcome::Sent {
                message_id: "notice-1".into(),
            },
            now - 20_000,
        )
        .await
        .unwrap();
    assert!(
        d.store
            .schedule_reminder(&id, wave.episode, now - 10_000)
            .await
            .unwrap()
    );
    // The sweep finds it through the `due` index, which may trail the write.
    settle().await;

    let (outcome, logs) = run(&d, "sweep", &fixture("sweep-schedule.json")).await;
    let Outcome::Response(report) = outcome else {
        panic!("sweep failed: {outcome:?}\n{logs}")
    };
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["reminded"], 1, "{report}\n{logs}");
    let sent: Vec<_> = ses_messages(&d.endpoint)
        .await
        .into_iter()
        .filter(|m| m.0 == "remy@example.com")
        .collect();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(sent[0].1.starts_with("Still set aside for you"), "{sent:?}");
    let story = d.store.request(&id).await.unwrap().unwrap().story;
    assert!(
        story
            .chapters()
            .iter()
            .any(|c| matches!(c.event, restock_core::story::Event::Reminded { .. })),
        "{story:?}"
    );
    // The next run has nothing more to send.
    let (outcome, _) = run(&d, "sweep", &fixture("sweep-schedule.json")).await;
    let Outcome::Response(report) = outcome else {
        panic!("sweep failed: {outcome:?}")
    };
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&report).unwrap()["reminded"],
        0
    );
}

/// Lets the `due` index catch up with the writes so far, as it does a
/// moment after them on DynamoDB (the lagging double trails by its lag).
async fn settle() {
    tokio::time::sleep(restock_store_dynamo::testing::index_lag() * 2).await;
}

/// Milliseconds since the epoch by the wall clock, which the binaries read.
fn wall_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// A zone whose clock shows about 02:00 now (a fixed offset of the tz
/// database, `Etc/GMT-5` being UTC+5).
fn zone_at_two_in_the_morning(now: i64) -> String {
    let hour = (now / 3_600_000).rem_euclid(24);
    let mut offset = (2 - hour).rem_euclid(24);
    if offset > 14 {
        offset -= 24;
    }
    match offset {
        0 => "Etc/GMT".to_owned(),
        o if o > 0 => format!("Etc/GMT-{o}"),
        o => format!("Etc/GMT+{}", -o),
    }
}

/// The texts SNS has sent to `number`, oldest first.
async fn texts_to(d: &Deployment, number: &str) -> Vec<String> {
    sns_texts(&d.endpoint)
        .await
        .into_iter()
        .filter(|t| t.0 == number)
        .map(|t| t.1)
        .collect()
}

/// Joins `contact` to `sku` through the store, at `now`, in `zone`.
async fn joined(
    d: &Deployment,
    sku: &Sku,
    contact: restock_core::Contact,
    zone: Option<&str>,
    now: i64,
) -> restock_core::RequestId {
    let id = restock_core::RequestId::from_random(rand_bytes(contact.address()));
    let entry = d
        .store
        .catalogue_entry(sku)
        .await
        .unwrap()
        .expect("a catalogued item");
    let outcome = d
        .store
        .join(restock_store::NewRequest {
            id,
            sku: sku.clone(),
            name: "Shopper".try_into().unwrap(),
            contact_key: contact.key(&pepper()),
            contact,
            now,
            shards: entry.shards,
            lifetime_ms: 86_400_000,
            manage_hash: None,
            language: None,
            zone: zone.map(|z| restock_core::Zone::named(z).unwrap()),
            confirm_window_ms: None,
            consent: None,
        })
        .await
        .unwrap();
    assert!(matches!(outcome, restock_store::JoinOutcome::Joined(_)));
    id
}

fn rand_bytes(seed: &str) -> [u8; 16] {
    let mut bytes = [7u8; 16];
    for (i, b) in seed.bytes().enumerate() {
        bytes[i % 16] ^= b;
    }
    bytes
}

async fn level(d: &Deployment, sku: &Sku, units: u32, id: &str, now: i64) {
    let event = restock_core::StockEvent {
        delivery_id: id.into(),
        item: restock_core::ItemRef::Sku { sku: sku.clone() },
        location: "default".into(),
        level: restock_core::Level::Tracked(units),
        at: time::OffsetDateTime::from_unix_timestamp(now / 1000).unwrap(),
        untimed: false,
    };
    let rules = restock_core::Rules {
        threshold: 1,
        max_jump: 500,
        max_level: 100_000,
    };
    d.store.apply_stock(sku, &event, &rules, now).await.unwrap();
}

/// Quiet hours and a launch through the notify binary, on the wall clock:
/// a shopper whose clock shows 02:00 is passed over (no text) while one
/// told by email is told, and the item is to be woken when the sleeper
/// wakes; an item whose launch is an hour away tells nobody and is to be
/// woken at its launch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_notify_binary_keeps_quiet_hours_and_holds_a_launch_back() {
    let mut s = settings();
    s.quiet_hours = restock_core::QuietHours::default();
    let d = Deployment::create(s).await;
    let now = wall_ms();
    let (chair, throw) = (
        Sku::try_from(CHAIR).unwrap(),
        Sku::try_from("THROW-OAT").unwrap(),
    );
    let night = zone_at_two_in_the_morning(now);
    let sleeper =
        restock_core::Contact::Sms(restock_core::Phone::parse("+44 7911 123456").unwrap());
    joined(&d, &chair, sleeper, Some(&night), now - 60_000).await;
    let eve =
        restock_core::Contact::Email(restock_core::Email::try_from("eve@example.com").unwrap());
    joined(&d, &chair, eve, Some(&night), now - 50_000).await;
    level(&d, &chair, 2, "chair-1", now - 30_000).await;
    let (outcome, logs) = run(&d, "notify", &fixture("notify-restock-record.json")).await;
    assert_eq!(
        outcome,
        Outcome::Response("{\"batchItemFailures\":[]}".into()),
        "{logs}"
    );
    let mails: Vec<_> = ses_messages(&d.endpoint)
        .await
        .into_iter()
        .filter(|m| m.0 == "eve@example.com")
        .collect();
    assert_eq!(mails.len(), 1, "email keeps no quiet hours: {logs}");
    let texts: Vec<_> = sns_texts(&d.endpoint)
        .await
        .into_iter()
        .filter(|t| t.0 == "+447911123456")
        .collect();
    assert!(texts.is_empty(), "no text at 02:00 ({night}): {texts:?}");
    settle().await;
    assert!(
        d.store.wake_sleepers(now).await.unwrap().is_empty(),
        "not before the sleeper wakes"
    );
    assert_eq!(
        d.store.wake_sleepers(now + 7 * 3_600_000).await.unwrap(),
        std::slice::from_ref(&chair),
        "woken by 08:00 on the sleeper's clock"
    );

    // The launch, an hour away.
    let mut entry = d.store.catalogue_entry(&throw).await.unwrap().unwrap();
    entry.launch_at = Some(now + 3_600_000);
    d.store.put_catalogue_entry(&entry).await.unwrap();
    let fan =
        restock_core::Contact::Email(restock_core::Email::try_from("fan@example.com").unwrap());
    joined(&d, &throw, fan, None, now - 40_000).await;
    level(&d, &throw, 3, "throw-1", now - 20_000).await;
    let record = fixture("notify-restock-record.json").replace("CHAIR-WAL", "THROW-OAT");
    let (outcome, logs) = run(&d, "notify", &record).await;
    assert_eq!(
        outcome,
        Outcome::Response("{\"batchItemFailures\":[]}".into()),
        "{logs}"
    );
    assert!(
        !ses_messages(&d.endpoint)
            .await
            .iter()
            .any(|m| m.0 == "fan@example.com"),
        "nothing before the launch: {logs}"
    );
    settle().await;
    assert!(
        d.store
            .wake_sleepers(now + 3_600_000 - 1)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        d.store.wake_sleepers(now + 3_600_000).await.unwrap(),
        std::slice::from_ref(&throw),
        "woken at the launch"
    );
}

/// Milliseconds since the epoch of an RFC 3339 time.
fn rfc3339_ms(at: &str) -> i64 {
    time::OffsetDateTime::parse(at, &time::format_description::well_known::Rfc3339)
        .map(|t| (t.unix_timestamp_nanos() / 1_000_000) as i64)
        .unwrap()
}

/// libfaketime, which sets the clock a binary reads (its monotonic clock
/// left alone, so its timers run as usual): `scripts/deps.sh` installs it.
fn faketime() -> String {
    let found = ["x86_64-linux-gnu", "aarch64-linux-gnu"]
        .iter()
        .map(|arch| format!("/usr/lib/{arch}/faketime/libfaketime.so.1"))
        .find(|path| std::path::Path::new(path).exists());
    found.expect(
        "libfaketime is missing: run `bash scripts/test.sh`, whose scripts/deps.sh installs it",
    )
}

/// Runs notify on `record` with its clock at `at` (RFC 3339, UTC).
async fn notify_at(d: &Deployment, record: &str, at: &str) -> String {
    let library = faketime();
    let start = format!("@{}", at.trim_end_matches('Z').replace('T', " "));
    let offset = i128::from(rfc3339_ms(at)) - i128::from(wall_ms());
    let (outcome, logs) = run_clocked(
        d,
        "notify",
        record,
        &[
            ("LD_PRELOAD", library.as_str()),
            ("FAKETIME", start.as_str()),
            ("FAKETIME_DONT_FAKE_MONOTONIC", "1"),
            ("TZ", "UTC"),
        ],
        offset,
    )
    .await;
    assert_eq!(
        outcome,
        Outcome::Response("{\"batchItemFailures\":[]}".into()),
        "{logs}"
    );
    logs
}

/// Legal hours through the notify binary, its clock set: a Florida number
/// (area code 305, no browser zone) is not texted at 20:30 there, inside
/// the federal window but outside Florida's, and is texted at 08:00; a
/// French number is not texted on a Sunday and is texted on Monday at
/// 08:00. Each keeps its place meanwhile. The shop's quiet hours are off,
/// so only the law holds them back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_notify_binary_texts_each_number_inside_its_place_s_legal_hours() {
    let mut s = settings();
    s.quiet_hours = restock_core::QuietHours {
        sms: None,
        ..restock_core::QuietHours::default()
    };
    let d = Deployment::create(s).await;
    let ms = rfc3339_ms;
    let cases = [
        (
            "THROW-OAT",
            "+33612345678",
            "2026-12-06T11:00:00Z",
            "2026-12-07T07:00:00Z",
        ),
        (
            CHAIR,
            "+13057365000",
            "2026-12-08T01:30:00Z",
            "2026-12-08T13:00:00Z",
        ),
    ];
    for (sku, number, held, told) in cases {
        let sku = Sku::try_from(sku).unwrap();
        let contact = restock_core::Contact::Sms(restock_core::Phone::parse(number).unwrap());
        let before = texts_to(&d, number).await.len();
        let id = joined(&d, &sku, contact, None, ms(held) - 60_000).await;
        level(&d, &sku, 1, &format!("{sku}-1"), ms(held) - 30_000).await;
        let record = fixture("notify-restock-record.json").replace(CHAIR, sku.as_str());
        let logs = notify_at(&d, &record, held).await;
        assert_eq!(
            texts_to(&d, number).await.len(),
            before,
            "{number} at {held}: {logs}"
        );
        let request = d.store.request(&id).await.unwrap().unwrap();
        assert!(
            matches!(request.state, restock_core::RequestState::Waiting),
            "{request:?}"
        );
        let logs = notify_at(&d, &record, told).await;
        assert_eq!(
            texts_to(&d, number).await.len(),
            before + 1,
            "{number} at {told}: {logs}"
        );
    }
}

/// Texts shoppers send back through the sweep binary, under its role:
/// "Unsubscribe me please" (the fixture) opts the number out for good and
/// ends its request; "HELP" is answered with the shop's help text by SNS,
/// once however often SNS delivers it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sweep_binary_reads_the_texts_shoppers_send_back() {
    let d = Deployment::create(settings()).await;
    let now = wall_ms();
    let chair = Sku::try_from(CHAIR).unwrap();
    let number = restock_core::Contact::Sms(restock_core::Phone::parse("+447911123456").unwrap());
    let id = joined(&d, &chair, number.clone(), None, now - 60_000).await;
    let before = texts_to(&d, "+447911123456").await.len();
    let help = fixture("sweep-inbound-text.json")
        .replace("Unsubscribe me please", "HELP")
        .replace("cae173d2", "help0001");
    for _ in 0..2 {
        let (outcome, logs) = run(&d, "sweep", &help).await;
        assert!(
            matches!(outcome, Outcome::Response(_)),
            "{outcome:?} {logs}"
        );
    }
    let sent = texts_to(&d, "+447911123456").await;
    assert_eq!(sent.len(), before + 1, "one help text: {sent:?}");
    assert!(
        sent.last()
            .unwrap()
            .contains("Loom & Last: texts when an item you asked for is back"),
        "{sent:?}"
    );
    let (outcome, logs) = run(&d, "sweep", &fixture("sweep-inbound-text.json")).await;
    assert_eq!(
        outcome,
        Outcome::Response(r#"[{"opted_out":{"ended":1}}]"#.into()),
        "{logs}"
    );
    let record = d
        .store
        .opt_out_record(&number.key(&pepper()))
        .await
        .unwrap();
    assert_eq!(
        record.and_then(|r| r.via),
        Some(restock_core::OptOutVia::Reply)
    );
    let request = d.store.request(&id).await.unwrap().unwrap();
    assert_eq!(
        request.state,
        restock_core::RequestState::OptedOut,
        "{request:?}"
    );
}

/// Told by email and text from one sign-up (the capture binary), an
/// "unsubscribe" texted back (the sweep binary) ends the email request
/// too, and the inbox is not opted out: the promise holds across channels.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_opt_out_ends_the_same_sign_up_s_email_request_through_the_binaries() {
    let d = Deployment::create(settings()).await;
    let both = fixture("capture-notify-me.json").replace(
        r#"\"consent\": true"#,
        r#"\"phone\": \"+447911123456\", \"channel\": \"both\", \"consent\": true"#,
    );
    let (outcome, logs) = run(&d, "capture", &both).await;
    let (status, body) = http_status(&outcome);
    assert_eq!(status, 201, "{body} {logs}");
    assert_eq!(body["also"]["status"], "waiting", "{body}");
    assert!(body["also"]["manage_token"].is_string(), "{body}");
    let id = |v: &serde_json::Value| v["request_id"].as_str().unwrap().parse().unwrap();
    let (mail, text) = (id(&body), id(&body["also"]));
    let (outcome, logs) = run(&d, "sweep", &fixture("sweep-inbound-text.json")).await;
    assert_eq!(
        outcome,
        Outcome::Response(r#"[{"opted_out":{"ended":2}}]"#.into()),
        "{logs}"
    );
    for id in [mail, text] {
        let request = d.store.request(&id).await.unwrap().unwrap();
        assert_eq!(request.state, restock_core::RequestState::OptedOut);
    }
    let inbox = restock_core::Contact::Email("della@example.com".try_into().unwrap());
    assert!(!d.store.is_opted_out(&inbox.key(&pepper())).await.unwrap());
}

/// Assisted revenue through the detect binary: a Shopify order without a
/// hold by a contact notify told counts once, under detect's role.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_detect_binary_counts_an_order_by_a_contact_told_as_assisted() {
    let d = Deployment::create(settings()).await;
    let now = wall_ms();
    let chair = Sku::try_from(CHAIR).unwrap();
    let ada =
        restock_core::Contact::Email(restock_core::Email::try_from("ada@example.com").unwrap());
    joined(&d, &chair, ada, None, now - 60_000).await;
    level(&d, &chair, 1, "chair-1", now - 30_000).await;
    let (outcome, logs) = run(&d, "notify", &fixture("notify-restock-record.json")).await;
    assert_eq!(
        outcome,
        Outcome::Response("{\"batchItemFailures\":[]}".into()),
        "{logs}"
    );
    let body = format!(
        r#"{{"id": 9101, "financial_status": "paid", "email": "Ada@Example.com", "currency": "GBP", "note_attributes": [], "line_items": [{{"sku": "{CHAIR}", "quantity": 1, "price": "249.00"}}]}}"#
    );
    let event = shopify_event("orders/paid", "order-9101", &body);
    let (outcome, logs) = run(&d, "detect", &event).await;
    let (status, answer) = http_status(&outcome);
    assert_eq!(
        (status, answer["status"].as_str()),
        (200, Some("assisted")),
        "{answer}\n{logs}"
    );
    let stats = d.store.stats(&chair, 2).await.unwrap();
    assert_eq!(stats.assisted, 1);
    assert_eq!(stats.assisted_revenue.get("GBP"), Some(&249_000));
}

/// A shopper joins through capture; detect is given `redact` and hands an
/// erasure to the stack's bus (202); the sweep, given that event as the
/// Erasures rule delivers it, erases her request (a `Scan`, which only the
/// sweep's role may do). The event handed on.
async fn erased_by_detect_and_the_sweep(redact: &str) -> serde_json::Value {
    let d = Deployment::create(settings()).await;
    let (outcome, _) = run(&d, "capture", &fixture("capture-notify-me.json")).await;
    let (status, joined) = http_status(&outcome);
    assert_eq!(status, 201, "{joined}");
    let id: restock_core::RequestId = joined["request_id"].as_str().unwrap().parse().unwrap();
    let (outcome, logs) = run(&d, "detect", redact).await;
    let (status, body) = http_status(&outcome);
    assert_eq!(
        (status, body["status"].as_str()),
        (202, Some("queued for erasure")),
        "{body} {logs}"
    );
    assert!(!logs.contains("della@example.com"), "{logs}");
    let handed: Vec<serde_json::Value> = queued_events(&d.endpoint, &d.event_queue)
        .await
        .into_iter()
        .filter(|e| e["source"] == restock_aws::ERASURE_SOURCE)
        .collect();
    assert_eq!(handed.len(), 1, "{handed:?}");
    assert!(d.store.request(&id).await.unwrap().is_some(), "not yet");
    let (outcome, logs) = run(&d, "sweep", &handed[0].to_string()).await;
    let Outcome::Response(report) = outcome else {
        panic!("the erasure failed: {outcome:?}\n{logs}")
    };
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&report).unwrap()["erased"],
        1,
        "{report}"
    );
    assert!(d.store.request(&id).await.unwrap().is_none(), "erased");
    handed[0].clone()
}

/// Shopify's `customers/redact` through the compiled functions, with the
/// rights the template gives each: her keyed hashes are handed on, never
/// her address.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shopify_s_erasure_request_is_carried_out_by_detect_and_the_sweep() {
    let handed = erased_by_detect_and_the_sweep(&fixture("detect-shopify-redact.json")).await;
    assert!(!handed.to_string().contains("della"), "{handed:?}");
    assert!(
        !handed["detail"]["contact_keys"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

/// Shopify's `shop/redact` through the compiled functions: the shop's
/// erasure is handed on, and the sweep erases every shopper's request,
/// finds none left on a second pass and tells the team.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shopify_s_shop_erasure_is_carried_out_by_detect_and_the_sweep() {
    let body = r#"{"shop_id": 954889, "shop_domain": "loom-and-last.myshopify.com"}"#;
    let handed =
        erased_by_detect_and_the_sweep(&shopify_event("shop/redact", "shop-redact-1", body)).await;
    assert_eq!(
        handed["detail"]["shop"]["domain"],
        "loom-and-last.myshopify.com"
    );
}

/// The compiled detect function reads the shop's locations through the
/// Shopify Admin API (a fake that speaks it): five units at a shop counter
/// tell nobody, the same at the warehouse are a restock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_detect_binary_counts_only_stock_sold_online() {
    let fake = PlatformFake::start().await;
    fake.retail_only.lock().unwrap().insert(70_000_001);
    let d = Deployment::create_with_secret(settings(), &fake.secrets_json()).await;
    let (outcome, _) = run(&d, "capture", &fixture("capture-notify-me.json")).await;
    assert_eq!(http_status(&outcome).0, 201);
    let chair = Sku::try_from(CHAIR).unwrap();
    let at = |location: u64, id: &str| {
        let body = serde_json::json!({
            "inventory_item_id": CHAIR_SHOPIFY_ID, "location_id": location,
            "available": 5, "updated_at": "2026-12-01T09:00:00Z",
        });
        shopify_event("inventory_levels/update", id, &body.to_string())
    };
    let (outcome, logs) = run(&d, "detect", &at(70_000_001, "counter-1")).await;
    assert_eq!(http_status(&outcome).0, 200, "{logs}");
    let c = d.store.snapshot(&chair).await.unwrap().counters;
    assert_eq!(c.level, 0, "the counter's units count as none: {logs}");
    assert_eq!(fake.count("shopify-locations"), 1);
    let (outcome, logs) = run(&d, "detect", &at(24_826_418, "warehouse-1")).await;
    let (status, answer) = http_status(&outcome);
    assert_eq!(status, 200, "{answer} {logs}");
    assert_eq!(d.store.snapshot(&chair).await.unwrap().counters.level, 5);
    assert!(answer.to_string().contains("restock"), "{answer}");
}
