//! The on-call engineer's kit through the handlers and the operator's
//! commands (`restock_app::admin`, what the CLI and the dashboard run):
//! waking an item whose wake was lost.

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
