//! What a shop copies works. Every fenced block in `README.md` and `docs/`
//! is read the way a user would use it: a settings block through the
//! settings parser (a fragment on top of `examples/settings.toml`), a
//! catalogue through the catalogue parser, the keys secret through the
//! functions' own reader, a shell block through `bash -n` with every command
//! in it one the machine or this project has. Every `restock …` command the
//! docs and `template.yaml`'s texts name parses with the real binary
//! (`--help` appended, so nothing runs), and every path and link the docs
//! give resolves, anchors included.
//!
//! Each test prints what it checked (`--nocapture`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// README.md and every doc, by path from the root.
fn docs() -> Vec<(String, String)> {
    let mut paths = vec!["README.md".to_owned()];
    let mut names: Vec<_> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .collect();
    names.sort();
    paths.extend(names.into_iter().map(|n| format!("docs/{n}")));
    paths
        .into_iter()
        .map(|p| {
            let text = read(&p);
            (p, text)
        })
        .collect()
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

/// What one doc holds that a reader copies or follows.
#[derive(Default)]
struct Parts {
    /// Fenced blocks: (line, language, body).
    blocks: Vec<(usize, String, String)>,
    /// Inline code: (line, text).
    code: Vec<(usize, String)>,
    /// Link targets: (line, target).
    links: Vec<(usize, String)>,
    /// The anchors its headings make (GitHub's slugs).
    anchors: BTreeSet<String>,
}

fn parts(text: &str) -> Parts {
    let mut parts = Parts::default();
    let mut block: Option<(usize, String, String)> = None;
    let mut heading: Option<String> = None;
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (event, range) in Parser::new(text).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split_whitespace().next().unwrap_or("").to_owned()
                    }
                    CodeBlockKind::Indented => "(indented)".to_owned(),
                };
                block = Some((line_of(text, range.start), lang, String::new()));
            }
            Event::End(TagEnd::CodeBlock) => parts.blocks.extend(block.take()),
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => {
                let slug = slug(&heading.take().unwrap_or_default());
                let n = seen.entry(slug.clone()).or_default();
                parts
                    .anchors
                    .insert(if *n == 0 { slug } else { format!("{slug}-{n}") });
                *n += 1;
            }
            Event::Text(t) => {
                if let Some((_, _, body)) = &mut block {
                    body.push_str(&t);
                } else if let Some(h) = &mut heading {
                    h.push_str(&t);
                }
            }
            Event::Code(c) => {
                if let Some(h) = &mut heading {
                    h.push_str(&c);
                }
                parts
                    .code
                    .push((line_of(text, range.start), c.into_string()));
            }
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => parts
                .links
                .push((line_of(text, range.start), dest_url.into_string())),
            _ => {}
        }
    }
    parts
}

/// GitHub's anchor for a heading: lower case, punctuation dropped but `-`
/// and `_`, spaces as `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// A settings block: a whole document as it stands, a fragment on top of
/// `examples/settings.toml` (as a shop would add it to its own).
fn check_settings(body: &str) -> Result<(), String> {
    let fragment: toml::Table = toml::from_str(body).map_err(|e| format!("not TOML: {e}"))?;
    let document = if fragment.contains_key("store_name") {
        body.to_owned()
    } else {
        let mut base: toml::Table = toml::from_str(&read("examples/settings.toml")).unwrap();
        merge(&mut base, fragment);
        toml::to_string(&base).unwrap()
    };
    restock_core::Settings::from_toml(&document)
        .map(|_| ())
        .map_err(|e| format!("`restock settings put` would refuse it: {e}"))
}

fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// The commands a shell block may call: the tools the docs ask for.
const TOOLS: &[&str] = &[
    "aws",
    "bash",
    "cargo",
    "curl",
    "git",
    "jq",
    "node",
    "npm",
    "python3",
    "restock",
    "restock-local",
    "sam",
    "sh",
    "shopify",
];

/// A shell block's lines with continuations joined and comments cut.
fn shell_lines(body: &str) -> Vec<String> {
    let mut lines = vec![];
    let mut current = String::new();
    for line in body.lines() {
        let line = match line.find(" #") {
            Some(i) if !line[..i].contains('\'') => &line[..i],
            _ if line.trim_start().starts_with('#') => "",
            _ => line,
        };
        if let Some(start) = line.strip_suffix('\\') {
            current.push_str(start);
            current.push(' ');
            continue;
        }
        current.push_str(line);
        if !current.trim().is_empty() {
            lines.push(current.trim().to_owned());
        }
        current.clear();
    }
    lines
}

/// The simple commands of a line: split at `|`, `&&`, `||` and `;`, each
/// as its words, leading `NAME=value` assignments dropped (but the tool
/// of a `NAME=$(tool …)`).
fn commands(line: &str) -> Vec<Vec<String>> {
    let Some(words) = shlex::split(line) else {
        return vec![vec![format!("(unbalanced quotes) {line}")]];
    };
    let mut out = vec![];
    let mut current: Vec<String> = vec![];
    for w in words {
        if matches!(w.as_str(), "|" | "&&" | "||" | ";") {
            out.push(std::mem::take(&mut current));
        } else if current.is_empty() && w.contains('=') && !w.starts_with('-') {
            // `NAME=$(tool …)`: the substitution's tool runs.
            if let Some((_, tool)) = w.split_once("=$(") {
                current.push(tool.to_owned());
            }
        } else {
            current.push(w);
        }
    }
    out.push(current);
    out.into_iter().filter(|c| !c.is_empty()).collect()
}

fn bash_parses(body: &str) -> Result<(), String> {
    let out = Command::new("bash")
        .args(["-n", "-c", body])
        .output()
        .expect("bash runs");
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "bash -n: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// `restock …` as the binary would take it: the arguments after `restock`
/// (or after `cargo run … -p restock-cli --`).
fn restock_args(command: &[String]) -> Option<Vec<String>> {
    match command.first().map(String::as_str) {
        Some("restock") => Some(command[1..].to_vec()),
        Some("cargo") if command.iter().any(|w| w == "restock-cli") => command
            .iter()
            .position(|w| w == "--")
            .map(|i| command[i + 1..].to_vec()),
        _ => None,
    }
    .map(|args| {
        args.into_iter()
            .take_while(|w| !w.starts_with('>') && w != "2>&1")
            .collect()
    })
}

/// Parses `args` with the real binary, `--help` appended so nothing runs.
fn restock_parses(args: &[String]) -> Result<(), String> {
    let out = Command::new(env!("CARGO_BIN_EXE_restock"))
        .args(args)
        .arg("--help")
        .env_remove("RESTOCK_TABLE")
        .output()
        .expect("restock runs");
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr)
            .lines()
            .next()
            .unwrap_or("")
            .to_owned())
    }
}

/// Whether a `cargo test` filter names a test or module in the sources.
fn test_filter_exists(filter: &str) -> bool {
    let last = filter.rsplit("::").next().unwrap_or(filter);
    let mut found = false;
    let mut stack = vec![root().join("tests"), root().join("crates")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                if !p.ends_with("node_modules") {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                found |= text.contains(&format!("fn {last}"))
                    || text.contains(&format!("mod {last}"))
                    || p.file_stem().is_some_and(|s| s == last);
            }
        }
    }
    found
}

/// The test filter of `cargo test`'s arguments: a word that is neither a
/// flag nor a flag's value, before or after `--`.
fn test_filter(args: &[String]) -> Option<String> {
    let mut skip_value = false;
    let mut filter = None;
    for w in args {
        if skip_value {
            skip_value = false;
        } else if matches!(w.as_str(), "-p" | "--package" | "--test" | "--features") {
            skip_value = true;
        } else if !w.starts_with('-') {
            filter = Some(w.clone());
        }
    }
    filter
}

/// A shell block, command by command; `defined` holds the shell functions
/// the doc's blocks so far define (`keys() {`), which later commands may call.
fn check_shell(
    body: &str,
    defined: &mut BTreeSet<String>,
    commands_seen: &mut Vec<Vec<String>>,
) -> Result<(), String> {
    bash_parses(body)?;
    for line in shell_lines(body) {
        if let Some(name) = line.strip_suffix("() {") {
            defined.insert(name.trim().to_owned());
            continue;
        }
        for command in commands(&line) {
            let tool = command[0].as_str();
            if tool == "}" || defined.contains(tool) {
                continue;
            }
            if !TOOLS.contains(&tool) {
                return Err(format!(
                    "`{line}` runs `{tool}`, which is neither a tool the docs ask for nor restock's"
                ));
            }
            if let Some(args) = restock_args(&command) {
                restock_parses(&args).map_err(|e| format!("`{line}`: {e}"))?;
                commands_seen.push(args);
            }
            if tool == "bash" && command.len() > 1 && !root().join(&command[1]).is_file() {
                return Err(format!("`{line}`: no file {}", command[1]));
            }
            if tool == "cargo" && command.get(1).is_some_and(|c| c == "test") {
                let filter = test_filter(&command[2..]);
                if let Some(filter) = filter
                    && !test_filter_exists(&filter)
                {
                    return Err(format!("`{line}`: no test or module is named {filter}"));
                }
            }
        }
    }
    Ok(())
}

#[test]
fn every_block_a_user_would_paste_parses() {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = vec![];
    let mut commands_seen = vec![];
    for (path, text) in docs() {
        let mut defined = BTreeSet::new();
        for (line, lang, body) in parts(&text).blocks {
            *counts.entry(lang.clone()).or_default() += 1;
            let checked = match lang.as_str() {
                "toml" => check_settings(&body),
                "csv" => restock_core::catalogue::parse_csv(&body)
                    .map(|_| ())
                    .map_err(|e| format!("`restock catalogue import` would refuse it: {e}")),
                "sh" => check_shell(&body, &mut defined, &mut commands_seen),
                "json" if body.contains("contact_pepper") => {
                    restock_app::ports::Secrets::from_json(&body)
                        .map(|_| ())
                        .map_err(|e| format!("the functions cannot read this secret: {e}"))
                }
                "json" => serde_json::Deserializer::from_str(&body)
                    .into_iter::<serde_json::Value>()
                    .try_for_each(|v| v.map(|_| ()))
                    .map_err(|e| format!("not JSON: {e}")),
                "html" => body
                    .contains("data-restock-sku")
                    .then_some(())
                    .ok_or_else(|| "an HTML block that is not the widget's snippet".to_owned()),
                // Read, not pasted: a diagram, a log, an output.
                "text" => Ok(()),
                // The WooCommerce snippet: no PHP on this machine to lint it.
                "php" => Ok(()),
                other => Err(format!(
                    "a block in `{other}`: say what it is (`text` for one nobody pastes) so a test can check it"
                )),
            };
            if let Err(e) = checked {
                failures.push(format!("{path}:{line}: {e}"));
            }
        }
    }
    println!(
        "blocks checked: {counts:?}; restock commands in them: {}",
        commands_seen.len()
    );
    assert!(
        failures.is_empty(),
        "blocks a user would paste that do not work:\n{}",
        failures.join("\n")
    );
    assert!(counts.get("sh").copied().unwrap_or(0) >= 5, "{counts:?}");
}

/// `restock …` in inline code and in `template.yaml`'s texts (in backticks
/// or parentheses): (where, the arguments).
fn named_commands() -> Vec<(String, Vec<String>)> {
    let mut named = vec![];
    let mut add = |place: String, text: &str| {
        if let Some(rest) = text.strip_prefix("restock ")
            && let Some(words) = shlex::split(rest)
        {
            let words: Vec<String> = words
                .into_iter()
                .take_while(|w| !matches!(w.as_str(), "|" | "&&" | ";"))
                .collect();
            named.push((place, words));
        }
    };
    for (path, text) in docs() {
        for (line, code) in parts(&text).code {
            add(format!("{path}:{line}"), &code);
        }
    }
    let template = read("template.yaml");
    for (i, _) in template.match_indices("restock ") {
        let before = template[..i].chars().next_back();
        let close = match before {
            Some('`') => '`',
            Some('(') => ')',
            _ => continue,
        };
        let rest = &template[i..];
        let end = rest.find(close).unwrap_or(rest.len());
        let text: String = rest[..end].split_whitespace().collect::<Vec<_>>().join(" ");
        add(format!("template.yaml:{}", line_of(&template, i)), &text);
    }
    named
}

#[test]
fn every_restock_command_the_docs_and_the_template_name_exists() {
    let named = named_commands();
    let failures: Vec<String> = named
        .iter()
        .filter_map(|(place, args)| {
            restock_parses(args)
                .err()
                .map(|e| format!("{place}: `restock {}`: {e}", args.join(" ")))
        })
        .collect();
    println!(
        "restock commands named in docs and template.yaml: {}",
        named.len()
    );
    assert!(
        failures.is_empty(),
        "commands the docs name that restock does not take:\n{}",
        failures.join("\n")
    );
    assert!(named.len() >= 20, "{named:?}");
}

/// Inline code that names a file or directory of this repository.
fn looks_like_a_path(code: &str) -> bool {
    const TOP: &[&str] = &[
        "crates/",
        "docs/",
        "events/",
        "examples/",
        "scripts/",
        "tests/",
        "fuzz/",
        ".ci/",
    ];
    !code.contains(char::is_whitespace)
        && !code.contains(['*', '<', '{', '$'])
        && (TOP.iter().any(|t| code.starts_with(t))
            || matches!(
                code,
                "template.yaml" | "samconfig.toml" | "Cargo.toml" | "README.md"
            ))
}

#[test]
fn every_path_and_link_in_the_docs_resolves() {
    let docs = docs();
    let anchors: BTreeMap<String, BTreeSet<String>> = docs
        .iter()
        .map(|(p, t)| (p.clone(), parts(t).anchors))
        .collect();
    let (mut paths, mut links, mut external) = (0, 0, 0);
    let mut failures = vec![];
    for (path, text) in &docs {
        let parts = parts(text);
        let dir = Path::new(path).parent().unwrap_or(Path::new(""));
        for (line, code) in &parts.code {
            let code = code.trim_end_matches([',', '.', ':']);
            let code = code.split(':').next().unwrap_or(code);
            if looks_like_a_path(code) {
                paths += 1;
                if !root().join(code).exists() {
                    failures.push(format!("{path}:{line}: `{code}` does not exist"));
                }
            }
        }
        for (line, target) in &parts.links {
            if target.starts_with("http://") || target.starts_with("https://") {
                external += 1;
                if url::Url::parse(target).is_err() {
                    failures.push(format!("{path}:{line}: {target} is not a URL"));
                }
                continue;
            }
            links += 1;
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            let file = if file.is_empty() {
                path.clone()
            } else {
                normalise(&dir.join(file))
            };
            if !root().join(&file).exists() {
                failures.push(format!("{path}:{line}: {target}: no {file}"));
            } else if !anchor.is_empty() {
                match anchors.get(&file) {
                    Some(a) if a.contains(anchor) => {}
                    Some(_) => failures.push(format!(
                        "{path}:{line}: {target}: {file} has no heading #{anchor}"
                    )),
                    None => failures.push(format!(
                        "{path}:{line}: {target}: an anchor into a file that is not a doc"
                    )),
                }
            }
        }
    }
    println!(
        "paths checked: {paths}; links within the repository: {links}; external links (well-formed, not fetched): {external}"
    );
    assert!(
        failures.is_empty(),
        "paths and links in the docs that lead nowhere:\n{}",
        failures.join("\n")
    );
}

/// `docs/../README.md` → `README.md`.
fn normalise(path: &Path) -> String {
    let mut out: Vec<String> = vec![];
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other.as_os_str().to_string_lossy().into_owned()),
        }
    }
    out.join("/")
}

/// A settings table as dotted keys and their values.
fn flatten(prefix: &str, table: &toml::Table, out: &mut BTreeMap<String, toml::Value>) {
    for (k, v) in table {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(t) => flatten(&key, t, out),
            v => {
                out.insert(key, v.clone());
            }
        }
    }
}

/// The defaults, as the code fills them in.
fn defaults() -> BTreeMap<String, toml::Value> {
    let minimal = "store_name = \"S\"\npublic_base_url = \"https://s.example\"\nemail_from = \"S <s@s.example>\"\n";
    let settings = restock_core::Settings::from_toml(minimal).unwrap();
    let mut out = BTreeMap::new();
    flatten("", &toml::from_str(&settings.to_toml()).unwrap(), &mut out);
    for required in ["store_name", "public_base_url", "email_from"] {
        out.remove(required);
    }
    out
}

#[test]
fn the_settings_reference_has_every_field_with_the_codes_default() {
    let doc = read("docs/SETTINGS.md");
    let mut rows: BTreeMap<String, String> = BTreeMap::new();
    for line in doc.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        rows.insert(
            cells[0]
                .trim_start_matches("| ")
                .trim_matches('`')
                .to_owned(),
            cells[1].to_owned(),
        );
    }
    let mut failures = vec![];
    let defaults = defaults();
    for (key, value) in &defaults {
        match rows.get(key) {
            None => failures.push(format!("{key} is not in docs/SETTINGS.md")),
            Some(cell) => {
                let written: Option<toml::Value> = cell
                    .strip_prefix('`')
                    .and_then(|c| c.strip_suffix('`'))
                    .and_then(|c| toml::from_str::<toml::Table>(&format!("v = {c}")).ok())
                    .and_then(|mut t| t.remove("v"));
                if written.as_ref() != Some(value) {
                    failures.push(format!(
                        "{key}: the doc says {cell}, the code's default is {value}"
                    ));
                }
            }
        }
    }
    let optional_without_default = [
        "sms_sender_id",
        "remind_before",
        "messages.<language>.<id>",
        "quiet_hours.legal.<place>",
    ];
    for key in rows.keys() {
        let required = rows[key] == "(required)";
        if !required
            && !defaults.contains_key(key)
            && !optional_without_default.contains(&key.as_str())
        {
            failures.push(format!(
                "docs/SETTINGS.md lists {key}, which the settings do not have"
            ));
        }
    }
    // The example shows the defaults of the optional fields it sets, but
    // the one a shop must set to its storefront (as its header says).
    let text = read("examples/settings.toml");
    let written: toml::Table = toml::from_str(&text).unwrap();
    let mut set = BTreeMap::new();
    flatten("", &written, &mut set);
    let mut example = BTreeMap::new();
    let read_back = restock_core::Settings::from_toml(&text).expect("examples/settings.toml");
    flatten(
        "",
        &toml::from_str(&read_back.to_toml()).unwrap(),
        &mut example,
    );
    for (key, value) in example.iter().filter(|(k, _)| set.contains_key(*k)) {
        if let Some(default) = defaults.get(key)
            && default != value
            && key != "storefront_origins"
        {
            failures.push(format!(
                "examples/settings.toml sets {key} = {value}, not its default {default}"
            ));
        }
    }
    println!(
        "settings fields checked against the code: {}",
        defaults.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Each example catalogue row's checkout carries the hold the way its
/// platform passes it into the order: a Shopify cart attribute arrives as
/// the order's `hold` note attribute, which detect reads.
#[test]
fn the_example_catalogue_s_checkouts_carry_the_hold_into_the_order() {
    use restock_core::Platform;
    use restock_core::platform::shopify;
    use restock_core::webhook::{Keys, OrderDelivery};
    let entries = restock_core::catalogue::parse_csv(&read("examples/catalogue.csv")).unwrap();
    let hold = restock_core::ids::HoldId::from_random([7; 16]);
    let mut checked = 0;
    for entry in &entries {
        let url = url::Url::parse(&entry.checkout_for(&hold).unwrap()).unwrap();
        let query: Vec<(String, String)> = url.query_pairs().into_owned().collect();
        if entry.ids.get(Platform::Shopify).is_some() {
            // Shopify's cart permalink: every `attributes[name]=value` becomes
            // a note attribute of the order placed from that cart.
            let attributes: Vec<serde_json::Value> = query
                .iter()
                .filter_map(|(k, v)| {
                    let name = k.strip_prefix("attributes[")?.strip_suffix(']')?;
                    Some(serde_json::json!({"name": name, "value": v}))
                })
                .collect();
            let body = serde_json::json!({"id": 1, "note_attributes": attributes}).to_string();
            let headers = vec![
                (shopify::SIGNATURE, shopify::sign(b"key", body.as_bytes())),
                (shopify::WEBHOOK_ID, "d-1".to_owned()),
                (shopify::TOPIC, "orders/paid".to_owned()),
            ];
            match shopify::parse_order(&Keys::raw([b"key"]), &headers, body.as_bytes()).unwrap() {
                OrderDelivery::Paid(order) => assert_eq!(
                    order.holds,
                    [hold],
                    "{}: a Shopify order from {url} does not carry the hold",
                    entry.sku
                ),
                OrderDelivery::NotPaid => unreachable!(),
            }
        } else {
            // WooCommerce (the snippet in DEPLOY.md) and the generic format
            // read `?hold=`.
            assert!(
                query.contains(&("hold".to_owned(), hold.to_string())),
                "{}: {url} does not carry ?hold=",
                entry.sku
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 3);
}

/// A reference row's command as arguments: `[optional]` parts and `...`
/// dropped, the first of `a|b` alternatives.
fn row_args(command: &str) -> Vec<String> {
    let mut out = vec![];
    let mut depth = 0;
    for word in command.split_whitespace() {
        let opens = word.starts_with('[');
        if opens {
            depth += 1;
        }
        if depth == 0 && word != "..." {
            out.push(word.split('|').next().unwrap_or(word).to_owned());
        }
        if word.ends_with(']') && depth > 0 {
            depth -= 1;
        }
    }
    out
}

#[test]
fn the_cli_reference_is_every_command_the_binary_has() {
    let doc = read("docs/CLI.md");
    let mut documented = BTreeSet::new();
    let mut failures = vec![];
    for line in doc.lines().filter(|l| l.starts_with("| `")) {
        let cell = line.trim_start_matches("| ").split(" | ").next().unwrap();
        for command in cell.split(" / ") {
            let args = row_args(command.trim_matches('`'));
            documented.insert(args[0].clone());
            if let Err(e) = restock_parses(&args) {
                failures.push(format!("docs/CLI.md: `{command}`: {e}"));
            }
        }
    }
    let help = Command::new(env!("CARGO_BIN_EXE_restock"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let commands: Vec<&str> = help
        .split("Commands:")
        .nth(1)
        .and_then(|rest| rest.split("Options:").next())
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    for c in &commands {
        if !documented.contains(*c) {
            failures.push(format!("`restock {c}` is not in docs/CLI.md"));
        }
    }
    println!(
        "CLI reference rows checked: {}; the binary's commands: {}",
        documented.len(),
        commands.len()
    );
    assert!(commands.len() >= 10, "{help}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A quantity as a number of its smallest unit: durations in seconds
/// (`15m`, `"48h"`, `2 days`), anything else as written without separators.
fn quantity(number: &str, unit: &str) -> Option<u64> {
    let n: u64 = number.replace(',', "").parse().ok()?;
    let scale = match unit.trim_end_matches('s') {
        "" => 1,
        "s" | "second" => 1,
        "m" | "minute" | "min" => 60,
        "h" | "hour" => 3_600,
        "d" | "day" => 86_400,
        _ => return None,
    };
    Some(n * scale)
}

/// What the prose of each doc gives as the value of a named thing: `` `name` ``
/// followed by "is", "of", "=", "(", "(default" or ", default" and a
/// quantity, in the same sentence or table cell. Code blocks are left out.
fn named_values() -> Vec<(String, usize, String, u64, String)> {
    let pattern = regex::Regex::new(
        r#"`([a-z_][a-z0-9_.]*)`\s*(?:is |of |= |\(default |, default |\()\s*`?"?([0-9][0-9,]*)\s*(seconds?|minutes?|min|hours?|days?|[smhd])?"?`?(?:[\s),.;|]|$)"#,
    )
    .unwrap();
    let mut found = vec![];
    for (path, text) in docs() {
        let mut in_block = false;
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                in_block = !in_block;
                continue;
            }
            if in_block {
                continue;
            }
            for c in pattern.captures_iter(line).filter(|c| c[1].len() >= 3) {
                let unit = c.get(3).map_or("", |u| u.as_str());
                if let Some(value) = quantity(&c[2], unit) {
                    found.push((
                        path.clone(),
                        i + 1,
                        c[1].to_owned(),
                        value,
                        c[0].trim().to_owned(),
                    ));
                }
            }
        }
    }
    found
}

/// One fact, one value: a setting the docs give a value for has the code's
/// default, and any other name given a value in two places has the same one
/// in both (a figure is written in one doc and linked from the others).
#[test]
fn a_value_the_docs_give_a_name_is_one_value_everywhere() {
    let defaults = defaults();
    let default_of = |name: &str| -> Option<u64> {
        let value = defaults
            .iter()
            .find(|(k, _)| *k == name || k.rsplit('.').next() == Some(name))
            .map(|(_, v)| v)?;
        match value {
            toml::Value::Integer(n) => u64::try_from(*n).ok(),
            toml::Value::String(s) => {
                let split = s.find(|c: char| !c.is_ascii_digit())?;
                quantity(&s[..split], &s[split..])
            }
            _ => None,
        }
    };
    let mut failures = vec![];
    let mut by_name: BTreeMap<String, Vec<(String, usize, u64, String)>> = BTreeMap::new();
    let found = named_values();
    for (path, line, name, value, said) in &found {
        if let Some(default) = default_of(name)
            && *value != default
        {
            failures.push(format!(
                "{path}:{line}: {said}: the code's default for `{name}` is {default}"
            ));
        }
        by_name
            .entry(name.clone())
            .or_default()
            .push((path.clone(), *line, *value, said.clone()));
    }
    for (name, places) in &by_name {
        let first = &places[0];
        for other in places.iter().skip(1) {
            if other.2 != first.2 {
                failures.push(format!(
                    "`{name}` has two values: {}:{} says {} and {}:{} says {}",
                    first.0, first.1, first.3, other.0, other.1, other.3
                ));
            }
        }
    }
    println!(
        "values given to names in the docs: {} ({} names)",
        found.len(),
        by_name.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The README is a start, not a manual, and the docs say each thing once:
/// the README at most 10 KB, the Markdown under `docs/` at most 150 KB.
#[test]
fn the_readme_and_the_docs_keep_to_their_size() {
    let mut total = 0;
    let mut readme = 0;
    for (path, text) in docs() {
        if path == "README.md" {
            readme = text.len();
        } else {
            total += text.len();
        }
        println!("{path}: {} bytes", text.len());
    }
    println!("README.md {readme} bytes; docs/ {total} bytes");
    assert!(
        readme <= 10_000,
        "README.md is {readme} bytes, over 10 KB: move the detail to docs/"
    );
    assert!(
        total <= 150_000,
        "docs/ is {total} bytes, over 150 KB: say each thing once"
    );
}
