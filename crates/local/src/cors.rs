//! The capture Function URL's CORS, read from `template.yaml` and applied as
//! Lambda applies it, so the local storefront calls capture cross-origin
//! under the same rules a deployed shop's storefront meets.
//!
//! With `Cors` set on a Function URL, Lambda answers a preflight (`OPTIONS`
//! with `Origin` and `Access-Control-Request-Method`) from that setting
//! alone, without calling the function, and puts the setting's CORS headers
//! on every other response in place of any the function returned. The
//! browser then decides: a header or method the setting does not list is
//! blocked there, however the function would have answered.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_yaml::Value;

/// The deployed template, compiled in: the local server follows the
/// template that `sam deploy` would deploy.
pub const TEMPLATE: &str = include_str!("../../../template.yaml");

/// A Function URL's `Cors` (the `AWS::Lambda::Url` `Cors` property).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionUrlCors {
    /// Origins allowed, or `*`.
    pub allow_origins: Vec<String>,
    /// Methods a preflight allows.
    pub allow_methods: Vec<String>,
    /// Request headers a preflight allows, lower-cased.
    pub allow_headers: Vec<String>,
    /// Response headers scripts may read.
    pub expose_headers: Vec<String>,
    /// Seconds a browser may cache a preflight.
    pub max_age: Option<u64>,
    /// Whether credentials may be sent.
    pub allow_credentials: bool,
}

impl FunctionUrlCors {
    /// The `Cors` of `function`'s `FunctionUrlConfig` in `template`, with
    /// `!Ref` parameters replaced from `parameters` (a list parameter as
    /// its items).
    ///
    /// # Errors
    /// When the template does not parse, or the function has no URL `Cors`.
    pub fn from_template(
        template: &str,
        function: &str,
        parameters: &[(&str, Vec<String>)],
    ) -> Result<Self, String> {
        let t: Value = serde_yaml::from_str(template).map_err(|e| format!("template.yaml: {e}"))?;
        let cors = &t["Resources"][function]["Properties"]["FunctionUrlConfig"]["Cors"];
        if cors.is_null() {
            return Err(format!("{function} has no FunctionUrlConfig.Cors"));
        }
        let list = |key: &str| -> Result<Vec<String>, String> {
            resolve(&cors[key], parameters).map_err(|e| format!("{function} Cors.{key}: {e}"))
        };
        Ok(Self {
            allow_origins: list("AllowOrigins")?,
            allow_methods: list("AllowMethods")?,
            allow_headers: list("AllowHeaders")?
                .into_iter()
                .map(|h| h.to_ascii_lowercase())
                .collect(),
            expose_headers: list("ExposeHeaders")?,
            max_age: cors["MaxAge"].as_u64(),
            allow_credentials: cors["AllowCredentials"].as_bool().unwrap_or(false),
        })
    }

    /// The capture function's `Cors`, with `StorefrontOrigins` set to
    /// `storefront_origins`.
    ///
    /// # Errors
    /// As [`Self::from_template`].
    pub fn capture(storefront_origins: Vec<String>) -> Result<Self, String> {
        Self::from_template(
            TEMPLATE,
            "CaptureFunction",
            &[("StorefrontOrigins", storefront_origins)],
        )
    }

    fn allows(&self, origin: &str) -> bool {
        self.allow_origins.iter().any(|o| o == "*" || o == origin)
    }

    fn allow_origin(&self, origin: &str) -> Option<HeaderValue> {
        if self.allow_origins.iter().any(|o| o == "*") && !self.allow_credentials {
            Some(HeaderValue::from_static("*"))
        } else if self.allows(origin) {
            HeaderValue::from_str(origin).ok()
        } else {
            None
        }
    }

    /// The preflight's answer.
    fn preflight(&self, origin: &str) -> Response {
        let mut response = StatusCode::OK.into_response();
        let h = response.headers_mut();
        h.insert(header::VARY, HeaderValue::from_static("Origin"));
        let Some(allow) = self.allow_origin(origin) else {
            return response;
        };
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, allow);
        put_list(h, header::ACCESS_CONTROL_ALLOW_METHODS, &self.allow_methods);
        put_list(h, header::ACCESS_CONTROL_ALLOW_HEADERS, &self.allow_headers);
        if let Some(age) = self.max_age {
            h.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from(age));
        }
        if self.allow_credentials {
            h.insert(
                header::ACCESS_CONTROL_ALLOW_CREDENTIALS,
                HeaderValue::from_static("true"),
            );
        }
        response
    }

    /// A function's response as Lambda returns it: the function's CORS
    /// headers replaced by the setting's.
    fn apply(&self, origin: Option<&str>, response: &mut Response) {
        let h = response.headers_mut();
        let theirs: Vec<_> = h
            .keys()
            .filter(|k| k.as_str().starts_with("access-control-"))
            .cloned()
            .collect();
        for name in theirs {
            h.remove(name);
        }
        let Some(allow) = origin.and_then(|o| self.allow_origin(o)) else {
            return;
        };
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, allow);
        if !h.get_all(header::VARY).iter().any(|v| v == "Origin") {
            h.append(header::VARY, HeaderValue::from_static("Origin"));
        }
        put_list(
            h,
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            &self.expose_headers,
        );
        if self.allow_credentials {
            h.insert(
                header::ACCESS_CONTROL_ALLOW_CREDENTIALS,
                HeaderValue::from_static("true"),
            );
        }
    }
}

fn put_list(h: &mut HeaderMap, name: header::HeaderName, items: &[String]) {
    if items.is_empty() {
        return;
    }
    if let Ok(value) = HeaderValue::from_str(&items.join(",")) {
        h.insert(name, value);
    }
}

/// A template value as a list of strings: a string, a list, or a `!Ref` to
/// one of `parameters`; absent is empty.
fn resolve(value: &Value, parameters: &[(&str, Vec<String>)]) -> Result<Vec<String>, String> {
    match value {
        Value::Null => Ok(vec![]),
        Value::String(s) => Ok(vec![s.clone()]),
        Value::Sequence(items) => {
            let mut out = vec![];
            for item in items {
                out.extend(resolve(item, parameters)?);
            }
            Ok(out)
        }
        Value::Tagged(tagged) if tagged.tag == "Ref" => {
            let name = tagged.value.as_str().unwrap_or_default();
            parameters
                .iter()
                .find(|(p, _)| *p == name)
                .map(|(_, v)| v.clone())
                .ok_or_else(|| format!("the local server has no value for the parameter {name}"))
        }
        other => Err(format!("cannot read {other:?} locally")),
    }
}

/// Middleware: `router.layer(from_fn_with_state(cors, function_url_cors))`.
pub async fn function_url_cors(
    State(cors): State<Arc<FunctionUrlCors>>,
    request: Request,
    next: Next,
) -> Response {
    let origin = request
        .headers()
        .get(header::ORIGIN)
        .and_then(|o| o.to_str().ok())
        .map(str::to_owned);
    let preflight = request.method() == Method::OPTIONS
        && request
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    match (preflight, &origin) {
        (true, Some(origin)) => cors.preflight(origin),
        _ => {
            let mut response = next.run(request).await;
            cors.apply(origin.as_deref(), &mut response);
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_capture_url_allows_what_the_widget_sends() {
        let cors = FunctionUrlCors::capture(vec!["https://shop.example".into()]).unwrap();
        assert_eq!(cors.allow_origins, ["https://shop.example"]);
        for method in ["GET", "POST", "DELETE"] {
            assert!(cors.allow_methods.iter().any(|m| m == method), "{method}");
        }
        // Every header the widget sets that is not CORS-safelisted (Accept
        // is): its status and "leave the list" send the manage token.
        let widget = include_str!("../assets/restock-widget.js");
        let sent: Vec<String> = widget
            .split("setRequestHeader(\"")
            .skip(1)
            .filter_map(|rest| rest.split('"').next())
            .map(str::to_ascii_lowercase)
            .filter(|h| h != "accept")
            .collect();
        assert_eq!(sent, ["authorization", "content-type"]);
        for h in &sent {
            assert!(cors.allow_headers.contains(h), "{h}: {cors:?}");
        }
    }

    #[test]
    fn an_unknown_parameter_is_named() {
        let e = FunctionUrlCors::capture(vec![]).map(|_| ());
        assert!(e.is_ok());
        let e = FunctionUrlCors::from_template(TEMPLATE, "CaptureFunction", &[]).unwrap_err();
        assert!(e.contains("StorefrontOrigins"), "{e}");
        let e = FunctionUrlCors::from_template(TEMPLATE, "DetectFunction", &[]).unwrap_err();
        assert!(e.contains("no FunctionUrlConfig.Cors"), "{e}");
    }

    /// A function that would allow anything, behind a URL that allows less.
    fn behind(cors: FunctionUrlCors) -> axum::Router {
        use axum::routing::any;
        axum::Router::new()
            .route(
                "/requests",
                any(|| async {
                    (
                        [
                            (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
                            (header::ACCESS_CONTROL_ALLOW_HEADERS, "*"),
                        ],
                        "function",
                    )
                }),
            )
            .layer(axum::middleware::from_fn_with_state(
                Arc::new(cors),
                function_url_cors,
            ))
    }

    async fn send(
        router: &axum::Router,
        request: axum::http::Request<axum::body::Body>,
    ) -> Response {
        use tower::ServiceExt;
        router.clone().oneshot(request).await.unwrap()
    }

    fn narrow() -> FunctionUrlCors {
        FunctionUrlCors {
            allow_origins: vec!["https://shop.example".into()],
            allow_methods: vec!["GET".into(), "POST".into()],
            allow_headers: vec!["content-type".into()],
            expose_headers: vec![],
            max_age: Some(600),
            allow_credentials: false,
        }
    }

    #[tokio::test]
    async fn a_preflight_is_answered_from_the_setting_without_the_function() {
        let router = behind(narrow());
        let preflight = |origin: &str, path: &str| {
            axum::http::Request::options(path)
                .header(header::ORIGIN, origin)
                .header(header::ACCESS_CONTROL_REQUEST_METHOD, "GET")
                .header(header::ACCESS_CONTROL_REQUEST_HEADERS, "authorization")
                .body(axum::body::Body::empty())
                .unwrap()
        };
        // No route answers OPTIONS /nowhere: the setting does.
        let r = send(&router, preflight("https://shop.example", "/nowhere")).await;
        assert_eq!(r.status(), StatusCode::OK);
        let h = r.headers();
        assert_eq!(
            h[header::ACCESS_CONTROL_ALLOW_ORIGIN],
            "https://shop.example"
        );
        assert_eq!(h[header::ACCESS_CONTROL_ALLOW_HEADERS], "content-type");
        assert_eq!(h[header::ACCESS_CONTROL_ALLOW_METHODS], "GET,POST");
        assert_eq!(h[header::ACCESS_CONTROL_MAX_AGE], "600");
        let r = send(&router, preflight("https://evil.example", "/requests")).await;
        assert!(
            !r.headers()
                .contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN)
        );
    }

    #[tokio::test]
    async fn the_functions_own_cors_headers_are_replaced() {
        let router = behind(narrow());
        let get = |origin: &str| {
            axum::http::Request::get("/requests")
                .header(header::ORIGIN, origin)
                .body(axum::body::Body::empty())
                .unwrap()
        };
        let r = send(&router, get("https://shop.example")).await;
        let h = r.headers();
        assert_eq!(
            h[header::ACCESS_CONTROL_ALLOW_ORIGIN],
            "https://shop.example"
        );
        assert!(!h.contains_key(header::ACCESS_CONTROL_ALLOW_HEADERS));
        assert!(h.get_all(header::VARY).iter().any(|v| v == "Origin"));
        let r = send(&router, get("https://evil.example")).await;
        assert!(
            !r.headers()
                .contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN)
        );
    }
}
