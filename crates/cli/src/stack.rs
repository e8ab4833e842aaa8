//! A deployed stack, as the operator's commands see it: its outputs and
//! parameters, and its health (`restock doctor` and the dashboard's banner):
//! the adapter's checks plus what only the operator may read, the
//! dead-letter queue and the alarms.

use restock_app::health::{Health, Report, Severity};
use restock_aws::connect::Stack;

use crate::output::CliError;

/// A deployed stack's outputs and the parameters the commands use.
pub async fn outputs(sdk: &aws_config::SdkConfig, stack: &str) -> Result<Deployed, CliError> {
    let described = aws_sdk_cloudformation::Client::new(sdk)
        .describe_stacks()
        .stack_name(stack)
        .send()
        .await
        .map_err(|e| CliError::aws(&e, &format!("could not read the stack {stack}")))?;
    let found = described.stacks().first();
    let outputs = found.map(|s| s.outputs().to_vec()).unwrap_or_default();
    let optional = |name: &str| {
        outputs
            .iter()
            .find(|o| o.output_key() == Some(name))
            .and_then(|o| o.output_value())
            .map(str::to_owned)
    };
    let output = |name: &str| {
        optional(name).ok_or_else(|| {
            CliError::Usage(format!(
                "the stack {stack} has no {name} output: is it a restock stack?"
            ))
        })
    };
    let parameter = |name: &str| {
        found
            .map(|s| s.parameters())
            .unwrap_or_default()
            .iter()
            .find(|p| p.parameter_key() == Some(name))
            .and_then(|p| p.parameter_value())
            .map(str::to_owned)
    };
    let model_id = parameter("BedrockModelId");
    Ok(Deployed {
        stack: Stack {
            name: stack.to_owned(),
            model_id,
            keys_secret: output("KeysSecretArn")?,
            detect_url: output("DetectUrl")?,
            capture_url: output("CaptureUrl")?,
            table: output("TableName")?,
            alert_topic: output("AlertTopicArn")?,
        },
        dead_letters: optional("DeadLetterQueueUrl"),
        event_bus: optional("EventBusName"),
        klaviyo: parameter("KlaviyoEvents").as_deref() == Some("on"),
    })
}

/// A stack, with what only the operator's commands read.
#[derive(Debug, Clone)]
pub struct Deployed {
    /// What the adapter's commands take.
    pub stack: Stack,
    /// `DeadLetterQueueUrl`.
    pub dead_letters: Option<String>,
    /// `EventBusName`.
    pub event_bus: Option<String>,
    /// `KlaviyoEvents` is `on`: events go to Klaviyo too.
    pub klaviyo: bool,
}

/// `restock doctor`'s checks on a stack, for the command and the
/// dashboard's banner alike.
pub struct StackHealth {
    sdk: aws_config::SdkConfig,
    deployed: Deployed,
}

impl StackHealth {
    /// The checks of `deployed`, with `sdk`'s credentials.
    pub fn new(sdk: aws_config::SdkConfig, deployed: Deployed) -> Self {
        Self { sdk, deployed }
    }
}

#[async_trait::async_trait]
impl Health for StackHealth {
    async fn report(&self) -> Report {
        let mut report = match restock_aws::doctor::Reach::new(&self.sdk) {
            Ok(reach) => restock_aws::doctor::check(&self.sdk, &self.deployed.stack, &reach).await,
            Err(e) => {
                let mut report = Report::default();
                report.add(Severity::Blocking, "DNS resolver", e, None);
                report
            }
        };
        dead_letter_check(
            &mut report,
            &self.sdk,
            self.deployed.dead_letters.as_deref(),
        )
        .await;
        alarm_check(&mut report, &self.sdk, &self.deployed.stack.name).await;
        klaviyo_check(&mut report, &self.sdk, &self.deployed).await;
        report
    }
}

/// With `KlaviyoEvents` on, Klaviyo's private key is in the keys secret:
/// without it every shopper event goes back to the stream and, after its
/// tries, to the dead-letter queue.
async fn klaviyo_check(report: &mut Report, sdk: &aws_config::SdkConfig, deployed: &Deployed) {
    if !deployed.klaviyo {
        return;
    }
    let check = "Klaviyo";
    // An unreadable secret is the keys check's finding.
    let Ok(keys) = restock_aws::connect::read_keys(sdk, &deployed.stack).await else {
        return;
    };
    if keys["klaviyo"]["private_key"]
        .as_str()
        .is_some_and(|k| !k.trim().is_empty())
    {
        report.ok(check, "on, with a private key in the keys secret");
    } else {
        report.add(
            Severity::Warning,
            check,
            "KlaviyoEvents is on but the keys secret has no klaviyo.private_key: restock's events go back to the stream and, after 10 tries, to the dead-letter queue",
            Some("`KLAVIYO_PRIVATE_KEY=pk_… restock connect klaviyo --stack <StackName>` (docs/EVENTS.md, Klaviyo), then `restock dlq redrive --stack <StackName>`".into()),
        );
    }
}

/// Messages in the dead-letter queue: notify batches, sweep runs or event
/// posts that failed every retry. Until they are dealt with, the items
/// they name may have people who were never told.
async fn dead_letter_check(report: &mut Report, sdk: &aws_config::SdkConfig, queue: Option<&str>) {
    let check = "dead letters";
    let Some(queue) = queue else {
        report.add(
            Severity::Warning,
            check,
            "the stack has no DeadLetterQueueUrl output",
            Some("redeploy with the current template".into()),
        );
        return;
    };
    let attributes = aws_sdk_sqs::Client::new(sdk)
        .get_queue_attributes()
        .queue_url(queue)
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessages)
        .send()
        .await;
    let waiting = attributes.as_ref().ok().and_then(|a| {
        a.attributes()?
            .get(&aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessages)?
            .parse::<u64>()
            .ok()
    });
    match (waiting, attributes) {
        (Some(0), _) => report.ok(check, "none"),
        (Some(n), _) => report.add(
            Severity::Blocking,
            check,
            format!("{n} messages: failed work whose items may have people not yet told (a stream record ages out after 24 hours)"),
            Some(format!("read what failed with `aws sqs receive-message --queue-url {queue} --max-number-of-messages 10 --visibility-timeout 0`; each names the items whose pass failed (DeadLettersAlarm in docs/DEPLOY.md)")),
        ),
        (None, Err(e)) => report.add(
            Severity::Warning,
            check,
            format!("could not be read ({})", crate::output::aws_said(&e)),
            Some("check the operator's credentials (sqs:GetQueueAttributes)".into()),
        ),
        (None, Ok(_)) => report.add(
            Severity::Warning,
            check,
            "SQS gave no message count",
            None,
        ),
    }
}

/// The stack's alarms that are firing (CloudFormation names them
/// `{stack}-{resource}-…`), each with what its description says to do.
async fn alarm_check(report: &mut Report, sdk: &aws_config::SdkConfig, stack: &str) {
    let check = "alarms";
    let found: Result<Vec<_>, _> = aws_sdk_cloudwatch::Client::new(sdk)
        .describe_alarms()
        .alarm_name_prefix(format!("{stack}-"))
        .state_value(aws_sdk_cloudwatch::types::StateValue::Alarm)
        .into_paginator()
        .send()
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .map(|page| {
            page.map(|p| p.metric_alarms().to_vec())
                .map_err(|e| crate::output::aws_said(&e))
        })
        .collect::<Result<Vec<_>, String>>()
        .map(|pages| pages.concat());
    match found {
        Ok(firing) if firing.is_empty() => report.ok(check, "none in ALARM"),
        Ok(firing) => {
            for alarm in firing {
                let name = alarm.alarm_name().unwrap_or_default();
                report.add(
                    Severity::Warning,
                    &format!("alarm {name}"),
                    format!(
                        "in ALARM since {}: {}",
                        alarm
                            .state_updated_timestamp()
                            .map_or_else(String::new, ToString::to_string),
                        alarm.state_reason().unwrap_or_default()
                    ),
                    alarm.alarm_description().map(str::to_owned),
                );
            }
        }
        Err(e) => report.add(
            Severity::Warning,
            check,
            format!("could not be read ({e})"),
            Some("check the operator's credentials (cloudwatch:DescribeAlarms)".into()),
        ),
    }
}
