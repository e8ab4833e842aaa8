//! Who is calling: the address capture's per-address rate limit keys on.
//!
//! It comes from the platform — the Function URL's
//! `requestContext.http.sourceIp`, the local server's socket peer — never
//! from a header the caller writes. A Function URL passes the client's own
//! `X-Forwarded-For` through, so reading it would let one script claim a
//! new address per request. Only when the operator names the proxies in
//! front (`trusted_proxies`, for example a CloudFront distribution's
//! ranges) is `X-Forwarded-For` read, from the right: each trusted proxy
//! appended the address it was called from, and the first address that is
//! not a trusted proxy is the client.

use std::net::IpAddr;

use ipnet::IpNet;

/// The client's address, given the platform's `peer` address, the
/// request's `X-Forwarded-For` (if any) and the operator's trusted proxies.
pub fn client_address(peer: IpAddr, forwarded_for: Option<&str>, trusted: &[IpNet]) -> IpAddr {
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|net| net.contains(ip));
    if !is_trusted(&peer) {
        return peer;
    }
    let mut nearest = peer;
    for hop in forwarded_for.unwrap_or_default().rsplit(',') {
        let Ok(ip) = hop.trim().parse::<IpAddr>() else {
            // Only a caller writes a malformed entry; nothing left of it can
            // be told apart from what the caller wrote.
            return nearest;
        };
        if !is_trusted(&ip) {
            return ip;
        }
        nearest = ip;
    }
    nearest
}

/// The network a per-client limit counts for `ip`: an IPv4 address alone
/// (`/32`), an IPv6 address's first `ipv6_prefix` bits (`/64` by default:
/// one customer's allocation, which a single client can fill with 2^64
/// addresses), and an IPv4-mapped IPv6 address as the IPv4 address it is.
/// A prefix outside 1 to 128 is taken as 128.
pub fn limited_network(ip: IpAddr, ipv6_prefix: u8) -> IpNet {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpNet::from(IpAddr::V4(v4)),
            None => ipnet::Ipv6Net::new(v6, ipv6_prefix)
                .ok()
                .filter(|_| ipv6_prefix > 0)
                .map_or(IpNet::from(ip), |net| IpNet::V6(net.trunc())),
        },
        IpAddr::V4(_) => IpNet::from(ip),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn nets(texts: &[&str]) -> Vec<IpNet> {
        texts.iter().map(|t| t.parse().unwrap()).collect()
    }

    #[test]
    fn an_ipv6_client_is_limited_by_its_prefix_and_an_ipv4_one_by_its_address() {
        let net = |text: &str, prefix| limited_network(ip(text), prefix).to_string();
        // Every address of one /64 is one client.
        assert_eq!(net("2001:db8:1:2::1", 64), "2001:db8:1:2::/64");
        assert_eq!(
            net("2001:db8:1:2:ffff:ffff:ffff:ffff", 64),
            "2001:db8:1:2::/64"
        );
        assert_ne!(net("2001:db8:1:3::1", 64), net("2001:db8:1:2::1", 64));
        // The prefix is the shop's to set.
        assert_eq!(net("2001:db8:1:2::1", 48), "2001:db8:1::/48");
        assert_eq!(net("2001:db8:1:2::1", 128), "2001:db8:1:2::1/128");
        assert_eq!(net("2001:db8:1:2::1", 0), "2001:db8:1:2::1/128");
        // IPv4: each address, however it is written.
        assert_eq!(net("203.0.113.7", 64), "203.0.113.7/32");
        assert_eq!(net("::ffff:203.0.113.7", 64), "203.0.113.7/32");
        assert_ne!(net("203.0.113.7", 64), net("203.0.113.8", 64));
    }

    #[test]
    fn without_trusted_proxies_the_header_is_never_read() {
        for forged in [
            None,
            Some("198.51.100.9"),
            Some("1.2.3.4, 5.6.7.8"),
            Some("junk"),
        ] {
            assert_eq!(
                client_address(ip("203.0.113.7"), forged, &[]),
                ip("203.0.113.7")
            );
        }
    }

    #[test]
    fn behind_a_trusted_proxy_the_first_untrusted_hop_from_the_right_is_the_client() {
        let cloudfront = nets(&["130.176.0.0/16", "2600:9000::/28"]);
        // The client wrote "1.1.1.1" itself; CloudFront appended the real peer.
        let chain = "1.1.1.1, 203.0.113.7, 130.176.4.2";
        assert_eq!(
            client_address(ip("130.176.9.9"), Some(chain), &cloudfront),
            ip("203.0.113.7")
        );
        // A request that did not come through the proxy: its header is ignored.
        assert_eq!(
            client_address(ip("198.51.100.1"), Some(chain), &cloudfront),
            ip("198.51.100.1")
        );
        // IPv6 clients and proxies.
        assert_eq!(
            client_address(ip("2600:9000::1"), Some("2001:db8::5"), &cloudfront),
            ip("2001:db8::5")
        );
    }

    #[test]
    fn a_chain_of_only_proxies_or_junk_falls_back_to_the_nearest_proxy() {
        let proxies = nets(&["10.0.0.0/8"]);
        assert_eq!(
            client_address(ip("10.0.0.1"), None, &proxies),
            ip("10.0.0.1")
        );
        assert_eq!(
            client_address(ip("10.0.0.1"), Some("10.0.0.2"), &proxies),
            ip("10.0.0.2")
        );
        assert_eq!(
            client_address(ip("10.0.0.1"), Some("nonsense, 10.0.0.3"), &proxies),
            ip("10.0.0.3")
        );
    }
}
