//! The pages shoppers see: small, accessible, mobile-first, no external
//! assets, every value escaped.

use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use restock_core::Texts;
use restock_core::notice::escape_html;

const STYLE: &str = "body{margin:0;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1a1a1a;background:#fafaf8;line-height:1.5}\
main{max-width:30rem;margin:0 auto;padding:2rem 1.25rem}h1{font-size:1.5rem;line-height:1.25;margin:0 0 1rem}\
p{margin:0 0 1rem}.muted{color:#555;font-size:.95rem}\
button,.button{display:inline-block;width:100%;box-sizing:border-box;padding:.9rem 1rem;font:inherit;font-weight:600;text-align:center;\
color:#fff;background:#1a1a1a;border:0;border-radius:.4rem;cursor:pointer;text-decoration:none}\
button:focus-visible,.button:focus-visible,a:focus-visible{outline:3px solid #f2b705;outline-offset:2px}\
form{margin:0 0 1rem}";

/// A whole page in the shopper's language (`lang` and `dir` from `texts`):
/// `title` is escaped here; `body` must already be safe HTML (build it with
/// [`text`] and [`escape_html`]).
pub fn page(texts: &Texts, status: StatusCode, title: &str, body: &str) -> Response {
    page_leading_to(texts, status, title, body, None)
}

/// [`page`] whose form may end at `checkout` (an origin, such as
/// `http://127.0.0.1:3000`), beyond this origin and any `https:` one: a
/// browser checks a form's redirect against `form-action` too, so the hold
/// button's 303 to a shop's checkout needs it.
pub fn page_leading_to(
    texts: &Texts,
    status: StatusCode,
    title: &str,
    body: &str,
    checkout: Option<&str>,
) -> Response {
    let language = texts.language();
    let html = format!(
        "<!doctype html><html lang=\"{lang}\" dir=\"{dir}\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <meta name=\"robots\" content=\"noindex\"><title>{title}</title><style>{STYLE}</style></head>\
         <body><main><h1>{title}</h1>{body}</main></body></html>",
        title = escape_html(title),
        lang = escape_html(&language.to_string()),
        dir = language.dir(),
    );
    let mut response = (status, Html(html)).into_response();
    let headers = response.headers_mut();
    headers.insert("cache-control", "no-store".parse().expect("static header"));
    headers.insert(
        "referrer-policy",
        "no-referrer".parse().expect("static header"),
    );
    let checkout = checkout
        .filter(|o| {
            o.bytes()
                .all(|b| b.is_ascii_graphic() && b != b';' && b != b',')
        })
        .map_or_else(String::new, |o| format!(" {o}"));
    if let Ok(csp) = format!(
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' https:{checkout}; base-uri 'none'; frame-ancestors 'none'"
    )
    .parse()
    {
        headers.insert("content-security-policy", csp);
    }
    response
}

/// A paragraph of escaped text.
pub fn text(s: &str) -> String {
    format!("<p>{}</p>", escape_html(s))
}

/// A muted paragraph of escaped text.
pub fn note(s: &str) -> String {
    format!("<p class=\"muted\">{}</p>", escape_html(s))
}

/// A one-button form posting to `action` (a path of ours, escaped here).
pub fn button(action: &str, label: &str) -> String {
    format!(
        "<form method=\"post\" action=\"{}\"><button type=\"submit\">{}</button></form>",
        escape_html(action),
        escape_html(label)
    )
}
