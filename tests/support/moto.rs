//! The SDK pointed at moto, what moto's SES accepted, and plain HTTP reads.

/// SDK configuration for moto (and for Bedrock, the fake).
pub async fn aws_config(endpoint: &str) -> aws_config::SdkConfig {
    aws_config::defaults(aws_config::BehaviorVersion::latest())
        .endpoint_url(endpoint)
        .region(aws_config::Region::new("eu-west-2"))
        .credentials_provider(aws_sdk_dynamodb::config::Credentials::new(
            "testing", "testing", None, None, "e2e",
        ))
        .load()
        .await
}

/// Emails moto's SES accepted, as (recipient, subject, HTML body), read from
/// the test server's `/_restock/ses/messages` (see `scripts/moto_serial.py`).
pub async fn ses_messages(endpoint: &str) -> Vec<(String, String, String)> {
    let body = http_get(&format!("{endpoint}/_restock/ses/messages")).await;
    let messages: serde_json::Value = serde_json::from_str(&body).unwrap_or_else(|e| {
        panic!("{endpoint} is not scripts/moto_serial.py (no SES message list: {e})")
    });
    messages
        .as_array()
        .expect("a list")
        .iter()
        .map(|m| {
            let to = m["to"][0].as_str().unwrap_or_default().to_owned();
            (
                to,
                m["subject"].as_str().unwrap_or_default().to_owned(),
                m["body"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// Texts moto's SNS sent, as (number, text), read from the test server's
/// `/_restock/sns/texts`.
pub async fn sns_texts(endpoint: &str) -> Vec<(String, String)> {
    let body = http_get(&format!("{endpoint}/_restock/sns/texts")).await;
    let texts: serde_json::Value = serde_json::from_str(&body).unwrap_or_else(|e| {
        panic!("{endpoint} is not scripts/moto_serial.py (no SNS text list: {e})")
    });
    texts
        .as_array()
        .expect("a list")
        .iter()
        .map(|t| {
            (
                t["to"].as_str().unwrap_or_default().to_owned(),
                t["text"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// A plain HTTP GET on loopback.
pub async fn http_get(url: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rest = url.strip_prefix("http://").expect("http url");
    let (host, path) = rest
        .split_once('/')
        .map_or((rest, "/".to_owned()), |(h, p)| (h, format!("/{p}")));
    let mut stream = tokio::net::TcpStream::connect(host).await.expect("connect");
    stream
        .write_all(format!("GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n").as_bytes())
        .await
        .expect("write");
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.expect("read");
    let text = String::from_utf8_lossy(&response).into_owned();
    text.split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default()
}

/// The reserve link in an email's HTML.
pub fn reserve_link_in(html: &str) -> Option<String> {
    let start = html.find("href=\"https://notify.loomandlast.co.uk/r/")? + "href=\"".len();
    let end = start + html[start..].find('"')?;
    Some(html[start..end].to_owned())
}

/// One call of an AWS JSON-protocol API on moto (`target` like
/// `AmazonSQS.ReceiveMessage`), signed for `service` in eu-west-2 (moto
/// reads only the region and service from the signature).
pub async fn aws_json(
    endpoint: &str,
    service: &str,
    target: &str,
    body: serde_json::Value,
) -> serde_json::Value {
    let answer = reqwest::Client::new()
        .post(endpoint)
        .header("x-amz-target", target)
        .header("content-type", "application/x-amz-json-1.0")
        .header(
            "authorization",
            format!("AWS4-HMAC-SHA256 Credential=testing/20261202/eu-west-2/{service}/aws4_request, SignedHeaders=host, Signature=0"),
        )
        .body(body.to_string())
        .send()
        .await
        .unwrap_or_else(|e| panic!("{target}: {e}"));
    let status = answer.status();
    let text = answer.text().await.unwrap_or_default();
    assert!(status.is_success(), "{target}: {status} {text}");
    serde_json::from_str(&text).unwrap_or(serde_json::Value::Null)
}

/// A new event bus with a rule sending every restock event to a new SQS
/// queue, so a test can read back what reached the bus: the bus's name and
/// the queue's URL.
pub async fn event_bus_to_queue(endpoint: &str) -> (String, String) {
    let name = restock_store_dynamo::testing::unique_table("restock-bus");
    let queue = aws_json(
        endpoint,
        "sqs",
        "AmazonSQS.CreateQueue",
        serde_json::json!({ "QueueName": name }),
    )
    .await;
    let url = queue["QueueUrl"].as_str().expect("a queue url").to_owned();
    let attrs = aws_json(
        endpoint,
        "sqs",
        "AmazonSQS.GetQueueAttributes",
        serde_json::json!({ "QueueUrl": url, "AttributeNames": ["QueueArn"] }),
    )
    .await;
    let arn = attrs["Attributes"]["QueueArn"]
        .as_str()
        .expect("a queue arn")
        .to_owned();
    let events = aws_sdk_eventbridge::Client::new(&aws_config(endpoint).await);
    events
        .create_event_bus()
        .name(&name)
        .send()
        .await
        .expect("bus created");
    events
        .put_rule()
        .name(&name)
        .event_bus_name(&name)
        .event_pattern(
            serde_json::json!({ "source": [restock_app::events::SOURCE, restock_aws::ERASURE_SOURCE] })
                .to_string(),
        )
        .send()
        .await
        .expect("rule created");
    events
        .put_targets()
        .rule(&name)
        .event_bus_name(&name)
        .targets(
            aws_sdk_eventbridge::types::Target::builder()
                .id("queue")
                .arn(arn)
                .build()
                .expect("a target"),
        )
        .send()
        .await
        .expect("target added");
    (name, url)
}

/// The events the rule put in the queue so far, as EventBridge delivers
/// them (`source`, `detail-type`, `time`, `detail`).
pub async fn queued_events(endpoint: &str, queue_url: &str) -> Vec<serde_json::Value> {
    let mut events = Vec::new();
    loop {
        let got = aws_json(
            endpoint,
            "sqs",
            "AmazonSQS.ReceiveMessage",
            serde_json::json!({ "QueueUrl": queue_url, "MaxNumberOfMessages": 10 }),
        )
        .await;
        let messages = got["Messages"].as_array().cloned().unwrap_or_default();
        if messages.is_empty() {
            return events;
        }
        for m in messages {
            events.push(
                serde_json::from_str(m["Body"].as_str().unwrap_or("null")).expect("an event"),
            );
            aws_json(
                endpoint,
                "sqs",
                "AmazonSQS.DeleteMessage",
                serde_json::json!({ "QueueUrl": queue_url, "ReceiptHandle": m["ReceiptHandle"] }),
            )
            .await;
        }
    }
}
