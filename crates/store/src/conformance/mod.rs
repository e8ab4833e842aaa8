//! The conformance suite: one set of cases every store must pass, the
//! in-memory store (as is and with its indexes lagging) and the DynamoDB
//! store alike. Each adapter's own tests run it through
//! [`conformance_suite!`](crate::conformance_suite) with a [`Harness`] of its
//! own; the cases speak only the port. Built with the `conformance` feature.
#![allow(missing_docs)]

mod app;

pub use app::*;

use restock_core::Platform;
use restock_core::webhook::ItemRef;
use restock_core::{
    CatalogueEntry, Contact, Email, HoldId, HoldRefused, LinkToken, RequestState, Settings,
    SkipReason, Status, StockOutcome,
};

use crate::*;

/// Every case of the suite, one `#[tokio::test]` each, on the `App` that
/// `$make` (an async expression) gives. The caller depends on `tokio` with
/// the `macros` and `rt-multi-thread` features.
#[macro_export]
macro_rules! conformance_suite {
    ($make:expr) => {
        $crate::__conformance_cases!($make; second_tap_keeps_the_original_place,
            two_spellings_of_one_mailbox_are_one_person,
            opted_out_contacts_are_refused_until_lifted,
            the_walnut_chair_story,
            cancelling_frees_the_unit_and_is_final,
            a_stale_confirmation_pass_claims_and_gives_back_nothing_of_another_s,
            a_stale_notice_pass_claims_and_gives_back_nothing_of_another_s,
            a_late_pass_of_one_restock_leaves_the_next_restock_s_notice,
            a_repeat_click_returns_the_same_hold,
            unknown_wrong_and_expired_links_are_refused_alike,
            sold_out_again_returns_the_shopper_to_the_front,
            duplicate_and_older_stock_events_change_nothing,
            a_flapping_level_notifies_nobody_twice,
            top_ups_offer_more_units_in_the_same_restock,
            an_escalated_restock_waits_for_release,
            a_rejected_restock_offers_nothing_and_the_next_reading_is_judged_afresh,
            a_notice_is_claimed_once_and_a_failure_passes_the_unit_on,
            overlapping_sweeps_end_each_due_request_once,
            stale_requests_expire_and_are_skipped_by_waves,
            an_opt_out_link_ends_every_live_request_of_the_contact,
            a_purchase_ends_the_hold_and_takes_the_unit_off_the_level,
            sharded_queues_read_back_in_join_order,
            nothing_is_offered_when_out_of_stock_or_capped,
            reconcile_finds_no_drift_in_consistent_counters,
            catalogue_entries_resolve_from_every_platform_id,
            settings_round_trip,
            unsent_offers_are_reissued_with_fresh_links_and_sent_once,
            a_link_re_armed_by_another_pass_is_never_claimed,
            every_opt_out_link_a_shopper_was_sent_keeps_working,
            a_capped_wave_hands_on_with_a_wake,
            a_contact_who_opted_out_is_never_claimed_for_a_notice,
            an_opt_out_cut_short_still_stops_the_notice_and_its_retry_ends_the_request,
            a_restock_keeps_its_phrase_per_language,
            rate_limits_count_per_key_and_window,
            the_catalogue_lists_every_entry_once_in_sku_order,
            live_units_list_every_offer_and_hold_soonest_to_run_out_first,
            deliveries_heard_and_each_silence_claimed_once,
            anyone_waiting_follows_the_queue,
            the_sender_pause_opens_once_notes_items_and_ends,
            the_team_takes_over_a_provider_s_pause_and_keeps_what_it_held,
            an_offer_whose_notice_never_went_out_keeps_its_place_when_it_runs_out,
            a_day_s_mail_figures_add_up,
            every_request_is_listed_once_with_when_it_was_told_held_and_ended,
            send_slots_are_shared_and_never_overlap,
            an_unconfirmed_sign_up_keeps_its_place_but_is_offered_nothing_until_confirmed,
            a_confirmation_is_claimed_once_and_a_claim_given_back_is_pending_again,
            an_address_is_asked_once_a_day_and_a_tap_confirms_only_what_it_was_sent_for,
            a_confirmation_given_back_gives_the_address_s_day_back,
            an_unconfirmed_sign_up_ends_with_its_window_and_is_forgotten,
            sign_ups_to_confirm_are_counted_until_confirmed_ended_or_run_out,
            forgetting_a_contact_erases_its_requests_and_keeps_only_the_opt_out,
            forgetting_a_request_ends_it_first_and_keeps_the_opt_out,
            a_contacts_live_requests_are_its_places,
            a_sign_up_on_both_channels_ends_on_both_with_an_opt_out_the_person_said,
            a_late_reading_older_than_one_of_the_same_level_is_stale,
            readings_at_the_same_instant_keep_the_lower_level_and_ask_to_settle,
            a_sale_the_shop_reported_first_leaves_no_phantom_hold,
            a_sale_reported_before_the_shop_s_webhook_lowers_the_level_once,
            the_last_unit_sold_then_a_restock_of_one_tells_the_next_in_line,
            an_order_without_the_hold_s_item_leaves_the_hold_and_the_level,
            reconcile_corrects_counters_up_and_down_on_a_busy_item,
            confirming_ends_the_joining_browser_s_power_over_the_place,
            work_keyed_once_is_done_once,
            taps_racing_on_a_confirmation_link_confirm_once,
            an_item_s_history_counts_each_moment_once_on_its_day_and_in_its_restock,
            a_request_s_story_is_kept_as_it_happens,
            sleepers_keep_their_place_and_are_first_when_they_wake,
            an_offer_is_reminded_once_and_the_reminder_s_link_holds,
            an_order_by_a_contact_told_is_assisted_once_within_the_window);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_cases {
    ($make:expr; $($name:ident),* $(,)?) => {
        $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            $crate::conformance::$name($make.await).await
        })*
    };
}

const CHAIR: &str = "CHAIR-WAL";
const OAT: &str = "THROW-OAT";

pub async fn second_tap_keeps_the_original_place(app: App) {
    let first = app.join(CHAIR, 1, T0).await;
    assert_eq!(app.store.position(&first, 1).await.unwrap(), Some(1));
    let second = app.join(CHAIR, 2, T0 + 1).await;
    assert_eq!(app.store.position(&second, 1).await.unwrap(), Some(2));
    match app.join_as(CHAIR, email(1), T0 + 5, 1).await {
        JoinOutcome::AlreadyWaiting(r) => {
            assert_eq!(r.id, first.id);
            assert_eq!(r.key, first.key, "the original join time stands");
            assert_eq!(app.store.position(&r, 1).await.unwrap(), Some(1));
        }
        other => panic!("expected the existing request, got {other:?}"),
    }
    // Another item is another place.
    assert!(matches!(
        app.join_as("THROW-OAT", email(1), T0, 1).await,
        JoinOutcome::Joined(_)
    ));
    assert_eq!(app.store.stats(&sku(CHAIR), 1).await.unwrap().waiting, 2);
}

/// One mailbox typed two ways is one person: one place per item, one
/// opt-out (the contact's canonical form is what the store keys on).
pub async fn two_spellings_of_one_mailbox_are_one_person(app: App) {
    let typed = |text: &str| Contact::Email(Email::try_from(text).unwrap());
    let first = match app
        .join_as(CHAIR, typed("Della@Bücher.Example"), T0, 1)
        .await
    {
        JoinOutcome::Joined(r) => r,
        other => panic!("the first spelling joins: {other:?}"),
    };
    match app
        .join_as(CHAIR, typed("  della@XN--BCHER-KVA.example. "), T0 + 1, 1)
        .await
    {
        JoinOutcome::AlreadyWaiting(r) => assert_eq!(r.id, first.id),
        other => panic!("the second spelling is the same place: {other:?}"),
    }
    assert_eq!(app.store.stats(&sku(CHAIR), 1).await.unwrap().waiting, 1);
    app.store
        .opt_out_contact(
            &typed("DELLA@bücher.example").key(PEPPER),
            restock_core::OptOutVia::Team,
            T0 + 2,
        )
        .await
        .unwrap();
    assert_eq!(
        app.join_as("THROW-OAT", typed("della@xn--bcher-kva.example"), T0 + 3, 1)
            .await,
        JoinOutcome::OptedOut
    );
}

/// An opt-out refuses the contact until the team lifts it, and is recorded
/// with when and how it first came.
pub async fn opted_out_contacts_are_refused_until_lifted(app: App) {
    let key = email(3).key(PEPPER);
    assert_eq!(
        app.store
            .opt_out_contact(&key, restock_core::OptOutVia::Team, T0)
            .await
            .unwrap(),
        0
    );
    assert!(app.store.is_opted_out(&key).await.unwrap());
    // Recorded with how it came; the first record stands.
    app.store
        .opt_out_contact(&key, restock_core::OptOutVia::Reply, T0 + 5)
        .await
        .unwrap();
    assert_eq!(
        app.store.opt_out_record(&key).await.unwrap(),
        Some(crate::OptOutRecord {
            at: T0,
            via: Some(restock_core::OptOutVia::Team)
        })
    );
    assert_eq!(
        app.store
            .opt_out_record(&email(4).key(PEPPER))
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        app.join_as(CHAIR, email(3), T0, 1).await,
        JoinOutcome::OptedOut
    );
    assert!(app.store.remove_opt_out(&key).await.unwrap());
    assert!(!app.store.remove_opt_out(&key).await.unwrap());
    assert!(matches!(
        app.join_as(CHAIR, email(3), T0, 1).await,
        JoinOutcome::Joined(_)
    ));
}

/// DESIGN §1: thirteen join, three leave, four come back, Della holds one,
/// one offer lapses and Marcus is told next.
pub async fn the_walnut_chair_story(app: App) {
    app.catalogue(CHAIR, 1).await;
    let mut shoppers = Vec::new();
    for i in 0..13 {
        // Stagger joins over two weeks; the third shopper joined long ago and goes stale.
        let at = if i == 2 {
            T0 - 100 * DAY
        } else {
            T0 + i as i64 * DAY
        };
        shoppers.push(app.join(CHAIR, i, at).await);
    }
    let (della, marcus) = (shoppers[6].id, shoppers[7].id);
    assert_eq!(
        app.store
            .cancel(&shoppers[0].id, T0 + 14 * DAY)
            .await
            .unwrap(),
        CancelOutcome::Cancelled
    );
    assert_eq!(
        app.store
            .opt_out_contact(
                &email(1).key(PEPPER),
                restock_core::OptOutVia::Team,
                T0 + 14 * DAY
            )
            .await
            .unwrap(),
        1
    );
    let della_req = app.get(&della).await;
    assert_eq!(
        app.store.position(&della_req, 1).await.unwrap(),
        Some(5),
        "the stale one still counts until swept"
    );

    let now = T0 + 15 * DAY;
    let ApplyOutcome::Applied {
        outcome: StockOutcome::Restock {
            episode: 1,
            level: 4,
        },
        ..
    } = app.level(CHAIR, 4, now, "d1").await
    else {
        panic!("a crossing to 4 is a restock")
    };
    let wave = app.wave_sent(CHAIR, now).await;
    let told: Vec<_> = wave.offers.iter().map(|o| o.request.id).collect();
    let expected: Vec<_> = [3, 4, 5, 6].iter().map(|i| shoppers[*i].id).collect();
    assert_eq!(
        told, expected,
        "the first four still waiting, in join order, Della fourth"
    );
    assert_eq!(wave.skipped, vec![(shoppers[2].id, SkipReason::Stale)]);
    assert_eq!(app.get(&shoppers[2].id).await.state, RequestState::Stale);
    assert_eq!(
        app.get(&marcus).await.state,
        RequestState::Waiting,
        "Marcus hears nothing yet"
    );
    app.assert_never_oversold(CHAIR).await;

    let della_offer = wave.offers.iter().find(|o| o.request.id == della).unwrap();
    let hold = HoldId::from_random(app.bytes());
    let outcome = app
        .store
        .take_hold(&della_offer.reserve, hold, 1, now + 3 * MIN, WINDOW)
        .await
        .unwrap();
    assert_eq!(
        outcome,
        HoldOutcome::Held {
            hold,
            expires: now + 18 * MIN
        }
    );
    assert_eq!(
        app.store.snapshot(&sku(CHAIR)).await.unwrap().counters.held,
        1
    );
    app.assert_never_oversold(CHAIR).await;

    // Two of the others click in time, one never does.
    for o in &wave.offers[1..3] {
        let h = HoldId::from_random(app.bytes());
        assert!(matches!(
            app.store
                .take_hold(&o.reserve, h, 1, now + 5 * MIN, WINDOW)
                .await
                .unwrap(),
            HoldOutcome::Held { .. }
        ));
    }
    let later = now + 16 * MIN;
    let outcomes = app.sweep(later).await;
    assert_eq!(
        outcomes,
        vec![ExpireOutcome::Lapsed],
        "only the unclicked offer is due"
    );
    assert_eq!(app.get(&shoppers[3].id).await.state, RequestState::Lapsed);
    let wakes = app.store.wakes(&sku(CHAIR)).await.unwrap();
    assert_eq!(
        wakes.iter().filter(|w| w.kind == WakeKind::Freed).count(),
        1
    );

    let next = app.wave(CHAIR, later).await;
    assert_eq!(next.offers.len(), 1);
    assert_eq!(
        next.offers[0].request.id, marcus,
        "Marcus, fifth, is told next"
    );
    app.assert_never_oversold(CHAIR).await;
    let counters = app.store.snapshot(&sku(CHAIR)).await.unwrap().counters;
    assert_eq!((counters.offered, counters.held, counters.level), (1, 3, 4));
}

pub async fn cancelling_frees_the_unit_and_is_final(app: App) {
    let r = app.join(CHAIR, 1, T0).await;
    app.level(CHAIR, 1, T0 + 1, "d1").await;
    let wave = app.wave(CHAIR, T0 + 2).await;
    assert_eq!(wave.offers.len(), 1);
    assert_eq!(
        app.store.cancel(&r.id, T0 + 3).await.unwrap(),
        CancelOutcome::Cancelled
    );
    assert_eq!(
        app.store
            .snapshot(&sku(CHAIR))
            .await
            .unwrap()
            .counters
            .offered,
        0
    );
    assert_eq!(
        app.store.cancel(&r.id, T0 + 4).await.unwrap(),
        CancelOutcome::NotLive(Status::Cancelled)
    );
    let unknown = restock_core::RequestId::from_random([0xAB; 16]);
    assert_eq!(
        app.store.cancel(&unknown, T0).await.unwrap(),
        CancelOutcome::NotFound
    );
    // The place is free again: a new tap is a new request at the back.
    let again = app.join(CHAIR, 1, T0 + 5).await;
    assert_ne!(again.id, r.id);
}

/// A confirmation pass works from what it read a moment ago: a sign-up
/// cancelled or confirmed since is claimed for no mail, and a give-back sent
/// again after a newer pass claimed the sign-up leaves that newer claim (and
/// its mail's link) alone.
pub async fn a_stale_confirmation_pass_claims_and_gives_back_nothing_of_another_s(app: App) {
    app.catalogue(CHAIR, 2).await;
    let ann = app.sign_up(CHAIR, 1, T0).await;
    app.store.cancel(&ann.id, T0 + 1).await.unwrap();
    assert_eq!(
        app.claim_confirmation(&ann).await.0,
        Claim::NotClaimable,
        "cancelled: no mail"
    );
    let bob = app.sign_up(CHAIR, 2, T0).await;
    let (claim, link) = app.claim_confirmation(&bob).await;
    assert_eq!(claim, Claim::Claimed);
    let confirmed = app
        .store
        .confirm(&link, owner(), LIFETIME.as_millis(), T0 + MIN)
        .await
        .unwrap();
    assert!(
        matches!(confirmed, ConfirmOutcome::Confirmed(..)),
        "{confirmed:?}"
    );
    assert_eq!(
        app.claim_confirmation(&bob).await.0,
        Claim::NotClaimable,
        "confirmed: no second mail"
    );
    // Cy's first send failed and was given back; a second pass claimed her
    // again; the first pass's give-back arrives again (a retried call).
    let cy = app.sign_up(CHAIR, 3, T0).await;
    let (_, first) = app.claim_confirmation(&cy).await;
    let (chair, first) = (sku(CHAIR), first.secret_hash());
    let give_back = || app.store.release_confirmation(&chair, &cy.id, &first);
    give_back().await.unwrap();
    let (again, second) = app.claim_confirmation(&cy).await;
    assert_eq!(again, Claim::Claimed);
    give_back().await.unwrap();
    assert!(
        app.store
            .pending_confirmations(&sku(CHAIR), 100, i64::MAX)
            .await
            .unwrap()
            .is_empty(),
        "the second mail's claim stands"
    );
    let confirmed = app
        .store
        .confirm(&second, owner(), LIFETIME.as_millis(), T0 + MIN)
        .await
        .unwrap();
    assert!(
        matches!(confirmed, ConfirmOutcome::Confirmed(..)),
        "the second mail's link works: {confirmed:?}"
    );
    // Dan opted out, cut short before his sign-up was ended: no mail.
    let dan = app.sign_up(CHAIR, 4, T0).await;
    app.opt_out_record_only(&dan.contact_key, T0 + 1).await;
    assert_eq!(app.claim_confirmation(&dan).await.0, Claim::OptedOut);
}

/// A notify pass works from what it read a moment ago: an offer cancelled
/// since is claimed for no notice, and a give-back sent again after the
/// notice went out leaves the notice recorded (nothing re-armed, nothing
/// sent twice).
pub async fn a_stale_notice_pass_claims_and_gives_back_nothing_of_another_s(app: App) {
    app.join(CHAIR, 1, T0).await;
    app.join(CHAIR, 2, T0 + 1).await;
    app.level(CHAIR, 2, T0 + 10, "d1").await;
    let wave = app.wave(CHAIR, T0 + 10).await;
    let (a, b) = (&wave.offers[0], &wave.offers[1]);
    assert_eq!(
        app.store.cancel(&a.request.id, T0 + 11).await.unwrap(),
        CancelOutcome::Cancelled
    );
    assert_eq!(
        app.claim(&a.request.id, &a.reserve.secret_hash()).await,
        Claim::NotClaimable,
        "cancelled: no notice"
    );
    assert_eq!(
        app.claim(&b.request.id, &b.reserve.secret_hash()).await,
        Claim::Claimed
    );
    let sent = NoticeOutcome::Sent {
        message_id: "m".into(),
    };
    app.store
        .record_notice(&b.request.id, 1, sent.clone(), T0 + 12)
        .await
        .unwrap();
    app.store
        .release_notice(&sku(CHAIR), &b.request.id, 1)
        .await
        .unwrap();
    assert_eq!(app.get(&b.request.id).await.notice, Some(sent));
    // A third shopper clicked while their notice was on its way; the pass
    // then gives the claim back (its send timed out): the hold keeps it.
    let c = app.join(CHAIR, 3, T0 + 2).await;
    app.level(CHAIR, 3, T0 + 20, "d2").await;
    let top_up = app.wave(CHAIR, T0 + 20).await;
    assert_eq!(top_up.offers[0].request.id, c.id);
    let c_link = &top_up.offers[0].reserve;
    assert_eq!(
        app.claim(&c.id, &c_link.secret_hash()).await,
        Claim::Claimed
    );
    let held = app
        .store
        .take_hold(c_link, HoldId::from_random(app.bytes()), 1, T0 + 21, WINDOW)
        .await
        .unwrap();
    assert!(matches!(held, HoldOutcome::Held { .. }), "{held:?}");
    app.store
        .release_notice(&sku(CHAIR), &c.id, 1)
        .await
        .unwrap();
    assert_eq!(app.get(&c.id).await.notice, Some(NoticeOutcome::Sending));
    assert!(
        app.reissue_unsent(CHAIR).await.is_empty(),
        "nothing to send again"
    );
}

/// A notify pass of restock 1 is slow: its shopper's click found the item
/// sold out (back to the front) and restock 2 offered them a unit, whose
/// pass claimed the notice. The slow pass's late outcome and give-back
/// touch nothing of restock 2's: its notice is sent once, with its link.
pub async fn a_late_pass_of_one_restock_leaves_the_next_restock_s_notice(app: App) {
    let a = app.join(CHAIR, 1, T0).await;
    app.level(CHAIR, 1, T0 + 10, "d1").await;
    let first = app.wave(CHAIR, T0 + 10).await;
    let old = &first.offers[0].reserve;
    assert_eq!(app.claim(&a.id, &old.secret_hash()).await, Claim::Claimed);
    app.level(CHAIR, 0, T0 + 11, "d2").await;
    let click = app
        .store
        .take_hold(old, HoldId::from_random(app.bytes()), 1, T0 + 12, WINDOW)
        .await
        .unwrap();
    assert_eq!(click, HoldOutcome::SoldOutAgain);
    app.level(CHAIR, 1, T0 + 20, "d3").await;
    let next = app.wave(CHAIR, T0 + 20).await;
    let r = &next.offers[0].request;
    let RequestState::Offered { episode, .. } = r.state else {
        panic!("not offered: {:?}", r.state);
    };
    assert!(episode > 1, "a new restock");
    let link = next.offers[0].reserve.secret_hash();
    let claim = app
        .store
        .claim_notice(&sku(CHAIR), &a.id, episode, &link, &a.contact_key)
        .await
        .unwrap();
    assert_eq!(claim, Claim::Claimed);
    // The slow pass of restock 1 answers late.
    app.store
        .release_notice(&sku(CHAIR), &a.id, 1)
        .await
        .unwrap();
    let late = NoticeOutcome::Sent {
        message_id: "late".into(),
    };
    app.store
        .record_notice(&a.id, 1, late, T0 + 21)
        .await
        .unwrap();
    assert_eq!(app.get(&a.id).await.notice, Some(NoticeOutcome::Sending));
    assert!(
        app.reissue_unsent(CHAIR).await.is_empty(),
        "restock 2's notice is not sent again"
    );
}

pub async fn a_repeat_click_returns_the_same_hold(app: App) {
    app.join(CHAIR, 1, T0).await;
    app.level(CHAIR, 3, T0 + 1, "d1").await;
    let wave = app.wave(CHAIR, T0 + 2).await;
    let token = &wave.offers[0].reserve;
    let hold = HoldId::from_random(app.bytes());
    let first = app
        .store
        .take_hold(token, hold, 1, T0 + MIN, WINDOW)
        .await
        .unwrap();
    let again = app
        .store
        .take_hold(
            token,
            HoldId::from_random(app.bytes()),
            1,
            T0 + 2 * MIN,
            WINDOW,
        )
        .await
        .unwrap();
    assert_eq!(
        first,
        HoldOutcome::Held {
            hold,
            expires: T0 + 16 * MIN
        }
    );
    assert_eq!(
        again,
        HoldOutcome::AlreadyHeld {
            hold,
            expires: T0 + 16 * MIN
        }
    );
    let c = app.store.snapshot(&sku(CHAIR)).await.unwrap().counters;
    assert_eq!((c.offered, c.held), (0, 1));
}

pub async fn unknown_wrong_and_expired_links_are_refused_alike(app: App) {
    let r = app.join(CHAIR, 1, T0).await;
    app.level(CHAIR, 1, T0 + 1, "d1").await;
    let wave = app.wave(CHAIR, T0 + 2).await;
    let good = wave.offers[0].reserve.clone();
    let expired = HoldOutcome::Refused(HoldRefused::Expired);
    let guessed = restock_core::LinkToken::new(sku(CHAIR), r.id, [0x11; 16]);
    assert_eq!(
        app.store
            .take_hold(
                &guessed,
                HoldId::from_random(app.bytes()),
                1,
                T0 + 3,
                WINDOW
            )
            .await
            .unwrap(),
        expired
    );
    let nobody = restock_core::LinkToken::new(
        sku(CHAIR),
        restock_core::RequestId::from_random([0x22; 16]),
        [0x33; 16],
    );
    assert_eq!(
        app.store
            .take_hold(&nobody, HoldId::from_random(app.bytes()), 1, T0 + 3, WINDOW)
            .await
            .unwrap(),
        expired
    );
    // The link edited to name another item that has a unit: nothing is held
    // there (the secret is the request's, the item is not).
    app.level(OAT, 1, T0 + 1, "d-oat").await;
    let edited: restock_core::LinkToken = good.to_string().replacen(CHAIR, OAT, 1).parse().unwrap();
    let answer = app
        .store
        .take_hold(&edited, HoldId::from_random(app.bytes()), 1, T0 + 3, WINDOW)
        .await
        .unwrap();
    assert!(
        matches!(answer, HoldOutcome::Refused(_)),
        "an edited link: {answer:?}"
    );
    assert_eq!(
        app.store.snapshot(&sku(OAT)).await.unwrap().counters.held,
        0
    );
    let late = T0 + 2 + WINDOW.as_millis();
    assert_eq!(
        app.store
            .take_hold(&good, HoldId::from_random(app.bytes()), 1, late, WINDOW)
            .await
            .unwrap(),
        expired
    );
    assert_eq!(
        app.store.snapshot(&sku(CHAIR)).await.unwrap().counters.held,
        0,
        "nothing was held"
    );
}

pub async fn sold_out_again_returns_the_shopper_to_the_front(app: App) {
    let a = app.join(CHAIR, 1, T0).await;
    let b = app.join(CHAIR, 2, T0 + 1).await;
    app.join(CHAIR, 3, T0 + 2).await;
    app.level(CHAIR, 2, T0 + 10, "d1").await;
    let wave = app.wave(CHAIR, T0 + 11).await;
    assert_eq!(wave.offers.len(), 2);
    // The shop sells one elsewhere: level 1 with two live links.
    app.level(CHAIR, 1, T0 + 12, "d2").await;
    let first = app
        .store
        .take_hold(
            &wave.offers[1].reserve,
            HoldId::from_random(app.bytes()),
            1,
            T0 + MIN,
            WINDOW,
        )
        .await
        .unwrap();
    assert!(matches!(first, HoldOutcome::Held { .. }), "{first:?}");
    let second = app
        .store
        .take_hold(
            &wave.offers[0].reserve,
            HoldId::from_random(app.bytes()),
            1,
            T0 + MIN,
            WINDOW,
        )
        .await
        .unwrap();
    assert_eq!(second, HoldOutcome::SoldOutAgain);
    let back = app.get(&a.id).await;
    assert_eq!(back.state, RequestState::Waiting);
    assert_eq!(back.key, a.key, "keeps the original join time");
    assert_eq!(
        app.store.position(&back, 1).await.unwrap(),
        Some(1),
        "at the front"
    );
    assert_eq!(app.get(&b.id).await.state.status(), Status::Held);
    app.assert_never_oversold(CHAIR).await;
    // The next unit that frees up goes to the shopper at the front, in the same restock.
    app.level(CHAIR, 2, T0 + 2 * MIN, "d3").await;
    let next = app.wave(CHAIR, T0 + 2 * MIN).await;
    assert_eq!(
        next.offers.iter().map(|o| o.request.id).collect::<Vec<_>>(),
        vec![a.id]
    );
}

pub async fn duplicate_and_older_stock_events_change_nothing(app: App) {
    assert!(matches!(
        app.level(CHAIR, 4, T0 + 10, "d1").await,
        ApplyOutcome::Applied {
            outcome: StockOutcome::Restock { .. },
            ..
        }
    ));
    assert_eq!(
        app.level(CHAIR, 4, T0 + 10, "d1").await,
        ApplyOutcome::Duplicate
    );
    assert_eq!(
        app.level(CHAIR, 0, T0 + 5, "d0").await,
        ApplyOutcome::Applied {
            outcome: StockOutcome::Stale,
            tied: false
        }
    );
    assert_eq!(
        app.level(CHAIR, 0, T0 + 5, "d0").await,
        ApplyOutcome::Duplicate
    );
    let snap = app.store.snapshot(&sku(CHAIR)).await.unwrap();
    assert_eq!(snap.counters.level, 4);
    assert_eq!(app.store.wakes(&sku(CHAIR)).await.unwrap().len(), 1);
}

pub async fn a_flapping_level_notifies_nobody_twice(app: App) {
    let shoppers = [
        app.join(CHAIR, 1, T0).await,
        app.join(CHAIR, 2, T0 + 1).await,
    ];
    let mut offered = Vec::new();
    for (i, level) in [5, 0, 5, 0, 5].iter().enumerate() {
        let at = T0 + 10 + i as i64;
        app.level(CHAIR, *level, at, &format!("flap{i}")).await;
        offered.extend(
            app.wave(CHAIR, at)
                .await
                .offers
                .into_iter()
                .map(|o| o.request.id),
        );
    }
    offered.sort();
    let mut expected: Vec<_> = shoppers.iter().map(|r| r.id).collect();
    expected.sort();
    assert_eq!(
        offered, expected,
        "each shopper is told once across the flaps"
    );
    let restocks = app
        .store
        .wakes(&sku(CHAIR))
        .await
        .unwrap()
        .iter()
        .filter(|w| w.kind == WakeKind::Restock)
        .count();
    assert_eq!(restocks, 3, "three genuine crossings");
}

pub async fn top_ups_offer_more_units_in_the_same_restock(app: App) {
    for i in 0..5 {
        app.join(CHAIR, i, T0 + i as i64).await;
    }
    app.level(CHAIR, 2, T0 + 10, "d1").await;
    assert_eq!(app.wave(CHAIR, T0 + 10).await.offers.len(), 2);
    let top = app.level(CHAIR, 4, T0 + 20, "d2").await;
    assert_eq!(
        top,
        ApplyOutcome::Applied {
            outcome: StockOutcome::TopUp {
                episode: 1,
                level: 4,
                added: 2
            },
            tied: false
        }
    );
    let wave = app.wave(CHAIR, T0 + 20).await;
    assert_eq!(wave.episode, 1);
    assert_eq!(wave.offers.len(), 2);
    app.assert_never_oversold(CHAIR).await;
}

pub async fn a_rejected_restock_offers_nothing_and_the_next_reading_is_judged_afresh(app: App) {
    app.join(CHAIR, 1, T0).await;
    assert!(
        !app.store.reject_paused(&sku(CHAIR), T0).await.unwrap(),
        "nothing paused"
    );
    app.level(CHAIR, 1_000, T0 + 10, "d1").await;
    assert!(app.store.reject_paused(&sku(CHAIR), T0 + 12).await.unwrap());
    let snapshot = app.store.snapshot(&sku(CHAIR)).await.unwrap();
    assert!(!snapshot.stock.paused && !snapshot.stock.in_stock);
    assert_eq!(snapshot.counters.level, 0);
    assert!(app.wave(CHAIR, T0 + 13).await.offers.is_empty());
    assert!(
        app.store.wakes(&sku(CHAIR)).await.unwrap().is_empty(),
        "nobody woken"
    );
    assert!(
        !app.store.reject_paused(&sku(CHAIR), T0 + 14).await.unwrap(),
        "once"
    );
    // The shop reports a believable level: a restock, offered.
    let outcome = app.level(CHAIR, 2, T0 + 20, "d2").await;
    assert!(
        matches!(
            outcome,
            ApplyOutcome::Applied {
                outcome: StockOutcome::Restock {
                    episode: 2,
                    level: 2
                },
                ..
            }
        ),
        "{outcome:?}"
    );
    assert_eq!(app.wave(CHAIR, T0 + 21).await.offers.len(), 1);
    app.assert_never_oversold(CHAIR).await;
}

pub async fn an_escalated_restock_waits_for_release(app: App) {
    app.join(CHAIR, 1, T0).await;
    let outcome = app.level(CHAIR, 1_000, T0 + 10, "d1").await;
    assert!(
        matches!(
            outcome,
            ApplyOutcome::Applied {
                outcome: StockOutcome::Escalated { .. },
                ..
            }
        ),
        "{outcome:?}"
    );
    assert!(
        app.wave(CHAIR, T0 + 11).await.offers.is_empty(),
        "nothing is offered while paused"
    );
    assert!(app.store.wakes(&sku(CHAIR)).await.unwrap().is_empty());
    let released = app
        .store
        .release_paused(&sku(CHAIR), T0 + 12)
        .await
        .unwrap();
    assert_eq!(
        released,
        Some(StockOutcome::Restock {
            episode: 1,
            level: 1_000
        })
    );
    assert_eq!(
        app.store
            .release_paused(&sku(CHAIR), T0 + 13)
            .await
            .unwrap(),
        None
    );
    assert_eq!(app.wave(CHAIR, T0 + 14).await.offers.len(), 1);
}

pub async fn a_notice_is_claimed_once_and_a_failure_passes_the_unit_on(app: App) {
    let a = app.join(CHAIR, 1, T0).await;
    let b = app.join(CHAIR, 2, T0 + 1).await;
    app.level(CHAIR, 1, T0 + 10, "d1").await;
    let wave = app.wave(CHAIR, T0 + 10).await;
    assert_eq!(wave.offers[0].request.id, a.id);
    let a_link = wave.offers[0].reserve.secret_hash();
    assert_eq!(app.claim(&a.id, &a_link).await, Claim::Claimed);
    assert_eq!(
        app.claim(&a.id, &a_link).await,
        Claim::NotClaimable,
        "a redelivery sends nothing"
    );
    assert_eq!(
        app.claim(&b.id, &a_link).await,
        Claim::NotClaimable,
        "b has no offer"
    );
    app.store
        .record_notice(
            &a.id,
            1,
            NoticeOutcome::Failed {
                reason: "bounced".into(),
            },
            T0 + 11,
        )
        .await
        .unwrap();
    let failed = app.get(&a.id).await;
    assert_eq!(failed.state, RequestState::Undeliverable);
    assert_eq!(
        failed.notice,
        Some(NoticeOutcome::Failed {
            reason: "bounced".into()
        })
    );
    let wave = app.wave(CHAIR, T0 + 12).await;
    assert_eq!(
        wave.offers.iter().map(|o| o.request.id).collect::<Vec<_>>(),
        vec![b.id],
        "the unit passes on"
    );
    let b_link = wave.offers[0].reserve.secret_hash();
    assert_eq!(app.claim(&b.id, &b_link).await, Claim::Claimed);
    app.store
        .record_notice(
            &b.id,
            1,
            NoticeOutcome::Sent {
                message_id: "m-1".into(),
            },
            T0 + 13,
        )
        .await
        .unwrap();
    assert_eq!(
        app.get(&b.id).await.notice,
        Some(NoticeOutcome::Sent {
            message_id: "m-1".into()
        })
    );
}

pub async fn overlapping_sweeps_end_each_due_request_once(app: App) {
    for i in 0..4 {
        app.join(CHAIR, i, T0 + i as i64).await;
    }
    app.level(CHAIR, 4, T0 + 10, "d1").await;
    let wave = app.wave_sent(CHAIR, T0 + 10).await;
    app.store
        .take_hold(
            &wave.offers[0].reserve,
            HoldId::from_random(app.bytes()),
            1,
            T0 + MIN,
            WINDOW,
        )
        .await
        .unwrap();
    let later = T0 + 40 * MIN;
    app.settle().await;
    let due = app.store.due(later, 100).await.unwrap();
    assert_eq!(due.len(), 4);
    assert!(
        app.store.due(T0 + 5 * MIN, 100).await.unwrap().is_empty(),
        "nothing is due early"
    );
    let mut outcomes = Vec::new();
    for d in due.iter().chain(due.iter()) {
        outcomes.push(app.store.expire(d, later).await.unwrap());
    }
    let count = |o: ExpireOutcome| outcomes.iter().filter(|x| **x == o).count();
    assert_eq!(
        (
            count(ExpireOutcome::Lapsed),
            count(ExpireOutcome::Released),
            count(ExpireOutcome::Skipped)
        ),
        (3, 1, 4)
    );
    let c = app.store.snapshot(&sku(CHAIR)).await.unwrap().counters;
    assert_eq!((c.offered, c.held), (0, 0), "each freed unit counted once");
    assert_eq!(app.store.stats(&sku(CHAIR), 1).await.unwrap().lapsed, 3);
    app.settle().await;
    assert!(app.store.due(later, 100).await.unwrap().is_empty());
}

pub async fn stale_requests_expire_and_are_skipped_by_waves(app: App) {
    let old = app.join(CHAIR, 1, T0).await;
    let young = app.join(CHAIR, 2, T0 + 80 * DAY).await;
    let now = T0 + 91 * DAY;
    app.settle().await;
    let due = app.store.due(now, 10).await.unwrap();
    assert_eq!(due.iter().map(|d| d.id).collect::<Vec<_>>(), vec![old.id]);
    assert_eq!(
        app.store.expire(&due[0], now).await.unwrap(),
        ExpireOutcome::Stale
    );
    assert_eq!(app.get(&old.id).await.state, RequestState::Stale);
    assert_eq!(
        app.store
            .position(&app.get(&young.id).await, 1)
            .await
            .unwrap(),
        Some(1)
    );
}

pub async fn an_opt_out_link_ends_every_live_request_of_the_contact(app: App) {
    let chair = app.join(CHAIR, 1, T0).await;
    let throw = app.join("THROW-OAT", 1, T0).await;
    let other = app.join(CHAIR, 2, T0 + 1).await;
    app.level(CHAIR, 5, T0 + 10, "d1").await;
    let wave = app.wave(CHAIR, T0 + 10).await;
    let offer = wave
        .offers
        .iter()
        .find(|o| o.request.id == chair.id)
        .unwrap();
    let forged = restock_core::LinkToken::new(sku(CHAIR), chair.id, [0x55; 16]);
    assert_eq!(
        app.store.opt_out(&forged, T0 + 11).await.unwrap(),
        OptOutOutcome::NotFound
    );
    assert_eq!(
        app.store.opt_out(&offer.optout, T0 + 11).await.unwrap(),
        OptOutOutcome::OptedOut { ended: 2 }
    );
    assert_eq!(app.get(&chair.id).await.state, RequestState::OptedOut);
    assert_eq!(app.get(&throw.id).await.state, RequestState::OptedOut);
    assert_eq!(app.get(&other.id).await.state.status(), Status::Offered);
    assert_eq!(
        app.store
            .snapshot(&sku(CHAIR))
            .await
            .unwrap()
            .counters
            .offered,
        1,
        "the opted-out offer's unit is freed"
    );
    assert_eq!(
        app.join_as(CHAIR, email(1), T0 + 12, 1).await,
        JoinOutcome::OptedOut,
        "for good"
    );
}

pub async fn a_purchase_ends_the_hold_and_takes_the_unit_off_the_level(app: App) {
    app.join(CHAIR, 1, T0).await;
    app.level(CHAIR, 2, T0 + 10, "d1").await;
    let wave = app.wave(CHAIR, T0 + 10).await;
    let hold = HoldId::from_random(app.bytes());
    app.store
        .take_hold(&wave.offers[0].reserve, hold, 1, T0 + MIN, WINDOW)
        .await
        .unwrap();
    assert_eq!(
        app.store
            .mark_bought(&hold, &order_at(T0 + 2 * MIN), T0 + 2 * MIN)
            .await
            .unwrap(),
        BuyOutcome::Bought {
            sku: sku(CHAIR),
            tied: false
        }
    );
    assert_eq!(
        app.store
            .mark_bought(&hold, &order_at(T0 + 2 * MIN), T0 + 3 * MIN)
            .await
            .unwrap(),
        BuyOutcome::AlreadyBought
    );
    assert_eq!(
        app.store
            .mark_bought(&HoldId::from_random([9; 16]), &order_at(T0), T0)
            .await
            .unwrap(),
        BuyOutcome::NotHeld
    );
    let snap = app.store.snapshot(&sku(CHAIR)).await.unwrap();
    assert_eq!(
        (snap.counters.held, snap.counters.level, snap.bought),
        (0, 1, 1)
    );
    assert_eq!(
        app.get(&wave.offers[0].request.id).await.state,
        RequestState::Bought { hold }
    );
}

pub async fn every_request_is_listed_once_with_when_it_was_told_held_and_ended(app: App) {
    for i in 1..=7 {
        app.join(CHAIR, i, T0 + i as i64).await;
    }
    app.level(CHAIR, 1, T0 + 10, "d1").await;
    let wave = app.wave(CHAIR, T0 + 10).await;
    let buyer = wave.offers[0].request.id;
    assert_eq!(
        app.claim(&buyer, &wave.offers[0].reserve.secret_hash())
            .await,
        Claim::Claimed
    );
    let sent = NoticeOutcome::Sent {
        message_id: "m".into(),
    };
    app.store
        .record_notice(&buyer, 1, sent, T0 + 20)
        .await
        .unwrap();
    let hold = HoldId::from_random(app.bytes());
    app.store
        .take_hold(&wave.offers[0].reserve, hold, 1, T0 + MIN, WINDOW)
        .await
        .unwrap();
    app.store
        .mark_bought(&hold, &order_at(T0 + 2 * MIN), T0 + 2 * MIN)
        .await
        .unwrap();

    // Pages of three: every request exactly once.
    let mut seen = Vec::new();
    let mut after = None;
    for _ in 0..20 {
        let page = app.store.requests_page(after.as_deref(), 3).await.unwrap();
        seen.extend(page.requests);
        after = page.next;
        if after.is_none() {
            break;
        }
    }
    assert!(after.is_none(), "the pages end");
    let mut ids: Vec<_> = seen.iter().map(|r| r.id).collect();
    ids.sort_unstable_by_key(ToString::to_string);
    ids.dedup();
    assert_eq!((seen.len(), ids.len()), (7, 7), "each of the seven once");
    let bought = seen.iter().find(|r| r.id == buyer).unwrap();
    assert_eq!(bought.state, RequestState::Bought { hold });
    assert_eq!(
        bought.moments,
        crate::Moments {
            told_ms: Some(T0 + 20),
            held_ms: Some(T0 + MIN),
            ended_ms: Some(T0 + 2 * MIN),
        }
    );
    let waiting = seen.iter().find(|r| r.id != buyer).unwrap();
    assert_eq!(waiting.moments, crate::Moments::default());
}

pub async fn an_item_s_history_counts_each_moment_once_on_its_day_and_in_its_restock(app: App) {
    let day = restock_core::feedback::day_of;
    for i in 1..=4 {
        app.join(CHAIR, i, T0 + i as i64).await;
    }
    app.join(CHAIR, 5, T0 + DAY).await;
    app.level(CHAIR, 3, T0 + DAY + 10, "d1").await;
    let wave = app.wave_sent(CHAIR, T0 + DAY + 10).await;
    assert_eq!(wave.offers.len(), 3);
    let told = T0 + DAY + 20;
    for o in &wave.offers {
        let sent = NoticeOutcome::Sent {
            message_id: format!("m-{}", o.request.id),
        };
        app.store
            .record_notice(&o.request.id, 1, sent, told)
            .await
            .unwrap();
    }
    // The same notice recorded again (a retried pass) is not told twice.
    let again = NoticeOutcome::Sent {
        message_id: "m-again".into(),
    };
    app.store
        .record_notice(&wave.offers[0].request.id, 1, again, told + 5)
        .await
        .unwrap();
    let (bought, run_out) = (
        HoldId::from_random(app.bytes()),
        HoldId::from_random(app.bytes()),
    );
    let clicked = T0 + DAY + MIN;
    for (offer, hold) in wave.offers.iter().zip([bought, run_out]) {
        app.store
            .take_hold(&offer.reserve, hold, 1, clicked, WINDOW)
            .await
            .unwrap();
    }
    // A repeat click is the same hold, not another.
    assert!(matches!(
        app.store
            .take_hold(&wave.offers[0].reserve, bought, 1, clicked + 1, WINDOW)
            .await
            .unwrap(),
        HoldOutcome::AlreadyHeld { .. }
    ));
    let paid = T0 + 2 * DAY;
    for _ in 0..2 {
        app.store
            .mark_bought(&bought, &order_at(paid), paid)
            .await
            .unwrap();
    }
    // Two days on, the other hold has run out and the third offer lapsed.
    let outcomes = app.sweep(T0 + 3 * DAY).await;
    assert!(outcomes.contains(&ExpireOutcome::Lapsed), "{outcomes:?}");
    assert!(outcomes.contains(&ExpireOutcome::Released), "{outcomes:?}");
    app.sweep(T0 + 3 * DAY).await;

    let history = app.store.item_history(&sku(CHAIR), &day(T0)).await.unwrap();
    let days: Vec<_> = history.days.iter().map(|(d, f)| (d.clone(), *f)).collect();
    assert_eq!(
        days,
        vec![
            (
                day(T0),
                DayFigures {
                    sign_ups: 4,
                    ..DayFigures::default()
                }
            ),
            (
                day(T0 + DAY),
                DayFigures {
                    sign_ups: 1,
                    told: 3,
                    bought: 0
                }
            ),
            (
                day(paid),
                DayFigures {
                    bought: 1,
                    ..DayFigures::default()
                }
            ),
        ],
        "each moment on its own UTC day, once"
    );
    assert_eq!(
        history.restocks.into_iter().collect::<Vec<_>>(),
        vec![(
            1,
            RestockFigures {
                first_told: Some(told),
                told: 3,
                held: 2,
                bought: 1,
                lapsed: 1,
                released: 1,
                reminded: 0,
            }
        )]
    );
    let later = app
        .store
        .item_history(&sku(CHAIR), &day(paid))
        .await
        .unwrap();
    assert_eq!(
        later.days.keys().cloned().collect::<Vec<_>>(),
        vec![day(paid)],
        "only the days asked for"
    );
    assert_eq!(later.restocks.len(), 1, "and every restock");
    assert_eq!(
        app.store.item_history(&sku(OAT), &day(T0)).await.unwrap(),
        ItemHistory::default(),
        "another item's history is its own"
    );
}

pub async fn sharded_queues_read_back_in_join_order(app: App) {
    app.catalogue(CHAIR, 4).await;
    let mut joined = Vec::new();
    for i in 0..40 {
        // Several per millisecond, so the tie-break matters too.
        match app.join_as(CHAIR, email(i), T0 + (i / 3) as i64, 4).await {
            JoinOutcome::Joined(r) => joined.push(r),
            other => panic!("{other:?}"),
        }
    }
    assert!(
        joined
            .iter()
            .map(|r| r.shard)
            .collect::<std::collections::HashSet<_>>()
            .len()
            > 1,
        "spread over shards"
    );
    let mut expected = joined.clone();
    expected.sort_by_key(|r| r.key);
    let queue = app.store.queue(&sku(CHAIR), 4, 100).await.unwrap();
    assert_eq!(
        queue.iter().map(|r| r.id).collect::<Vec<_>>(),
        expected.iter().map(|r| r.id).collect::<Vec<_>>()
    );
    // Any limit is an upper bound, not room to set aside.
    let unbounded = app.store.queue(&sku(CHAIR), 4, usize::MAX).await.unwrap();
    assert_eq!(unbounded.len(), expected.len());
    for (i, r) in expected.iter().enumerate().step_by(7) {
        assert_eq!(app.store.position(r, 4).await.unwrap(), Some(i + 1));
    }
    app.level(CHAIR, 10, T0 + 100, "d1").await;
    let wave = app.wave_sharded(CHAIR, T0 + 100, 4).await;
    assert_eq!(
        wave.offers.iter().map(|o| o.request.id).collect::<Vec<_>>(),
        expected[..10].iter().map(|r| r.id).collect::<Vec<_>>()
    );
}

pub async fn nothing_is_offered_when_out_of_stock_or_capped(app: App) {
    for i in 0..6 {
        app.join(CHAIR, i, T0 + i as i64).await;
    }
    assert!(
        app.wave(CHAIR, T0 + 10).await.offers.is_empty(),
        "never restocked"
    );
    let rules = restock_core::Rules {
        threshold: 3,
        ..RULES
    };
    let event = |level, at: i64, id: &str| restock_core::StockEvent {
        delivery_id: id.into(),
        item: ItemRef::Sku { sku: sku(CHAIR) },
        location: "default".into(),
        level: restock_core::Level::Tracked(level),
        at: time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(at) * 1_000_000).unwrap(),
        untimed: false,
    };
    let share = restock_core::ListShare::new(0.5).unwrap();
    app.store
        .apply_stock(&sku(CHAIR), &event(2, T0 + 11, "a"), &rules, T0 + 11)
        .await
        .unwrap();
    assert!(
        app.wave(CHAIR, T0 + 11).await.offers.is_empty(),
        "below the threshold"
    );
    app.store
        .apply_stock(&sku(CHAIR), &event(5, T0 + 12, "b"), &rules, T0 + 12)
        .await
        .unwrap();
    let mut random = random(3);
    let capped = WaveParams { share, ..params(1) };
    let wave = app
        .store
        .create_offers(&sku(CHAIR), &capped, T0 + 12, &mut random)
        .await
        .unwrap();
    assert_eq!(wave.offers.len(), 2, "half of five, rounded down");
    let limited = WaveParams {
        max_offers: 1,
        ..params(1)
    };
    let wave = app
        .store
        .create_offers(&sku(CHAIR), &limited, T0 + 13, &mut random)
        .await
        .unwrap();
    assert_eq!(wave.offers.len(), 1, "a wave is bounded");
}

pub async fn reconcile_finds_no_drift_in_consistent_counters(app: App) {
    for i in 0..3 {
        app.join(CHAIR, i, T0 + i as i64).await;
    }
    app.level(CHAIR, 3, T0 + 10, "d1").await;
    let wave = app.wave(CHAIR, T0 + 10).await;
    app.store
        .take_hold(
            &wave.offers[0].reserve,
            HoldId::from_random(app.bytes()),
            1,
            T0 + MIN,
            WINDOW,
        )
        .await
        .unwrap();
    app.settle().await;
    assert_eq!(
        app.store
            .reconcile(&sku(CHAIR), T0 + 10 * MIN)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        app.store.reconcile(&sku("NEVER-SEEN"), T0).await.unwrap(),
        None
    );
}

pub async fn catalogue_entries_resolve_from_every_platform_id(app: App) {
    let mut entry = CatalogueEntry::new(sku(CHAIR), "Walnut dining chair");
    entry
        .ids
        .set(Platform::Shopify, Some(271_878_346_596_884_015));
    entry.ids.set(Platform::WooCommerce, Some(799));
    app.store.put_catalogue_entry(&entry).await.unwrap();
    assert_eq!(
        app.store.catalogue_entry(&sku(CHAIR)).await.unwrap(),
        Some(entry.clone())
    );
    let by = |item: ItemRef| {
        let store = app.store.clone();
        async move { store.resolve_item(&item).await.unwrap().map(|e| e.sku) }
    };
    assert_eq!(
        by(ItemRef::Platform {
            platform: Platform::Shopify,
            id: 271_878_346_596_884_015,
            sku: None
        })
        .await,
        Some(sku(CHAIR))
    );
    assert_eq!(
        by(ItemRef::Platform {
            platform: Platform::WooCommerce,
            id: 799,
            sku: None
        })
        .await,
        Some(sku(CHAIR))
    );
    assert_eq!(
        by(ItemRef::Platform {
            platform: Platform::WooCommerce,
            id: 1,
            sku: Some(sku(CHAIR))
        })
        .await,
        Some(sku(CHAIR))
    );
    assert_eq!(
        by(ItemRef::Sku {
            sku: sku("UNKNOWN")
        })
        .await,
        None
    );
    entry.ids.set(Platform::Shopify, Some(5));
    app.store.put_catalogue_entry(&entry).await.unwrap();
    assert_eq!(
        by(ItemRef::Platform {
            platform: Platform::Shopify,
            id: 271_878_346_596_884_015,
            sku: None
        })
        .await,
        None,
        "the old id is unmapped"
    );
    assert_eq!(
        by(ItemRef::Platform {
            platform: Platform::Shopify,
            id: 5,
            sku: None
        })
        .await,
        Some(sku(CHAIR))
    );
}

pub async fn settings_round_trip(app: App) {
    assert_eq!(app.store.settings().await.unwrap(), None);
    let settings = Settings::from_toml(
        "store_name = \"Loom & Last\"\npublic_base_url = \"https://notify.loomandlast.co.uk\"\nemail_from = \"hello@loomandlast.co.uk\"\n",
    )
    .unwrap();
    app.store.put_settings(&settings).await.unwrap();
    assert_eq!(app.store.settings().await.unwrap(), Some(settings));
}

pub async fn unsent_offers_are_reissued_with_fresh_links_and_sent_once(app: App) {
    app.join(CHAIR, 1, T0).await;
    app.join(CHAIR, 2, T0 + 1).await;
    app.level(CHAIR, 2, T0 + 10, "d1").await;
    let wave = app.wave(CHAIR, T0 + 10).await;
    let (a, b) = (&wave.offers[0], &wave.offers[1]);
    assert_eq!(
        app.claim(&a.request.id, &a.reserve.secret_hash()).await,
        Claim::Claimed
    );
    app.store
        .record_notice(
            &a.request.id,
            1,
            NoticeOutcome::Sent {
                message_id: "m".into(),
            },
            T0 + 11,
        )
        .await
        .unwrap();
    // b's send fails transiently: its claim is given back.
    assert_eq!(
        app.claim(&b.request.id, &b.reserve.secret_hash()).await,
        Claim::Claimed
    );
    app.store
        .release_notice(&sku(CHAIR), &b.request.id, 1)
        .await
        .unwrap();
    let again = app.reissue_unsent(CHAIR).await;
    assert_eq!(
        again.iter().map(|o| o.request.id).collect::<Vec<_>>(),
        vec![b.request.id],
        "only the unsent one"
    );
    let hold = HoldId::from_random(app.bytes());
    assert_eq!(
        app.store
            .take_hold(&b.reserve, hold, 1, T0 + MIN, WINDOW)
            .await
            .unwrap(),
        HoldOutcome::Refused(HoldRefused::Expired),
        "the old, never-sent link no longer works"
    );
    assert!(matches!(
        app.store
            .take_hold(&again[0].reserve, hold, 1, T0 + MIN, WINDOW)
            .await
            .unwrap(),
        HoldOutcome::Held { .. }
    ));
    assert!(
        app.reissue_unsent(CHAIR).await.is_empty(),
        "a held offer is not re-armed"
    );
}

pub async fn a_restock_keeps_its_phrase_per_language(app: App) {
    let (en, de, pt_br) = (
        restock_core::Language::english(),
        "de".parse().unwrap(),
        "pt-BR".parse().unwrap(),
    );
    assert_eq!(
        app.store.restock_phrase(&sku(CHAIR), 1, &en).await.unwrap(),
        None
    );
    app.level(CHAIR, 1, T0, "d1").await;
    for (language, words) in [
        (&en, "Home again."),
        (&de, "Wieder da."),
        (&pt_br, "De volta."),
    ] {
        app.store
            .save_restock_phrase(&sku(CHAIR), 1, language, words)
            .await
            .unwrap();
    }
    for (language, words) in [
        (&en, "Home again."),
        (&de, "Wieder da."),
        (&pt_br, "De volta."),
    ] {
        assert_eq!(
            app.store
                .restock_phrase(&sku(CHAIR), 1, language)
                .await
                .unwrap()
                .as_deref(),
            Some(words),
            "{language}"
        );
    }
    assert_eq!(
        app.store
            .restock_phrase(&sku(CHAIR), 1, &"fr".parse().unwrap())
            .await
            .unwrap(),
        None,
        "each language its own words"
    );
    assert_eq!(
        app.store.restock_phrase(&sku(CHAIR), 2, &en).await.unwrap(),
        None,
        "a new restock gets new words"
    );
}

pub async fn rate_limits_count_per_key_and_window(app: App) {
    let window = 10 * MIN;
    let start = T0 - T0 % window;
    for _ in 0..3 {
        assert_eq!(
            app.store
                .rate_limit("ip:203.0.113.9", 3, window, start + MIN)
                .await
                .unwrap(),
            RateDecision::Allowed
        );
    }
    assert_eq!(
        app.store
            .rate_limit("ip:203.0.113.9", 3, window, start + MIN)
            .await
            .unwrap(),
        RateDecision::Limited {
            retry_after_ms: 9 * MIN
        }
    );
    assert_eq!(
        app.store
            .rate_limit("ip:198.51.100.1", 3, window, start + MIN)
            .await
            .unwrap(),
        RateDecision::Allowed
    );
    assert_eq!(
        app.store
            .rate_limit("ip:203.0.113.9", 3, window, start + window)
            .await
            .unwrap(),
        RateDecision::Allowed,
        "a new window"
    );
}

pub async fn the_catalogue_lists_every_entry_once_in_sku_order(app: App) {
    assert!(app.store.catalogue().await.unwrap().is_empty());
    for (code, name) in [
        ("LAMP-BRASS", "Brass lamp"),
        (CHAIR, "Walnut chair"),
        ("B-1", "Bench"),
    ] {
        app.store
            .put_catalogue_entry(&CatalogueEntry::new(sku(code), name))
            .await
            .unwrap();
    }
    let mut renamed = CatalogueEntry::new(sku(CHAIR), "Walnut dining chair");
    renamed.threshold = Some(2);
    app.store.put_catalogue_entry(&renamed).await.unwrap();
    // An item its platform stopped listing is kept, ended, and read back so.
    let mut ended = CatalogueEntry::new(sku("B-1"), "Bench");
    ended.ended = Some(T0);
    app.store.put_catalogue_entry(&ended).await.unwrap();
    let listed = app.store.catalogue().await.unwrap();
    let skus: Vec<&str> = listed.iter().map(|e| e.sku.as_str()).collect();
    assert_eq!(skus, ["B-1", CHAIR, "LAMP-BRASS"]);
    assert_eq!(listed[1], renamed);
    assert_eq!(listed[0], ended);
    assert_eq!(
        app.store.catalogue_entry(&sku("B-1")).await.unwrap(),
        Some(ended)
    );
}

pub async fn live_units_list_every_offer_and_hold_soonest_to_run_out_first(app: App) {
    assert!(app.store.live_units(&sku(CHAIR)).await.unwrap().is_empty());
    for i in 1..=4 {
        app.join(CHAIR, i, T0 + i as i64).await;
    }
    app.level(CHAIR, 3, T0 + 10, "d1").await;
    let wave = app.wave(CHAIR, T0 + 10).await;
    assert_eq!(wave.offers.len(), 3);
    // The second offered takes a hold: it runs out a window after the
    // click, later than the two offers still open.
    let held = &wave.offers[1];
    app.store
        .take_hold(
            &held.reserve,
            HoldId::from_random(app.bytes()),
            1,
            T0 + MIN,
            WINDOW,
        )
        .await
        .unwrap();
    let live = app.store.live_units(&sku(CHAIR)).await.unwrap();
    let ids: Vec<restock_core::RequestId> = live.iter().map(|r| r.id).collect();
    let mut offered: Vec<restock_core::RequestId> = [&wave.offers[0], &wave.offers[2]]
        .iter()
        .map(|o| o.request.id)
        .collect();
    offered.sort();
    assert_eq!(ids, [offered[0], offered[1], held.request.id]);
    assert!(matches!(live[2].state, RequestState::Held { .. }));
    assert!(live.iter().all(|r| r.sku == sku(CHAIR)));
    // Another item's units are not this one's; one run out is not live.
    app.join("LAMP", 9, T0).await;
    app.level("LAMP", 1, T0 + 10, "d2").await;
    app.wave("LAMP", T0 + 10).await;
    app.sweep(T0 + 10 + WINDOW.as_millis()).await;
    let live = app.store.live_units(&sku(CHAIR)).await.unwrap();
    assert_eq!(live.len(), 1, "the offers ran out; the hold did not yet");
    assert_eq!(live[0].id, held.request.id);
    assert!(app.store.live_units(&sku("LAMP")).await.unwrap().is_empty());
}

pub async fn a_link_re_armed_by_another_pass_is_never_claimed(app: App) {
    app.join(CHAIR, 1, T0).await;
    app.level(CHAIR, 1, T0 + 10, "d1").await;
    let wave = app.wave(CHAIR, T0 + 10).await;
    let id = wave.offers[0].request.id;
    // Two notify passes (a redelivery and a new wake) both re-arm the
    // unsent offer; the second's link replaces the first's.
    let first = app.reissue_unsent(CHAIR).await;
    let second = app.reissue_unsent(CHAIR).await;
    let (dead, live) = (&first[0].reserve, &second[0].reserve);
    assert_eq!(
        app.claim(&id, &dead.secret_hash()).await,
        Claim::NotClaimable,
        "the first pass must not send a link that no longer works"
    );
    assert_eq!(app.claim(&id, &live.secret_hash()).await, Claim::Claimed);
    assert_eq!(
        app.claim(&id, &live.secret_hash()).await,
        Claim::NotClaimable,
        "and it is sent once"
    );
}

pub async fn every_opt_out_link_a_shopper_was_sent_keeps_working(app: App) {
    let a = app.join(CHAIR, 1, T0).await;
    app.level(CHAIR, 1, T0 + 10, "d1").await;
    let wave = app.wave(CHAIR, T0 + 10).await;
    let first = wave.offers[0].optout.clone();
    // The notice is re-armed (its send failed transiently): a new opt-out
    // link goes out, and the first one, already in the shopper's inbox,
    // must still work (I5).
    let again = app.reissue_unsent(CHAIR).await;
    assert_ne!(again[0].optout.secret_hash(), first.secret_hash());
    let stored = app.get(&a.id).await;
    assert!(stored.optout_link_is(&first) && stored.optout_link_is(&again[0].optout));
    assert_eq!(
        app.store.opt_out(&first, T0 + 20).await.unwrap(),
        OptOutOutcome::OptedOut { ended: 1 }
    );
    // And once the request has ended, both still answer as opted out.
    assert_eq!(
        app.store.opt_out(&again[0].optout, T0 + 30).await.unwrap(),
        OptOutOutcome::OptedOut { ended: 0 }
    );
}

pub async fn a_capped_wave_hands_on_with_a_wake(app: App) {
    app.level(CHAIR, 3, T0, "d1").await;
    let before = app.store.wakes(&sku(CHAIR)).await.unwrap().len();
    app.store.wake_again(&sku(CHAIR), 1, T0 + 5).await.unwrap();
    let wakes = app.store.wakes(&sku(CHAIR)).await.unwrap();
    assert_eq!(wakes.len(), before + 1);
    let last = wakes.last().unwrap();
    assert_eq!(
        (last.kind, last.episode, last.at),
        (WakeKind::Continue, 1, T0 + 5)
    );
}

pub async fn a_contact_who_opted_out_is_never_claimed_for_a_notice(app: App) {
    let a = app.join(CHAIR, 1, T0).await;
    app.level(CHAIR, 1, T0 + 10, "d1").await;
    let wave = app.wave(CHAIR, T0 + 10).await;
    let link = wave.offers[0].reserve.secret_hash();
    // The opt-out lands between the wave and the send.
    app.store
        .opt_out_contact(&a.contact_key, restock_core::OptOutVia::Team, T0 + 11)
        .await
        .unwrap();
    assert_eq!(app.claim(&a.id, &link).await, Claim::OptedOut);
}

/// An opt-out stopped after writing its record (a timeout between its
/// steps on DynamoDB) leaves the contact's offer live: the notice claim
/// itself must refuse it, a new sign-up is refused, and the opt-out run
/// again ends the request and passes the unit on.
pub async fn an_opt_out_cut_short_still_stops_the_notice_and_its_retry_ends_the_request(app: App) {
    let a = app.join(CHAIR, 1, T0).await;
    app.level(CHAIR, 1, T0 + 10, "d1").await;
    let wave = app.wave(CHAIR, T0 + 10).await;
    let link = wave.offers[0].reserve.secret_hash();
    app.opt_out_record_only(&a.contact_key, T0 + 11).await;
    assert_eq!(app.get(&a.id).await.state.status(), Status::Offered);
    assert_eq!(app.claim(&a.id, &link).await, Claim::OptedOut);
    assert_eq!(
        app.join_as(CHAIR, email(1), T0 + 12, 1).await,
        JoinOutcome::OptedOut
    );
    assert_eq!(
        app.store
            .opt_out_contact(&a.contact_key, restock_core::OptOutVia::Team, T0 + 13)
            .await
            .unwrap(),
        1,
        "the retry ends the live request"
    );
    assert_eq!(app.get(&a.id).await.state.status(), Status::OptedOut);
    let c = app.store.snapshot(&sku(CHAIR)).await.unwrap().counters;
    assert_eq!((c.offered, c.held), (0, 0), "the unit passed on: {c:?}");
}

/// A mail scanner and the shopper tap the confirmation link at once: one
/// confirmation and one place in the line. And a link given back (its send
/// failed) while taps are in flight: a tap confirms only before the link was
/// given back, so the sign-up is never both confirmed by the old link and
/// sent a new one.
pub async fn taps_racing_on_a_confirmation_link_confirm_once(app: App) {
    app.catalogue(CHAIR, 2).await;
    let confirm_all = |link: LinkToken, at: restock_core::Millis| {
        let store = &app.store;
        futures::future::join_all((0..16).map(move |_| {
            let link = link.clone();
            async move {
                store
                    .confirm(&link, owner(), LIFETIME.as_millis(), at)
                    .await
            }
        }))
    };
    let ann = app.sign_up(CHAIR, 1, T0).await;
    let (_, link) = app.claim_confirmation(&ann).await;
    let outcomes = confirm_all(link, T0 + MIN).await;
    let confirmed: Vec<&Request> = outcomes
        .iter()
        .filter_map(|o| match o {
            Ok(ConfirmOutcome::Confirmed(r)) => Some(r),
            Ok(ConfirmOutcome::AlreadyConfirmed(_)) => None,
            other => panic!("a tap on a good link: {other:?}"),
        })
        .collect();
    assert_eq!(confirmed.len(), 1, "one confirmation of sixteen taps");
    let bea = app.sign_up(CHAIR, 2, T0 + 1).await;
    let (_, link) = app.claim_confirmation(&bea).await;
    let ConfirmOutcome::Confirmed(bea) = app
        .store
        .confirm(&link, owner(), LIFETIME.as_millis(), T0 + MIN)
        .await
        .unwrap()
    else {
        panic!("bea's confirmation")
    };
    assert_eq!(app.store.position(&bea, 2).await.unwrap(), Some(2));
    assert_eq!(app.store.stats(&sku(CHAIR), 2).await.unwrap().waiting, 2);

    for round in 0..8 {
        let r = app.sign_up(CHAIR, 10 + round, T0 + 10).await;
        let (_, old) = app.claim_confirmation(&r).await;
        let given_back = async {
            app.store
                .release_confirmation(&sku(CHAIR), &r.id, &old.secret_hash())
                .await
                .unwrap();
            app.claim_confirmation(&r).await.0
        };
        let (taps, reclaimed) = futures::join!(confirm_all(old.clone(), T0 + MIN), given_back);
        let by_old_link = taps
            .iter()
            .filter(|o| matches!(o, Ok(ConfirmOutcome::Confirmed(..))))
            .count();
        assert!(
            !(by_old_link > 0 && reclaimed == Claim::Claimed),
            "round {round}: confirmed by the link given back, and a new one claimed"
        );
    }
}

/// `first_time` (the team told once of a hold used on an order without its
/// item, however often the order's webhook comes): true for a key once.
pub async fn work_keyed_once_is_done_once(app: App) {
    let key = "not-in-order:hold-1:order-1";
    assert!(app.store.first_time(key, T0).await.unwrap());
    assert!(!app.store.first_time(key, T0 + MIN).await.unwrap(), "once");
    assert!(
        app.store
            .first_time("not-in-order:hold-1:order-2", T0 + MIN)
            .await
            .unwrap()
    );
}

pub async fn deliveries_heard_and_each_silence_claimed_once(app: App) {
    assert!(app.store.heard_from().await.unwrap().is_empty());
    app.store.heard("shopify", T0).await.unwrap();
    app.store.heard("shopify", T0 + 5 * MIN).await.unwrap();
    // A delivery processed late never moves it back.
    app.store.heard("shopify", T0 + MIN).await.unwrap();
    let heard = app.store.heard_from().await.unwrap();
    assert_eq!(
        heard,
        [Heard {
            source: "shopify".into(),
            last: T0 + 5 * MIN,
            alerted: None
        }]
    );
    let later = T0 + 2 * DAY;
    assert!(
        app.store
            .claim_silence_alert("shopify", T0 + 5 * MIN, later)
            .await
            .unwrap()
    );
    assert!(
        !app.store
            .claim_silence_alert("shopify", T0 + 5 * MIN, later + MIN)
            .await
            .unwrap(),
        "once per silence"
    );
    // Heard again: the next silence may be claimed, but not with a stale reading.
    app.store.heard("shopify", later + 2 * MIN).await.unwrap();
    assert!(
        !app.store
            .claim_silence_alert("shopify", T0 + 5 * MIN, later + 3 * MIN)
            .await
            .unwrap()
    );
    assert!(
        app.store
            .claim_silence_alert("shopify", later + 2 * MIN, later + 4 * DAY)
            .await
            .unwrap()
    );
    assert!(
        !app.store
            .claim_silence_alert("woocommerce", T0, later)
            .await
            .unwrap()
    );
}

pub async fn anyone_waiting_follows_the_queue(app: App) {
    app.catalogue(CHAIR, 4).await;
    assert!(!app.store.anyone_waiting(&sku(CHAIR), 4).await.unwrap());
    let r = app.join_as(CHAIR, email(1), T0, 4).await;
    let JoinOutcome::Joined(r) = r else {
        panic!("{r:?}")
    };
    assert!(app.store.anyone_waiting(&sku(CHAIR), 4).await.unwrap());
    app.store.cancel(&r.id, T0 + 1).await.unwrap();
    assert!(!app.store.anyone_waiting(&sku(CHAIR), 4).await.unwrap());
}

pub async fn the_sender_pause_opens_once_notes_items_and_ends(app: App) {
    assert!(app.store.sender_pause().await.unwrap().is_none());
    assert!(app.store.resume_sender().await.unwrap().is_none());
    let until = T0 + 5 * MIN;
    assert!(
        app.store
            .pause_sender("sandbox", until, &sku(CHAIR), T0)
            .await
            .unwrap(),
        "opened"
    );
    assert!(
        !app.store
            .pause_sender("again", T0 + 9 * MIN, &sku("THROW-OAT"), T0 + MIN)
            .await
            .unwrap(),
        "already open: not opened again, not extended"
    );
    let pause = app.store.sender_pause().await.unwrap().unwrap();
    assert_eq!(
        pause,
        SenderPause {
            since: T0,
            until,
            reason: "sandbox".into(),
            skus: vec![sku(CHAIR), sku("THROW-OAT")],
        }
    );
    // Its time is up and the sender fails again: a new pause (the team is told again).
    assert!(
        app.store
            .pause_sender("quota", T0 + 20 * MIN, &sku(CHAIR), T0 + 15 * MIN)
            .await
            .unwrap()
    );
    let skus = app.store.resume_sender().await.unwrap().unwrap();
    assert_eq!(skus, vec![sku(CHAIR), sku("THROW-OAT")]);
    assert!(app.store.sender_pause().await.unwrap().is_none());
}

pub async fn the_team_takes_over_a_provider_s_pause_and_keeps_what_it_held(app: App) {
    let team_until = T0 + 30 * 24 * 60 * MIN;
    assert!(
        !app.store
            .take_over_sender_pause("team: stocktake", team_until, T0)
            .await
            .unwrap(),
        "no pause open: nothing to take over"
    );
    assert!(app.store.sender_pause().await.unwrap().is_none());
    app.store
        .pause_sender("sandbox", T0 + 5 * MIN, &sku(CHAIR), T0)
        .await
        .unwrap();
    assert!(
        app.store
            .take_over_sender_pause("team: stocktake", team_until, T0 + MIN)
            .await
            .unwrap()
    );
    // The provider fails again: the team's pause stays as the team said.
    assert!(
        !app.store
            .pause_sender("quota", T0 + 9 * MIN, &sku("THROW-OAT"), T0 + 2 * MIN)
            .await
            .unwrap()
    );
    let pause = app.store.sender_pause().await.unwrap().unwrap();
    assert_eq!(
        pause,
        SenderPause {
            since: T0,
            until: team_until,
            reason: "team: stocktake".into(),
            skus: vec![sku(CHAIR), sku("THROW-OAT")],
        }
    );
    // Past the provider's five minutes the pause is still the team's.
    assert!(
        !app.store
            .take_over_sender_pause("late", team_until + 1, team_until)
            .await
            .unwrap(),
        "a pause whose time is up is not taken over"
    );
}

pub async fn an_offer_whose_notice_never_went_out_keeps_its_place_when_it_runs_out(app: App) {
    // Sending paused (or a pass died) and the offer ran out unsent: the
    // shopper never heard, so it does not count against them.
    let ann = app.join(CHAIR, 1, T0).await;
    let bea = app.join(CHAIR, 2, T0 + 1).await;
    app.level(CHAIR, 1, T0 + 10, "d1").await;
    let wave = app.wave(CHAIR, T0 + 10).await;
    assert_eq!(wave.offers[0].request.id, ann.id);
    let later = T0 + 20 * MIN;
    assert_eq!(app.sweep(later).await, vec![ExpireOutcome::Requeued]);
    let back = app.get(&ann.id).await;
    assert_eq!((back.state, back.key), (RequestState::Waiting, ann.key));
    assert_eq!(
        app.store
            .snapshot(&sku(CHAIR))
            .await
            .unwrap()
            .counters
            .offered,
        0
    );
    assert_eq!(app.store.stats(&sku(CHAIR), 1).await.unwrap().lapsed, 0);
    // The freed unit goes to Ann again (still first), not to Bea.
    let next = app.wave(CHAIR, later).await;
    let told: Vec<_> = next.offers.iter().map(|o| o.request.id).collect();
    assert_eq!(told, [ann.id]);
    assert_eq!(app.get(&bea.id).await.state, RequestState::Waiting);
    // A notice that went out lapses as before.
    app.claim(&ann.id, &next.offers[0].reserve.secret_hash())
        .await;
    assert_eq!(
        app.sweep(later + 20 * MIN).await,
        vec![ExpireOutcome::Lapsed]
    );
    assert_eq!(app.get(&ann.id).await.state, RequestState::Lapsed);
}

pub async fn a_day_s_mail_figures_add_up(app: App) {
    use restock_core::feedback::MailDay;
    let day = "2026-12-04";
    assert_eq!(app.store.mail_day(day).await.unwrap(), MailDay::default());
    let sent = MailDay {
        sent: 40,
        texts_sent: 15,
        ..MailDay::default()
    };
    assert_eq!(app.store.count_mail(day, sent).await.unwrap(), sent);
    let bounce = MailDay {
        bounced: 1,
        soft_bounced: 2,
        unknown_items: 3,
        ..MailDay::default()
    };
    let totals = app.store.count_mail(day, bounce).await.unwrap();
    assert_eq!(totals.unknown_items, 3);
    assert_eq!(
        (
            totals.sent,
            totals.bounced,
            totals.complained,
            totals.soft_bounced
        ),
        (40, 1, 0, 2)
    );
    assert_eq!(app.store.mail_day(day).await.unwrap(), totals);
    assert_eq!(totals.texts_sent, 15);
    assert_eq!(totals.bounce_rate(), Some(1.0 / 25.0), "over the 25 emails");
    assert_eq!(
        app.store.mail_day("2026-12-05").await.unwrap(),
        MailDay::default()
    );
}

pub async fn send_slots_are_shared_and_never_overlap(app: App) {
    // The first pass gets slots from now; the next one after them.
    assert_eq!(app.store.reserve_sends(5, 100, T0).await.unwrap(), T0);
    assert_eq!(
        app.store.reserve_sends(3, 100, T0 + 10).await.unwrap(),
        T0 + 500
    );
    // Once the schedule is behind the clock, slots start now.
    assert_eq!(
        app.store.reserve_sends(1, 100, T0 + MIN).await.unwrap(),
        T0 + MIN
    );
    // Concurrent passes each get a block of their own.
    let later = T0 + 2 * MIN;
    let blocks =
        futures::future::join_all((0..8).map(|_| app.store.reserve_sends(4, 10, later))).await;
    let mut starts: Vec<i64> = blocks.into_iter().map(Result::unwrap).collect();
    starts.sort_unstable();
    let expected: Vec<i64> = (0..8).map(|k| later + k * 40).collect();
    assert_eq!(starts, expected, "eight blocks of four slots, back to back");
}

/// Double opt-in: Ann signs up first but confirms last; Bob joins and
/// confirms in between. Nothing is offered to Ann until she confirms, and
/// then she is ahead of Bob: her place is the one she signed up at.
pub async fn an_unconfirmed_sign_up_keeps_its_place_but_is_offered_nothing_until_confirmed(
    app: App,
) {
    app.catalogue(CHAIR, 2).await;
    let ann = app.sign_up(CHAIR, 1, T0).await;
    assert_eq!(ann.state, RequestState::Unconfirmed);
    assert!(
        app.store
            .queue(&sku(CHAIR), 2, 10)
            .await
            .unwrap()
            .is_empty(),
        "not in the queue yet"
    );
    let pending = app
        .store
        .pending_confirmations(&sku(CHAIR), 100, i64::MAX)
        .await
        .unwrap();
    assert_eq!(pending.iter().map(|r| r.id).collect::<Vec<_>>(), [ann.id]);
    let (claim, link) = app.claim_confirmation(&ann).await;
    assert_eq!(claim, Claim::Claimed);
    let bob = app.join(CHAIR, 2, T0 + MIN).await;
    app.level(CHAIR, 1, T0 + 2 * MIN, "d-1").await;
    let wave = app.wave_sharded(CHAIR, T0 + 2 * MIN, 2).await;
    assert_eq!(
        wave.offers.iter().map(|o| o.request.id).collect::<Vec<_>>(),
        [bob.id],
        "the unconfirmed sign-up is passed over, not ended"
    );
    // A wrong link confirms nothing.
    let wrong = LinkToken::new(sku(CHAIR), ann.id, [9; 16]);
    assert_eq!(
        app.store
            .confirm(&wrong, owner(), LIFETIME.as_millis(), T0 + 3 * MIN)
            .await
            .unwrap(),
        ConfirmOutcome::Refused
    );
    let ConfirmOutcome::Confirmed(confirmed) = app
        .store
        .confirm(&link, owner(), LIFETIME.as_millis(), T0 + 3 * MIN)
        .await
        .unwrap()
    else {
        panic!("the link confirms")
    };
    assert_eq!(confirmed.state, RequestState::Waiting);
    assert_eq!(confirmed.key, ann.key, "the place she signed up at");
    assert_eq!(confirmed.stale_at, T0 + LIFETIME.as_millis());
    let stored = app.get(&ann.id).await;
    assert_eq!(
        stored.consent.as_ref().unwrap().confirmed_at,
        Some(T0 + 3 * MIN)
    );
    assert_eq!(stored.consent.as_ref().unwrap().version, "2026-11");
    assert_eq!(
        stored.language.as_ref().map(ToString::to_string).as_deref(),
        Some("pt-BR"),
        "the language it signed up in"
    );
    assert!(matches!(
        app.store.confirm(&link, owner(), LIFETIME.as_millis(), T0 + 4 * MIN).await.unwrap(),
        ConfirmOutcome::AlreadyConfirmed(r) if r.id == ann.id
    ));
    let queue: Vec<_> = app
        .store
        .queue(&sku(CHAIR), 2, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.id, r.language.map(|l| l.to_string())))
        .collect();
    assert_eq!(
        queue,
        [(ann.id, Some("pt-BR".to_owned()))],
        "Bob holds an offer; Ann waits first in line, in her language"
    );
    assert_eq!(app.store.position(&stored, 2).await.unwrap(), Some(1));
    // The team's figures count the waiting by language; one kept before
    // languages were shows as "-".
    let cy = app.sign_up_in(CHAIR, 3, T0 + 5 * MIN, None, None).await;
    let (_, link) = app.claim_confirmation(&cy).await;
    assert!(matches!(
        app.store
            .confirm(&link, owner(), LIFETIME.as_millis(), T0 + 6 * MIN)
            .await
            .unwrap(),
        ConfirmOutcome::Confirmed(..)
    ));
    let stats = app.store.stats(&sku(CHAIR), 2).await.unwrap();
    assert_eq!(stats.waiting, 2);
    assert_eq!(
        stats.waiting_by_language,
        [("-".to_owned(), 1), ("pt-BR".to_owned(), 1)].into(),
    );
    app.assert_never_oversold(CHAIR).await;
}

pub async fn a_confirmation_is_claimed_once_and_a_claim_given_back_is_pending_again(app: App) {
    app.catalogue(CHAIR, 2).await;
    let ann = app.sign_up(CHAIR, 1, T0).await;
    let (claim, link) = app.claim_confirmation(&ann).await;
    assert_eq!(claim, Claim::Claimed);
    assert_eq!(
        app.claim_confirmation(&ann).await.0,
        Claim::NotClaimable,
        "a redelivered wake sends nothing twice"
    );
    assert!(
        app.store
            .pending_confirmations(&sku(CHAIR), 100, i64::MAX)
            .await
            .unwrap()
            .is_empty()
    );
    // The send failed transiently: given back, pending again, the old link dead.
    app.store
        .release_confirmation(&sku(CHAIR), &ann.id, &link.secret_hash())
        .await
        .unwrap();
    let pending = app
        .store
        .pending_confirmations(&sku(CHAIR), 100, i64::MAX)
        .await
        .unwrap();
    assert_eq!(pending.iter().map(|r| r.id).collect::<Vec<_>>(), [ann.id]);
    assert_eq!(
        app.store
            .confirm(&link, owner(), LIFETIME.as_millis(), T0 + MIN)
            .await
            .unwrap(),
        ConfirmOutcome::Refused
    );
    let (again, link) = app.claim_confirmation(&ann).await;
    assert_eq!(again, Claim::Claimed);
    // The contact opted out meanwhile: nothing more is claimed for them.
    let bob = app.sign_up(CHAIR, 2, T0).await;
    app.store
        .opt_out_contact(&bob.contact_key, restock_core::OptOutVia::Team, T0 + MIN)
        .await
        .unwrap();
    assert_eq!(app.get(&bob.id).await.state, RequestState::OptedOut);
    assert!(
        app.store
            .pending_confirmations(&sku(CHAIR), 100, i64::MAX)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        app.store
            .confirm(&link, owner(), LIFETIME.as_millis(), T0 + MIN)
            .await
            .unwrap(),
        ConfirmOutcome::Confirmed(..)
    ));
    // A backlog is read a bounded batch at a time.
    for i in 10..13 {
        app.sign_up(CHAIR, i, T0 + MIN).await;
    }
    let batch = app
        .store
        .pending_confirmations(&sku(CHAIR), 2, i64::MAX)
        .await
        .unwrap();
    assert_eq!(batch.len(), 2);
}

/// An address that has not confirmed is sent one confirmation a day
/// however many items it is signed up for (a stranger may have made some of
/// them). A tap confirms only the sign-up its link was sent for: each of
/// the others waits, left out of the pending list, until the address's day
/// ends, then gets its own. The day ends with the tap: a sign-up after it
/// is asked at once.
pub async fn an_address_is_asked_once_a_day_and_a_tap_confirms_only_what_it_was_sent_for(app: App) {
    const LAMP: &str = "LAMP-BRASS";
    const DESK: &str = "DESK-OAK";
    for item in [CHAIR, OAT, LAMP, DESK] {
        app.catalogue(item, 2).await;
    }
    let chair = app.sign_up(CHAIR, 1, T0).await;
    let oat = app.sign_up(OAT, 1, T0 + MIN).await;
    let (claim, link) = app.claim_confirmation(&chair).await;
    assert_eq!(claim, Claim::Claimed);
    let day_end = T0 + DAY;
    assert_eq!(
        app.claim_confirmation(&oat).await.0,
        Claim::Covered { until: day_end },
        "one mail a day to an address that has not confirmed"
    );
    let store = app.store.clone();
    let pending = |item: &'static str, now: restock_core::Millis| {
        let store = store.clone();
        async move {
            store
                .pending_confirmations(&sku(item), 100, now)
                .await
                .unwrap()
                .into_iter()
                .map(|r| r.id)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(pending(OAT, T0 + MIN).await, [], "covered: passed over");
    assert_eq!(
        app.claim_confirmation(&oat).await.0,
        Claim::NotClaimable,
        "a redelivered wake sends nothing before the day ends"
    );
    let story = app.get(&oat.id).await.story;
    assert!(
        story
            .chapters()
            .iter()
            .any(|c| c.event == restock_core::story::Event::Covered { until: day_end }),
        "its story says when its own goes: {story:?}"
    );
    // Another address is asked as ever.
    let bob = app.sign_up(OAT, 2, T0 + MIN).await;
    assert_eq!(app.claim_confirmation(&bob).await.0, Claim::Claimed);
    // The tap confirms the chair alone: the oat, which a stranger may have
    // signed the address up for, stays unconfirmed.
    let ConfirmOutcome::Confirmed(confirmed) = app
        .store
        .confirm(&link, owner(), LIFETIME.as_millis(), T0 + 2 * MIN)
        .await
        .unwrap()
    else {
        panic!("the link confirms")
    };
    assert_eq!(confirmed.id, chair.id);
    assert_eq!(app.get(&chair.id).await.state, RequestState::Waiting);
    assert_eq!(app.get(&oat.id).await.state, RequestState::Unconfirmed);
    assert_eq!(app.store.stats(&sku(OAT), 2).await.unwrap().unconfirmed, 2);
    // The address has confirmed: its next sign-up is asked at once, and
    // covers nothing it was not sent for.
    let lamp = app.sign_up(LAMP, 1, T0 + 3 * MIN).await;
    let (claim, lamp_link) = app.claim_confirmation(&lamp).await;
    assert_eq!(claim, Claim::Claimed, "the day ended with the tap");
    let desk = app.sign_up(DESK, 1, T0 + 4 * MIN).await;
    assert_eq!(
        app.claim_confirmation(&desk).await.0,
        Claim::Covered {
            until: T0 + 3 * MIN + DAY
        }
    );
    assert!(matches!(
        app.store
            .confirm(&lamp_link, owner(), LIFETIME.as_millis(), T0 + 5 * MIN)
            .await
            .unwrap(),
        ConfirmOutcome::Confirmed(r) if r.id == lamp.id
    ));
    assert_eq!(app.get(&desk.id).await.state, RequestState::Unconfirmed);
    // A moment before the oat's day ends it is still passed over; at its
    // end it is pending again and asked with a confirmation of its own.
    assert_eq!(pending(OAT, day_end - 1).await, []);
    assert_eq!(pending(OAT, day_end).await, [oat.id]);
    let (claim, oat_link) = app.claim_confirmation_at(&oat, day_end).await;
    assert_eq!(claim, Claim::Claimed, "its own confirmation");
    let ConfirmOutcome::Confirmed(confirmed) = app
        .store
        .confirm(&oat_link, owner(), LIFETIME.as_millis(), day_end + MIN)
        .await
        .unwrap()
    else {
        panic!("its own link confirms it")
    };
    assert_eq!(confirmed.key, oat.key, "at the place it signed up at");
    assert_eq!(
        app.store.position(&confirmed, 2).await.unwrap(),
        Some(1),
        "ahead of Bob, who has not confirmed"
    );
    // The desk's day was the lamp's: asked when that one ends.
    assert_eq!(pending(DESK, T0 + 3 * MIN + DAY).await, [desk.id]);
}

/// A confirmation whose send failed is given back with the address's day:
/// nothing reached the address, so the next sign-up's mail may go, and the
/// one given back waits for that mail's day to end.
pub async fn a_confirmation_given_back_gives_the_address_s_day_back(app: App) {
    app.catalogue(CHAIR, 2).await;
    app.catalogue(OAT, 2).await;
    let chair = app.sign_up(CHAIR, 1, T0).await;
    let (claim, link) = app.claim_confirmation(&chair).await;
    assert_eq!(claim, Claim::Claimed);
    app.store
        .release_confirmation(&sku(CHAIR), &chair.id, &link.secret_hash())
        .await
        .unwrap();
    let oat = app.sign_up(OAT, 1, T0 + MIN).await;
    let (claim, _) = app.claim_confirmation(&oat).await;
    assert_eq!(claim, Claim::Claimed, "the day went back with the claim");
    assert_eq!(
        app.claim_confirmation_at(&chair, T0 + 2 * MIN).await.0,
        Claim::Covered {
            until: T0 + MIN + DAY
        },
        "the first, given back, waits for the second's day"
    );
    let (claim, _) = app.claim_confirmation_at(&chair, T0 + MIN + DAY).await;
    assert_eq!(claim, Claim::Claimed, "then gets its own");
}

pub async fn an_unconfirmed_sign_up_ends_with_its_window_and_is_forgotten(app: App) {
    app.catalogue(CHAIR, 2).await;
    let ann = app.sign_up(CHAIR, 1, T0).await;
    let (_, link) = app.claim_confirmation(&ann).await;
    assert!(
        app.sweep(T0 + 2 * DAY - 1).await.is_empty(),
        "not before the window ends"
    );
    assert_eq!(app.sweep(T0 + 2 * DAY).await, [ExpireOutcome::Unconfirmed]);
    assert_eq!(app.store.request(&ann.id).await.unwrap(), None, "forgotten");
    assert_eq!(
        app.store
            .confirm(&link, owner(), LIFETIME.as_millis(), T0 + 2 * DAY)
            .await
            .unwrap(),
        ConfirmOutcome::Refused
    );
    assert!(app.sweep(T0 + 3 * DAY).await.is_empty(), "once");
    // The address may sign up again: no place is held for it.
    assert_eq!(
        app.sign_up(CHAIR, 1, T0 + 3 * DAY).await.state,
        RequestState::Unconfirmed
    );
}

/// The team's figures count the sign-ups still to confirm apart from the
/// waiting: each leaves the count once, however it leaves.
pub async fn sign_ups_to_confirm_are_counted_until_confirmed_ended_or_run_out(app: App) {
    app.catalogue(CHAIR, 2).await;
    let counts = || async {
        let mut stats = app.store.stats(&sku(CHAIR), 2).await.unwrap();
        stats.waiting_by_language.clear();
        let counted = app.store.counts(&sku(CHAIR), 2).await.unwrap();
        assert_eq!(
            counted, stats,
            "the counts without languages are the stats'"
        );
        (stats.waiting, stats.unconfirmed)
    };
    let mut people = Vec::new();
    for i in 1..=5 {
        people.push(app.sign_up(CHAIR, i, T0 + i as restock_core::Millis).await);
    }
    app.catalogue(OAT, 1).await;
    app.sign_up(OAT, 9, T0 + DAY).await;
    assert_eq!(counts().await, (0, 5), "five to confirm, none waiting");
    let (_, link) = app.claim_confirmation(&people[0]).await;
    assert!(matches!(
        app.store
            .confirm(&link, owner(), LIFETIME.as_millis(), T0 + MIN)
            .await
            .unwrap(),
        ConfirmOutcome::Confirmed(..)
    ));
    assert_eq!(counts().await, (1, 4), "confirmed: waiting now");
    app.store.cancel(&people[1].id, T0 + 2 * MIN).await.unwrap();
    assert_eq!(counts().await, (1, 3), "cancelled before confirming");
    app.store
        .opt_out_contact(
            &people[2].contact_key,
            restock_core::OptOutVia::Team,
            T0 + 3 * MIN,
        )
        .await
        .unwrap();
    assert_eq!(counts().await, (1, 2), "opted out before confirming");
    app.claim_confirmation(&people[3]).await;
    app.claim_confirmation(&people[4]).await;
    assert_eq!(
        app.sweep(T0 + 2 * DAY + 10).await,
        [ExpireOutcome::Unconfirmed, ExpireOutcome::Unconfirmed]
    );
    assert_eq!(counts().await, (1, 0), "the rest ran out");
    assert_eq!(
        app.store.stats(&sku(OAT), 1).await.unwrap().unconfirmed,
        1,
        "another item's sign-up is counted there, not here"
    );
}

pub async fn forgetting_a_contact_erases_its_requests_and_keeps_only_the_opt_out(app: App) {
    app.catalogue(CHAIR, 1).await;
    app.catalogue("THROW-OAT", 1).await;
    let offered = app.join(CHAIR, 1, T0).await;
    let finished = app.join("THROW-OAT", 1, T0).await;
    app.store.cancel(&finished.id, T0 + 1).await.unwrap();
    let bob = app.join(CHAIR, 2, T0 + 2).await;
    app.level(CHAIR, 1, T0 + MIN, "d-1").await;
    assert_eq!(app.wave(CHAIR, T0 + MIN).await.offers.len(), 1);

    let f = app
        .store
        .forget_contact(&email(1).key(PEPPER), T0 + 2 * MIN)
        .await
        .unwrap();
    assert_eq!(
        f,
        Forgotten {
            ended: 1,
            erased: 2,
            opt_out_kept: false
        }
    );
    assert_eq!(app.store.request(&offered.id).await.unwrap(), None);
    assert_eq!(app.store.request(&finished.id).await.unwrap(), None);
    assert_eq!(
        app.get(&bob.id).await.state,
        RequestState::Waiting,
        "others untouched"
    );
    // The unit passed on: the next wave offers it to Bob.
    let wave = app.wave(CHAIR, T0 + 3 * MIN).await;
    assert_eq!(
        wave.offers.iter().map(|o| o.request.id).collect::<Vec<_>>(),
        [bob.id]
    );
    app.assert_never_oversold(CHAIR).await;
    // Nothing left to erase; an opt-out survives, as a hash.
    let key3 = email(3).key(PEPPER);
    app.join(CHAIR, 3, T0).await;
    app.store
        .opt_out_contact(&key3, restock_core::OptOutVia::Team, T0 + 4 * MIN)
        .await
        .unwrap();
    let f = app.store.forget_contact(&key3, T0 + 5 * MIN).await.unwrap();
    assert_eq!((f.ended, f.erased, f.opt_out_kept), (0, 1, true));
    assert!(app.store.is_opted_out(&key3).await.unwrap());
    assert_eq!(
        app.store
            .forget_contact(&key3, T0 + 6 * MIN)
            .await
            .unwrap()
            .erased,
        0
    );
}

/// A shop's erasure erases request by request: an offered one ends first
/// (its unit passes on), a finished one goes, the contact's other requests
/// stay until their turn, and an opt-out is kept.
pub async fn forgetting_a_request_ends_it_first_and_keeps_the_opt_out(app: App) {
    app.catalogue(CHAIR, 1).await;
    app.catalogue(OAT, 1).await;
    let offered = app.join(CHAIR, 1, T0).await;
    let other = app.join(OAT, 1, T0).await;
    let bob = app.join(CHAIR, 2, T0 + 2).await;
    app.level(CHAIR, 1, T0 + MIN, "d-1").await;
    assert_eq!(app.wave(CHAIR, T0 + MIN).await.offers.len(), 1);
    let now = T0 + 2 * MIN;
    assert!(app.store.forget_request(&offered.id, now).await.unwrap());
    assert_eq!(app.store.request(&offered.id).await.unwrap(), None);
    assert!(
        !app.store.forget_request(&offered.id, now).await.unwrap(),
        "gone"
    );
    assert_eq!(
        app.get(&other.id).await.state,
        RequestState::Waiting,
        "its turn comes"
    );
    let wave = app.wave(CHAIR, T0 + 3 * MIN).await;
    assert_eq!(
        wave.offers.iter().map(|o| o.request.id).collect::<Vec<_>>(),
        [bob.id],
        "the unit passed on"
    );
    app.assert_never_oversold(CHAIR).await;
    app.store
        .opt_out_contact(
            &bob.contact_key,
            restock_core::OptOutVia::Team,
            T0 + 4 * MIN,
        )
        .await
        .unwrap();
    assert!(
        app.store
            .forget_request(&bob.id, T0 + 5 * MIN)
            .await
            .unwrap()
    );
    assert!(app.store.is_opted_out(&bob.contact_key).await.unwrap());
    assert_eq!(app.store.stats(&sku(CHAIR), 1).await.unwrap().waiting, 0);
}

/// A contact's live requests are read through its places: waiting and
/// offered ones, oldest first; a cancelled one is not among them.
pub async fn a_contacts_live_requests_are_its_places(app: App) {
    app.catalogue(CHAIR, 1).await;
    app.catalogue(OAT, 1).await;
    app.catalogue("LAMP-BRASS", 1).await;
    let chair = app.join(CHAIR, 1, T0).await;
    let oat = app.join(OAT, 1, T0 + 1).await;
    let lamp = app.join("LAMP-BRASS", 1, T0 + 2).await;
    app.join(CHAIR, 2, T0 + 3).await;
    app.store.cancel(&oat.id, T0 + 4).await.unwrap();
    app.level(CHAIR, 1, T0 + MIN, "d-1").await;
    assert_eq!(app.wave(CHAIR, T0 + MIN).await.offers.len(), 1);
    let live = app.store.live_requests(&chair.contact_key).await.unwrap();
    assert_eq!(
        live.iter()
            .map(|r| (r.id, r.state.status().is_live()))
            .collect::<Vec<_>>(),
        [(chair.id, true), (lamp.id, true)]
    );
    assert!(matches!(live[0].state, RequestState::Offered { .. }));
    let nobody = email(9).key(PEPPER);
    assert!(app.store.live_requests(&nobody).await.unwrap().is_empty());
}

/// Told by email and text, a sign-up's two requests end together with an
/// opt-out the person said on either channel; the other contact is not
/// opted out. A confirmed inbox goes only with a confirmed number, and an
/// undeliverable number says nothing of the inbox.
pub async fn a_sign_up_on_both_channels_ends_on_both_with_an_opt_out_the_person_said(app: App) {
    use restock_core::OptOutVia::{Complaint, Reply, Undeliverable};
    app.catalogue(CHAIR, 1).await;
    let status = |r: Request| r.state.status();
    let opt_out = |r: &Request, via| {
        let key = r.contact_key.clone();
        let store = app.store.clone();
        async move { store.opt_out_contact(&key, via, T0 + MIN).await }
    };
    // Both confirmed: "unsubscribe" by text ends the email request too.
    let (mail, text) = app.sign_up_on_both(CHAIR, 1, T0).await;
    app.confirm(&mail, T0 + 1).await;
    app.confirm(&text, T0 + 2).await;
    assert_eq!(opt_out(&text, Reply).await.unwrap(), 2);
    assert_eq!(
        status(app.get(&mail.id).await),
        restock_core::Status::OptedOut
    );
    assert!(!app.store.is_opted_out(&mail.contact_key).await.unwrap());
    // Nobody confirmed either: a complaint on the mail ends the number's.
    let (mail, text) = app.sign_up_on_both(CHAIR, 2, T0).await;
    assert_eq!(opt_out(&mail, Complaint).await.unwrap(), 2);
    assert_eq!(
        status(app.get(&text.id).await),
        restock_core::Status::OptedOut
    );
    // The inbox confirmed, the number never: the inbox's request stays.
    let (mail, text) = app.sign_up_on_both(CHAIR, 3, T0).await;
    app.confirm(&mail, T0 + 1).await;
    assert_eq!(opt_out(&text, Reply).await.unwrap(), 1);
    assert!(status(app.get(&mail.id).await).is_live());
    // An undeliverable number is no word from its owner.
    let (mail, text) = app.sign_up_on_both(CHAIR, 4, T0).await;
    assert_eq!(opt_out(&text, Undeliverable).await.unwrap(), 1);
    assert!(status(app.get(&mail.id).await).is_live());
    assert_eq!(
        app.store
            .live_requests(&mail.contact_key)
            .await
            .unwrap()
            .len(),
        1
    );
}

/// Issue: a retried delivery, older than a reading already applied at the
/// same level, was applied as a rise on DynamoDB (the newer reading had not
/// been kept because it changed nothing) and invited people for units that
/// were gone.
pub async fn a_late_reading_older_than_one_of_the_same_level_is_stale(app: App) {
    for i in 0..5 {
        app.join(CHAIR, i, T0 + i as i64).await;
    }
    app.level(CHAIR, 2, T0 + 10_000, "d1").await;
    assert_eq!(app.wave(CHAIR, T0 + 10_000).await.offers.len(), 2);
    // The newer reading says the same: nothing to tell, but it is kept.
    assert_eq!(
        app.level(CHAIR, 2, T0 + 30_000, "d2").await,
        ApplyOutcome::Applied {
            outcome: StockOutcome::Unchanged,
            tied: false
        }
    );
    // The retry of a reading taken between the two arrives last.
    assert_eq!(
        app.level(CHAIR, 5, T0 + 20_000, "d3").await,
        ApplyOutcome::Applied {
            outcome: StockOutcome::Stale,
            tied: false
        }
    );
    let snap = app.store.snapshot(&sku(CHAIR)).await.unwrap();
    assert_eq!(snap.counters.level, 2);
    assert!(app.wave(CHAIR, T0 + 40_000).await.offers.is_empty());
    app.assert_never_oversold(CHAIR).await;
}

/// Two readings of one location at the same instant (WooCommerce dates
/// are whole seconds): the lower level stands whatever order they arrive
/// in, and the store says the tie needs settling by the platform.
pub async fn readings_at_the_same_instant_keep_the_lower_level_and_ask_to_settle(app: App) {
    app.join(CHAIR, 0, T0).await;
    app.level(CHAIR, 3, T0 + 1_000, "d1").await;
    assert_eq!(
        app.level(CHAIR, 0, T0 + 5_000, "d2").await,
        ApplyOutcome::Applied {
            outcome: StockOutcome::SoldOut { level: 0 },
            tied: false
        }
    );
    // The restock in the same second as the sell-out.
    assert_eq!(
        app.level(CHAIR, 4, T0 + 5_000, "d3").await,
        ApplyOutcome::Applied {
            outcome: StockOutcome::Stale,
            tied: true
        }
    );
    assert_eq!(
        app.store
            .snapshot(&sku(CHAIR))
            .await
            .unwrap()
            .counters
            .level,
        0
    );
}

async fn held_unit(app: &App, level: u32, at: restock_core::Millis) -> HoldId {
    app.join(CHAIR, 0, T0).await;
    app.level(CHAIR, level, at, "d1").await;
    let wave = app.wave(CHAIR, at).await;
    let hold = HoldId::from_random(app.bytes());
    assert!(matches!(
        app.store
            .take_hold(&wave.offers[0].reserve, hold, 1, at + 1_000, WINDOW)
            .await
            .unwrap(),
        HoldOutcome::Held { .. }
    ));
    hold
}

/// Issue: Shopify lowers the level at checkout (a webhook to 0) and then
/// sends the order; the purchase lowered the level again, saturated at 0,
/// and left a held unit nobody held, so the next restock of one told nobody.
pub async fn a_sale_the_shop_reported_first_leaves_no_phantom_hold(app: App) {
    let hold = held_unit(&app, 1, T0 + MIN).await;
    app.join(CHAIR, 1, T0 + 1).await;
    // Checkout at +3 min; the shop's webhook (taken after it) arrives first.
    app.level(CHAIR, 0, T0 + 3 * MIN + 1_000, "d2").await;
    assert_eq!(
        app.store
            .mark_bought(&hold, &order_at(T0 + 3 * MIN), T0 + 4 * MIN)
            .await
            .unwrap(),
        BuyOutcome::Bought {
            sku: sku(CHAIR),
            tied: false
        }
    );
    let snap = app.store.snapshot(&sku(CHAIR)).await.unwrap();
    assert_eq!(
        (
            snap.counters.level,
            snap.counters.held,
            snap.counters.offered
        ),
        (0, 0, 0)
    );
    app.level(CHAIR, 1, T0 + 10 * MIN, "d3").await;
    let wave = app.wave(CHAIR, T0 + 10 * MIN).await;
    assert_eq!(
        wave.offers.len(),
        1,
        "a restock of one tells the next in line"
    );
    app.settle().await;
    assert_eq!(
        app.store
            .reconcile(&sku(CHAIR), T0 + 11 * MIN)
            .await
            .unwrap(),
        None
    );
}

/// The order arrives before the shop's own webhook: the sale lowers the
/// level at once, and the webhook that counts it does not lower it again.
pub async fn a_sale_reported_before_the_shop_s_webhook_lowers_the_level_once(app: App) {
    let hold = held_unit(&app, 3, T0 + MIN).await;
    app.store
        .mark_bought(&hold, &order_at(T0 + 3 * MIN), T0 + 3 * MIN)
        .await
        .unwrap();
    let snap = app.store.snapshot(&sku(CHAIR)).await.unwrap();
    assert_eq!((snap.counters.level, snap.counters.held), (2, 0));
    // The shop's webhook, taken after the sale, says 2 too: unchanged.
    let applied = app.level(CHAIR, 2, T0 + 3 * MIN + 1_000, "d2").await;
    assert_eq!(applied.outcome(), Some(&StockOutcome::Unchanged));
    assert_eq!(
        app.store
            .snapshot(&sku(CHAIR))
            .await
            .unwrap()
            .counters
            .level,
        2
    );
    // And the other way round, the shop first: level 2 → 1 once.
    let second = HoldId::from_random(app.bytes());
    app.join(CHAIR, 5, T0 + 2).await;
    let wave = app.wave(CHAIR, T0 + 4 * MIN).await;
    app.store
        .take_hold(&wave.offers[0].reserve, second, 1, T0 + 5 * MIN, WINDOW)
        .await
        .unwrap();
    app.level(CHAIR, 1, T0 + 6 * MIN + 1_000, "d3").await;
    app.store
        .mark_bought(&second, &order_at(T0 + 6 * MIN), T0 + 7 * MIN)
        .await
        .unwrap();
    let snap = app.store.snapshot(&sku(CHAIR)).await.unwrap();
    assert_eq!((snap.counters.level, snap.counters.held), (1, 0));
}

/// The last unit sells with the order first, the shop's webhook to 0 after;
/// the next restock of one is offered to the next shopper.
pub async fn the_last_unit_sold_then_a_restock_of_one_tells_the_next_in_line(app: App) {
    let hold = held_unit(&app, 1, T0 + MIN).await;
    app.join(CHAIR, 1, T0 + 1).await;
    app.store
        .mark_bought(&hold, &order_at(T0 + 3 * MIN), T0 + 3 * MIN)
        .await
        .unwrap();
    let snap = app.store.snapshot(&sku(CHAIR)).await.unwrap();
    assert_eq!((snap.counters.level, snap.counters.held), (0, 0));
    assert!(
        !snap.stock.in_stock,
        "selling the last unit re-arms the item"
    );
    app.level(CHAIR, 0, T0 + 3 * MIN + 1_000, "d2").await;
    let applied = app.level(CHAIR, 1, T0 + 20 * MIN, "d3").await;
    assert!(matches!(
        applied.outcome(),
        Some(StockOutcome::Restock { level: 1, .. })
    ));
    assert_eq!(app.wave(CHAIR, T0 + 20 * MIN).await.offers.len(), 1);
}

/// Issue: an order naming a hold but not its item ended the hold as bought
/// and lowered the level.
pub async fn an_order_without_the_hold_s_item_leaves_the_hold_and_the_level(app: App) {
    let hold = held_unit(&app, 2, T0 + MIN).await;
    let other = crate::Order {
        placed_at: T0 + 2 * MIN,
        items: Some(vec!["THROW-OAT".into()]),
        prices: Default::default(),
    };
    assert_eq!(
        app.store
            .mark_bought(&hold, &other, T0 + 2 * MIN)
            .await
            .unwrap(),
        BuyOutcome::NotInOrder(sku(CHAIR))
    );
    let snap = app.store.snapshot(&sku(CHAIR)).await.unwrap();
    assert_eq!(
        (snap.counters.level, snap.counters.held, snap.bought),
        (2, 1, 0)
    );
    let with = crate::Order {
        placed_at: T0 + 2 * MIN,
        items: Some(vec!["THROW-OAT".into(), CHAIR.into()]),
        prices: [
            ("THROW-OAT", restock_core::Money::parse("EUR", "35.00")),
            (CHAIR, restock_core::Money::parse("EUR", "199.50")),
        ]
        .into_iter()
        .map(|(s, m)| (s.to_owned(), m.unwrap()))
        .collect(),
    };
    assert!(matches!(
        app.store
            .mark_bought(&hold, &with, T0 + 2 * MIN)
            .await
            .unwrap(),
        BuyOutcome::Bought { .. }
    ));
    // The chair's price counts once, redelivered or not; the throw's not at all.
    assert_eq!(
        app.store
            .mark_bought(&hold, &with, T0 + 3 * MIN)
            .await
            .unwrap(),
        BuyOutcome::AlreadyBought
    );
    let stats = app.store.stats(&sku(CHAIR), 1).await.unwrap();
    assert_eq!(stats.revenue, [("EUR".to_owned(), 199_500)].into());
}

/// Issue: reconcile lowered a count only on an item quiet for a minute, so
/// a busy item's drift was never repaired. Now both directions, at once.
pub async fn reconcile_corrects_counters_up_and_down_on_a_busy_item(app: App) {
    for i in 0..4 {
        app.join(CHAIR, i, T0 + i as i64).await;
    }
    app.level(CHAIR, 4, T0 + 10, "d1").await;
    let wave = app.wave(CHAIR, T0 + 10).await;
    app.store
        .take_hold(
            &wave.offers[0].reserve,
            HoldId::from_random(app.bytes()),
            1,
            T0 + 20,
            WINDOW,
        )
        .await
        .unwrap();
    // Too high (a phantom hold and a phantom offer), on an item touched
    // this very millisecond.
    app.set_counters(CHAIR, 4, 2).await;
    let drift = app
        .store
        .reconcile(&sku(CHAIR), T0 + 20)
        .await
        .unwrap()
        .expect("a drift");
    assert_eq!((drift.stored.offered, drift.stored.held), (4, 2));
    assert_eq!((drift.counted.offered, drift.counted.held), (3, 1));
    let snap = app.store.snapshot(&sku(CHAIR)).await.unwrap();
    assert_eq!((snap.counters.offered, snap.counters.held), (3, 1));
    // Too low.
    app.set_counters(CHAIR, 1, 0).await;
    let drift = app
        .store
        .reconcile(&sku(CHAIR), T0 + 21)
        .await
        .unwrap()
        .expect("a drift");
    assert_eq!((drift.counted.offered, drift.counted.held), (3, 1));
    let snap = app.store.snapshot(&sku(CHAIR)).await.unwrap();
    assert_eq!((snap.counters.offered, snap.counters.held), (3, 1));
    assert_eq!(
        app.store.reconcile(&sku(CHAIR), T0 + 22).await.unwrap(),
        None
    );
    assert_eq!(app.store.stats(&sku(CHAIR), 1).await.unwrap().drifts, 2);
    // The hold still holds exactly what is left.
    app.assert_never_oversold(CHAIR).await;
}

/// Issue: whoever typed an address first kept power over the request after
/// its owner confirmed it from their inbox.
pub async fn confirming_ends_the_joining_browser_s_power_over_the_place(app: App) {
    let browser = LinkToken::new(
        sku(CHAIR),
        restock_core::RequestId::from_random([1; 16]),
        [2; 16],
    );
    let r = app
        .sign_up_managed(CHAIR, 0, T0, Some(browser.secret_hash()))
        .await;
    let browser = LinkToken::new(sku(CHAIR), r.id, [2; 16]);
    assert!(r.manage_link_is(&browser));
    let (_, link) = app.claim_confirmation(&r).await;
    let owner = LinkToken::new(sku(CHAIR), r.id, [3; 16]);
    let ConfirmOutcome::Confirmed(confirmed) = app
        .store
        .confirm(&link, owner.secret_hash(), LIFETIME.as_millis(), T0 + MIN)
        .await
        .unwrap()
    else {
        panic!("confirmed")
    };
    assert!(!confirmed.manage_link_is(&browser));
    let stored = app.store.request(&r.id).await.unwrap().unwrap();
    assert!(
        !stored.manage_link_is(&browser),
        "the browser's token no longer manages it"
    );
    assert!(stored.manage_link_is(&owner), "the owner's link does");
}

/// The story's chapters as `(at, slot)`, in time order.
async fn story(app: &App, id: &restock_core::RequestId) -> Vec<(restock_core::Millis, String)> {
    app.get(id)
        .await
        .story
        .chapters()
        .iter()
        .map(|c| (c.at, c.slot()))
        .collect()
}

pub async fn a_request_s_story_is_kept_as_it_happens(app: App) {
    use restock_core::story::Event;
    // Ann signs up with double opt-in: asked, then confirmed.
    let ann = app.sign_up(CHAIR, 1, T0).await;
    let (claim, link) = app.claim_confirmation_at(&ann, T0 + 1).await;
    assert_eq!(claim, Claim::Claimed);
    app.store
        .confirm(&link, owner(), LIFETIME.as_millis(), T0 + 2)
        .await
        .unwrap();
    let bea = app.join(CHAIR, 2, T0 + 3).await;
    // Two units; one sells elsewhere before Ann clicks: she goes back.
    app.level(CHAIR, 2, T0 + 10, "d1").await;
    let wave = app.wave_sent(CHAIR, T0 + 11).await;
    for o in &wave.offers {
        app.store
            .record_notice(
                &o.request.id,
                1,
                NoticeOutcome::Sent {
                    message_id: format!("m-{}", o.request.id),
                },
                T0 + 12,
            )
            .await
            .unwrap();
    }
    app.level(CHAIR, 1, T0 + 13, "d2").await;
    let bea_hold = HoldId::from_random(app.bytes());
    app.store
        .take_hold(&wave.offers[1].reserve, bea_hold, 1, T0 + MIN, WINDOW)
        .await
        .unwrap();
    let again = app
        .store
        .take_hold(
            &wave.offers[0].reserve,
            HoldId::from_random(app.bytes()),
            1,
            T0 + MIN + 1,
            WINDOW,
        )
        .await
        .unwrap();
    assert_eq!(again, HoldOutcome::SoldOutAgain);
    app.store
        .mark_bought(&bea_hold, &order_at(T0 + 2 * MIN), T0 + 2 * MIN)
        .await
        .unwrap();
    // Restock 2: Ann is offered again; her notice bounces.
    app.level(CHAIR, 0, T0 + 3 * MIN, "d3").await;
    app.level(CHAIR, 1, T0 + 4 * MIN, "d4").await;
    let wave = app.wave(CHAIR, T0 + 4 * MIN).await;
    assert_eq!(wave.offers[0].request.id, ann.id);
    let r = app.get(&ann.id).await;
    app.store
        .claim_notice(
            &r.sku,
            &ann.id,
            2,
            &wave.offers[0].reserve.secret_hash(),
            &r.contact_key,
        )
        .await
        .unwrap();
    app.store
        .record_notice(
            &ann.id,
            2,
            NoticeOutcome::Failed {
                reason: "bounced".into(),
            },
            T0 + 4 * MIN + 1,
        )
        .await
        .unwrap();
    assert_eq!(
        story(&app, &ann.id).await,
        [
            (T0, "joined".into()),
            (T0 + 1, "asked".into()),
            (T0 + 2, "confirmed".into()),
            (T0 + 11, "offered_1".into()),
            (T0 + 12, "notice_1".into()),
            (T0 + MIN + 1, "back_1".into()),
            (T0 + 4 * MIN, "offered_2".into()),
            (T0 + 4 * MIN + 1, "notice_2".into()),
            (T0 + 4 * MIN + 1, "ended".into()),
        ]
    );
    let ann_story = app.get(&ann.id).await.story;
    let last: Vec<_> = ann_story
        .chapters()
        .iter()
        .map(|c| c.event.clone())
        .collect();
    assert_eq!(
        last[7..],
        [
            Event::NotSent {
                episode: 2,
                reason: "bounced".into()
            },
            Event::Ended {
                status: Status::Undeliverable
            }
        ]
    );
    assert_eq!(
        last[4],
        Event::Sent {
            episode: 1,
            message_id: format!("m-{}", ann.id)
        }
    );
    assert_eq!(
        story(&app, &bea.id).await,
        [
            (T0 + 3, "joined".into()),
            (T0 + 11, "offered_1".into()),
            (T0 + 12, "notice_1".into()),
            (T0 + MIN, "held".into()),
            (T0 + 2 * MIN, "ended".into()),
        ]
    );
    let bea_story = app.get(&bea.id).await.story;
    assert!(bea_story.chapters().iter().any(|c| c.event
        == Event::Held {
            hold: bea_hold,
            expires_ms: T0 + MIN + WINDOW.as_millis()
        }));
    // A shopper who leaves: joined, then cancelled.
    let cal = app.join(CHAIR, 3, T0 + 5 * MIN).await;
    app.store.cancel(&cal.id, T0 + 6 * MIN).await.unwrap();
    // Every request of Ann's, ended ones too, oldest first, each with its
    // story; nobody else's.
    let oat = app.join(OAT, 1, T0 + 7 * MIN).await;
    let of_ann = app
        .store
        .contact_requests(&email(1).key(PEPPER))
        .await
        .unwrap();
    assert_eq!(
        of_ann.iter().map(|r| r.id).collect::<Vec<_>>(),
        [ann.id, oat.id]
    );
    assert_eq!(of_ann[0].story, ann_story);
    assert!(
        app.store
            .contact_requests(&email(9).key(PEPPER))
            .await
            .unwrap()
            .is_empty()
    );
    let cal_story = app.get(&cal.id).await.story;
    assert_eq!(
        cal_story.chapters().last().map(|c| &c.event),
        Some(&Event::Ended {
            status: Status::Cancelled
        })
    );
}

/// Quiet hours (DESIGN I2): a wave passes over the shoppers inside their
/// quiet hours in their own time zone, their places kept, and offers the
/// units to the next people awake; with units left over it says when the
/// first sleeper wakes. The sweep wakes the item once then, and the next
/// wave offers the one who woke first.
pub async fn sleepers_keep_their_place_and_are_first_when_they_wake(app: App) {
    let zone = |z: &str| Some(restock_core::Zone::from_stored(z).unwrap());
    let text =
        |n: u8| Contact::Sms(restock_core::Phone::parse(&format!("+61 412 345 67{n}")).unwrap());
    let joined = |o: JoinOutcome| match o {
        JoinOutcome::Joined(r) => r,
        other => panic!("did not join: {other:?}"),
    };
    // Ana and Dee are told by text in Sydney, Ben by text in New York, Cai
    // by email in Sydney (email keeps no quiet hours by default).
    let ana = joined(
        app.join_in(CHAIR, text(1), T0, 1, zone("Australia/Sydney"))
            .await,
    );
    let ben = joined(
        app.join_in(CHAIR, text(2), T0 + 1, 1, zone("America/New_York"))
            .await,
    );
    let cai = joined(
        app.join_in(CHAIR, email(3), T0 + 2, 1, zone("Australia/Sydney"))
            .await,
    );
    let dee = joined(
        app.join_in(CHAIR, text(4), T0 + 3, 1, zone("Australia/Sydney"))
            .await,
    );
    // 14:00 UTC: 09:00 in New York, 01:00 the next day in Sydney.
    let morning_ny = T0 + 14 * 3_600_000;
    let sydney_wakes = T0 + 21 * 3_600_000;
    app.level(CHAIR, 3, morning_ny, "d1").await;
    let quiet = WaveParams {
        quiet_hours: restock_core::QuietHours::default(),
        ..params(1)
    };
    let mut random = random(11);
    let wave = app
        .store
        .create_offers(&sku(CHAIR), &quiet, morning_ny, &mut random)
        .await
        .unwrap();
    let offered: Vec<restock_core::RequestId> = wave.offers.iter().map(|o| o.request.id).collect();
    assert_eq!(offered, [ben.id, cai.id], "the first awake, oldest first");
    assert_eq!((wave.asleep, wave.wake_at), (2, Some(sydney_wakes)));
    assert!(
        wave.skipped.is_empty(),
        "a sleeper is not passed over for good"
    );
    for r in [&ana, &dee] {
        assert_eq!(app.get(&r.id).await.state, RequestState::Waiting);
    }
    assert_eq!(
        app.store.position(&ana, 1).await.unwrap(),
        Some(1),
        "her place kept"
    );
    // The wake is asked for; a later time does not replace it.
    app.store.wake_at(&sku(CHAIR), sydney_wakes).await.unwrap();
    app.store
        .wake_at(&sku(CHAIR), sydney_wakes + DAY)
        .await
        .unwrap();
    app.settle().await;
    assert!(
        app.store
            .wake_sleepers(sydney_wakes - 1)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        app.store.wake_sleepers(sydney_wakes).await.unwrap(),
        [sku(CHAIR)]
    );
    assert!(
        app.store
            .wake_sleepers(sydney_wakes + 60_000)
            .await
            .unwrap()
            .is_empty(),
        "once"
    );
    let last = app.store.wakes(&sku(CHAIR)).await.unwrap().pop().unwrap();
    assert_eq!(
        (last.kind, last.episode, last.at),
        (WakeKind::Awake, 1, sydney_wakes)
    );
    // Awake: the one unit left goes to Ana, first in line.
    let wave = app
        .store
        .create_offers(&sku(CHAIR), &quiet, sydney_wakes, &mut random)
        .await
        .unwrap();
    let offered: Vec<restock_core::RequestId> = wave.offers.iter().map(|o| o.request.id).collect();
    assert_eq!(offered, [ana.id]);
    assert_eq!((wave.asleep, wave.wake_at), (0, None));
    assert_eq!(app.store.position(&dee, 1).await.unwrap(), Some(1));
}

/// The one reminder before an offer runs out: asked for once the notice
/// is sent, listed by the sweep at its time, claimed once with links of
/// its own (its reserve link holds the unit as the notice's does), or
/// dropped without them (the shopper asleep), and counted once in the
/// story and the item's history.
pub async fn an_offer_is_reminded_once_and_the_reminder_s_link_holds(app: App) {
    let (a, b) = (
        app.join(CHAIR, 1, T0).await,
        app.join(CHAIR, 2, T0 + 1).await,
    );
    app.level(CHAIR, 2, T0 + 10, "d1").await;
    let wave = app.wave(CHAIR, T0 + 10).await;
    assert_eq!(wave.offers.len(), 2);
    let expires = T0 + 10 + WINDOW.as_millis();
    let at = expires - 5 * 60_000;
    assert!(
        !app.store.schedule_reminder(&a.id, 1, at).await.unwrap(),
        "not before its notice is sent"
    );
    for (i, offer) in wave.offers.iter().enumerate() {
        let id = offer.request.id;
        assert_eq!(
            app.claim(&id, &offer.reserve.secret_hash()).await,
            Claim::Claimed
        );
        let sent = NoticeOutcome::Sent {
            message_id: format!("notice-{i}"),
        };
        app.store
            .record_notice(&id, 1, sent, T0 + 11)
            .await
            .unwrap();
        assert!(app.store.schedule_reminder(&id, 1, at).await.unwrap());
    }
    assert!(
        !app.store.schedule_reminder(&a.id, 2, at).await.unwrap(),
        "another restock's"
    );
    app.settle().await;
    assert!(app.store.due(at - 1, 100).await.unwrap().is_empty());
    let due = app.store.due(at, 100).await.unwrap();
    assert_eq!(due.len(), 2);
    for d in &due {
        assert_eq!(
            app.store.expire(d, at).await.unwrap(),
            ExpireOutcome::Remind(1)
        );
    }
    let token = || LinkToken::new(sku(CHAIR), a.id, app.bytes());
    let (reserve, optout, manage) = (token(), token(), token());
    let links = ReminderLinks {
        reserve: reserve.secret_hash(),
        optout: optout.secret_hash(),
        manage: manage.secret_hash(),
    };
    let claimed = app
        .store
        .claim_reminder(&a.id, 1, Some(&links), at)
        .await
        .unwrap()
        .expect("claimed");
    assert_eq!(claimed.remind_hash, Some(links.reserve));
    assert!(claimed.optout_link_is(&optout) && claimed.manage_link_is(&manage));
    assert!(
        app.store
            .claim_reminder(&a.id, 1, Some(&links), at)
            .await
            .unwrap()
            .is_none(),
        "once"
    );
    let dropped = app.store.claim_reminder(&b.id, 1, None, at).await.unwrap();
    assert_eq!(
        dropped.map(|r| r.remind_hash),
        Some(None),
        "dropped: no link"
    );
    app.settle().await;
    assert!(
        app.store.due(at + 1, 100).await.unwrap().is_empty(),
        "due again only at the offer's end"
    );
    for _ in 0..2 {
        app.store
            .record_reminder(&a.id, 1, "reminder-1", at)
            .await
            .unwrap();
    }
    let history = app
        .store
        .item_history(&sku(CHAIR), "2026-12-01")
        .await
        .unwrap();
    assert_eq!(history.restocks[&1].reminded, 1, "counted once");
    let story = app.get(&a.id).await.story;
    assert!(story.chapters().iter().any(|c| c.event
        == restock_core::story::Event::Reminded {
            episode: 1,
            message_id: "reminder-1".into()
        }));
    // The reminder's own link holds the unit.
    let hold = HoldId::from_random(app.bytes());
    let held = app
        .store
        .take_hold(&reserve, hold, 1, at + 1, WINDOW)
        .await
        .unwrap();
    assert!(matches!(held, HoldOutcome::Held { .. }), "{held:?}");
    assert!(
        app.get(&a.id)
            .await
            .reserve_link_is(&wave.offers[0].reserve)
    );
}

/// Assisted revenue: a contact sent a notice for an item is marked as told
/// (never in the clear: its keyed hash); an order of theirs without a hold
/// within the window counts once, with what it paid; another contact's, an
/// earlier notice's, or another item's does not; `forget` drops the mark.
pub async fn an_order_by_a_contact_told_is_assisted_once_within_the_window(app: App) {
    let a = app.join(CHAIR, 1, T0).await;
    let b = app.join(CHAIR, 2, T0 + 1).await;
    app.level(CHAIR, 1, T0 + 10, "d1").await;
    let wave = app.wave(CHAIR, T0 + 10).await;
    let offer = &wave.offers[0];
    assert_eq!(
        app.claim(&a.id, &offer.reserve.secret_hash()).await,
        Claim::Claimed
    );
    let sent = NoticeOutcome::Sent {
        message_id: "notice-1".into(),
    };
    app.store
        .record_notice(&a.id, 1, sent, T0 + 11)
        .await
        .unwrap();
    let paid = restock_core::Money {
        currency: "GBP".into(),
        milli: 249_000,
    };
    let later = T0 + DAY;
    let assist = |who: &Request, order: &str, since: restock_core::Millis, item: &str| {
        let (contact, order, item) = (who.contact_key.clone(), order.to_owned(), sku(item));
        let paid = paid.clone();
        let store = app.store.clone();
        async move {
            store
                .assist(&item, &[contact], &order, Some(&paid), since, later)
                .await
                .unwrap()
        }
    };
    assert_eq!(
        assist(&b, "o-1", T0, CHAIR).await,
        Assist::NotTold,
        "never told"
    );
    assert_eq!(
        assist(&a, "o-2", T0 + 12, CHAIR).await,
        Assist::NotTold,
        "told before the window"
    );
    assert_eq!(
        assist(&a, "o-3", T0, OAT).await,
        Assist::NotTold,
        "another item"
    );
    assert_eq!(assist(&a, "o-4", T0, CHAIR).await, Assist::Counted);
    assert_eq!(assist(&a, "o-4", T0, CHAIR).await, Assist::AlreadyCounted);
    let stats = app.store.stats(&sku(CHAIR), 1).await.unwrap();
    assert_eq!(stats.assisted, 1);
    assert_eq!(stats.assisted_revenue.get("GBP"), Some(&249_000));
    assert!(
        stats.revenue.is_empty(),
        "apart from revenue through a hold"
    );
    app.store
        .forget_contact(&a.contact_key, later)
        .await
        .unwrap();
    assert_eq!(
        assist(&a, "o-5", T0, CHAIR).await,
        Assist::NotTold,
        "forgotten"
    );
}
