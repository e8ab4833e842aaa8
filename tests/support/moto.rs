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
