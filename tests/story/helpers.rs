//! A world on the AWS adapters against moto, with a Bedrock fake.

use std::sync::Arc;

use async_trait::async_trait;
use restock_app::ports::{Clock, SendError, Sender};
use restock_aws::{AwsSender, BedrockPhraser, SecretsKeyring};
use restock_core::{Contact, Email, Message, Sku};
use restock_e2e::*;

pub fn chair() -> Sku {
    Sku::try_from(CHAIR).unwrap()
}

pub struct AwsWorld {
    pub world: World,
    endpoint: String,
}

impl AwsWorld {
    pub async fn start(fake: &BedrockFake) -> Self {
        Self::build(fake, None).await
    }

    /// A world whose SES refuses one shopper for good.
    pub async fn start_failing_for(fake: &BedrockFake, local_part: &str) -> Self {
        Self::build(fake, Some(local_part.to_owned())).await
    }

    async fn build(fake: &BedrockFake, fail_for: Option<String>) -> Self {
        let endpoint = restock_store_dynamo::testing::endpoint();
        let sdk = aws_config(&endpoint).await;
        let ses = aws_sdk_sesv2::Client::new(&sdk);
        // Verifying the sender twice (another test did) is fine.
        let _ = ses
            .create_email_identity()
            .email_identity("hello@loomandlast.co.uk")
            .send()
            .await;
        let secrets = aws_sdk_secretsmanager::Client::new(&sdk);
        let secret_name = restock_store_dynamo::testing::unique_table("restock-e2e-secret");
        secrets
            .create_secret()
            .name(&secret_name)
            .secret_string(secrets_json())
            .send()
            .await
            .expect("secret created");
        let bedrock = aws_sdk_bedrockruntime::Client::from_conf(
            aws_sdk_bedrockruntime::config::Builder::from(&sdk)
                .endpoint_url(&fake.url)
                .build(),
        );
        let aws_sender: Arc<dyn Sender> =
            Arc::new(AwsSender::new(ses, aws_sdk_sns::Client::new(&sdk)));
        let sender: Arc<dyn Sender> = match fail_for {
            Some(local_part) => Arc::new(FailFor {
                inner: aws_sender,
                local_part,
            }),
            None => aws_sender,
        };
        let world = World::new(
            Arc::new(restock_store_dynamo::testing::dynamo_store().await),
            sender,
            Arc::new(BedrockPhraser::new(
                bedrock,
                "amazon.nova-micro-v1:0".into(),
            )),
            Arc::new(SecretsKeyring::new(secrets, secret_name)),
        )
        .await
        .lagging(IndexLag::Dynamo(restock_store_dynamo::testing::index_lag()));
        Self { world, endpoint }
    }

    /// Emails SES accepted for this world's shoppers, in the order sent.
    pub async fn emails_to(&self, w: &World) -> Vec<(String, String, String)> {
        ses_messages(&self.endpoint)
            .await
            .into_iter()
            .filter(|m| m.0.contains(&w.tag))
            .collect()
    }

    /// Opts a contact out for good, as the admin CLI would.
    pub async fn opt_out(&self, email: &str) {
        let pepper = pepper();
        let key = Contact::Email(Email::try_from(email).unwrap()).key(&pepper);
        self.world
            .store
            .opt_out_contact(
                &key,
                restock_core::OptOutVia::Team,
                self.world.clock.now_ms(),
            )
            .await
            .unwrap();
    }
}

/// A sender decorator that refuses one recipient for good, to exercise the
/// permanent-failure path through the real notify code.
pub struct FailFor {
    pub inner: Arc<dyn Sender>,
    pub local_part: String,
}

#[async_trait]
impl Sender for FailFor {
    async fn send(&self, to: &Contact, message: &Message) -> Result<String, SendError> {
        if let Contact::Email(address) = to
            && address
                .as_str()
                .starts_with(&format!("{}.", self.local_part))
        {
            return Err(SendError::Permanent(
                "MessageRejected: address does not exist".into(),
            ));
        }
        self.inner.send(to, message).await
    }
}
