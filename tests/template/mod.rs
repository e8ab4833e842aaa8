//! `template.yaml` and `samconfig.toml` agree with the code: the table is the
//! store's [`TABLE`], each function's environment is exactly what its config
//! reads and its binary exists, the permissions follow the least-privilege
//! table in `restock_aws::wiring`, notify's stream filter passes wake records
//! only, and the placeholder secret is one the functions can read.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use restock_app::metrics::Metric;
use restock_app::ports::Secrets;
use restock_aws::wiring::{
    ALERT_TOPIC, CONFIGURATION_SET, EVENT_BUS, Function, KLAVIYO, METRICS_NAMESPACE, MODEL, SECRET,
    TABLE as TABLE_VAR,
};
use restock_store_dynamo::table::{TABLE, WAKE_PK_PREFIX};
use serde_yaml::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

use restock_e2e::template;

fn logical_id(f: Function) -> String {
    let name = f.name();
    format!("{}{}Function", name[..1].to_uppercase(), &name[1..])
}

fn function(t: &Value, f: Function) -> &Value {
    let resource = &t["Resources"][logical_id(f).as_str()];
    assert_eq!(
        resource["Type"].as_str(),
        Some("AWS::Serverless::Function"),
        "{} is a function",
        logical_id(f)
    );
    resource
}

/// The namespace restock's metrics are written under: one per stack.
const NAMESPACE: &str = "restock/${AWS::StackName}";

/// `!Sub "…"` → `…`.
fn substitution(v: &Value) -> Option<&str> {
    match v {
        Value::Tagged(tagged) if tagged.tag == "Sub" => tagged.value.as_str(),
        _ => None,
    }
}

/// `!Ref X` → `X`.
fn reference(v: &Value) -> Option<&str> {
    match v {
        Value::Tagged(tagged) if tagged.tag == "Ref" => tagged.value.as_str(),
        _ => None,
    }
}

fn strings(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Sequence(items) => items.iter().flat_map(strings).collect(),
        _ => vec![],
    }
}

/// Every action the function's inline policies allow.
fn actions(t: &Value, f: Function) -> BTreeSet<String> {
    function(t, f);
    restock_e2e::policy_actions(t, &logical_id(f))
}

#[test]
fn the_table_is_the_stores_definition() {
    let t = template();
    let table = &t["Resources"]["Table"];
    assert_eq!(table["Type"].as_str(), Some("AWS::DynamoDB::Table"));
    let p = &table["Properties"];

    let attributes: BTreeSet<(String, String)> = p["AttributeDefinitions"]
        .as_sequence()
        .expect("attribute definitions")
        .iter()
        .map(|a| {
            (
                a["AttributeName"].as_str().unwrap().to_owned(),
                a["AttributeType"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected: BTreeSet<(String, String)> = TABLE
        .attributes
        .iter()
        .map(|(n, k)| ((*n).to_owned(), (*k).to_owned()))
        .collect();
    assert_eq!(attributes, expected, "attribute definitions");

    let keys = |schema: &Value| -> (String, String) {
        let find = |kind: &str| {
            schema
                .as_sequence()
                .expect("key schema")
                .iter()
                .find(|k| k["KeyType"].as_str() == Some(kind))
                .and_then(|k| k["AttributeName"].as_str())
                .unwrap_or_default()
                .to_owned()
        };
        (find("HASH"), find("RANGE"))
    };
    assert_eq!(
        keys(&p["KeySchema"]),
        (TABLE.partition_key.into(), TABLE.sort_key.into())
    );

    let indexes = p["GlobalSecondaryIndexes"].as_sequence().expect("indexes");
    assert_eq!(indexes.len(), TABLE.indexes.len(), "index count");
    for def in TABLE.indexes {
        let index = indexes
            .iter()
            .find(|i| i["IndexName"].as_str() == Some(def.name))
            .unwrap_or_else(|| panic!("index {} is in the template", def.name));
        assert_eq!(
            keys(&index["KeySchema"]),
            (def.partition_key.into(), def.sort_key.into()),
            "index {}",
            def.name
        );
        assert_eq!(
            index["Projection"]["ProjectionType"].as_str(),
            Some(def.projection)
        );
    }

    assert_eq!(
        p["StreamSpecification"]["StreamViewType"].as_str(),
        Some(TABLE.stream_view)
    );
    assert_eq!(
        p["TimeToLiveSpecification"]["AttributeName"].as_str(),
        Some(TABLE.ttl_attribute)
    );
    assert_eq!(
        p["TimeToLiveSpecification"]["Enabled"].as_bool(),
        Some(true)
    );
    assert_eq!(p["BillingMode"].as_str(), Some("PAY_PER_REQUEST"));
    assert_eq!(
        p["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"].as_bool(),
        Some(true)
    );
    assert_eq!(p["SSESpecification"]["SSEEnabled"].as_bool(), Some(true));
}

#[test]
fn each_function_builds_its_binary_and_gets_exactly_the_variables_it_reads() {
    let t = template();
    for f in Function::ALL {
        let resource = function(&t, f);
        assert_eq!(
            resource["Metadata"]["BuildMethod"].as_str(),
            Some("rust-cargolambda")
        );
        assert_eq!(
            resource["Metadata"]["BuildProperties"]["Binary"].as_str(),
            Some(f.name()),
            "{} builds its own binary",
            f.name()
        );

        let manifest =
            std::fs::read_to_string(root().join("crates").join(f.name()).join("Cargo.toml"))
                .unwrap_or_else(|e| panic!("crates/{}/Cargo.toml: {e}", f.name()));
        let manifest: toml::Table = toml::from_str(&manifest).expect("Cargo.toml");
        let bins: Vec<&str> = manifest["bin"]
            .as_array()
            .expect("[[bin]]")
            .iter()
            .filter_map(|b| b["name"].as_str())
            .collect();
        assert_eq!(
            bins,
            [f.name()],
            "the workspace has the binary {}",
            f.name()
        );

        let variables = resource["Properties"]["Environment"]["Variables"]
            .as_mapping()
            .expect("environment variables");
        let names: BTreeSet<&str> = variables.keys().filter_map(Value::as_str).collect();
        let expected: BTreeSet<&str> = f.env().iter().copied().collect();
        assert_eq!(names, expected, "{}'s environment", f.name());

        for (name, value) in variables {
            if name.as_str() == Some(METRICS_NAMESPACE) {
                assert_eq!(
                    substitution(value),
                    Some(NAMESPACE),
                    "{}'s metrics namespace",
                    f.name()
                );
                continue;
            }
            let target = match name.as_str().unwrap() {
                n if n == TABLE_VAR => "Table",
                n if n == SECRET => "Keys",
                n if n == ALERT_TOPIC => "AlertTopic",
                n if n == MODEL => "BedrockModelId",
                n if n == CONFIGURATION_SET => "NoticeEvents",
                n if n == EVENT_BUS => "EventBus",
                n if n == KLAVIYO => "KlaviyoEvents",
                other => panic!("unexpected variable {other}"),
            };
            let resolved = if target == "Table" {
                // The stack's table, or the restored one it is pointed at.
                resolve(value, &t, &BTreeMap::new())
            } else {
                value.clone()
            };
            assert_eq!(
                reference(&resolved),
                Some(target),
                "{} {:?}",
                f.name(),
                name
            );
        }
    }
}

#[test]
fn each_function_may_do_only_its_own_work() {
    let t = template();
    let has = |f: Function, prefix: &str| actions(&t, f).iter().any(|a| a.starts_with(prefix));
    for f in Function::ALL {
        let all = actions(&t, f);
        assert!(
            all.iter().all(|a| !a.contains('*')),
            "{}: no wildcard actions: {all:?}",
            f.name()
        );
        // Only the sweep reads the whole table: an erasure finds every
        // request of a customer's, finished ones too, or of the shop's.
        assert_eq!(
            all.contains("dynamodb:Scan"),
            f == Function::Sweep,
            "{}: Scan",
            f.name()
        );
        assert!(
            !all.iter().any(|a| a == "dynamodb:BatchWriteItem"
                || a.starts_with("dynamodb:Delete") && a != "dynamodb:DeleteItem"),
            "{}: no batch or table-level writes",
            f.name()
        );
    }
    assert!(!has(Function::Capture, "ses:"));
    assert!(!has(Function::Capture, "bedrock:"));
    assert!(!has(Function::Capture, "sns:"));
    assert!(!has(Function::Detect, "ses:"));
    assert!(!has(Function::Detect, "bedrock:"));
    // The sweep sends the offers' reminders (remind_before), never phrased.
    assert!(has(Function::Sweep, "ses:SendEmail"));
    assert!(!has(Function::Sweep, "bedrock:"));
    // The stock pull reads the platforms' API access from the keys secret,
    // and reconcile reads its candidates back in batches.
    assert!(has(Function::Sweep, "secretsmanager:GetSecretValue"));
    assert!(has(Function::Sweep, "dynamodb:BatchGetItem"));
    // notify reads the pending confirmations' requests in batches.
    assert!(has(Function::Notify, "dynamodb:BatchGetItem"));
    // A join reads every shard's ticket counter and a position the presence
    // items in one batch; detect reads the SKU's state, entry and hold slots
    // in one. (A click whose hold slot ran dry reads the slots with
    // TransactGetItems, which needs dynamodb:GetItem.)
    assert!(has(Function::Capture, "dynamodb:BatchGetItem"));
    assert!(has(Function::Capture, "dynamodb:GetItem"));
    assert!(has(Function::Detect, "dynamodb:BatchGetItem"));
    // notify reads Klaviyo's private key from the keys secret when
    // KlaviyoEvents is on, and the secret not at all when it is off.
    for (klaviyo, reads) in [("on", true), ("off", false)] {
        let given = BTreeMap::from([("KlaviyoEvents", klaviyo)]);
        let mut resolved = t.clone();
        resolved["Resources"][logical_id(Function::Notify)] =
            resolve(function(&t, Function::Notify), &t, &given);
        let notify = restock_e2e::policy_actions(&resolved, &logical_id(Function::Notify));
        assert_eq!(
            notify.contains("secretsmanager:GetSecretValue"),
            reads,
            "KlaviyoEvents={klaviyo}: {notify:?}"
        );
    }
    assert!(has(Function::Notify, "bedrock:InvokeModel"));
    assert!(has(Function::Notify, "ses:SendEmail"));

    // Bedrock on the configured model only.
    let notify = function(&t, Function::Notify);
    let statements = notify["Properties"]["Policies"][0]["Statement"]
        .as_sequence()
        .unwrap();
    let bedrock = statements
        .iter()
        .find(|s| {
            strings(&s["Action"])
                .iter()
                .any(|a| a.starts_with("bedrock:"))
        })
        .unwrap();
    let resource = format!("{:?}", bedrock["Resource"]);
    assert!(
        resource.contains("foundation-model/${BedrockModelId}"),
        "bedrock is scoped to the model parameter: {resource}"
    );
}

/// notify's stream subscription `name`, checked for what both share:
/// bounded retries, a bisected batch, batch item failures, a dead-letter
/// queue.
fn subscription<'t>(t: &'t Value, name: &str) -> &'t Value {
    let stream = &function(t, Function::Notify)["Properties"]["Events"][name];
    assert_eq!(stream["Type"].as_str(), Some("DynamoDB"), "{name}");
    let p = &stream["Properties"];
    let retries = p["MaximumRetryAttempts"].as_i64().expect("finite retries");
    assert!((0..=10).contains(&retries), "a few retries, not infinite");
    assert_eq!(p["BisectBatchOnFunctionError"].as_bool(), Some(true));
    assert_eq!(
        strings(&p["FunctionResponseTypes"]),
        ["ReportBatchItemFailures"]
    );
    assert!(matches!(
        p["DestinationConfig"]["OnFailure"]["Destination"],
        Value::Tagged(_)
    ));
    p
}

#[test]
fn notify_reads_wake_records_and_the_writes_that_are_events_with_bounded_retries() {
    let t = template();
    let events = function(&t, Function::Notify)["Properties"]["Events"]
        .as_mapping()
        .expect("notify's events");
    assert_eq!(events.len(), 2, "wakes and changes");
    let p = subscription(&t, "Wakes");

    let filters = p["FilterCriteria"]["Filters"].as_sequence().unwrap();
    assert_eq!(filters.len(), 1);
    let pattern: serde_json::Value =
        serde_json::from_str(filters[0]["Pattern"].as_str().unwrap()).expect("pattern is JSON");
    let prefix = pattern["dynamodb"]["NewImage"]["pk"]["S"][0]["prefix"]
        .as_str()
        .expect("a prefix filter on the new image's pk");
    assert_eq!(prefix, WAKE_PK_PREFIX);

    // The sample stream event is one the filter lets through.
    let sample: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("events/notify-restock-record.json")).unwrap(),
    )
    .unwrap();
    for record in sample["Records"].as_array().unwrap() {
        let pk = record["dynamodb"]["NewImage"]["pk"]["S"].as_str().unwrap();
        assert!(pk.starts_with(prefix), "{pk} passes the filter");
    }

    // The events subscription passes exactly the items whose writes the
    // store reads as events, inserted or modified, and no wake.
    let p = subscription(&t, "Changes");
    let mut passed = Vec::new();
    for filter in p["FilterCriteria"]["Filters"].as_sequence().unwrap() {
        let pattern: serde_json::Value =
            serde_json::from_str(filter["Pattern"].as_str().unwrap()).expect("pattern is JSON");
        assert_eq!(
            pattern["eventName"],
            serde_json::json!(["INSERT", "MODIFY"])
        );
        let keys = &pattern["dynamodb"]["Keys"];
        let pk = &keys["pk"]["S"][0];
        let pk = pk["prefix"].as_str().or(pk.as_str()).expect("a pk filter");
        let sk = keys["sk"]["S"][0].as_str().expect("an sk filter");
        assert!(!pk.starts_with(WAKE_PK_PREFIX));
        passed.push((pk.to_owned(), sk.to_owned()));
    }
    let read: Vec<_> = restock_store_dynamo::events::EVENT_ITEMS
        .iter()
        .map(|(pk, sk)| ((*pk).to_owned(), (*sk).to_owned()))
        .collect();
    assert_eq!(passed, read);
    assert_eq!(
        t["Resources"]["Table"]["Properties"]["StreamSpecification"]["StreamViewType"].as_str(),
        Some("NEW_AND_OLD_IMAGES"),
        "events need the item before and after"
    );
}

#[test]
fn only_the_stack_s_bus_takes_events_and_erasures() {
    let t = template();
    for f in Function::ALL {
        // Notify puts restock's events; detect puts an erasure for the
        // sweep, and the sweep a shop erasure's next pages for itself.
        let puts = actions(&t, f).contains("events:PutEvents");
        assert_eq!(puts, f != Function::Capture, "{}", f.name());
        if puts {
            let statements = function(&t, f)["Properties"]["Policies"][0]["Statement"]
                .as_sequence()
                .unwrap();
            let put = statements
                .iter()
                .find(|s| strings(&s["Action"]) == ["events:PutEvents"])
                .unwrap();
            assert!(format!("{:?}", put["Resource"]).contains("EventBus.Arn"));
        }
    }
    // The endpoint, when given, gets every restock event through an API
    // destination that retries, then dead-letters.
    let rule = &t["Resources"]["EventsToEndpoint"];
    assert_eq!(rule["Condition"].as_str(), Some("HasEventsEndpoint"));
    assert_eq!(
        reference(&rule["Properties"]["EventBusName"]),
        Some("EventBus")
    );
    assert_eq!(
        strings(&rule["Properties"]["EventPattern"]["source"]),
        [restock_app::events::SOURCE]
    );
    let target = &rule["Properties"]["Targets"][0];
    assert!(
        target["RetryPolicy"]["MaximumEventAgeInSeconds"]
            .as_i64()
            .is_some()
    );
    assert!(format!("{:?}", target["DeadLetterConfig"]["Arn"]).contains("DeadLetters"));
}

#[test]
fn sweep_runs_every_minute_and_pulls_stock_on_its_own_rule_with_retries_and_a_dead_letter_queue() {
    let t = template();
    let sweep = function(&t, Function::Sweep);
    let events = sweep["Properties"]["Events"].as_mapping().unwrap();
    assert_eq!(events.len(), 5);
    // Texts shoppers send back, from the topic End User Messaging publishes
    // to (its service principal, this account only); a failed run goes to
    // the dead-letter queue as every sweep run does.
    let inbound = &events["InboundTexts"];
    assert_eq!(inbound["Type"].as_str(), Some("SNS"));
    assert_eq!(
        reference(&inbound["Properties"]["Topic"]),
        Some("InboundTexts")
    );
    let statement =
        &t["Resources"]["InboundTextsPolicy"]["Properties"]["PolicyDocument"]["Statement"][0];
    assert_eq!(
        statement["Principal"]["Service"].as_str(),
        Some("sms-voice.amazonaws.com")
    );
    assert_eq!(strings(&statement["Action"]), ["sns:Publish"]);
    assert!(format!("{:?}", statement["Condition"]).contains("aws:SourceAccount"));
    // detect's erasures, on the stack's bus (not the events' source, so the
    // endpoint's rule never forwards one), with retries and a dead letter.
    let erasures = &events["Erasures"]["Properties"];
    assert_eq!(reference(&erasures["EventBusName"]), Some("EventBus"));
    assert_eq!(
        strings(&erasures["Pattern"]["source"]),
        [restock_aws::ERASURE_SOURCE]
    );
    assert_ne!(restock_aws::ERASURE_SOURCE, restock_app::events::SOURCE);
    assert!(format!("{:?}", erasures["DeadLetterConfig"]["Arn"]).contains("DeadLetters"));
    let feedback = &events["MailFeedback"];
    assert_eq!(feedback["Type"].as_str(), Some("EventBridgeRule"));
    assert_eq!(
        strings(&feedback["Properties"]["Pattern"]["detail-type"]),
        ["Email Bounced", "Email Complaint Received"]
    );
    let destination = &t["Resources"]["NoticeFeedback"]["Properties"]["EventDestination"];
    assert_eq!(
        strings(&destination["MatchingEventTypes"]),
        ["bounce", "complaint"]
    );
    assert_eq!(
        reference(&t["Resources"]["NoticeFeedback"]["Properties"]["ConfigurationSetName"]),
        Some("NoticeEvents")
    );
    let minute = &events["EveryMinute"];
    assert_eq!(
        minute["Properties"]["Schedule"].as_str(),
        Some("rate(1 minute)")
    );
    assert!(
        minute["Properties"].get("Input").is_none(),
        "the sweep's event is EventBridge's own"
    );
    let pull = &events["StockPull"];
    assert_eq!(
        reference(&pull["Properties"]["Schedule"]),
        Some("StockPullSchedule")
    );
    assert_eq!(
        t["Parameters"]["StockPullSchedule"]["Default"].as_str(),
        Some("rate(15 minutes)")
    );
    let input: serde_json::Value =
        serde_json::from_str(pull["Properties"]["Input"].as_str().unwrap()).unwrap();
    assert_eq!(
        input,
        serde_json::json!({"restock": "pull"}),
        "what the sweep binary reads as the pull"
    );
    let policy = format!("{:?}", t["Resources"]["DeadLettersPolicy"]);
    for (name, schedule) in events
        .iter()
        .filter(|(_, e)| e["Type"].as_str() != Some("SNS"))
    {
        assert!(matches!(
            schedule["Type"].as_str(),
            Some("Schedule" | "EventBridgeRule")
        ));
        assert!(schedule["Properties"]["RetryPolicy"]["MaximumRetryAttempts"].is_i64());
        assert!(matches!(
            schedule["Properties"]["DeadLetterConfig"]["Arn"],
            Value::Tagged(_)
        ));
        // The queue policy names the schedule rule SAM generates for that event.
        let rule = format!("{}{}", logical_id(Function::Sweep), name.as_str().unwrap());
        assert!(
            policy.contains(&rule),
            "the queue policy lets {rule} deliver"
        );
    }
    assert!(
        sweep["Properties"]["EventInvokeConfig"]["DestinationConfig"]["OnFailure"].is_mapping()
    );
}

#[test]
fn failed_texts_reach_the_sweep_function_from_sns_s_delivery_status_log_group() {
    let t = template();
    let r = &t["Resources"];
    let subscription = &r["SmsFailureSubscription"]["Properties"];
    assert_eq!(
        format!("{:?}", subscription["DestinationArn"]),
        format!("{:?}", r["SmsFailureInvoke"]["Properties"]["FunctionName"]),
    );
    assert!(format!("{:?}", subscription["DestinationArn"]).contains("SweepFunction"));
    assert_eq!(
        subscription["FilterPattern"].as_str(),
        Some(r#"{ $.status = "FAILURE" }"#)
    );
    let group = format!("{:?}", r["SmsFailureLogs"]["Properties"]["LogGroupName"]);
    assert!(
        group.contains("sns/${AWS::Region}/${AWS::AccountId}/DirectPublishToPhoneNumber/Failure"),
        "the group SNS writes failed texts to: {group}"
    );
    assert_eq!(
        r["SmsFailureInvoke"]["Properties"]["Principal"].as_str(),
        Some("logs.amazonaws.com")
    );
    // The sample event is what the subscription delivers, and the sweep
    // binary reads it as a failed text (tests/feedback runs it).
    let event: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("events/sweep-sms-failure.json")).unwrap(),
    )
    .unwrap();
    assert!(event["awslogs"]["data"].is_string());
    let output = format!("{:?}", t["Outputs"]["EnableSmsDeliveryLogs"]["Value"]);
    assert!(
        output.contains("DeliveryStatusIAMRole=${SnsDeliveryStatusRole.Arn}"),
        "{output}"
    );
}

#[test]
fn the_placeholder_secret_is_readable_and_refuses_every_webhook() {
    let t = template();
    let generate = &t["Resources"]["Keys"]["Properties"]["GenerateSecretString"];
    let mut secret: serde_json::Value =
        serde_json::from_str(generate["SecretStringTemplate"].as_str().unwrap()).unwrap();
    let key = generate["GenerateStringKey"].as_str().unwrap();
    let length = generate["PasswordLength"].as_u64().unwrap() as usize;
    secret[key] = serde_json::Value::String("x".repeat(length));
    let secrets = Secrets::from_json(&secret.to_string()).expect("the functions can read it");
    for platform in restock_core::Platform::ALL {
        assert!(platform.keys(&secrets.webhooks).unwrap().is_empty());
    }
}

#[test]
fn samconfig_sets_only_parameters_the_template_has_and_every_required_one() {
    let t = template();
    let parameters = t["Parameters"].as_mapping().unwrap();
    let text = std::fs::read_to_string(root().join("samconfig.toml")).expect("samconfig.toml");
    let config: toml::Table = toml::from_str(&text).expect("samconfig.toml is TOML");
    let overrides: Vec<String> = config["default"]["deploy"]["parameters"]["parameter_overrides"]
        .as_array()
        .expect("parameter_overrides")
        .iter()
        .map(|v| v.as_str().unwrap().split('=').next().unwrap().to_owned())
        .collect();
    for name in &overrides {
        assert!(
            parameters.contains_key(name.as_str()),
            "samconfig sets {name}, which the template lacks"
        );
    }
    for (name, parameter) in parameters {
        let name = name.as_str().unwrap();
        if parameter.get("Default").is_none() {
            assert!(
                overrides.iter().any(|o| o == name),
                "samconfig gives the required parameter {name} a value"
            );
        }
    }
}

#[test]
fn every_alarm_tells_the_team_and_the_cost_model_counts_them() {
    let t = template();
    let alarms: Vec<&Value> = t["Resources"]
        .as_mapping()
        .unwrap()
        .values()
        .filter(|r| r["Type"].as_str() == Some("AWS::CloudWatch::Alarm"))
        .collect();
    let mut metrics = 0;
    for alarm in &alarms {
        let actions = &alarm["Properties"]["AlarmActions"];
        assert_eq!(
            actions.as_sequence().map(|a| reference(&a[0])),
            Some(Some("AlertTopic"))
        );
        metrics += match alarm["Properties"]["Metrics"].as_sequence() {
            Some(list) => list
                .iter()
                .filter(|m| m.get("MetricStat").is_some())
                .count(),
            None => 1,
        };
    }
    assert_eq!(alarms.len(), 13);
    // The cost model (docs/DEPLOY.md) prices sixteen alarm metrics.
    assert_eq!(metrics, 16);
}

/// SES's own reputation rates alarm where restock warns the team itself,
/// below where SES reviews an account.
#[test]
fn ses_s_bounce_and_complaint_rates_alarm_at_restock_s_own_warnings() {
    use restock_core::feedback::{BOUNCE_WARNING, COMPLAINT_WARNING};
    let t = template();
    // Each with the rate at which SES reviews an account.
    for (id, metric, threshold, review) in [
        (
            "MailBounceRateAlarm",
            "Reputation.BounceRate",
            BOUNCE_WARNING,
            0.05,
        ),
        (
            "MailComplaintRateAlarm",
            "Reputation.ComplaintRate",
            COMPLAINT_WARNING,
            0.001,
        ),
    ] {
        let p = &t["Resources"][id]["Properties"];
        assert_eq!(p["Namespace"].as_str(), Some("AWS/SES"), "{id}");
        assert_eq!(p["MetricName"].as_str(), Some(metric), "{id}");
        let alarmed = p["Threshold"].as_f64().unwrap();
        assert_eq!(alarmed, threshold, "{id}");
        assert!(alarmed < review, "{id}: below SES's review");
        assert_eq!(
            p["ComparisonOperator"].as_str(),
            Some("GreaterThanOrEqualToThreshold")
        );
        assert_eq!(
            p["TreatMissingData"].as_str(),
            Some("notBreaching"),
            "{id}: no mail, no alarm"
        );
    }
}

/// A metric of restock's namespace as the template names it: its name and
/// its dimensions.
type Named = (String, Vec<(String, String)>);

/// Checks `named` is a metric the code writes, with a dimension and value
/// it writes.
fn written(named: &Named, place: &str) {
    let (name, dims) = named;
    let metric = Metric::ALL
        .into_iter()
        .find(|m| m.name() == name)
        .unwrap_or_else(|| panic!("{place} names {name}, which restock never writes"));
    for (dim, value) in dims {
        let (written_dim, values) = metric
            .dimension()
            .unwrap_or_else(|| panic!("{place}: {name} has no dimension {dim}"));
        assert_eq!(dim, written_dim, "{place}: {name}'s dimension");
        assert!(
            values.contains(&value.as_str()),
            "{place}: {name} is never written with {dim}={value}"
        );
    }
}

/// The metric an alarm (or one metric of a metric-math alarm) names: its
/// `MetricName` and `Dimensions`.
fn alarm_metric(metric: &Value) -> Named {
    let dims = metric["Dimensions"]
        .as_sequence()
        .map(|ds| {
            ds.iter()
                .map(|d| {
                    let field = |k: &str| d[k].as_str().unwrap().to_owned();
                    (field("Name"), field("Value"))
                })
                .collect()
        })
        .unwrap_or_default();
    (metric["MetricName"].as_str().unwrap().to_owned(), dims)
}

#[test]
fn every_metric_the_dashboard_and_alarms_name_is_one_the_code_writes() {
    let t = template();
    let resources = t["Resources"].as_mapping().unwrap();
    let mut alarmed = Vec::new();
    for (id, r) in resources {
        if r["Type"].as_str() != Some("AWS::CloudWatch::Alarm") {
            continue;
        }
        let p = &r["Properties"];
        // A metric-math alarm's own metrics, each checked as a plain one.
        for m in p["Metrics"].as_sequence().into_iter().flatten() {
            let metric = &m["MetricStat"]["Metric"];
            if substitution(&metric["Namespace"]) == Some(NAMESPACE) {
                let named = alarm_metric(metric);
                written(&named, id.as_str().unwrap());
                alarmed.push(named.0);
            }
        }
        if substitution(&p["Namespace"]) == Some(NAMESPACE) {
            let named = alarm_metric(p);
            written(&named, id.as_str().unwrap());
            alarmed.push(named.0);
        } else if !p["Namespace"].is_null() {
            assert!(
                p["Namespace"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("AWS/")),
                "{id:?}: an AWS metric or restock's own"
            );
        }
    }
    alarmed.sort();
    assert_eq!(
        alarmed,
        [
            "PhraseFallbacks",
            "PullErrors",
            "PullErrors",
            "SendingPaused",
            "Unavailable",
            "WebhooksUnauthorized",
            "WebhooksUnauthorized",
            "WebhooksUnauthorized"
        ]
    );

    let body = substitution(&t["Resources"]["Dashboard"]["Properties"]["DashboardBody"])
        .expect("the dashboard body is a !Sub");
    // The substitutions are the stack's own names; any value parses.
    let body = substitute(body);
    let body: serde_json::Value = serde_json::from_str(&body).expect("the dashboard body is JSON");
    let mut shown = BTreeSet::new();
    for widget in body["widgets"].as_array().expect("widgets") {
        for m in widget["properties"]["metrics"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let parts: Vec<&str> = m
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|v| v.as_str())
                .collect();
            if parts[0] != "restock/STACK" {
                assert!(parts[0].starts_with("AWS/"), "{m}");
                continue;
            }
            let dims = parts[2..]
                .chunks(2)
                .map(|d| (d[0].to_owned(), d[1].to_owned()))
                .collect();
            let named = (parts[1].to_owned(), dims);
            written(&named, "the dashboard");
            shown.insert(named);
        }
    }
    // And the dashboard shows every metric restock writes, each value of a
    // dimension on its own line.
    for metric in Metric::ALL {
        match metric.dimension() {
            None => assert!(
                shown.contains(&(metric.name().to_owned(), vec![])),
                "the dashboard shows {}",
                metric.name()
            ),
            Some((dim, values)) => {
                for v in values {
                    let named = (
                        metric.name().to_owned(),
                        vec![(dim.to_owned(), (*v).to_owned())],
                    );
                    assert!(shown.contains(&named), "the dashboard shows {named:?}");
                }
            }
        }
    }
}

/// `${…}` in a `!Sub` body replaced: the stack's name by `STACK`, anything
/// else (a region, a resource's name or ARN) by `X`.
fn substitute(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find('}').expect("a closed ${…}") + start;
        out.push_str(match &rest[start + 2..end] {
            "AWS::StackName" => "STACK",
            _ => "X",
        });
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

#[test]
fn every_widget_attribute_the_readme_names_is_one_the_widget_reads() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let widget =
        std::fs::read_to_string(root().join("crates/local/assets/restock-widget.js")).unwrap();
    let mut named = BTreeSet::new();
    for (i, _) in readme.match_indices("`data-") {
        let rest = &readme[i + 1..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(rest.len());
        named.insert(rest[..end].to_owned());
    }
    for (i, _) in readme.match_indices(" data-") {
        let rest = &readme[i + 1..];
        let end = rest.find('=').unwrap_or(0);
        if end > 0 {
            named.insert(rest[..end].to_owned());
        }
    }
    assert!(named.contains("data-restock-endpoint"), "{named:?}");
    let unknown: Vec<&String> = named
        .iter()
        .filter(|a| !widget.contains(&format!("\"{a}\"")))
        .collect();
    assert!(
        unknown.is_empty(),
        "the README names widget attributes the widget never reads: {unknown:?}"
    );
}

/// `docs/EVENTS.md` documents each event the code publishes, in the code's
/// order, with exactly the fields its example shows.
#[test]
fn every_event_is_documented_with_the_fields_it_carries() {
    use restock_app::events::{DETAIL_TYPES, published};
    use restock_store::Event;
    let doc = std::fs::read_to_string(root().join("docs/EVENTS.md")).expect("docs/EVENTS.md");
    let mut documented = Vec::new();
    for section in doc.split("\n### ").skip(1) {
        let (title, body) = section.split_once('\n').unwrap();
        let example = body
            .split("```json\n")
            .nth(1)
            .and_then(|b| b.split("```").next())
            .unwrap_or_else(|| panic!("{title}: no JSON example"));
        let example: serde_json::Value =
            serde_json::from_str(example).unwrap_or_else(|e| panic!("{title}: {e}"));
        documented.push((title.to_owned(), example));
    }
    let titles: Vec<&str> = documented.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(titles, DETAIL_TYPES);

    let sku = restock_core::Sku::try_from("CHAIR-WAL").unwrap();
    let request = || {
        Box::new(restock_store_dynamo::testing::waiting_request(
            1, &sku, 0, 1, b"pepper",
        ))
    };
    let samples = [
        Event::SignUpConfirmed { request: request() },
        Event::NoticeSent {
            request: request(),
            episode: 1,
        },
        Event::HoldCreated {
            request: request(),
            episode: 1,
        },
        Event::HoldBought { request: request() },
        Event::OfferLapsed {
            request: request(),
            episode: 1,
        },
        Event::RestockDetected {
            sku: sku.clone(),
            episode: 1,
            level: 4,
        },
        Event::RestockEscalated {
            sku: sku.clone(),
            episode: 2,
            level: 5000,
        },
        Event::SendingPaused {
            reason: "paused".into(),
            until: 0,
        },
    ];
    let fields = |v: &serde_json::Value| -> BTreeSet<String> {
        v.as_object().unwrap().keys().cloned().collect()
    };
    for (sample, (title, example)) in samples.iter().zip(&documented) {
        let event = published(sample, "id-0", 0, false);
        assert_eq!(event.detail_type, title);
        assert_eq!(fields(&event.detail), fields(example), "{title}'s fields");
        assert_eq!(example["version"], restock_app::events::VERSION, "{title}");
        // With the shop's consent the address and first name are added.
        let full = published(sample, "id-0", 0, true);
        if event.detail.get("request").is_some() {
            assert_eq!(full.detail["contact"], "fan1@example.com");
            assert_eq!(full.detail["name"], "Fan");
            assert_ne!(
                event.detail["contact"], "fan1@example.com",
                "masked by default"
            );
        }
    }
}

/// The template's parameters: each default, overridden by `given`.
fn parameters(t: &Value, given: &BTreeMap<&str, &str>) -> BTreeMap<String, String> {
    t["Parameters"]
        .as_mapping()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            let name = k.as_str().unwrap();
            let value = given.get(name).map_or_else(
                || match &v["Default"] {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    _ => String::new(),
                },
                |g| (*g).to_owned(),
            );
            (name.to_owned(), value)
        })
        .collect()
}

/// A condition's value with the given parameters (`!Equals`, `!Not`,
/// `!Ref` to a parameter, `!Condition`).
fn condition(t: &Value, v: &Value, p: &BTreeMap<String, String>) -> bool {
    let Value::Tagged(tagged) = v else {
        panic!("a condition: {v:?}")
    };
    let scalar = |v: &Value| match v {
        Value::Tagged(r) if r.tag == "Ref" => p[r.value.as_str().unwrap()].clone(),
        Value::String(s) => s.clone(),
        other => panic!("{other:?}"),
    };
    match tagged.tag.to_string().trim_start_matches('!') {
        "Equals" => {
            let items = tagged.value.as_sequence().unwrap();
            scalar(&items[0]) == scalar(&items[1])
        }
        "Not" => !condition(t, &tagged.value.as_sequence().unwrap()[0], p),
        "Condition" => condition(t, &t["Conditions"][tagged.value.as_str().unwrap()], p),
        other => panic!("condition {other}"),
    }
}

fn conditions(t: &Value, p: &BTreeMap<String, String>) -> BTreeMap<String, bool> {
    t["Conditions"]
        .as_mapping()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.as_str().unwrap().to_owned(), condition(t, v, p)))
        .collect()
}

/// `v` with every `!If` decided for the given parameters.
fn resolve(v: &Value, t: &Value, given: &BTreeMap<&str, &str>) -> Value {
    let decided = conditions(t, &parameters(t, given));
    fn walk(v: &Value, decided: &BTreeMap<String, bool>) -> Value {
        match v {
            Value::Tagged(tagged) if tagged.tag == "If" => {
                let items = tagged.value.as_sequence().unwrap();
                let branch = if decided[items[0].as_str().unwrap()] {
                    1
                } else {
                    2
                };
                walk(&items[branch], decided)
            }
            Value::Tagged(tagged) => Value::Tagged(Box::new(serde_yaml::value::TaggedValue {
                tag: tagged.tag.clone(),
                value: walk(&tagged.value, decided),
            })),
            Value::Sequence(items) => {
                Value::Sequence(items.iter().map(|i| walk(i, decided)).collect())
            }
            Value::Mapping(m) => Value::Mapping(
                m.iter()
                    .map(|(k, v)| (k.clone(), walk(v, decided)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    walk(v, &decided)
}

/// Every resource a resolved value refers to: `!Ref X`, `!GetAtt X.Y`,
/// `${X}` and `${X.Y}` in a `!Sub`.
fn referred(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Tagged(tagged) if tagged.tag == "Ref" => {
            out.insert(tagged.value.as_str().unwrap_or_default().to_owned());
        }
        Value::Tagged(tagged) if tagged.tag == "GetAtt" => {
            let target = tagged.value.as_str().map_or_else(
                || tagged.value[0].as_str().unwrap_or_default().to_owned(),
                |s| s.split('.').next().unwrap_or_default().to_owned(),
            );
            out.insert(target);
        }
        Value::Tagged(tagged) if tagged.tag == "Sub" => {
            let body = tagged
                .value
                .as_str()
                .or_else(|| tagged.value[0].as_str())
                .unwrap_or_default();
            for part in body.split("${").skip(1) {
                let name = part.split('}').next().unwrap_or_default();
                out.insert(name.split('.').next().unwrap_or_default().to_owned());
            }
            if let Some(vars) = tagged.value.get(1) {
                referred(vars, out);
            }
        }
        Value::Tagged(tagged) => referred(&tagged.value, out),
        Value::Sequence(items) => items.iter().for_each(|i| referred(i, out)),
        Value::Mapping(m) => m.values().for_each(|v| referred(v, out)),
        _ => {}
    }
}

/// `sam delete` keeps the table and the keys secret: the secret's
/// `contact_pepper` keys every opt-out the table holds.
#[test]
fn deleting_the_stack_keeps_the_table_and_the_pepper_that_keys_its_opt_outs() {
    let t = template();
    for resource in ["Table", "Keys"] {
        for policy in ["DeletionPolicy", "UpdateReplacePolicy"] {
            assert_eq!(
                t["Resources"][resource][policy].as_str(),
                Some("Retain"),
                "{resource} {policy}"
            );
        }
    }
    assert_eq!(
        t["Resources"]["Keys"]["Properties"]["GenerateSecretString"]["GenerateStringKey"].as_str(),
        Some("contact_pepper")
    );
}

/// Pointed at a restored table (`ExistingTableName`, with its stream), the
/// stack makes no table and nothing refers to one it did not make: every
/// function's table, permissions and stream are the restored table's.
#[test]
fn a_stack_can_be_pointed_at_a_restored_table() {
    let t = template();
    let stream = "arn:aws:dynamodb:eu-west-2:123456789012:table/restock-restored/stream/2026-12-04T00:00:00.000";
    let given = BTreeMap::from([
        ("ExistingTableName", "restock-restored"),
        ("ExistingTableStreamArn", stream),
    ]);
    let decided = conditions(&t, &parameters(&t, &given));
    assert!(!decided["CreateTable"]);
    assert_eq!(
        t["Resources"]["Table"]["Condition"].as_str(),
        Some("CreateTable")
    );
    // Without the stream, the deploy is refused before anything changes.
    let rule = &t["Rules"]["RestoredTableHasItsStream"];
    assert!(format!("{:?}", rule["Assertions"]).contains("ExistingTableStreamArn"));
    assert!(condition(
        &t,
        &rule["RuleCondition"],
        &parameters(&t, &given)
    ));
    assert!(!condition(
        &t,
        &rule["RuleCondition"],
        &parameters(&t, &BTreeMap::new())
    ));

    let mut refs = BTreeSet::new();
    for (name, resource) in t["Resources"].as_mapping().unwrap() {
        if name.as_str() == Some("Table") {
            continue;
        }
        let condition_holds = resource["Condition"].as_str().is_none_or(|c| decided[c]);
        if condition_holds {
            referred(&resolve(resource, &t, &given), &mut refs);
        }
    }
    for output in t["Outputs"].as_mapping().unwrap().values() {
        referred(&resolve(output, &t, &given), &mut refs);
    }
    assert!(
        !refs.contains("Table"),
        "a reference to the table the stack did not make"
    );
    for f in Function::ALL {
        let resolved = resolve(function(&t, f), &t, &given);
        let env = &resolved["Properties"]["Environment"]["Variables"][TABLE_VAR];
        assert_eq!(reference(env), Some("ExistingTableName"), "{}", f.name());
        let policies = format!("{:?}", resolved["Properties"]["Policies"]);
        assert!(
            policies.contains("table/${ExistingTableName}\\")
                || policies.contains("table/${ExistingTableName}"),
            "{}: {policies}",
            f.name()
        );
        assert!(
            policies.contains("table/${ExistingTableName}/index/*"),
            "{}",
            f.name()
        );
    }
    let notify = resolve(function(&t, Function::Notify), &t, &given);
    for (_, event) in notify["Properties"]["Events"].as_mapping().unwrap() {
        if event["Type"].as_str() == Some("DynamoDB") {
            assert_eq!(
                reference(&event["Properties"]["Stream"]),
                Some("ExistingTableStreamArn")
            );
        }
    }
    // And by default the stack's own table, as before.
    let own = resolve(function(&t, Function::Capture), &t, &BTreeMap::new());
    assert_eq!(
        reference(&own["Properties"]["Environment"]["Variables"][TABLE_VAR]),
        Some("Table")
    );
}

/// Every alarm has a runbook section (`docs/RUNBOOK.md`, one `## <Alarm>`
/// each: what it means, the first command, the fix), and its description
/// names that section; the runbook has no section for an alarm that is
/// not in the template.
#[test]
fn every_alarm_has_a_runbook_section_its_description_names() {
    let t = template();
    let runbook =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/RUNBOOK.md"))
            .expect("docs/RUNBOOK.md");
    let sections: BTreeSet<String> = runbook
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .map(str::to_owned)
        .collect();
    let mut alarms = BTreeSet::new();
    for (id, r) in t["Resources"].as_mapping().unwrap() {
        if r["Type"].as_str() != Some("AWS::CloudWatch::Alarm") {
            continue;
        }
        let id = id.as_str().unwrap().to_owned();
        let description = r["Properties"]["AlarmDescription"].as_str().unwrap();
        assert!(
            description.contains(&format!("Runbook: docs/RUNBOOK.md#{}.", id.to_lowercase())),
            "{id}'s description names its runbook section: {description}"
        );
        assert!(
            description.len() <= 1024,
            "{id}: CloudWatch takes 1,024 characters"
        );
        alarms.insert(id);
    }
    assert_eq!(sections, alarms, "one runbook section per alarm");
    for section in runbook.split("\n## ").skip(1) {
        let name = section.lines().next().unwrap();
        for part in ["**What it means.**", "**First command.**", "**The fix.**"] {
            assert!(section.contains(part), "{name} says {part}");
        }
    }
}

/// The modules of each crate point one way: no two import each other,
/// directly or round a circle (`crate::x` in code, not in comments; a
/// crate's root and tests aside).
#[test]
fn the_modules_of_each_crate_point_one_way() {
    use std::collections::{BTreeMap, BTreeSet};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates");
    for krate in [
        "core",
        "app",
        "store",
        "store-dynamo",
        "store-memory",
        "aws",
        "local",
        "cli",
    ] {
        let src = root.join(krate).join("src");
        let mut imports: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut stack = vec![src.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                if path.extension().is_none_or(|e| e != "rs") {
                    continue;
                }
                let rel = path.strip_prefix(&src).unwrap();
                let top = rel
                    .components()
                    .next()
                    .unwrap()
                    .as_os_str()
                    .to_string_lossy();
                let top = top.trim_end_matches(".rs").to_owned();
                if matches!(top.as_str(), "lib" | "main") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                let code = text.split("#[cfg(test)]").next().unwrap_or_default();
                let used = imports.entry(top.clone()).or_default();
                for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                    for (i, _) in line.match_indices("crate::") {
                        if line[..i].ends_with("restock_") || line[..i].ends_with('_') {
                            continue;
                        }
                        let name: String = line[i + 7..]
                            .chars()
                            .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                            .collect();
                        if !name.is_empty() && name != top {
                            used.insert(name);
                        }
                    }
                }
            }
        }
        // A module that reaches itself through what it imports is a circle.
        for start in imports.keys() {
            let mut seen = BTreeSet::new();
            let mut next: Vec<&String> = imports[start].iter().collect();
            while let Some(m) = next.pop() {
                assert!(
                    m != start,
                    "crates/{krate}: `{start}` imports a module that imports it back ({imports:?})"
                );
                if seen.insert(m.clone())
                    && let Some(more) = imports.get(m)
                {
                    next.extend(more.iter());
                }
            }
        }
    }
}
