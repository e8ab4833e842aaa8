//! Double opt-in through the real routers: a sign-up is sent one
//! confirmation (email or text, no model call), keeps its place, and is
//! offered nothing until the link in the shopper's own inbox is followed.
//! A sign-up nobody confirms ends after `confirm_window`, and its contact
//! details go with it. Consent is on record; the inbox manage link reads
//! and leaves the request.

use axum::body::Body;
use axum::http::Request;
use restock_app::ports::{Outbox, Sent};
use restock_core::{RequestState, Sku};
use restock_e2e::*;

/// A world whose settings have double opt-in on (as shipped).
async fn confirming() -> (World, std::sync::Arc<Outbox>) {
    let (w, outbox) = World::memory().await;
    let mut settings = settings();
    settings.confirm = true;
    settings.consent_version = "2026-11".into();
    w.store.put_settings(&settings).await.unwrap();
    (w, outbox)
}

fn chair() -> Sku {
    Sku::try_from(CHAIR).unwrap()
}

/// The path of the first link under `/{prefix}/` in what was sent to `to`.
fn link_to(outbox: &Outbox, to: &str, prefix: &str) -> Option<String> {
    outbox
        .sent()
        .iter()
        .filter(|s| s.to() == to)
        .find_map(|s| s.link(prefix))
        .map(|l| path_of(&l))
}

async fn post(w: &World, path: &str) -> Reply {
    w.call(
        Api::Capture,
        Request::post(path).body(Body::empty()).unwrap(),
    )
    .await
}

async fn get(w: &World, path: &str) -> Reply {
    w.call(
        Api::Capture,
        Request::get(path).body(Body::empty()).unwrap(),
    )
    .await
}

async fn state_of(w: &World, reply: &Reply) -> RequestState {
    let id = reply.json()["request_id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    w.store.request(&id).await.unwrap().unwrap().state
}

#[tokio::test]
async fn a_sign_up_is_confirmed_from_the_inbox_and_keeps_the_place_it_signed_up_at() {
    let (w, outbox) = confirming().await;
    let ann = w.join("Ann").await;
    assert_eq!(ann.status, 201);
    let body = ann.json();
    assert_eq!(body["status"], "unconfirmed");
    assert_eq!(body["position"], 1);
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("confirmation link"),
        "{body}"
    );
    assert!(
        body["manage_token"].is_string(),
        "the browser still manages it"
    );
    w.advance(MIN);
    assert_eq!(w.join("Bob").await.status, 201);

    // One confirmation each, no model call, with the three links.
    let reports = w.pump().await;
    assert_eq!(reports.iter().map(|r| r.confirmations).sum::<usize>(), 2);
    let sent = outbox.sent();
    assert_eq!(sent.len(), 2);
    let Sent::Email { notice, .. } = &sent[0] else {
        panic!("an email")
    };
    assert!(notice.subject.starts_with("Confirm"), "{}", notice.subject);
    for prefix in ["c", "m", "o"] {
        assert!(
            sent[0].link(prefix).is_some(),
            "a /{prefix}/ link: {}",
            notice.text
        );
    }
    assert!(
        sent[0].reserve_link().is_none(),
        "no reserve link before confirming"
    );
    // A redelivered wake sends nothing twice.
    w.store
        .wake_again(&chair(), 0, restock_app::ports::Clock::now_ms(&*w.clock))
        .await
        .unwrap();
    w.pump().await;
    assert_eq!(outbox.sent().len(), 2);

    // Bob confirms; the chair comes back with one unit: Bob is told, Ann
    // (unconfirmed) is not.
    let bob_link = link_to(&outbox, &w.email("Bob"), "c").unwrap();
    assert_eq!(post(&w, &bob_link).await.status, 200);
    assert_eq!(w.shopify(Some(1), "d-1").await.status, 200);
    w.pump().await;
    let told: Vec<String> = outbox.sent()[2..]
        .iter()
        .map(|s| s.to().to_owned())
        .collect();
    assert_eq!(told, [w.email("Bob")]);
    assert_eq!(state_of(&w, &ann).await, RequestState::Unconfirmed);

    // Opening the link shows a page; only the tap confirms (mail scanners
    // open links too). Ann is then first in line: the place she signed up at.
    let ann_link = link_to(&outbox, &w.email("Ann"), "c").unwrap();
    let page = get(&w, &ann_link).await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("Yes, tell me when it"), "{}", page.body);
    assert_eq!(state_of(&w, &ann).await, RequestState::Unconfirmed);
    let confirmed = post(&w, &ann_link).await;
    assert_eq!(confirmed.status, 200);
    assert!(
        confirmed.body.contains("number 1 in line"),
        "{}",
        confirmed.body
    );
    assert_eq!(state_of(&w, &ann).await, RequestState::Waiting);
    assert_eq!(
        post(&w, &ann_link).await.status,
        200,
        "a second tap is fine"
    );
    // Bob's offer lapses; the unit passes to Ann.
    w.advance(16 * MIN);
    w.sweep().await;
    w.pump().await;
    let last = outbox.sent().last().cloned().unwrap();
    assert_eq!(last.to(), w.email("Ann"));
    assert!(last.reserve_link().is_some());
    w.assert_never_oversold().await;

    // The day's figures count the confirmations.
    let day = restock_core::feedback::day_of(restock_app::ports::Clock::now_ms(&*w.clock));
    let figures = w.store.mail_day(&day).await.unwrap();
    assert_eq!((figures.confirm_sent, figures.confirmed), (2, 2));
}

#[tokio::test]
async fn a_sign_up_nobody_confirms_ends_with_its_window_and_its_contact_details_go() {
    let (w, outbox) = confirming().await;
    let eve = w.join("Eve").await;
    let token = eve.json()["manage_token"].as_str().unwrap().to_owned();
    w.pump().await;
    assert_eq!(outbox.sent().len(), 1);
    w.advance(48 * 60 * MIN - 1);
    assert_eq!(w.sweep().await.unconfirmed, 0);
    w.advance(1);
    assert_eq!(w.sweep().await.unconfirmed, 1);
    let id = eve.json()["request_id"].as_str().unwrap().parse().unwrap();
    assert_eq!(
        w.store.request(&id).await.unwrap(),
        None,
        "nothing about Eve is kept"
    );
    assert_eq!(w.manage("GET", &token).await.status, 404);
    let link = link_to(&outbox, &w.email("Eve"), "c").unwrap();
    assert_eq!(post(&w, &link).await.status, 404, "the link has ended");
    // Never mailed again, unless she signs up again herself.
    w.pump().await;
    assert_eq!(outbox.sent().len(), 1);
    assert_eq!(w.join("Eve").await.status, 201);
    let day = restock_core::feedback::day_of(restock_app::ports::Clock::now_ms(&*w.clock));
    assert_eq!(w.store.mail_day(&day).await.unwrap().confirm_expired, 1);
}

#[tokio::test]
async fn the_inbox_manage_link_shows_the_place_and_leaves_and_guessed_links_do_nothing() {
    let (w, outbox) = confirming().await;
    let ann = w.join("Ann").await;
    w.pump().await;
    let manage = link_to(&outbox, &w.email("Ann"), "m").unwrap();
    let page = get(&w, &manage).await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("number 1 in line"), "{}", page.body);
    // A link with Ann's request id and a made-up secret is nobody's.
    let id = ann.json()["request_id"].as_str().unwrap().to_owned();
    let guessed = format!("/m/{CHAIR}~{id}.AAAAAAAAAAAAAAAAAAAAAA");
    assert_eq!(get(&w, &guessed).await.status, 404);
    assert_eq!(post(&w, &guessed).await.status, 404);
    assert_eq!(state_of(&w, &ann).await, RequestState::Unconfirmed);
    let confirm_guess = format!("/c/{CHAIR}~{id}.AAAAAAAAAAAAAAAAAAAAAA");
    assert_eq!(
        post(&w, &confirm_guess).await.status,
        404,
        "nobody confirms for Ann"
    );
    assert_eq!(state_of(&w, &ann).await, RequestState::Unconfirmed);
    // Ann leaves from her inbox.
    let left = post(&w, &manage).await;
    assert_eq!(left.status, 200);
    assert_eq!(state_of(&w, &ann).await, RequestState::Cancelled);
    assert_eq!(post(&w, &manage).await.status, 409);
}

#[tokio::test]
async fn consent_is_on_record_with_its_wording_time_hashed_source_and_confirmation() {
    let (w, outbox) = confirming().await;
    let ann = w.join("Ann").await;
    let id = ann.json()["request_id"].as_str().unwrap().parse().unwrap();
    let consent = w
        .store
        .request(&id)
        .await
        .unwrap()
        .unwrap()
        .consent
        .unwrap();
    assert_eq!(consent.version, "2026-11");
    assert_eq!(consent.at, T0);
    assert_eq!(consent.confirmed_at, None);
    assert!(
        !consent.source.contains("203.0.113.7"),
        "the address is hashed"
    );
    assert_eq!(consent.source.len(), 43);
    w.pump().await;
    w.advance(MIN);
    let link = link_to(&outbox, &w.email("Ann"), "c").unwrap();
    post(&w, &link).await;
    let consent = w
        .store
        .request(&id)
        .await
        .unwrap()
        .unwrap()
        .consent
        .unwrap();
    assert_eq!(consent.confirmed_at, Some(T0 + MIN));
}

#[tokio::test]
async fn a_text_sign_up_is_confirmed_by_text_and_an_opt_out_link_in_it_works() {
    let (w, outbox) = confirming().await;
    let joined = w
        .capture_json(
            "POST",
            "/requests",
            serde_json::json!({"sku": CHAIR, "name": "Tom", "phone": "+447911123456", "consent": true}),
        )
        .await;
    assert_eq!(joined.status, 201);
    w.pump().await;
    let sent = outbox.sent();
    let [Sent::Sms { notice, .. }] = &sent[..] else {
        panic!("one text: {sent:?}")
    };
    assert!(
        notice.text.contains("/c/") && notice.text.contains("STOP"),
        "{}",
        notice.text
    );
    assert!(notice.segments <= 2);
    // An email sign-up's confirmation carries an opt-out link that works.
    w.join("Ann").await;
    w.pump().await;
    let optout = link_to(&outbox, &w.email("Ann"), "o").unwrap();
    assert_eq!(post(&w, &optout).await.status, 200);
    assert_eq!(w.join("Ann").await.status, 409, "opted out for good");
}

#[tokio::test]
async fn a_paused_sender_holds_confirmations_back_and_sends_them_on_resume() {
    let (w, outbox) = confirming().await;
    *outbox.sender_refused.lock().unwrap() =
        Some("SES: MessageRejected: Email address is not verified.".into());
    w.join("Ann").await;
    let reports = w.pump().await;
    assert!(reports.iter().any(|r| r.paused));
    assert!(outbox.sent().is_empty());
    *outbox.sender_refused.lock().unwrap() = None;
    w.advance(restock_app::notify::SENDER_BACKOFF.as_millis());
    assert!(w.sweep().await.resumed);
    w.pump().await;
    assert_eq!(
        outbox.sent().len(),
        1,
        "the confirmation went once the pause ended"
    );
    assert!(outbox.sent()[0].confirm_link().is_some());
}

#[tokio::test]
async fn restock_forget_erases_a_contact_and_says_what_it_erased() {
    use restock_app::admin::{Admin, Command};
    let (w, outbox) = confirming().await;
    let ann = w.join("Ann").await;
    w.pump().await;
    let admin = Admin {
        store: w.store.clone(),
        pepper: Some(pepper()),
    };
    let out = admin
        .run(
            Command::Forget {
                contact: w.email("Ann").to_uppercase(),
            },
            restock_app::ports::Clock::now_ms(&*w.clock),
        )
        .await
        .unwrap();
    assert_eq!(out.json["erased"], 1, "{}", out.message);
    assert_eq!(out.json["ended"], 1);
    assert_eq!(out.json["opt_out_kept"], false);
    assert!(out.message.contains("consent record"), "{}", out.message);
    assert!(
        !out.message.contains(&w.email("Ann")),
        "masked: {}",
        out.message
    );
    let id = ann.json()["request_id"].as_str().unwrap().parse().unwrap();
    assert_eq!(w.store.request(&id).await.unwrap(), None);
    // Her confirmation link and inbox link now lead nowhere.
    let link = link_to(&outbox, &w.email("Ann"), "c").unwrap();
    assert_eq!(post(&w, &link).await.status, 404);
    let manage = link_to(&outbox, &w.email("Ann"), "m").unwrap();
    assert_eq!(get(&w, &manage).await.status, 404);
}

#[tokio::test]
async fn every_notice_email_carries_a_manage_link_that_leaves_and_passes_the_unit_on() {
    let (w, outbox) = World::memory().await;
    w.join("Ann").await;
    w.advance(MIN);
    w.join("Bob").await;
    assert_eq!(w.shopify(Some(1), "d-1").await.status, 200);
    w.pump().await;
    let manage = link_to(&outbox, &w.email("Ann"), "m").expect("a manage link in the notice");
    let page = get(&w, &manage).await;
    assert_eq!(page.status, 200);
    assert!(
        page.body
            .contains("set aside for you: tap the reserve link"),
        "{}",
        page.body
    );
    assert_eq!(post(&w, &manage).await.status, 200);
    w.pump().await;
    let told: Vec<String> = outbox.sent().iter().map(|s| s.to().to_owned()).collect();
    assert_eq!(
        told,
        [w.email("Ann"), w.email("Bob")],
        "Ann left; her unit went to Bob"
    );
    w.assert_never_oversold().await;
}

/// A stranger types someone else's address: their browser gets the manage
/// token. Once the owner confirms from their own inbox, that token no
/// longer reads or cancels the place (404, like any unknown request); the
/// confirmation page carries the owner's own manage link, which does.
#[tokio::test]
async fn confirming_from_the_inbox_ends_the_strangers_browser_token() {
    let (w, outbox) = confirming().await;
    let stranger = w.join("Della").await;
    assert_eq!(stranger.status, 201);
    let token = stranger.json()["manage_token"].as_str().unwrap().to_owned();
    // Before confirmation the browser that signed up still manages it.
    assert_eq!(w.manage("GET", &token).await.status, 200);
    w.pump().await;
    let confirm = link_to(&outbox, &w.email("Della"), "c").expect("a confirmation");
    let page = post(&w, &confirm).await;
    assert_eq!(page.status, 200, "{}", page.body);
    // The owner's manage link is on the confirmation page.
    let manage = page
        .body
        .split('"')
        .find(|s| s.contains("/m/"))
        .map(path_of)
        .expect("a manage link on the confirmation page");
    // The stranger's browser: refused to read and to cancel.
    assert_eq!(w.manage("GET", &token).await.status, 404);
    assert_eq!(w.manage("DELETE", &token).await.status, 404);
    assert_eq!(
        state_of(&w, &stranger).await,
        RequestState::Waiting,
        "the owner keeps the place"
    );
    // The owner's link reads the place and can leave.
    let mine = get(&w, &manage).await;
    assert_eq!(mine.status, 200, "{}", mine.body);
    assert!(mine.body.contains("number 1"), "{}", mine.body);
    assert_eq!(post(&w, &manage).await.status, 200);
    assert_eq!(state_of(&w, &stranger).await, RequestState::Cancelled);
}

/// A confirmation goes to an address that has agreed to nothing yet, so it
/// carries nothing the person who signed up typed: a stranger cannot use
/// the shop to mail their words to someone else's inbox. The name greets
/// the shopper once the address has confirmed.
#[tokio::test]
async fn a_confirmation_carries_no_words_the_sign_up_typed() {
    let (w, outbox) = confirming().await;
    let name = "Claim your prize at evil.example";
    let victim = w.email("victim");
    let reply = w
        .capture_json(
            "POST",
            "/requests",
            serde_json::json!({ "sku": CHAIR, "name": name, "email": victim, "consent": true }),
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    w.pump().await;
    let sent = outbox.sent();
    let Some(Sent::Email { notice, .. }) = sent.iter().find(|s| s.to() == victim) else {
        panic!("a confirmation to the address: {sent:?}");
    };
    for text in [&notice.subject, &notice.text, &notice.html] {
        assert!(
            !text.contains("prize") && !text.contains("evil.example"),
            "the stranger's words reached the inbox: {text}"
        );
    }
    // Confirmed, the shopper's own notice greets them by the name given.
    let confirm = link_to(&outbox, &victim, "c").expect("a confirmation link");
    assert_eq!(post(&w, &confirm).await.status, 200);
    assert_eq!(w.shopify(Some(1), "d-1").await.status, 200);
    w.pump().await;
    let notice = outbox
        .sent()
        .into_iter()
        .find(|s| s.to() == victim && s.reserve_link().is_some())
        .expect("the notice");
    let Sent::Email { notice, .. } = notice else {
        panic!("an email")
    };
    assert!(notice.text.contains(name), "{}", notice.text);
}

/// The newest link under `/{prefix}/` in what was sent to `to`.
fn newest_link_to(outbox: &Outbox, to: &str, prefix: &str) -> Option<String> {
    outbox
        .sent()
        .iter()
        .rev()
        .filter(|s| s.to() == to)
        .find_map(|s| s.link(prefix))
        .map(|l| path_of(&l))
}

/// Signs `email` up for `sku` under `name` from a browser in `zone`.
async fn sign_up_as(w: &World, sku: &str, name: &str, email: &str, zone: &str) -> Reply {
    w.capture_json(
        "POST",
        "/requests",
        serde_json::json!({ "sku": sku, "name": name, "email": email, "consent": true, "time_zone": zone }),
    )
    .await
}

/// What `restock show` says of the request a sign-up's reply names.
async fn show(w: &World, reply: &Reply) -> String {
    use restock_app::admin::{Admin, Command};
    let admin = Admin {
        store: w.store.clone(),
        pepper: Some(pepper()),
    };
    let who = reply.json()["request_id"].as_str().unwrap().to_owned();
    let now = restock_app::ports::Clock::now_ms(&*w.clock);
    admin
        .run(
            Command::Show {
                who,
                with_contacts: false,
            },
            now,
        )
        .await
        .unwrap()
        .message
}

/// Vera signs up for the chair and is sent its confirmation. A stranger
/// signs her address up for the throw under a name of his own and his
/// time zone: answered as any sign-up, and no second mail that day. Her
/// tap confirms the chair alone: the throw stays unconfirmed, his browser
/// still reads it (so it tells him nothing of her), and `restock show`
/// says when its own confirmation goes. When the day ends it gets one,
/// with its own manage link, and carries none of his words.
#[tokio::test]
async fn a_tap_confirms_only_what_it_was_sent_for_and_a_stranger_s_sign_up_gets_its_own() {
    let (w, outbox) = confirming().await;
    let vera = w.email("vera");
    let evil = "Claim your prize now at evil.example";
    let chair = sign_up_as(&w, CHAIR, "Vera", &vera, "Europe/London").await;
    assert_eq!(chair.status, 201, "{}", chair.body);
    w.pump().await;
    w.advance(MIN);
    let throw = sign_up_as(&w, "THROW-OAT", evil, &vera, "Pacific/Kiritimati").await;
    assert_eq!(throw.status, 201, "{}", throw.body);
    let said = |r: &Reply| {
        let mut body = r.json();
        for varying in [
            "request_id",
            "manage_token",
            "confirm_by_ms",
            "position",
            "sku",
        ] {
            body.as_object_mut().unwrap().remove(varying);
        }
        body.to_string()
            .replace("Linen throw", "{product}")
            .replace("Walnut dining chair", "{product}")
    };
    assert_eq!(
        said(&throw),
        said(&chair),
        "the second is answered as the first"
    );
    let reports = w.pump().await;
    assert_eq!(reports.iter().map(|r| r.covered).sum::<usize>(), 1);
    let to_vera = || outbox.sent().iter().filter(|s| s.to() == vera).count();
    assert_eq!(to_vera(), 1, "one confirmation a day");
    let his = throw.json()["manage_token"].as_str().unwrap().to_owned();
    assert_eq!(w.manage("GET", &his).await.status, 200);

    let link = link_to(&outbox, &vera, "c").unwrap();
    let page = post(&w, &link).await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("Walnut dining chair"), "{}", page.body);
    assert!(
        !page.body.contains("Linen throw"),
        "the page names only what the tap confirmed: {}",
        page.body
    );
    assert_eq!(state_of(&w, &chair).await, RequestState::Waiting);
    assert_eq!(state_of(&w, &throw).await, RequestState::Unconfirmed);
    let day = restock_core::feedback::day_of(restock_app::ports::Clock::now_ms(&*w.clock));
    assert_eq!(w.store.mail_day(&day).await.unwrap().confirmed, 1);
    assert_eq!(
        w.manage("GET", &his).await.status,
        200,
        "his read tells him nothing of her tap"
    );
    let shown = show(&w, &throw).await;
    assert!(shown.contains("this one's own goes at"), "{shown}");

    // The day over (the sweep wakes the item), the throw is sent a
    // confirmation of its own.
    w.advance(24 * 60 * MIN);
    w.sweep().await;
    w.pump().await;
    assert_eq!(to_vera(), 2);
    let own = outbox
        .sent()
        .into_iter()
        .rev()
        .find(|s| s.to() == vera)
        .unwrap();
    assert!(
        own.link("c").is_some() && own.link("m").is_some(),
        "{own:?}"
    );
    let Sent::Email { notice, .. } = own else {
        panic!("an email")
    };
    for text in [&notice.subject, &notice.text, &notice.html] {
        assert!(!text.contains("prize"), "his words reached her: {text}");
    }
}

/// A covered sign-up never hangs on the one that was mailed: the stranger
/// who made the mailed one withdraws it, and Vera's own sign-up, covered
/// by that day, still gets its confirmation when the day ends, which
/// confirms it.
#[tokio::test]
async fn a_covered_sign_up_gets_its_own_confirmation_when_the_mailed_one_is_withdrawn() {
    let (w, outbox) = confirming().await;
    let vera = w.email("vera");
    let stranger = sign_up_as(&w, CHAIR, "Not Vera", &vera, "Europe/London").await;
    w.pump().await;
    w.advance(MIN);
    let hers = sign_up_as(&w, "THROW-OAT", "Vera", &vera, "Europe/London").await;
    w.pump().await;
    assert_eq!(outbox.sent().len(), 1, "covered by the stranger's mail");
    let token = stranger.json()["manage_token"].as_str().unwrap().to_owned();
    assert_eq!(w.manage("DELETE", &token).await.status, 200);
    w.advance(24 * 60 * MIN);
    w.sweep().await;
    w.pump().await;
    assert_eq!(outbox.sent().len(), 2, "her own confirmation");
    let link = newest_link_to(&outbox, &vera, "c").unwrap();
    assert_eq!(post(&w, &link).await.status, 200);
    assert_eq!(state_of(&w, &hers).await, RequestState::Waiting);
}

/// Told by email and text from one sign-up: each channel is confirmed
/// from its own inbox or phone and offered in its place; a click on
/// either holds the one unit the shopper wanted, ends the other request,
/// and its unit passes to the next in line.
#[tokio::test]
async fn told_by_email_and_text_a_click_on_either_ends_the_other_and_its_unit_passes_on() {
    let (w, outbox) = confirming().await;
    let number = "+447911123456";
    let both = w
        .capture_json(
            "POST",
            "/requests",
            serde_json::json!({"sku": CHAIR, "name": "Tom", "email": w.email("Tom"), "phone": number, "channel": "both", "consent": true}),
        )
        .await;
    assert_eq!(both.status, 201, "{}", both.body);
    let body = both.json();
    assert_eq!(
        (&body["status"], &body["also"]["status"]),
        (&"unconfirmed".into(), &"unconfirmed".into()),
        "{body}"
    );
    let shown = show(&w, &both).await;
    let also = body["also"]["request_id"].as_str().unwrap();
    assert!(
        shown.contains(&format!("signed up with {also}, told on the other channel")),
        "{shown}"
    );
    w.advance(MIN);
    assert_eq!(w.join("Ann").await.status, 201);
    w.pump().await;
    // Each confirmation names the other contact, masked: whoever owns the
    // inbox sees the number a stranger may have typed beside it.
    let asked = |to: &str| {
        let sent = outbox.sent();
        let asked = sent.iter().find(|s| s.to() == to).map(|s| match s {
            Sent::Email { notice, .. } => notice.text.clone(),
            Sent::Sms { notice, .. } => notice.text.clone(),
        });
        asked.unwrap_or_else(|| panic!("{to} asked"))
    };
    assert!(
        asked(&w.email("Tom")).contains("This sign-up also gave +44"),
        "{}",
        asked(&w.email("Tom"))
    );
    assert!(
        asked(number).contains("here and at t***@"),
        "{}",
        asked(number)
    );
    assert!(!asked(&w.email("Ann")).contains("This sign-up also gave"));
    for to in [w.email("Tom"), number.into(), w.email("Ann")] {
        let link = link_to(&outbox, &to, "c").unwrap_or_else(|| panic!("{to} asked"));
        assert_eq!(post(&w, &link).await.status, 200);
    }
    assert_eq!(w.shopify(Some(2), "d-1").await.status, 200);
    w.pump().await;
    let offer = |to: &str| {
        let sent = outbox.sent();
        sent.iter()
            .filter(|s| s.to() == to)
            .find_map(|s| s.reserve_link())
    };
    assert!(offer(&w.email("Tom")).is_some(), "told on both channels");
    assert!(
        offer(&w.email("Ann")).is_none(),
        "two units, two places ahead"
    );
    let click = post(&w, &path_of(&offer(number).unwrap())).await;
    assert!(
        [200, 303].contains(&click.status.as_u16()),
        "{}",
        click.body
    );
    assert_eq!(state_of(&w, &both).await, RequestState::Cancelled);
    w.pump().await;
    assert!(
        offer(&w.email("Ann")).is_some(),
        "the email's unit passed on"
    );
    w.assert_never_oversold().await;
}

/// Told on both channels, a contact that opted out is left out: the other
/// joins alone; with both opted out the sign-up is refused.
#[tokio::test]
async fn a_sign_up_on_both_channels_keeps_the_channel_that_did_not_opt_out() {
    let (w, _) = confirming().await;
    let number = "+447911123456";
    let sign_up = |sku: &'static str| {
        let form = serde_json::json!({"sku": sku, "name": "Tom", "email": w.email("Tom"), "phone": number, "channel": "both", "consent": true});
        w.capture_json("POST", "/requests", form)
    };
    let pepper = pepper();
    let inbox = restock_core::Contact::Email(w.email("Tom").as_str().try_into().unwrap());
    let via = restock_core::OptOutVia::Link;
    w.store
        .opt_out_contact(&inbox.key(&pepper), via, 0)
        .await
        .unwrap();
    let joined = sign_up(CHAIR).await;
    assert_eq!(joined.status, 201, "{}", joined.body);
    let body = joined.json();
    assert!(body["also"].is_null(), "{body}");
    let id = body["request_id"].as_str().unwrap().parse().unwrap();
    let text = w.store.request(&id).await.unwrap().unwrap();
    assert_eq!(text.contact.channel(), restock_core::Channel::Sms);
    let phone = restock_core::Contact::Sms(restock_core::Phone::parse(number).unwrap());
    w.store
        .opt_out_contact(&phone.key(&pepper), via, 0)
        .await
        .unwrap();
    assert_eq!(sign_up("THROW-OAT").await.status, 409);
}
