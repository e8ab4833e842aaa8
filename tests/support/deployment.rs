//! What `sam deploy` leaves behind, on moto, with the template's IAM
//! registered with the strict double.

use std::collections::HashMap;
use std::path::PathBuf;

use restock_core::Settings;
use restock_store::prelude::*;

use crate::*;

/// `template.yaml`, parsed.
pub fn template() -> serde_yaml::Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../template.yaml");
    let text = std::fs::read_to_string(path).expect("template.yaml");
    serde_yaml::from_str(&text).expect("template.yaml is YAML")
}

/// Every action the inline policies of the template's function
/// `logical_id` allow.
pub fn policy_actions(
    t: &serde_yaml::Value,
    logical_id: &str,
) -> std::collections::BTreeSet<String> {
    fn strings(v: &serde_yaml::Value) -> Vec<String> {
        match v {
            serde_yaml::Value::String(s) => vec![s.clone()],
            serde_yaml::Value::Sequence(items) => items.iter().flat_map(strings).collect(),
            _ => vec![],
        }
    }
    // A statement under `!If` counts both ways: the most the role may get.
    fn statements(v: &serde_yaml::Value) -> Vec<serde_yaml::Value> {
        match v {
            serde_yaml::Value::Tagged(t) if t.tag == "If" => t.value.as_sequence().unwrap()[1..]
                .iter()
                .flat_map(statements)
                .collect(),
            serde_yaml::Value::Tagged(_) => vec![],
            statement => vec![statement.clone()],
        }
    }
    t["Resources"][logical_id]["Properties"]["Policies"]
        .as_sequence()
        .expect("inline policies")
        .iter()
        .flat_map(|p| p["Statement"].as_sequence().cloned().unwrap_or_default())
        .flat_map(|s| statements(&s))
        .inspect(|s| assert_eq!(s["Effect"].as_str(), Some("Allow")))
        .flat_map(|s| strings(&s["Action"]))
        .collect()
}

/// The access key a function binary signs with in these tests.
fn function_key(binary: &str) -> String {
    format!("role-{binary}")
}

/// Tells the strict double (when the endpoint is one) each function's
/// DynamoDB permissions from `template.yaml`, keyed by the access key its
/// binary signs with: a request the deployed role would be refused is
/// refused here too (moto itself enforces no IAM).
async fn register_policies(endpoint: &str) {
    let t = template();
    let policies: HashMap<String, Vec<String>> = ["capture", "detect", "notify", "sweep"]
        .into_iter()
        .map(|f| {
            let logical_id = format!("{}{}Function", f[..1].to_uppercase(), &f[1..]);
            (
                function_key(f),
                policy_actions(&t, &logical_id)
                    .into_iter()
                    .filter(|a| a.starts_with("dynamodb:"))
                    .collect(),
            )
        })
        .collect();
    // The tests run behind the strict double (scripts/test.sh): a
    // registration that did not take would leave every function unchecked.
    let answer = reqwest::Client::new()
        .post(format!("{endpoint}/_restock/strict/iam"))
        .json(&policies)
        .send()
        .await
        .expect("the strict double answers");
    assert!(
        answer.status().is_success(),
        "the strict double refused the template's policies ({}): is {endpoint} moto behind scripts/dynamo_strict.py?",
        answer.status()
    );
    let registered: serde_json::Value = answer.json().await.expect("the registered keys");
    for key in policies.keys() {
        assert!(
            registered["keys"]
                .as_array()
                .is_some_and(|keys| keys.iter().any(|k| k == key.as_str())),
            "{key} is not registered with the strict double: {registered}"
        );
    }
}

/// A DynamoDB client that signs as function `binary`'s role, as the
/// binaries do in these tests.
pub async fn dynamodb_as(binary: &str, endpoint: &str) -> aws_sdk_dynamodb::Client {
    let config = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .endpoint_url(endpoint)
        .region(aws_config::Region::new("eu-west-2"))
        .credentials_provider(aws_sdk_dynamodb::config::Credentials::new(
            function_key(binary),
            "testing",
            None,
            None,
            "restock-tests",
        ))
        .load()
        .await;
    aws_sdk_dynamodb::Client::new(&config)
}

/// Where cargo put a workspace binary for `profile` (`debug` or `release`).
pub fn binary(name: &str, profile: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join(profile).join(name)
}

/// What `sam deploy` and the after-deploy steps leave behind, on moto: a
/// table with settings and catalogue, the keys secret, the team topic, a
/// verified sender, and a Bedrock fake. Runs the compiled binaries against it.
pub struct Deployment {
    /// moto's endpoint.
    pub endpoint: String,
    /// The table, through the store.
    pub store: restock_store_dynamo::DynamoStore,
    /// The keys secret's name.
    pub secret: String,
    /// The team topic's ARN.
    pub topic: String,
    /// The model.
    pub model: BedrockFake,
    /// The mail domain's DNS, as `restock doctor` reads it: a DMARC record
    /// at `_dmarc.loomandlast.co.uk`.
    pub dns: crate::support::fakes::DnsFake,
    /// End User Messaging SMS, holding no numbers.
    pub messaging: crate::support::fakes::MessagingFake,
    /// The SES configuration set notices go through.
    pub configuration_set: String,
    /// The event bus restock's events go to.
    pub event_bus: String,
    /// Where a rule on the bus puts every restock event, to be read back
    /// ([`crate::queued_events`]).
    pub event_queue: String,
}

impl Deployment {
    /// Creates it all with `settings`.
    pub async fn create(settings: Settings) -> Self {
        Self::create_with_secret(settings, &secrets_json()).await
    }

    /// Creates it all with `settings` and `secret` as the keys secret.
    pub async fn create_with_secret(settings: Settings, secret_json: &str) -> Self {
        let endpoint = restock_store_dynamo::testing::endpoint();
        let store = restock_store_dynamo::testing::dynamo_store().await;
        store
            .put_settings(&settings)
            .await
            .expect("settings stored");
        for entry in catalogue() {
            store
                .put_catalogue_entry(&entry)
                .await
                .expect("catalogue stored");
        }
        let sdk = aws_config(&endpoint).await;
        let secret = restock_store_dynamo::testing::unique_table("restock-secret");
        aws_sdk_secretsmanager::Client::new(&sdk)
            .create_secret()
            .name(&secret)
            .secret_string(secret_json)
            .send()
            .await
            .expect("secret created");
        let topic = aws_sdk_sns::Client::new(&sdk)
            .create_topic()
            .name("restock-team")
            .send()
            .await
            .expect("topic created")
            .topic_arn
            .expect("topic arn");
        // Verifying the sender twice (another test did) is fine. The domain
        // too, with Easy DKIM: SES signs as the From domain (DMARC aligned).
        let _ = aws_sdk_sesv2::Client::new(&sdk)
            .create_email_identity()
            .email_identity("hello@loomandlast.co.uk")
            .send()
            .await;
        let _ = aws_sdk_sesv2::Client::new(&sdk)
            .create_email_identity()
            .email_identity("loomandlast.co.uk")
            .dkim_signing_attributes(
                aws_sdk_sesv2::types::DkimSigningAttributes::builder()
                    .next_signing_key_length(aws_sdk_sesv2::types::DkimSigningKeyLength::Rsa2048Bit)
                    .build(),
            )
            .send()
            .await;
        let dns = crate::support::fakes::DnsFake::start().await;
        dns.txt(
            "_dmarc.loomandlast.co.uk",
            "v=DMARC1; p=quarantine; rua=mailto:dmarc@loomandlast.co.uk",
        );
        let messaging =
            crate::support::fakes::MessagingFake::start(crate::support::fakes::Numbers::default())
                .await;
        register_policies(&endpoint).await;
        let configuration_set = restock_store_dynamo::testing::unique_table("restock-notices");
        aws_sdk_sesv2::Client::new(&sdk)
            .create_configuration_set()
            .configuration_set_name(&configuration_set)
            .send()
            .await
            .expect("configuration set created");
        let model = BedrockFake::start(ModelMode::Answer(
            "Home again, and one is set aside for you.".into(),
        ))
        .await;
        let (event_bus, event_queue) = crate::event_bus_to_queue(&endpoint).await;
        Self {
            endpoint,
            store,
            secret,
            topic,
            configuration_set,
            model,
            dns,
            messaging,
            event_bus,
            event_queue,
        }
    }

    /// What `restock doctor` reaches beyond the stack here: the model,
    /// End User Messaging and DNS fakes.
    pub fn reach(&self, sdk: &aws_config::SdkConfig) -> restock_aws::doctor::Reach {
        restock_aws::doctor::Reach {
            bedrock: aws_sdk_bedrockruntime::Client::from_conf(
                aws_sdk_bedrockruntime::config::Builder::from(sdk)
                    .endpoint_url(&self.model.url)
                    .build(),
            ),
            messaging: aws_sdk_pinpointsmsvoicev2::Client::from_conf(
                aws_sdk_pinpointsmsvoicev2::config::Builder::from(sdk)
                    .endpoint_url(&self.messaging.url)
                    .build(),
            ),
            dns: restock_aws::doctor::resolver_at(self.dns.at),
        }
    }

    /// The command that starts binary `name` (from `profile`) as Lambda
    /// would, against this deployment; output is discarded unless the caller
    /// sets otherwise.
    pub fn command(&self, api: &RuntimeApi, name: &str, profile: &str) -> tokio::process::Command {
        let path = binary(name, profile);
        assert!(
            path.exists(),
            "{} is missing: build it first (`cargo build --workspace`; scripts/test.sh does)",
            path.display()
        );
        let mut command = tokio::process::Command::new(path);
        command
            .env_clear()
            .envs(lambda_env(api, name))
            // Signed as the function's role: the strict double refuses what
            // its template policy does not allow (see `register_policies`).
            .env("AWS_ACCESS_KEY_ID", function_key(name))
            .env("AWS_ENDPOINT_URL", &self.endpoint)
            .env("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", &self.model.url)
            .env("RESTOCK_TABLE", self.store.table())
            .env("RESTOCK_SECRET_ID", &self.secret)
            .env("RESTOCK_ALERT_TOPIC_ARN", &self.topic)
            .env("RESTOCK_BEDROCK_MODEL_ID", "amazon.nova-micro-v1:0")
            .env("RESTOCK_SES_CONFIGURATION_SET", &self.configuration_set)
            .env("RESTOCK_METRICS_NAMESPACE", "restock/test")
            .env("RESTOCK_EVENT_BUS", &self.event_bus)
            .env("RESTOCK_KLAVIYO_EVENTS", "off")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true);
        command
    }
}
