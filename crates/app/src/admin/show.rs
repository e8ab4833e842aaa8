//! `restock show`: every request of a contact (or one request by id), each
//! with why it stands where it does and its story in time order, masked
//! unless the team asks for contacts in the clear.

use restock_core::{CatalogueEntry, Millis, RequestId, RequestState, rfc3339};
use restock_store::{ItemHistory, NoticeOutcome, Request, SenderPause};
use serde_json::{Value, json};

use super::{Admin, AdminError, Output, contact};

/// What the team needs beside a request to say why it stands where it does.
struct Context<'a> {
    /// Its place in line, while it waits.
    position: Option<usize>,
    /// Its item's catalogue entry.
    entry: Option<&'a CatalogueEntry>,
    /// A pause of all sending, if any.
    pause: Option<&'a SenderPause>,
    /// Its item's figures per restock.
    history: &'a ItemHistory,
    /// Until when it is inside its quiet hours (or, texted, outside its
    /// place's legal hours), if it is now.
    asleep_until: Option<Millis>,
    /// Its contact's opt-out, when it ended by one.
    opt_out: Option<restock_store::OptOutRecord>,
}

/// Why a request stands where it does, in one line for the on-call engineer.
fn why(r: &Request, cx: &Context<'_>) -> String {
    use restock_core::story::Event;
    let chapters = r.story.chapters();
    let asked = chapters
        .iter()
        .find(|c| c.event == Event::Asked)
        .map(|c| c.at);
    let covered = chapters.iter().find_map(|c| match c.event {
        Event::Covered { until } => Some(until),
        _ => None,
    });
    match &r.state {
        RequestState::Unconfirmed => match (asked, covered) {
            (Some(at), _) => format!(
                "signed up but not confirmed: the confirmation went at {}; an unconfirmed sign-up is offered nothing",
                rfc3339(at)
            ),
            (None, Some(until)) => format!(
                "signed up; its address was sent a confirmation for another item within the day (one a day), so this one's own goes at {} (notify sends it); a tap on the other confirms only the other",
                rfc3339(until)
            ),
            (None, None) => {
                "signed up; the confirmation message has not gone yet (notify sends it)".into()
            }
        },
        RequestState::Waiting => waiting(r, cx),
        RequestState::Offered {
            episode,
            expires_ms,
        } => {
            let notice = match &r.notice {
                None => "its notice has not gone yet".to_owned(),
                Some(NoticeOutcome::Sending) => {
                    "its notice was handed to the provider (outcome not recorded)".to_owned()
                }
                Some(NoticeOutcome::Sent { message_id }) => {
                    format!("its notice was sent (provider message id {message_id})")
                }
                Some(NoticeOutcome::Failed { reason }) => format!("its notice failed: {reason}"),
            };
            format!(
                "told: offered a unit in restock {episode} until {}; {notice}",
                rfc3339(*expires_ms)
            )
        }
        RequestState::Held {
            hold, expires_ms, ..
        } => format!("holds a unit (hold {hold}) until {}", rfc3339(*expires_ms)),
        RequestState::Bought { .. } => "bought with the hold".into(),
        RequestState::Lapsed => "told, but the reserve link was not clicked in time".into(),
        RequestState::Released => "held a unit but did not buy in time".into(),
        RequestState::Cancelled => "left the queue (or was forgotten or ended by the team)".into(),
        RequestState::OptedOut => match cx.opt_out {
            Some(restock_store::OptOutRecord { at, via }) => format!(
                "opted out{} at {}: never told again",
                via.map(|v| format!(" {}", v.said())).unwrap_or_default(),
                rfc3339(at)
            ),
            None => "opted out (since lifted by the team): never told again".into(),
        },
        RequestState::Stale => "waited longer than the request lifetime".into(),
        RequestState::Undeliverable => match &r.notice {
            Some(NoticeOutcome::Failed { reason }) => {
                format!("the notice could not be delivered: {reason}")
            }
            _ => "the notice could not be delivered".into(),
        },
    }
}

/// Why a waiting request has not been told: its place, what holds the item
/// back, and the restocks since it joined.
fn waiting(r: &Request, cx: &Context<'_>) -> String {
    let mut parts = vec![match cx.position {
        Some(p) => format!("waiting, number {p} in line"),
        None => "waiting".to_owned(),
    }];
    if let Some(entry) = cx.entry {
        if let Some(pause) = &entry.paused {
            parts.push(format!(
                "the item is paused by the team since {}: {}",
                rfc3339(pause.since_ms),
                pause.reason
            ));
        }
        if let Some(ended) = entry.ended {
            parts.push(format!(
                "the shop stopped listing the item at {}: nobody is told",
                rfc3339(ended)
            ));
        }
    } else {
        parts.push("the item is no longer in the catalogue".into());
    }
    if let Some(pause) = cx.pause {
        parts.push(format!(
            "all sending is paused until {}: {}",
            rfc3339(pause.until),
            pause.reason
        ));
    }
    if let Some(until) = cx.asleep_until {
        parts.push(format!(
            "in its quiet hours (or outside its legal hours) until {}: a wave passes it over and keeps its place",
            rfc3339(until)
        ));
    }
    let since: Vec<_> = cx
        .history
        .restocks
        .iter()
        .filter(|(_, f)| f.first_told.is_some_and(|t| t >= r.key.joined_ms))
        .collect();
    parts.push(if since.is_empty() {
        "no restock has told anyone since it joined".into()
    } else {
        let told: u64 = since.iter().map(|(_, f)| f.told).sum();
        let numbers: Vec<_> = since.iter().map(|(e, _)| e.to_string()).collect();
        let (restocks, people) = (
            if since.len() == 1 {
                "restock"
            } else {
                "restocks"
            },
            if told == 1 { "person" } else { "people" },
        );
        format!(
            "{restocks} {} since it joined told {told} {people} ahead of it",
            numbers.join(", ")
        )
    });
    parts.join("; ")
}

/// The request's story as lines and as JSON, what a provider said masked
/// by `mask` (a bounce's diagnostic can name the address).
fn story(r: &Request, mask: impl Fn(&str) -> String) -> (Vec<String>, Vec<Value>) {
    r.story
        .chapters()
        .iter()
        .map(|c| {
            let text = mask(&c.event.describe());
            let line = format!("  {}  {text}", rfc3339(c.at));
            let mut value = serde_json::to_value(c).expect("chapters serialise");
            if let Some(reason) = value.get("reason").and_then(Value::as_str) {
                value["reason"] = json!(mask(reason));
            }
            value["text"] = json!(text);
            (line, value)
        })
        .unzip()
}

impl Admin {
    /// Every request of a contact, or the one request `who` names, each
    /// with why it stands where it does and its story.
    pub(super) async fn show(
        &self,
        who: String,
        with_contacts: bool,
        now: Millis,
    ) -> Result<Output, AdminError> {
        let (requests, asked) = self.requests_of(&who).await?;
        if with_contacts {
            tracing::warn!(
                requests = requests.len(),
                "a story shown with its contact in the clear"
            );
        }
        let pause = self.store.sender_pause().await?.filter(|p| p.until > now);
        let (quiet_hours, shop_zone) = match self.store.settings().await? {
            Some(settings) => (settings.quiet_hours, settings.time_zone),
            None => Default::default(),
        };
        let mut sleepers = restock_core::Sleepers::new(&quiet_hours, &shop_zone, now);
        let mut text = Vec::new();
        let mut json = Vec::new();
        for r in &requests {
            let entry = self.store.catalogue_entry(&r.sku).await?;
            let position = if r.state == RequestState::Waiting {
                let shards = entry.as_ref().map_or(1, |e| e.shards);
                self.store.position(r, shards).await?
            } else {
                None
            };
            let history = self
                .store
                .item_history(&r.sku, &restock_core::feedback::day_of(r.key.joined_ms))
                .await?;
            let cx = Context {
                position,
                entry: entry.as_ref(),
                pause: pause.as_ref(),
                history: &history,
                asleep_until: sleepers.asleep_until(&r.contact, r.zone.as_ref()),
                opt_out: match r.state {
                    RequestState::OptedOut => self.store.opt_out_record(&r.contact_key).await?,
                    _ => None,
                },
            };
            let (lines, value) = shown(r, &cx, with_contacts, &shop_zone);
            text.extend(lines);
            json.push(value);
        }
        let head = format!(
            "{asked}: {} request(s), oldest first; each story keeps one chapter per kind and the last {} restocks",
            requests.len(),
            restock_core::story::RESTOCKS_KEPT
        );
        Ok(Output::message(
            format!("{head}\n{}", text.join("\n")),
            json!({ "requests": json }),
        ))
    }

    /// The requests `who` names (a request id, or a contact's every
    /// request, oldest first), and `who` as the answer names it.
    async fn requests_of(&self, who: &str) -> Result<(Vec<Request>, String), AdminError> {
        Ok(match who.trim().parse::<RequestId>() {
            Ok(id) => {
                let r = self.store.request(&id).await?.ok_or_else(|| {
                    AdminError::NotFound(format!(
                        "no request {id}: it never existed, or it was forgotten or expired unconfirmed"
                    ))
                })?;
                (vec![r], id.to_string())
            }
            Err(_) => {
                let pepper = self.pepper.as_deref().ok_or(AdminError::NoPepper)?;
                let contact = contact(who)?;
                let mut of = Vec::new();
                for key in contact.keys(pepper) {
                    of.extend(self.store.contact_requests(&key).await?);
                }
                of.sort_by_key(|r| r.key);
                of.dedup_by_key(|r| r.id);
                if of.is_empty() {
                    return Err(AdminError::NotFound(format!(
                        "no request of {}: never signed up, forgotten, or expired unconfirmed",
                        contact.masked()
                    )));
                }
                (of, contact.masked())
            }
        })
    }
}

/// One request as `show` gives it: its lines for people and its JSON.
fn shown(
    r: &Request,
    cx: &Context<'_>,
    with_contacts: bool,
    shop_zone: &restock_core::quiet::Zone,
) -> (Vec<String>, Value) {
    let position = cx.position;
    let clock = r.zone.as_ref().map_or_else(
        || format!("the shop's clock, {shop_zone}"),
        |z| format!("clock {z}"),
    );
    let who = if with_contacts {
        r.contact.address().to_owned()
    } else {
        r.contact.masked()
    };
    let mask = |text: &str| {
        if with_contacts {
            text.to_owned()
        } else {
            restock_core::contact::mask_personal(text)
        }
    };
    let why = mask(&why(r, cx));
    let (lines, chapters) = story(r, mask);
    let mut text = vec![format!(
        "{} · {} · {who} ({}, {clock}) · {}",
        r.id,
        r.sku,
        r.contact.channel().as_str(),
        r.state.status()
    )];
    text.push(format!("  now: {why}"));
    // Told on both channels: the other channel's request (DESIGN I5).
    let together = r.consent.as_ref().and_then(|c| c.together);
    if let Some(other) = together {
        text.push(format!(
            "  signed up with {other}, told on the other channel"
        ));
    }
    text.extend(lines);
    let json = json!({
        "request_id": r.id, "sku": r.sku, "contact": who,
        "channel": r.contact.channel().as_str(), "status": r.state.status().as_str(),
        "position": position, "why": why, "story": chapters,
        "time_zone": r.zone.as_ref().map(|z| z.as_str()), "together": together,
    });
    (text, json)
}
