"""Writes events/*.json: one sample event per entry point, for
`sam local invoke -e` and for tests/events, which runs each through the real
handler. Webhooks are signed with the documented test keys:

  shopify      shpss_restock_test_key
  woocommerce  wc_restock_test_key
  stock        whsec_cmVzdG9jay10ZXN0LXN0b2NrLWtleQ==

The generic stock webhook carries a fixed timestamp (2026-12-04T09:00:00Z);
outside five minutes of it, detect refuses it as a replay, as it should. For a
fresh one, sign with `restock sign-webhook stock --key KEY FILE`.

    python3 scripts/make-events.py
"""

import base64
import gzip
import hashlib
import hmac
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent / "events"
TS = 1796374800  # 2026-12-04T09:00:00Z
HOST = "abcdefghijklmnop.lambda-url.eu-west-2.on.aws"
# The reserve and opt-out tokens of the sample request: CHAIR-WAL, request id
# bytes [1]*16, reserve secret [2]*16, opt-out secret [3]*16.
def b64url(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).decode().rstrip("=")

REQUEST_ID = b64url(bytes([1] * 16))
HOLD = b64url(bytes([4] * 16))
RESERVE = f"CHAIR-WAL~{REQUEST_ID}.{b64url(bytes([2] * 16))}"
OPTOUT = f"CHAIR-WAL~{REQUEST_ID}.{b64url(bytes([3] * 16))}"
# The sample sign-up's confirmation link (double opt-in): secret [6]*16.
CONFIRM = f"CHAIR-WAL~{REQUEST_ID}.{b64url(bytes([6] * 16))}"


def function_url(method: str, path: str, body: str = "", headers: dict | None = None) -> dict:
    h = {"host": HOST, "x-forwarded-for": "203.0.113.7", "user-agent": "Mozilla/5.0 (iPhone)", **(headers or {})}
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": "",
        "headers": h,
        "requestContext": {
            "accountId": "anonymous",
            "apiId": "abcdefghijklmnop",
            "domainName": HOST,
            "domainPrefix": "abcdefghijklmnop",
            "http": {"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "203.0.113.7", "userAgent": "Mozilla/5.0 (iPhone)"},
            "requestId": "c6af9ac6-7b61-11e6-9a41-93e8deadbeef",
            "routeKey": "$default",
            "stage": "$default",
            "time": "29/Nov/2026:09:00:00 +0000",
            "timeEpoch": TS * 1000,
        },
        "body": body,
        "isBase64Encoded": False,
    }


def hmac_b64(key: bytes, msg: bytes) -> str:
    return base64.b64encode(hmac.new(key, msg, hashlib.sha256).digest()).decode()


def write(name: str, event: dict) -> None:
    (ROOT / name).write_text(json.dumps(event, indent=2) + "\n")


def main() -> None:
    ROOT.mkdir(exist_ok=True)
    write("capture-notify-me.json", function_url(
        "POST", "/requests",
        json.dumps({"sku": "CHAIR-WAL", "name": "Della", "email": "della@example.com", "consent": True}),
        {"content-type": "application/json", "origin": "https://loomandlast.co.uk"},
    ))
    write("capture-reserve-page.json", function_url("GET", f"/r/{RESERVE}"))
    write("capture-reserve.json", function_url("POST", f"/r/{RESERVE}", "", {"content-type": "application/x-www-form-urlencoded"}))
    write("capture-confirm.json", function_url("POST", f"/c/{CONFIRM}"))
    write("capture-opt-out.json", function_url(
        "POST", f"/o/{OPTOUT}", "List-Unsubscribe=One-Click", {"content-type": "application/x-www-form-urlencoded"},
    ))

    shopify_body = json.dumps({
        "inventory_item_id": 271878346596884015, "location_id": 24826418, "available": 4,
        "updated_at": "2026-11-29T04:00:00-05:00",
        "admin_graphql_api_id": "gid://shopify/InventoryLevel/24826418?inventory_item_id=271878346596884015",
    }, separators=(",", ":"))
    write("detect-shopify.json", function_url("POST", "/webhooks/shopify", shopify_body, {
        "content-type": "application/json",
        "x-shopify-topic": "inventory_levels/update",
        "x-shopify-webhook-id": "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043",
        "x-shopify-hmac-sha256": hmac_b64(b"shpss_restock_test_key", shopify_body.encode()),
    }))

    woo_body = json.dumps({
        "id": 812, "name": "Linen throw - Oat", "type": "variation", "parent_id": 810, "sku": "THROW-OAT",
        "date_modified_gmt": "2026-11-29T08:59:00", "manage_stock": True, "stock_quantity": 12, "stock_status": "instock",
    }, separators=(",", ":"))
    write("detect-woocommerce.json", function_url("POST", "/webhooks/woocommerce", woo_body, {
        "content-type": "application/json",
        "x-wc-webhook-topic": "product.updated",
        "x-wc-webhook-delivery-id": "6f0a3e7c9d",
        "x-wc-webhook-signature": hmac_b64(b"wc_restock_test_key", woo_body.encode()),
    }))

    # Orders that used a hold (HOLD: bytes [4]*16), as the platforms send them.
    shopify_order = json.dumps({
        "id": 820982911946154508, "financial_status": "paid",
        "note_attributes": [{"name": "hold", "value": HOLD}],
        "line_items": [{"sku": "CHAIR-WAL", "quantity": 1}],
    }, separators=(",", ":"))
    write("detect-shopify-order.json", function_url("POST", "/webhooks/shopify", shopify_order, {
        "content-type": "application/json",
        "x-shopify-topic": "orders/paid",
        "x-shopify-webhook-id": "0b2c3d4e-5f60-4718-9a2b-3c4d5e6f7081",
        "x-shopify-hmac-sha256": hmac_b64(b"shpss_restock_test_key", shopify_order.encode()),
    }))
    woo_order = json.dumps({
        "id": 727, "status": "processing",
        "meta_data": [{"id": 9, "key": "hold", "value": HOLD}],
        "line_items": [{"sku": "CHAIR-WAL", "quantity": 1}],
    }, separators=(",", ":"))
    write("detect-woocommerce-order.json", function_url("POST", "/webhooks/woocommerce", woo_order, {
        "content-type": "application/json",
        "x-wc-webhook-topic": "order.updated",
        "x-wc-webhook-delivery-id": "7a1b2c3d4e",
        "x-wc-webhook-signature": hmac_b64(b"wc_restock_test_key", woo_order.encode()),
    }))

    # Shopify's privacy topic for the sample shopper, as Shopify documents it.
    redact = json.dumps({
        "shop_id": 954889, "shop_domain": "loomandlast.myshopify.com",
        "customer": {"id": 191167, "email": "della@example.com", "phone": None},
        "orders_to_redact": [],
    }, separators=(",", ":"))
    write("detect-shopify-redact.json", function_url("POST", "/webhooks/shopify", redact, {
        "content-type": "application/json",
        "x-shopify-topic": "customers/redact",
        "x-shopify-webhook-id": "3c4d5e6f-7081-4a2b-9c3d-4e5f60718293",
        "x-shopify-shop-domain": "loomandlast.myshopify.com",
        "x-shopify-hmac-sha256": hmac_b64(b"shpss_restock_test_key", redact.encode()),
    }))

    stock_body = json.dumps([
        {"sku": "CHAIR-WAL", "level": 3, "at": "2026-11-29T08:58:00Z", "location": "warehouse"},
        {"sku": "CHAIR-WAL", "level": 1, "at": "2026-11-29T08:58:00Z", "location": "shop"},
    ], separators=(",", ":"))
    stock_key = base64.b64decode("cmVzdG9jay10ZXN0LXN0b2NrLWtleQ==")
    msg_id = "msg_2Kz8tQxV"
    signature = hmac_b64(stock_key, f"{msg_id}.{TS}.{stock_body}".encode())
    write("detect-stock.json", function_url("POST", "/webhooks/stock", stock_body, {
        "content-type": "application/json",
        "webhook-id": msg_id,
        "webhook-timestamp": str(TS),
        "webhook-signature": f"v1,{signature}",
    }))

    write("notify-restock-record.json", {"Records": [{
        "eventID": "4f5a1b2c3d4e5f60718293a4b5c6d7e8",
        "eventName": "INSERT",
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        "awsRegion": "eu-west-2",
        "dynamodb": {
            "ApproximateCreationDateTime": TS,
            "Keys": {"pk": {"S": "WAKE#CHAIR-WAL"}, "sk": {"S": f"{TS * 1000:013}#restock#0000000000000001"}},
            "NewImage": {
                "pk": {"S": "WAKE#CHAIR-WAL"},
                "sk": {"S": f"{TS * 1000:013}#restock#0000000000000001"},
                "sku": {"S": "CHAIR-WAL"},
                "kind": {"S": "restock"},
                "epi": {"N": "1"},
                "wat": {"N": str(TS * 1000)},
            },
            "SequenceNumber": "111100000000000000000001",
            "SizeBytes": 180,
            "StreamViewType": "NEW_AND_OLD_IMAGES",
        },
        "eventSourceARN": "arn:aws:dynamodb:eu-west-2:123456789012:table/restock/stream/2026-11-01T00:00:00.000",
    }]})

    # restock's events: the table's stream records of one write each, as
    # notify's second subscription delivers them (images before and after).
    request = {
        "pk": {"S": f"REQ#{REQUEST_ID}"}, "sk": {"S": "REQ"}, "rid": {"S": REQUEST_ID},
        "sku": {"S": "CHAIR-WAL"}, "nm": {"S": "Della"}, "ch": {"S": "email"},
        "addr": {"S": "della@example.com"}, "ckey": {"S": "mRQKZtglXmjhSTvnty7pEFH6ls1TuRBea5L35OS1NG0"},
        "jk": {"S": f"{(TS - 86400) * 1000:013}#0101010101010101"}, "shd": {"N": "0"},
        "stale_at": {"N": str((TS + 90 * 86400) * 1000)}, "epi": {"N": "1"}, "last_epi": {"N": "1"},
        "rh": {"S": hashlib.sha256(bytes([2] * 16)).hexdigest()},
        "oh": {"SS": [hashlib.sha256(bytes([3] * 16)).hexdigest()]},
        "notice": {"S": json.dumps({"notice": "sent", "message_id": "0100019a-sample"})},
    }
    offered = {**request, "st": {"S": "offered"}, "exp": {"N": str((TS + 900) * 1000)}}
    held = {**request, "st": {"S": "held"}, "exp": {"N": str((TS + 960) * 1000)}, "hid": {"S": HOLD}}
    pause = {
        "pk": {"S": "SENDER"}, "sk": {"S": "PAUSE"}, "pause_from": {"N": str(TS * 1000)},
        "pause_to": {"N": str((TS + 300) * 1000)}, "why": {"S": "MessageRejected: Email address is not verified."},
        "held_skus": {"SS": ["CHAIR-WAL"]},
    }

    def change(event_id: str, name: str, sequence: str, old: dict | None, new: dict) -> dict:
        images = {"NewImage": new, **({"OldImage": old} if old else {})}
        return {
            "eventID": event_id,
            "eventName": name,
            "eventVersion": "1.1",
            "eventSource": "aws:dynamodb",
            "awsRegion": "eu-west-2",
            "dynamodb": {
                "ApproximateCreationDateTime": TS + 60,
                "Keys": {"pk": new["pk"], "sk": new["sk"]},
                **images,
                "SequenceNumber": sequence,
                "SizeBytes": 1200,
                "StreamViewType": "NEW_AND_OLD_IMAGES",
            },
            "eventSourceARN": "arn:aws:dynamodb:eu-west-2:123456789012:table/restock/stream/2026-11-01T00:00:00.000",
        }

    write("notify-changes-record.json", {"Records": [
        change("8a1f0e2d3c4b5a69788796a5b4c3d2e1", "MODIFY", "111100000000000000000002", offered, held),
        change("9b2e1f3e4d5c6b7a8998a7b6c5d4e3f2", "INSERT", "111100000000000000000003", None, pause),
    ]})

    write("sweep-schedule.json", {
        "version": "0",
        "id": "53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa",
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": "123456789012",
        "time": "2026-11-29T09:16:00Z",
        "region": "eu-west-2",
        "resources": ["arn:aws:events:eu-west-2:123456789012:rule/restock-sweep"],
        "detail": {},
    })

    # SES's bounce event through the notices' configuration set (template.yaml,
    # NoticeFeedback -> MailFeedback). The tags are the ones notify sends.
    write("sweep-ses-bounce.json", {
        "version": "0",
        "id": "7c3f1a52-9d0e-4b8a-a1f2-3e4d5c6b7a81",
        "detail-type": "Email Bounced",
        "source": "aws.ses",
        "account": "123456789012",
        "time": "2026-11-29T09:20:00Z",
        "region": "eu-west-2",
        "resources": ["arn:aws:ses:eu-west-2:123456789012:configuration-set/restock-notices"],
        "detail": {
            "eventType": "Bounce",
            "bounce": {
                "bounceType": "Permanent",
                "bounceSubType": "General",
                "bouncedRecipients": [{
                    "emailAddress": "della@example.com",
                    "action": "failed",
                    "status": "5.1.1",
                    "diagnosticCode": "smtp; 550 5.1.1 user unknown",
                }],
                "timestamp": "2026-11-29T09:19:58.000Z",
                "feedbackId": "0100018c-example-bounce-feedback-000000",
                "reportingMTA": "dsn; mta.example.com",
            },
            "mail": {
                "timestamp": "2026-11-29T09:19:55.000Z",
                "source": "Loom & Last <hello@loomandlast.co.uk>",
                "messageId": "0100018c-example-message-000000",
                "destination": ["della@example.com"],
                "tags": {
                    "ses:configuration-set": ["restock-notices"],
                    "restock-request": ["AAAAAAAAAAAAAAAAAAAAAA"],
                    "restock-restock": ["1"],
                    "restock-contact": ["example-contact-key"],
                },
            },
        },
    })

    # SNS's SMS delivery status log (failure group), as the CloudWatch Logs
    # subscription (template.yaml, SmsFailureSubscription) delivers it.
    entry = {
        "notification": {"messageId": "1077257a-92f3-5ca3-bc97-6a915b310625", "timestamp": "2026-11-29 09:20:01.559"},
        "delivery": {
            "mnc": 0, "destination": "+447911123456", "priceInUSD": 0.0395, "smsType": "Transactional",
            "mcc": 234, "providerResponse": "Invalid phone number", "dwellTimeMs": 1420,
            "dwellTimeMsUntilDeviceAck": 1692,
        },
        "status": "FAILURE",
    }
    logs = {
        "messageType": "DATA_MESSAGE",
        "owner": "123456789012",
        "logGroup": "sns/eu-west-2/123456789012/DirectPublishToPhoneNumber/Failure",
        "logStream": "1077257a-92f3-5ca3-bc97-6a915b310625",
        "subscriptionFilters": ["restock-SmsFailureSubscription"],
        "logEvents": [{
            "id": "38226617488930374374587063958463217658112930146358706176",
            "timestamp": 1796375201559,
            "message": json.dumps(entry, separators=(",", ":")),
        }],
    }
    data = gzip.compress(json.dumps(logs).encode(), mtime=0)
    write("sweep-sms-failure.json", {"awslogs": {"data": base64.b64encode(data).decode()}})

    # The stock pull rule's constant input (template.yaml, StockPull).
    write("sweep-stock-pull.json", {"restock": "pull"})

    # The sample shopper's erasure as detect hands it to the sweep on the
    # stack's bus (template.yaml, Erasures): her keyed hashes, never her
    # address (the test secret's contact_pepper; crates/core/src/contact.rs).
    pepper = b"restock-test-contact-pepper-0123456789"
    key = lambda kind, address: b64url(hmac.new(pepper, kind + address.encode(), hashlib.sha256).digest())
    write("sweep-erasure.json", {
        "version": "0",
        "id": "0f6a2b1c-4d5e-4f60-8a7b-9c0d1e2f3a4b",
        "detail-type": "Erasure requested",
        "source": "restock.privacy",
        "account": "123456789012",
        "time": "2026-11-29T09:30:00Z",
        "region": "eu-west-2",
        "resources": [],
        "detail": {
            "contact_keys": [key(b"email:", "della@example.com"), key(b"phone:", "+447911123456")],
            "customer_id": 191167,
        },
    })

    # A shopper's reply to a text, as End User Messaging publishes it to the
    # InboundTexts topic and SNS hands it to the sweep (template.yaml); the
    # payload's fields as AWS documents them (two-way SMS payload).
    topic = "arn:aws:sns:eu-west-2:123456789012:restock-InboundTexts-1Q2W3E4R5T6Y"
    reply = {
        "originationNumber": "+447911123456",
        "destinationNumber": "+447700900123",
        "messageKeyword": "KEYWORD_123456789012",
        "messageBody": "Unsubscribe me please",
        "inboundMessageId": "cae173d2-66b9-564c-8309-21f858e9fb84",
        "previousPublishedMessageId": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    }
    write("sweep-inbound-text.json", {"Records": [{
        "EventSource": "aws:sns",
        "EventVersion": "1.0",
        "EventSubscriptionArn": f"{topic}:2bcfbf39-05c3-41de-beaa-fcfcc21c8f55",
        "Sns": {
            "Type": "Notification",
            "MessageId": "95df01b4-ee98-5cb9-9903-4c221d41eb5e",
            "TopicArn": topic,
            "Subject": None,
            "Message": json.dumps(reply),
            "Timestamp": "2026-11-29T09:30:00.000Z",
            "SignatureVersion": "1",
            "Signature": "EXAMPLE",
            "SigningCertUrl": "EXAMPLE",
            "UnsubscribeUrl": "EXAMPLE",
            "MessageAttributes": {},
        },
    }]})


if __name__ == "__main__":
    main()
