//! Texts shoppers send back (AWS End User Messaging's two-way SMS, through
//! an SNS topic): what restock reads in them. An opt-out may be said in any
//! reasonable words (the FCC's 2025 rule), so beside the carriers' keywords
//! restock knows their common synonyms and phrases in each language it
//! writes in; HELP asks for the shop's help text. Anything else is left
//! alone.

use serde::Deserialize;

/// One inbound text, as End User Messaging publishes it to the topic.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InboundText {
    /// The shopper's number.
    pub origination_number: String,
    /// The shop's number it was sent to.
    #[serde(default)]
    pub destination_number: Option<String>,
    /// The registered keyword it matched, if any.
    #[serde(default)]
    pub message_keyword: Option<String>,
    /// What the shopper wrote.
    #[serde(default)]
    pub message_body: String,
    /// Its id: a redelivery carries the same.
    pub inbound_message_id: String,
}

/// What a text asks of restock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asks {
    /// No more messages, for good.
    OptOut,
    /// The shop's help text.
    Help,
}

/// Words and phrases that opt a number out, as a reply's whole text or its
/// first words, each language restock writes in (lower case, accents kept
/// and dropped; punctuation is read as a space).
const OPT_OUT: &[&str] = &[
    // English, with the carriers' (CTIA) keywords.
    "stop",
    "stopall",
    "stop all",
    "unsubscribe",
    "unsub",
    "cancel",
    "end",
    "quit",
    "revoke",
    "optout",
    "opt out",
    "remove me",
    "no more",
    "dont text",
    "do not text",
    "leave me alone",
    // French.
    "arret",
    "arrêt",
    "desabonner",
    "désabonner",
    "desinscrire",
    "désinscrire",
    "ne plus recevoir",
    // German.
    "stopp",
    "abmelden",
    "abbestellen",
    "austragen",
    "keine sms",
    "nicht mehr",
    // Spanish.
    "baja",
    "alto",
    "darme de baja",
    "no mas",
    "no más",
    // Italian.
    "basta",
    "annulla",
    "cancellami",
    "disiscrivimi",
    // Dutch.
    "afmelden",
    "stoppen",
    "uitschrijven",
    // Portuguese.
    "parar",
    "sair",
    "cancelar",
    "descadastrar",
    // Polish.
    "wypisz",
    "rezygnuje",
    "rezygnuję",
    // Japanese.
    "停止",
    "配信停止",
    "解除",
    // Arabic.
    "توقف",
    "الغاء",
    "إلغاء",
];

/// Words that ask for help.
const HELP: &[&str] = &[
    "help",
    "info",
    "aide",
    "hilfe",
    "ayuda",
    "aiuto",
    "hulp",
    "ajuda",
    "pomoc",
    "ヘルプ",
    "مساعدة",
];

/// What `body` asks: an opt-out when it is, or begins with, one of the
/// opt-out words; help when it is a help word; else nothing.
pub fn asks(body: &str) -> Option<Asks> {
    let words = normalise(body);
    let starts = |phrase: &&str| {
        words == *phrase
            || words
                .strip_prefix(*phrase)
                .is_some_and(|rest| rest.starts_with(' '))
    };
    if OPT_OUT.iter().any(starts) {
        Some(Asks::OptOut)
    } else if HELP.contains(&words.as_str()) {
        Some(Asks::Help)
    } else {
        None
    }
}

/// Lower case, punctuation and spacing as single spaces, apostrophes
/// dropped (`Don't` is `dont`).
fn normalise(body: &str) -> String {
    let lowered: String = body
        .to_lowercase()
        .chars()
        .filter(|c| !matches!(c, '\'' | '’'))
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    lowered.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_opt_out_in_any_words_and_languages() {
        for body in [
            "STOP",
            "Stop.",
            "unsubscribe",
            "Unsubscribe me please",
            "opt-out",
            "Don't text me again",
            "QUIT",
            "no more!",
            "Arrêt",
            "abmelden",
            "Darme de baja",
            "配信停止",
            "  stop  all ",
        ] {
            assert_eq!(asks(body), Some(Asks::OptOut), "{body}");
        }
    }

    #[test]
    fn help_and_everything_else() {
        for body in ["HELP", "help?", "Aide", "Hilfe"] {
            assert_eq!(asks(body), Some(Asks::Help), "{body}");
        }
        for body in [
            "thanks!",
            "stopped by the shop yesterday",
            "when is it back",
            "",
            "help me find size 9",
        ] {
            assert_eq!(asks(body), None, "{body}");
        }
    }

    #[test]
    fn end_user_messaging_s_payload_reads() {
        let text: InboundText = serde_json::from_str(
            r#"{"originationNumber":"+14255550182","destinationNumber":"+12125550101","messageKeyword":"JOIN","messageBody":"EXAMPLE","inboundMessageId":"cae173d2-66b9-564c-8309-21f858e9fb84","previousPublishedMessageId":"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}"#,
        )
        .unwrap();
        assert_eq!(text.origination_number, "+14255550182");
        assert_eq!(text.message_body, "EXAMPLE");
        assert_eq!(asks(&text.message_body), None);
    }
}
