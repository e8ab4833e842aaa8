//! `restock dlq list | redrive`: the command; [`crate::dlq`] reads and
//! redoes the messages.

use restock_app::admin::Output;

use crate::args::{Cli, DlqCmd};
use crate::dlq;
use crate::output::{CliError, answer};
use crate::stack;
use crate::target::{Target, now_ms, target_on};

/// `restock dlq list | redrive`.
pub(crate) async fn dead_letters(cli: &Cli, action: &DlqCmd) -> Result<String, CliError> {
    let (DlqCmd::List { stack } | DlqCmd::Redrive { stack }) = action;
    let sdk = restock_aws::wiring::sdk_config(cli.endpoint_url.as_deref()).await;
    let deployed = stack::outputs(&sdk, stack).await?;
    match action {
        DlqCmd::List { .. } => list(cli, &sdk, &deployed, stack).await,
        DlqCmd::Redrive { .. } => redrive(cli, &sdk, &deployed).await,
    }
}

/// `restock dlq list`: each message, where it came from and what a redrive
/// would do with it.
async fn list(
    cli: &Cli,
    sdk: &aws_config::SdkConfig,
    deployed: &stack::Deployed,
    stack: &str,
) -> Result<String, CliError> {
    let now = now_ms();
    let Some(queue) = &deployed.dead_letters else {
        return Err(CliError::Usage(format!(
            "the stack {stack} has no DeadLetterQueueUrl output: redeploy it with the current template"
        )));
    };
    let letters = dlq::list(sdk, queue).await?;
    let rows: Vec<Vec<String>> = letters
        .iter()
        .map(|l| {
            vec![
                restock_core::rfc3339(l.sent_ms),
                l.from(),
                l.why.clone(),
                l.plan(now).to_owned(),
            ]
        })
        .collect();
    let json: Vec<serde_json::Value> = letters
        .iter()
        .map(|l| {
            serde_json::json!({
                "id": l.id, "sent_ms": l.sent_ms, "from": l.from(), "why": l.why,
                "redrive": l.plan(now),
            })
        })
        .collect();
    let message = if letters.is_empty() {
        "the dead-letter queue is empty".to_owned()
    } else {
        format!(
            "{} messages; `restock dlq redrive --stack {stack}` does each again (a notify batch's records stay in the stream 24 hours)",
            letters.len()
        )
    };
    let output = Output::table(
        message,
        &["reached the queue", "from", "why", "a redrive"],
        rows,
        serde_json::Value::Array(json),
    );
    Ok(answer(&output, cli.json))
}

/// `restock dlq redrive`: each message done again where it can be, and
/// deleted once done; a message left in the queue ends in failure.
async fn redrive(
    cli: &Cli,
    sdk: &aws_config::SdkConfig,
    deployed: &stack::Deployed,
) -> Result<String, CliError> {
    let now = now_ms();
    let Target::Dynamo(admin) = target_on(
        cli,
        Some(&deployed.stack.table),
        Some(&deployed.stack.keys_secret),
    )
    .await?
    else {
        unreachable!("a table gives a DynamoDB target")
    };
    let done = dlq::redrive(sdk, deployed, &admin, now).await?;
    let left = done.iter().filter(|d| !d.deleted).count();
    let rows = done
        .iter()
        .map(|d| vec![d.from.clone(), d.done.clone()])
        .collect();
    let message = if done.is_empty() {
        "the dead-letter queue is empty; nothing to do".to_owned()
    } else {
        format!(
            "{} messages done again and deleted, {left} left in the queue",
            done.len() - left
        )
    };
    let output = Output::table(
        message,
        &["from", "done"],
        rows,
        serde_json::to_value(&done).unwrap_or_default(),
    );
    let text = answer(&output, cli.json);
    if left > 0 {
        Err(CliError::Failed(text))
    } else {
        Ok(text)
    }
}
