//! Bounces and complaints from SES (event publishing through the notices'
//! configuration set, delivered by EventBridge to the sweep function): read
//! from the tags every notice carries, applied once each.

use restock_app::feedback::{self, FeedbackOutcome};
use restock_app::ports::{Outbox, Sent};
use restock_core::{ContactKey, RequestState};
use restock_e2e::*;
use restock_store::prelude::*;

/// SES's event record about `sent`, as EventBridge's `detail` carries it.
fn ses_event(sent: &Sent, event: serde_json::Value) -> serde_json::Value {
    let Sent::Email { to, notice } = sent else {
        panic!("an email")
    };
    let tags: serde_json::Map<String, serde_json::Value> = notice
        .tags
        .iter()
        .map(|(k, v)| (k.clone(), serde_json::json!([v])))
        .chain([(
            "ses:configuration-set".to_owned(),
            serde_json::json!(["restock-notices"]),
        )])
        .collect();
    let mut record = serde_json::json!({
        "mail": {
            "timestamp": "2026-11-29T09:19:55.000Z",
            "source": "Loom & Last <hello@loomandlast.co.uk>",
            "messageId": "0100018c-message",
            "destination": [to],
            "tags": tags,
        }
    });
    for (k, v) in event.as_object().unwrap() {
        record[k] = v.clone();
    }
    record
}

fn permanent_bounce(sent: &Sent) -> serde_json::Value {
    ses_event(
        sent,
        serde_json::json!({
            "eventType": "Bounce",
            "bounce": {"bounceType": "Permanent", "bounceSubType": "NoEmail", "feedbackId": "fb-bounce-1",
                       "bouncedRecipients": [{"emailAddress": "x@example.com", "status": "5.1.1"}]}
        }),
    )
}

async fn told_ann_then_bea_waits() -> (World, std::sync::Arc<Outbox>) {
    let (w, outbox) = World::memory().await;
    assert_eq!(w.join("Ann").await.status, 201);
    w.advance(1_000);
    assert_eq!(w.join("Bea").await.status, 201);
    assert_eq!(w.shopify(Some(1), "d-1").await.status, 200);
    w.pump().await;
    assert_eq!(outbox.sent().len(), 1);
    assert_eq!(outbox.sent()[0].to(), w.email("Ann"));
    (w, outbox)
}

#[tokio::test]
async fn every_notice_email_is_tagged_with_its_request_restock_and_contact_key() {
    let (w, outbox) = told_ann_then_bea_waits().await;
    let Sent::Email { notice, .. } = &outbox.sent()[0] else {
        panic!("an email")
    };
    let names: Vec<&str> = notice.tags.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        ["restock-request", "restock-restock", "restock-contact"]
    );
    assert!(
        notice.tags.iter().all(|(_, v)| !v.contains('@')),
        "never the address: {:?}",
        notice.tags
    );
    drop(w);
}

#[tokio::test]
async fn a_permanent_bounce_ends_the_offer_passes_the_unit_on_and_suppresses_the_address() {
    let (w, outbox) = told_ann_then_bea_waits().await;
    let event = permanent_bounce(&outbox.sent()[0]);
    assert_eq!(
        feedback::handle(&w.services, &event).await.unwrap(),
        FeedbackOutcome::Bounced
    );
    let ann = first_told(&w, &outbox).await;
    assert_eq!(ann.state, RequestState::Undeliverable);
    assert!(
        w.store.is_opted_out(&ann.contact_key).await.unwrap(),
        "not mailed again"
    );
    // The unit passes on to Bea.
    w.pump().await;
    let told: Vec<String> = outbox.sent().iter().map(|s| s.to().to_owned()).collect();
    assert_eq!(told, [w.email("Ann"), w.email("Bea")]);
    // EventBridge delivers it again: nothing more happens.
    assert_eq!(
        feedback::handle(&w.services, &event).await.unwrap(),
        FeedbackOutcome::Duplicate
    );
    w.assert_never_oversold().await;
}

#[tokio::test]
async fn a_complaint_is_an_opt_out_for_good() {
    let (w, outbox) = told_ann_then_bea_waits().await;
    let event = ses_event(
        &outbox.sent()[0],
        serde_json::json!({
            "eventType": "Complaint",
            "complaint": {"complainedRecipients": [{"emailAddress": "x@example.com"}],
                          "feedbackId": "fb-complaint-1", "complaintFeedbackType": "abuse"}
        }),
    );
    assert_eq!(
        feedback::handle(&w.services, &event).await.unwrap(),
        FeedbackOutcome::Complained
    );
    let ann = first_told(&w, &outbox).await;
    assert_eq!(ann.state, RequestState::OptedOut);
    assert_eq!(w.join("Ann").await.status, 409, "refused at capture (I5)");
}

#[tokio::test]
async fn soft_bounces_untagged_and_unreadable_events_change_nothing() {
    let (w, outbox) = told_ann_then_bea_waits().await;
    let soft = ses_event(
        &outbox.sent()[0],
        serde_json::json!({"eventType": "Bounce", "bounce": {"bounceType": "Transient", "bounceSubType": "MailboxFull", "feedbackId": "fb-soft"}}),
    );
    assert_eq!(
        feedback::handle(&w.services, &soft).await.unwrap(),
        FeedbackOutcome::Noted
    );
    feedback::handle(&w.services, &soft).await.unwrap();
    let today = restock_core::feedback::day_of(restock_app::ports::Clock::now_ms(&*w.clock));
    let day = w.store.mail_day(&today).await.unwrap();
    assert_eq!(
        (day.soft_bounced, day.bounced),
        (1, 0),
        "counted only, and once per event"
    );
    let untagged = serde_json::json!({
        "eventType": "Complaint",
        "complaint": {"feedbackId": "fb-2"},
        "mail": {"messageId": "m", "tags": {}}
    });
    assert!(matches!(
        feedback::handle(&w.services, &untagged).await.unwrap(),
        FeedbackOutcome::Unreadable { .. }
    ));
    assert!(matches!(
        feedback::handle(&w.services, &serde_json::json!({"not": "ses"}))
            .await
            .unwrap(),
        FeedbackOutcome::Unreadable { .. }
    ));
    let ann = first_told(&w, &outbox).await;
    assert!(matches!(ann.state, RequestState::Offered { .. }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sweep_binary_applies_the_bounce_event_from_eventbridge() {
    let d = Deployment::create(settings()).await;
    let (outcome, logs) = crate::binaries::run(
        &d,
        "sweep",
        &crate::binaries::fixture("sweep-ses-bounce.json"),
    )
    .await;
    let Outcome::Response(body) = outcome else {
        panic!("the feedback failed: {outcome:?}\n{logs}")
    };
    assert_eq!(body, "\"bounced\"", "{logs}");
    assert!(
        d.store
            .is_opted_out(&ContactKey::from_stored("example-contact-key"))
            .await
            .unwrap(),
        "the bounced contact is suppressed in DynamoDB"
    );
}

/// The request of the first notice sent, as it is now.
async fn first_told(w: &World, outbox: &Outbox) -> restock_store::Request {
    let id = request_of(&outbox.sent()[0]);
    w.store.request(&id).await.unwrap().unwrap()
}

fn request_of(sent: &Sent) -> restock_core::RequestId {
    let Sent::Email { notice, .. } = sent else {
        panic!("an email")
    };
    notice
        .tags
        .iter()
        .find(|(k, _)| k == restock_core::feedback::TAG_REQUEST)
        .unwrap()
        .1
        .parse()
        .unwrap()
}

#[tokio::test]
async fn the_day_s_rates_are_kept_shown_and_alerted_once_near_ses_s_review_threshold() {
    use restock_app::admin::{Admin, Command};
    use restock_app::ports::Clock;
    use restock_core::feedback::{MailDay, day_of};
    let (w, outbox) = told_ann_then_bea_waits().await;
    let today = day_of(w.clock.now_ms());
    assert_eq!(
        w.store.mail_day(&today).await.unwrap().sent,
        1,
        "notify counts what it sent"
    );
    // 99 more went out today (other items); then bounces come back.
    w.store
        .count_mail(
            &today,
            MailDay {
                sent: 99,
                ..MailDay::default()
            },
        )
        .await
        .unwrap();
    let health = |w: &World| {
        w.alerts
            .all()
            .iter()
            .filter(|a| a.subject.contains("bounce rate"))
            .count()
    };
    for i in 0..5 {
        let mut event = permanent_bounce(&outbox.sent()[0]);
        event["bounce"]["feedbackId"] = format!("fb-{i}").into();
        feedback::handle(&w.services, &event).await.unwrap();
        assert_eq!(health(&w), usize::from(i >= 3), "after bounce {}", i + 1);
    }
    let alert = w
        .alerts
        .all()
        .into_iter()
        .find(|a| a.subject.contains("bounce rate"))
        .unwrap();
    assert!(alert.subject.contains("4.00%"), "{}", alert.subject);
    let admin = Admin {
        store: w.store.clone(),
        pepper: None,
    };
    let stats = admin
        .run(Command::Stats { skus: vec![] }, w.clock.now_ms())
        .await
        .unwrap();
    assert_eq!(stats.json["mail"]["bounced"], 5);
    assert!(
        stats.message.contains("bounce rate 5.00%"),
        "{}",
        stats.message
    );
}

const ANN_PHONE: &str = "+447911123456";

/// One entry of SNS's SMS delivery status log about a text to `to`.
fn sms_log(message_id: &str, to: &str, response: &str) -> String {
    serde_json::json!({
        "notification": {"messageId": message_id, "timestamp": "2026-12-04 00:00:05.559"},
        "delivery": {"mnc": 0, "destination": to, "priceInUSD": 0.0395, "smsType": "Transactional",
                     "mcc": 234, "providerResponse": response, "dwellTimeMs": 1420},
        "status": "FAILURE"
    })
    .to_string()
}

/// Ann asked for a text and was texted the one unit; Bea (email) waits.
async fn texted_ann_then_bea_waits() -> (World, std::sync::Arc<Outbox>, restock_core::RequestId) {
    let (w, outbox) = World::memory().await;
    let ann = w
        .capture_json(
            "POST",
            "/requests",
            serde_json::json!({"sku": CHAIR, "name": "Ann", "phone": ANN_PHONE, "consent": true}),
        )
        .await;
    assert_eq!(ann.status, 201, "{:?}", ann.json());
    w.advance(1_000);
    assert_eq!(w.join("Bea").await.status, 201);
    assert_eq!(w.shopify(Some(1), "d-1").await.status, 200);
    w.pump().await;
    let sent = outbox.sent();
    assert!(matches!(&sent[..], [Sent::Sms { .. }]), "{sent:?}");
    let id = ann.json()["request_id"].as_str().unwrap().parse().unwrap();
    (w, outbox, id)
}

async fn ann_by_text(w: &World, id: &restock_core::RequestId) -> restock_store::Request {
    w.store.request(id).await.unwrap().unwrap()
}

#[tokio::test]
async fn a_text_sns_cannot_deliver_for_good_suppresses_the_number_and_passes_the_unit_on() {
    let (w, outbox, id) = texted_ann_then_bea_waits().await;
    let entry = sms_log("m-1", ANN_PHONE, "Invalid phone number");
    assert_eq!(
        feedback::handle_sms(&w.services, &entry).await.unwrap(),
        FeedbackOutcome::Undeliverable
    );
    let ann = ann_by_text(&w, &id).await;
    assert!(
        w.store.is_opted_out(&ann.contact_key).await.unwrap(),
        "the number is not texted again"
    );
    assert!(
        !matches!(ann.state, RequestState::Offered { .. }),
        "{:?}",
        ann.state
    );
    w.pump().await;
    let told: Vec<String> = outbox.sent().iter().map(|s| s.to().to_owned()).collect();
    assert_eq!(
        told,
        [ANN_PHONE.to_owned(), w.email("Bea")],
        "the unit passed to Bea"
    );
    // The subscription delivers the batch again: nothing more happens.
    assert_eq!(
        feedback::handle_sms(&w.services, &entry).await.unwrap(),
        FeedbackOutcome::Duplicate
    );
    w.assert_never_oversold().await;
}

#[tokio::test]
async fn a_number_opted_out_at_the_carrier_is_an_opt_out_and_a_passing_failure_is_only_counted() {
    let (w, _outbox, id) = texted_ann_then_bea_waits().await;
    assert_eq!(
        feedback::handle_sms(
            &w.services,
            &sms_log(
                "m-1",
                ANN_PHONE,
                "Phone is currently unreachable/unavailable"
            )
        )
        .await
        .unwrap(),
        FeedbackOutcome::Noted
    );
    assert!(matches!(
        ann_by_text(&w, &id).await.state,
        RequestState::Offered { .. }
    ));
    assert_eq!(
        feedback::handle_sms(
            &w.services,
            &sms_log("m-2", ANN_PHONE, "Phone number is opted out")
        )
        .await
        .unwrap(),
        FeedbackOutcome::OptedOut
    );
    assert_eq!(ann_by_text(&w, &id).await.state, RequestState::OptedOut);
    assert!(matches!(
        feedback::handle_sms(&w.services, "not a log entry")
            .await
            .unwrap(),
        FeedbackOutcome::Unreadable { .. }
    ));
}

#[tokio::test]
async fn the_sms_spending_limit_tells_the_team_once_a_day_and_blames_nobody() {
    let (w, _outbox, id) = texted_ann_then_bea_waits().await;
    for id in ["m-1", "m-2"] {
        assert_eq!(
            feedback::handle_sms(
                &w.services,
                &sms_log(id, ANN_PHONE, "This delivery would exceed max price")
            )
            .await
            .unwrap(),
            FeedbackOutcome::SenderAlerted
        );
    }
    let alerts: Vec<_> = w
        .alerts
        .all()
        .into_iter()
        .filter(|a| a.subject.contains("texts are not going out"))
        .collect();
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    assert!(alerts[0].body.contains("spending limit"));
    assert!(matches!(
        ann_by_text(&w, &id).await.state,
        RequestState::Offered { .. }
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sweep_binary_applies_a_failed_text_from_the_cloudwatch_logs_subscription() {
    let d = Deployment::create(settings()).await;
    let (outcome, logs) = crate::binaries::run(
        &d,
        "sweep",
        &crate::binaries::fixture("sweep-sms-failure.json"),
    )
    .await;
    let Outcome::Response(body) = outcome else {
        panic!("the feedback failed: {outcome:?}\n{logs}")
    };
    assert_eq!(body, "[\"undeliverable\"]", "{logs}");
    let key = restock_core::Contact::Sms(restock_core::Phone::parse(ANN_PHONE).unwrap())
        .key(b"restock-test-contact-pepper-0123456789");
    assert!(
        d.store.is_opted_out(&key).await.unwrap(),
        "the number is suppressed in DynamoDB"
    );
    assert!(
        !logs.contains(ANN_PHONE),
        "the number is masked in the logs: {logs}"
    );
}
