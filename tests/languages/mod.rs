//! Every shopper in their own language, through the real routers: the
//! page's language travels with the sign-up, is kept as the closest one the
//! shop offers, and every message to the shopper is in it; the model is
//! asked once per restock and language, and its sentence must be in that
//! language's script.

use restock_app::ports::{Outbox, Sent};
use restock_core::notice::{SmsEncoding, sms_budget};
use restock_e2e::*;

use crate::story::helpers::AwsWorld;

/// The test settings, offering English (the default), German and Arabic.
fn multilingual(confirm: bool) -> restock_core::Settings {
    let mut settings = settings();
    settings.languages = ["en", "de", "ar"].map(|l| l.parse().unwrap()).to_vec();
    settings.confirm = confirm;
    settings.validate().expect("valid");
    settings
}

async fn join_in(w: &World, name: &str, language: &str) -> Reply {
    w.capture_json(
        "POST",
        "/requests",
        serde_json::json!({
            "sku": CHAIR, "name": name, "email": w.email(name), "consent": true, "language": language,
        }),
    )
    .await
}

fn email_to<'a>(sent: &'a [Sent], to: &str) -> Vec<&'a restock_core::notice::EmailNotice> {
    sent.iter()
        .filter_map(|s| match s {
            Sent::Email { to: t, notice } if t == to => Some(notice),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn each_shopper_is_told_in_their_language_with_one_model_call_per_language() {
    let fake = BedrockFake::start(ModelMode::Answer(
        "It's home again, and one is set aside for you.".into(),
    ))
    .await;
    let aws = AwsWorld::start(&fake).await;
    let w = &aws.world;
    w.store.put_settings(&multilingual(false)).await.unwrap();
    assert_eq!(join_in(w, "Anke", "de-DE").await.status, 201);
    assert_eq!(join_in(w, "Badr", "ar").await.status, 201);
    assert_eq!(join_in(w, "Cyd", "xx-YY").await.status, 201);
    // The team sees who waits in which language.
    let admin = restock_app::admin::Admin {
        store: w.store.clone(),
        pepper: None,
    };
    let stats = admin
        .run(
            restock_app::admin::Command::Stats { skus: vec![] },
            restock_app::ports::Clock::now_ms(w.clock.as_ref()),
        )
        .await
        .unwrap();
    let chair = stats.json["skus"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["sku"] == CHAIR)
        .unwrap()
        .clone();
    assert_eq!(
        chair["stats"]["waiting_by_language"],
        serde_json::json!({"ar": 1, "de": 1, "en": 1}),
        "{stats:?}"
    );
    assert!(
        stats
            .rows
            .iter()
            .any(|r| r.contains(&"ar 1 · de 1 · en 1".to_owned())),
        "{:?}",
        stats.rows
    );
    assert_eq!(w.shopify(Some(3), "d-1").await.status, 200);
    w.pump().await;

    let told = aws.emails_to(w).await;
    let body_to = |name: &str| {
        told.iter()
            .find(|m| m.0 == w.email(name))
            .unwrap_or_else(|| panic!("{name} was told: {told:?}"))
            .clone()
    };
    let (_, subject, html) = body_to("Anke");
    assert_eq!(subject, "Walnut dining chair ist wieder da bei Loom & Last");
    assert!(
        html.contains("<html lang=\"de\" dir=\"ltr\">") && html.contains("innerhalb von"),
        "{html}"
    );
    let (_, subject, html) = body_to("Badr");
    assert!(subject.contains("متوفر من جديد"), "{subject}");
    assert!(html.contains("<html lang=\"ar\" dir=\"rtl\">"), "{html}");
    assert!(
        html.contains("خبر سار"),
        "the model answered English when asked for Arabic: the Arabic fixed sentence went out"
    );
    let (_, subject, html) = body_to("Cyd");
    assert_eq!(
        subject, "Walnut dining chair is back at Loom & Last",
        "xx-YY gets the default"
    );
    assert!(
        html.contains("It&#39;s home again"),
        "the model's sentence, in English"
    );

    let prompts = fake.prompts();
    assert_eq!(prompts.len(), 3, "one call per language: {prompts:?}");
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

    // The restock's second wave (one more unit) reuses each language's words.
    assert_eq!(join_in(w, "Dora", "de").await.status, 201);
    w.advance(1_000);
    assert_eq!(w.shopify(Some(4), "d-2").await.status, 200);
    w.pump().await;
    let told = aws.emails_to(w).await;
    assert!(
        told.iter()
            .any(|m| m.0 == w.email("Dora") && m.1.contains("ist wieder da")),
        "{told:?}"
    );
    assert_eq!(fake.calls(), 3, "no model call for the second wave");
}

#[tokio::test]
async fn confirmations_and_texts_are_in_the_shoppers_language_within_budget() {
    let (w, outbox) = World::memory().await;
    w.store.put_settings(&multilingual(true)).await.unwrap();
    assert_eq!(join_in(&w, "Anke", "de-AT").await.status, 201);
    let arabic = w
        .capture_json(
            "POST",
            "/requests",
            serde_json::json!({
                "sku": CHAIR, "name": "Badr", "phone": "+447911123456", "consent": true, "language": "ar-SA",
            }),
        )
        .await;
    assert_eq!(arabic.status, 201, "{}", arabic.body);
    w.pump().await;
    let sent = outbox.sent();
    let anke = email_to(&sent, &w.email("Anke"));
    assert_eq!(anke.len(), 1, "{sent:?}");
    assert!(
        anke[0].subject.starts_with("Bestätigen:"),
        "{}",
        anke[0].subject
    );
    assert!(
        anke[0].text.contains("innerhalb von 2 Tagen"),
        "{}",
        anke[0].text
    );
    assert!(anke[0].html.contains("<html lang=\"de\" dir=\"ltr\">"));
    let text = sms_to(&outbox, "+447911123456");
    assert_eq!(text.encoding, SmsEncoding::Ucs2, "{text:?}");
    assert!(text.segments <= sms_budget(SmsEncoding::Ucs2), "{text:?}");
    assert!(
        text.text.contains("أكّد خلال") && text.text.contains("/c/") && text.text.contains("STOP"),
        "{text:?}"
    );

    // Confirmed, restocked: the notice text is Arabic too, link and STOP whole.
    for s in outbox.sent() {
        if let Some(link) = s.confirm_link() {
            let path = path_of(&link);
            assert_eq!(w.capture("POST", &path).await.status, 200);
        }
    }
    assert_eq!(w.shopify(Some(2), "d-1").await.status, 200);
    w.pump().await;
    let notice = sms_to(&outbox, "+447911123456");
    assert!(
        notice.text.contains("/r/") && notice.text.contains("STOP"),
        "{notice:?}"
    );
    assert!(notice.text.contains("احجز خلال"), "{notice:?}");
    assert!(notice.segments <= sms_budget(notice.encoding), "{notice:?}");
}

#[tokio::test]
async fn a_language_tag_that_is_not_one_is_refused_by_field() {
    let (w, _) = World::memory().await;
    let reply = join_in(&w, "Anke", "<script>").await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert!(reply.body.contains("\"language\""), "{}", reply.body);
    let reply = join_in(&w, "Anke", "de").await;
    assert_eq!(
        reply.status, 201,
        "a shop offering only English takes it: {}",
        reply.body
    );
}

/// The last text sent to `to`.
fn sms_to(outbox: &Outbox, to: &str) -> restock_core::notice::SmsNotice {
    outbox
        .sent()
        .into_iter()
        .rev()
        .find_map(|s| match s {
            Sent::Sms { to: t, notice } if t == to => Some(notice),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no text to {to}"))
}

#[tokio::test]
async fn the_pages_behind_each_link_speak_the_shoppers_language() {
    use axum::body::Body;
    use axum::http::Request;
    let (w, outbox) = World::memory().await;
    w.store.put_settings(&multilingual(false)).await.unwrap();
    assert_eq!(join_in(&w, "Anke", "de").await.status, 201);
    assert_eq!(w.shopify(Some(1), "d-1").await.status, 200);
    w.pump().await;
    let link = outbox
        .sent()
        .iter()
        .find_map(Sent::reserve_link)
        .expect("a reserve link");
    let page = w.capture("GET", &path_of(&link)).await;
    assert!(
        page.body.contains("<html lang=\"de\" dir=\"ltr\">")
            && page.body.contains("Reservieren und zur Kasse"),
        "{}",
        page.body
    );
    // A guessed link names no request: the browser's languages decide.
    let guessed = Request::get("/r/CHAIR-WAL~AAAAAAAAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBB")
        .header("accept-language", "fr-FR,ar;q=0.9,en;q=0.5")
        .body(Body::empty())
        .unwrap();
    let page = w.call(Api::Capture, guessed).await;
    assert_eq!(page.status, 410);
    assert!(
        page.body.contains("<html lang=\"ar\" dir=\"rtl\">") && page.body.contains("انتهت صلاحية"),
        "{}",
        page.body
    );
    // A form post without the script answers in the language it sent.
    let form = Request::post("/requests")
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "text/html")
        .extension(restock_app::capture::ClientAddr(
            "203.0.113.9".parse().unwrap(),
        ))
        .body(Body::from(format!(
            "sku={CHAIR}&name=Jonas&email={}&consent=on&language=de-CH",
            w.email("Jonas").replace('@', "%40")
        )))
        .unwrap();
    let page = w.call(Api::Capture, form).await;
    assert_eq!(page.status, 201, "{}", page.body);
    assert!(
        page.body.contains("<html lang=\"de\"") && page.body.contains("in der Warteliste"),
        "{}",
        page.body
    );
}

#[tokio::test]
async fn the_widget_and_the_api_s_errors_speak_the_page_s_language() {
    use axum::body::Body;
    use axum::http::Request;
    let (w, _) = World::memory().await;
    let mut settings = multilingual(false);
    settings
        .messages
        .entry("de".into())
        .or_default()
        .insert("widget-submit".into(), "Gib mir Bescheid".into());
    w.store.put_settings(&settings).await.unwrap();

    // The widget's words: the closest offered language, the shop's own
    // wording first, {product} and {position} left for the widget.
    let words = w.capture("GET", "/widget?language=de-AT").await;
    assert_eq!(words.status, 200, "{}", words.body);
    let answer = words.json();
    assert_eq!(answer["language"], "de");
    assert_eq!(answer["dir"], "ltr");
    assert_eq!(
        answer["words"]["submit"], "Gib mir Bescheid",
        "the override"
    );
    assert_eq!(answer["words"]["contact-both"], "E-Mail oder Handynummer");
    assert_eq!(answer["words"]["leave"], "Warteliste verlassen");
    assert!(
        answer["words"]["consent"]
            .as_str()
            .unwrap()
            .contains("wenn {product} wieder da ist"),
        "{answer}"
    );
    assert!(
        answer["words"]["position"]
            .as_str()
            .unwrap()
            .contains("Nummer {position}"),
        "{answer}"
    );
    let named = |id: &str| id.strip_prefix("widget-").map(str::to_owned);
    let expected = restock_core::lang::MESSAGES
        .iter()
        .filter_map(|(id, _)| named(id))
        .count()
        + 4;
    assert_eq!(
        answer["words"].as_object().unwrap().len(),
        expected,
        "every widget word: {answer}"
    );
    // No language named: the browser's; not one offered: the default.
    let arabic = Request::get("/widget")
        .header("accept-language", "ar-EG,en;q=0.5")
        .body(Body::empty())
        .unwrap();
    let arabic = w.call(Api::Capture, arabic).await.json();
    assert_eq!(
        (&arabic["language"], &arabic["dir"]),
        (&"ar".into(), &"rtl".into())
    );
    assert_eq!(arabic["words"]["submit"], "أخبرني");
    let other = w.capture("GET", "/widget?language=xx-YY").await.json();
    assert_eq!(other["language"], "en");
    assert_eq!(other["words"]["submit"], "Notify me");

    // The API's refusals, in the language the sign-up names: what to fix
    // for the shopper, the exact reason for whoever builds a client.
    let reply = w
        .capture_json(
            "POST",
            "/requests",
            serde_json::json!({ "sku": CHAIR, "name": "Anke", "email": "anke@", "consent": false, "language": "de" }),
        )
        .await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    let body = reply.json();
    assert_eq!(body["error"], "Bitte prüfe einige Angaben noch einmal.");
    let email = body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["field"] == "email")
        .unwrap_or_else(|| panic!("{body}"));
    assert!(
        email["message"]
            .as_str()
            .unwrap()
            .starts_with("Gib eine E-Mail-Adresse"),
        "{body}"
    );
    assert!(!email["detail"].as_str().unwrap().is_empty(), "{body}");
    let unknown = w
        .capture_json(
            "POST",
            "/requests",
            serde_json::json!({ "sku": "NO-SUCH", "name": "Anke", "email": w.email("Anke"), "consent": true, "language": "ar" }),
        )
        .await;
    assert_eq!(unknown.status, 404, "{}", unknown.body);
    assert_eq!(unknown.json()["error"], "لا يمكن انتظار هذا المنتج هنا.");
    // A malformed body names no language: the browser's.
    let junk = Request::post("/requests")
        .header("content-type", "application/json")
        .header("accept-language", "de")
        .body(Body::from("{"))
        .unwrap();
    let junk = w.call(Api::Capture, junk).await;
    assert_eq!(junk.status, 400);
    assert_eq!(
        junk.json()["errors"][0]["message"],
        "Das Formular konnte nicht gelesen werden. Bitte versuche es noch einmal."
    );
}

/// `/widget` is cacheable (`public, max-age=300`), and whether its answer
/// carries `Access-Control-Allow-Origin` depends on the caller's origin: so
/// every answer says it varies by `Origin`, or a shared cache could hand a
/// foreign origin's answer (no CORS header) to the storefront, or the other
/// way round.
#[tokio::test]
async fn every_cacheable_widget_answer_varies_by_origin() {
    use axum::body::Body;
    use axum::http::Request;
    let (w, _) = World::memory().await;
    for origin in [
        Some("https://loomandlast.co.uk"),
        Some("https://elsewhere.example"),
        None,
    ] {
        let mut request = Request::get("/widget?language=de");
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        let reply = w
            .call(Api::Capture, request.body(Body::empty()).unwrap())
            .await;
        assert_eq!(reply.status, 200, "{origin:?}: {}", reply.body);
        let vary: Vec<_> = reply
            .headers
            .get_all("vary")
            .iter()
            .map(|v| v.to_str().unwrap().to_owned())
            .collect();
        assert!(
            reply.headers["cache-control"]
                .to_str()
                .unwrap()
                .contains("public"),
            "{origin:?}"
        );
        assert!(
            vary.iter().any(|v| v == "Origin") && vary.iter().any(|v| v == "Accept-Language"),
            "{origin:?}: Vary {vary:?}"
        );
    }
}

/// A text sent back saying HELP is answered in the language the number
/// signed up in (its newest live request's, read through its places), and
/// a number with no live request in the shop's.
#[tokio::test]
async fn help_is_answered_in_the_language_the_number_signed_up_in() {
    let (w, outbox) = World::memory().await;
    w.store.put_settings(&multilingual(false)).await.unwrap();
    let joined = w
        .capture_json(
            "POST",
            "/requests",
            serde_json::json!({
                "sku": CHAIR, "name": "Anke", "phone": "+447911123456", "consent": true, "language": "de-DE",
            }),
        )
        .await;
    assert_eq!(joined.status, 201, "{}", joined.body);
    let help = |from: &str, id: &str| {
        serde_json::json!({
            "originationNumber": from, "destinationNumber": "+447700900100",
            "messageKeyword": "HELP", "messageBody": "help", "inboundMessageId": id,
        })
        .to_string()
    };
    let outcomes = restock_app::inbound::read(
        &w.services,
        &[
            help("+447911123456", "help-1"),
            help("+447400123456", "help-2"),
        ],
    )
    .await
    .unwrap();
    assert_eq!(outcomes, [restock_app::inbound::InboundOutcome::Helped; 2]);
    let texts: Vec<(String, String)> = outbox
        .sent()
        .into_iter()
        .filter_map(|s| match s {
            Sent::Sms { to, notice } => Some((to, notice.text)),
            Sent::Email { .. } => None,
        })
        .collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(
        texts[0].0 == "+447911123456" && texts[0].1.contains("SMS, wenn ein Artikel wieder da ist"),
        "{texts:?}"
    );
    assert!(
        texts[1].0 == "+447400123456"
            && texts[1]
                .1
                .contains("texts when an item you asked for is back"),
        "{texts:?}"
    );
}
