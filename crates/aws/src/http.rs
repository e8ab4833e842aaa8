//! capture's requests as a Lambda Function URL delivers them: the caller's
//! address is the platform's (`requestContext.http.sourceIp`), put on the
//! request as [`ClientAddr`] before the router sees it. A Function URL
//! passes the caller's own `X-Forwarded-For` through untouched, so that
//! header proves nothing.

use lambda_http::request::RequestContext;
use lambda_http::{Request, RequestExt};
use restock_app::capture::ClientAddr;

/// The address the Function URL saw the request come from.
pub fn client_addr(request: &Request) -> Option<ClientAddr> {
    match request.request_context_ref()? {
        RequestContext::ApiGatewayV2(context) => context
            .http
            .source_ip
            .as_deref()?
            .parse()
            .ok()
            .map(ClientAddr),
        _ => None,
    }
}

/// Puts the caller's platform address on `request` for capture's router.
pub fn with_client_addr(mut request: Request) -> Request {
    if let Some(addr) = client_addr(&request) {
        request.extensions_mut().insert(addr);
    }
    request
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> String {
        std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../events/capture-notify-me.json"
        ))
        .unwrap()
    }

    #[test]
    fn the_address_is_the_platforms_whatever_the_caller_forwards() {
        let event = fixture().replace(
            "\"x-forwarded-for\": \"203.0.113.7\"",
            "\"x-forwarded-for\": \"198.51.100.99, 203.0.113.7\"",
        );
        assert!(
            event.contains("198.51.100.99"),
            "the fixture has the header"
        );
        let request = lambda_http::request::from_str(&event).unwrap();
        let request = with_client_addr(request);
        assert_eq!(
            request.extensions().get::<ClientAddr>(),
            Some(&ClientAddr("203.0.113.7".parse().unwrap()))
        );
    }

    #[test]
    fn a_request_without_a_source_address_gets_none() {
        let event = fixture().replace("\"sourceIp\": \"203.0.113.7\",", "");
        let request = lambda_http::request::from_str(&event).unwrap();
        assert_eq!(client_addr(&request), None);
    }
}
