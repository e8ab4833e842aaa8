//! The Shopify app `restock connect shopify --app DIR` writes: the app
//! configuration (`shopify.app.toml`: scopes, the webhook subscriptions and
//! the privacy topics at this stack's DetectUrl) and the theme app extension
//! (an app block and an app embed that render the widget, and the widget's
//! script as the extension's asset), from the templates in
//! `examples/shopify/`. `shopify app deploy`, run in DIR, publishes it.

use super::ConnectError;
use crate::platforms::SHOPIFY_API_VERSION;

/// The templates, by their place in the app.
const TEMPLATES: [(&str, &str); 4] = [
    (
        "shopify.app.toml",
        include_str!("../../../../examples/shopify/shopify.app.toml"),
    ),
    (
        "extensions/restock-notify/shopify.extension.toml",
        include_str!(
            "../../../../examples/shopify/extensions/restock-notify/shopify.extension.toml"
        ),
    ),
    (
        "extensions/restock-notify/blocks/notify.liquid",
        include_str!("../../../../examples/shopify/extensions/restock-notify/blocks/notify.liquid"),
    ),
    (
        "extensions/restock-notify/blocks/embed.liquid",
        include_str!("../../../../examples/shopify/extensions/restock-notify/blocks/embed.liquid"),
    ),
];

/// The widget, as the local server serves it.
const WIDGET: (&str, &str) = (
    "extensions/restock-notify/assets/restock-widget.js",
    include_str!("../../../local/assets/restock-widget.js"),
);

/// What the app's files name of the stack and the app.
pub struct AppFor<'a> {
    /// The Dev Dashboard app's client id.
    pub client_id: &'a str,
    /// The stack's `CaptureUrl`.
    pub capture_url: &'a str,
    /// Where Shopify delivers (the stack's DetectUrl and Shopify's route).
    pub webhook_url: &'a str,
}

/// The app's files, each with its path in the app and its text.
///
/// # Errors
/// [`ConnectError::Refused`] when the client id is not one Shopify gives
/// (letters, digits, `-` and `_`).
pub fn files(app: &AppFor<'_>) -> Result<Vec<(&'static str, String)>, ConnectError> {
    let well_formed = !app.client_id.is_empty()
        && app
            .client_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !well_formed {
        return Err(ConnectError::refused(format!(
            "--client-id {:?} is not a Shopify client id (the Dev Dashboard shows it under Settings)",
            app.client_id
        )));
    }
    let fill = |text: &str| {
        text.replace("RESTOCK_CLIENT_ID", app.client_id)
            .replace("RESTOCK_CAPTURE_URL", app.capture_url.trim_end_matches('/'))
            .replace("RESTOCK_WEBHOOK_URL", app.webhook_url)
            .replace("RESTOCK_API_VERSION", SHOPIFY_API_VERSION)
    };
    let mut files: Vec<(&'static str, String)> = TEMPLATES
        .iter()
        .map(|(path, text)| (*path, fill(text)))
        .collect();
    files.push((WIDGET.0, WIDGET.1.to_owned()));
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connect::SHOPIFY_TOPICS;
    use restock_core::platform::shopify::PRIVACY_TOPICS;

    const FOR: AppFor<'static> = AppFor {
        client_id: "0f1e2d3c4b5a",
        capture_url: "https://abc.lambda-url.eu-west-2.on.aws/",
        webhook_url: "https://def.lambda-url.eu-west-2.on.aws/webhooks/shopify",
    };

    fn file(files: &[(&'static str, String)], path: &str) -> String {
        files.iter().find(|(p, _)| *p == path).unwrap().1.clone()
    }

    /// `{% schema %}…{% endschema %}`'s JSON.
    fn schema(liquid: &str) -> serde_json::Value {
        let start = liquid.find("{% schema %}").unwrap() + "{% schema %}".len();
        let end = liquid.find("{% endschema %}").unwrap();
        serde_json::from_str(&liquid[start..end]).unwrap()
    }

    #[test]
    fn the_app_subscribes_what_detect_reads_at_the_stack_s_detect_url() {
        let files = files(&FOR).unwrap();
        let config: toml::Value = toml::from_str(&file(&files, "shopify.app.toml")).unwrap();
        assert_eq!(config["client_id"].as_str(), Some(FOR.client_id));
        let hooks = &config["webhooks"];
        assert_eq!(hooks["api_version"].as_str(), Some(SHOPIFY_API_VERSION));
        let subscriptions = hooks["subscriptions"].as_array().unwrap();
        let listed = |key: &str| -> Vec<String> {
            let mut all: Vec<String> = subscriptions
                .iter()
                .filter_map(|s| s.get(key))
                .flat_map(|t| t.as_array().unwrap().iter())
                .map(|t| t.as_str().unwrap().to_owned())
                .collect();
            all.sort();
            all
        };
        // The Admin API's enum (INVENTORY_LEVELS_UPDATE) as the file names it.
        let mut topics: Vec<String> = SHOPIFY_TOPICS
            .iter()
            .map(|t| {
                let (what, happened) = t.rsplit_once('_').unwrap();
                format!("{}/{}", what.to_lowercase(), happened.to_lowercase())
            })
            .collect();
        topics.sort();
        assert_eq!(listed("topics"), topics);
        let mut privacy: Vec<String> = PRIVACY_TOPICS.iter().map(|t| (*t).to_owned()).collect();
        privacy.sort();
        assert_eq!(listed("compliance_topics"), privacy);
        for s in subscriptions {
            assert_eq!(s["uri"].as_str(), Some(FOR.webhook_url));
        }
        let scopes = config["access_scopes"]["scopes"].as_str().unwrap();
        for scope in ["read_inventory", "read_products", "read_orders"] {
            assert!(scopes.split(',').any(|s| s == scope), "{scope}");
        }
        for (path, text) in &files {
            assert!(!text.contains("RESTOCK_"), "{path} keeps a placeholder");
        }
    }

    #[test]
    fn the_blocks_post_to_the_stack_and_carry_the_widget() {
        let files = files(&FOR).unwrap();
        for block in ["notify", "embed"] {
            let liquid = file(
                &files,
                &format!("extensions/restock-notify/blocks/{block}.liquid"),
            );
            let schema = schema(&liquid);
            assert_eq!(schema["javascript"], "restock-widget.js");
            assert_eq!(schema["enabled_on"]["templates"][0], "product");
            let capture = schema["settings"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["id"] == "capture_url")
                .unwrap();
            assert_eq!(
                capture["default"].as_str(),
                Some("https://abc.lambda-url.eu-west-2.on.aws")
            );
        }
        assert_eq!(
            file(&files, "extensions/restock-notify/assets/restock-widget.js"),
            WIDGET.1
        );
        assert!(WIDGET.1.contains("data-restock-after"));
    }

    #[test]
    fn a_client_id_that_would_break_the_file_is_refused() {
        for bad in ["", "a\"b", "x\ny"] {
            let e = files(&AppFor {
                client_id: bad,
                ..FOR
            })
            .unwrap_err();
            assert!(e.to_string().contains("not a Shopify client id"), "{e}");
        }
    }
}
