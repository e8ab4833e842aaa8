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
use restock_store::Store;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};

fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../events")
            .join(name),
    )
    .expect("fixture")
}

fn path_of_binary(name: &str) -> PathBuf {
    let path = binary(name, "debug");
    assert!(
        path.exists(),
        "{} is missing: build the workspace first (`cargo build --workspace`; scripts/test.sh does)",
        path.display()
    );
    path
}

struct Deployment {
    endpoint: String,
    table: String,
    secret: String,
    topic: String,
    fake: BedrockFake,
}

impl Deployment {
    /// A table, a secret, a topic and a verified sender, as `sam deploy` and
    /// the after-deploy steps would leave them.
    async fn create() -> Self {
        let endpoint = restock_store::testing::endpoint();
        let store = restock_store::testing::dynamo_store().await;
        store.put_settings(&settings()).await.unwrap();
        for entry in catalogue() {
            store.put_catalog_entry(&entry).await.unwrap();
        }
        let sdk = aws_config(&endpoint).await;
        let secret = restock_store::testing::unique_table("restock-bin-secret");
        aws_sdk_secretsmanager::Client::new(&sdk)
            .create_secret()
            .name(&secret)
            .secret_string(secrets_json())
            .send()
            .await
            .unwrap();
        let topic = aws_sdk_sns::Client::new(&sdk)
            .create_topic()
            .name("restock-team")
            .send()
            .await
            .unwrap()
            .topic_arn
            .unwrap();
        let _ = aws_sdk_sesv2::Client::new(&sdk)
            .create_email_identity()
            .email_identity("hello@loomandlast.co.uk")
            .send()
            .await;
        let fake = BedrockFake::start(ModelMode::Answer(
            "Home again, and one is set aside for you.".into(),
        ))
        .await;
        Self {
            endpoint,
            table: store.table().to_owned(),
            secret,
            topic,
            fake,
        }
    }

    fn spawn(&self, api: &RuntimeApi, name: &str, skip: Option<&str>) -> Child {
        let mut command = Command::new(path_of_binary(name));
        command
            .env_clear()
            .envs(lambda_env(api, name))
            .env("AWS_ENDPOINT_URL", &self.endpoint)
            .env("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", &self.fake.url)
            .env("RESTOCK_TABLE", &self.table)
            .env("RESTOCK_SECRET_ID", &self.secret)
            .env("RESTOCK_ALERT_TOPIC_ARN", &self.topic)
            .env("RESTOCK_BEDROCK_MODEL_ID", "amazon.nova-micro-v1:0")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(var) = skip {
            command.env_remove(var);
        }
        command.spawn().expect("binary starts")
    }
}

async fn run(d: &Deployment, name: &str, event: &str) -> (Outcome, String) {
    let api = RuntimeApi::start().await;
    let mut child = d.spawn(&api, name, None);
    let outcome = api.invoke(event).await;
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
    let d = Deployment::create().await;

    let (outcome, logs) = run(&d, "capture", &fixture("capture-notify-me.json")).await;
    let (status, body) = http_status(&outcome);
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["position"], 1);
    for line in logs.lines().filter(|l| !l.trim().is_empty()) {
        let entry: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|_| panic!("a JSON log line: {line}"));
        assert!(
            entry["level"].is_string() || entry["fields"].is_object(),
            "{line}"
        );
    }
    assert!(
        logs.contains("d***@example.com"),
        "the shopper appears masked: {logs}"
    );
    assert!(!logs.contains("della@example.com"), "never in the clear");

    let (outcome, _) = run(&d, "detect", &fixture("detect-shopify.json")).await;
    let (status, body) = http_status(&outcome);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["results"][0]["outcome"]["outcome"], "restock");

    let (outcome, logs) = run(&d, "notify", &fixture("notify-restock-record.json")).await;
    assert_eq!(
        outcome,
        Outcome::Response("{\"batchItemFailures\":[]}".into()),
        "{logs}"
    );
    assert_eq!(d.fake.calls(), 1);
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

    let (outcome, _) = run(&d, "sweep", &fixture("sweep-schedule.json")).await;
    let Outcome::Response(report) = outcome else {
        panic!("sweep failed: {outcome:?}")
    };
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["lapsed"], 0, "nothing due yet: {report}");

    let store = restock_store::DynamoStore::new(restock_store::testing::client(), &d.table);
    let c = store
        .snapshot(&Sku::try_from(CHAIR).unwrap())
        .await
        .unwrap()
        .counters;
    assert_eq!((c.level, c.offered), (4, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_variable_stops_the_binary_and_names_it() {
    let d = Deployment::create().await;
    for (name, var) in [
        ("capture", "RESTOCK_SECRET_ID"),
        ("notify", "RESTOCK_BEDROCK_MODEL_ID"),
        ("sweep", "RESTOCK_TABLE"),
    ] {
        let api = RuntimeApi::start().await;
        let mut child = d.spawn(&api, name, Some(var));
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
