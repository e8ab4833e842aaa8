//! Identifiers and secret tokens.
//!
//! Every token is 128 bits of randomness supplied by the caller (the core never
//! draws random numbers itself), written as unpadded base64url. Secrets that
//! authorise an action (the reserve link, the opt-out link) are stored only as
//! a SHA-256 hash; the plain value exists only in the message sent to the
//! shopper.

use std::fmt;
use std::str::FromStr;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Why a string was not accepted as an identifier.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    /// A SKU was empty, too long or used characters outside `A-Z a-z 0-9 . _ -`.
    #[error("a SKU is 1 to 64 letters, digits, '.', '_' or '-'")]
    Sku,
    /// A token was not 22 characters of base64url.
    #[error("not a valid token")]
    Token,
}

/// A stock keeping unit, as the shop spells it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Sku(String);

impl Sku {
    /// The longest SKU accepted.
    pub const MAX_LEN: usize = 64;

    /// The SKU as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The SKU restock keys a shop's SKU by. A shop may use any text
    /// (Shopify takes spaces and slashes): each run of characters a SKU
    /// cannot hold (anything but `A-Z a-z 0-9 . _ -`) becomes one `-`, and
    /// `-` at either end goes, so `TEE / BLUE M` is `TEE-BLUE-M`. The
    /// platforms' listings, their webhooks and the sign-up door all map a
    /// shop's SKU this way (docs/CATALOGUE.md says so for the team).
    ///
    /// # Errors
    /// [`IdError::Sku`] when nothing is left, or more than
    /// [`Self::MAX_LEN`] characters.
    pub fn from_shop(text: &str) -> Result<Self, IdError> {
        let mut mapped = String::with_capacity(text.len());
        for c in text.trim().chars() {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                mapped.push(c);
            } else if !mapped.ends_with('-') {
                mapped.push('-');
            }
        }
        Self::try_from(mapped.trim_matches('-'))
    }
}

impl TryFrom<&str> for Sku {
    type Error = IdError;

    fn try_from(value: &str) -> Result<Self, Self::Error> {
        let value = value.trim();
        let ok = !value.is_empty()
            && value.len() <= Self::MAX_LEN
            && value
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
        if ok {
            Ok(Self(value.to_owned()))
        } else {
            Err(IdError::Sku)
        }
    }
}

impl TryFrom<String> for Sku {
    type Error = IdError;

    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::try_from(value.as_str())
    }
}

impl From<Sku> for String {
    fn from(value: Sku) -> Self {
        value.0
    }
}

impl FromStr for Sku {
    type Err = IdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::try_from(s)
    }
}

impl fmt::Display for Sku {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// 128 random bits, written as 22 characters of unpadded base64url.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Token128([u8; 16]);

impl Token128 {
    /// Wraps random bytes drawn by the caller.
    pub fn from_bytes(bytes: [u8; 16]) -> Self {
        Self(bytes)
    }

    /// The raw bytes.
    pub fn bytes(&self) -> &[u8; 16] {
        &self.0
    }

    /// The SHA-256 hash under which the token is stored.
    pub fn hash(&self) -> TokenHash {
        TokenHash(Sha256::digest(self.0).into())
    }
}

impl fmt::Display for Token128 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&URL_SAFE_NO_PAD.encode(self.0))
    }
}

/// Tokens are secrets: debug output never shows them.
impl fmt::Debug for Token128 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token128(..)")
    }
}

impl FromStr for Token128 {
    type Err = IdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.len() != 22 {
            return Err(IdError::Token);
        }
        let bytes = URL_SAFE_NO_PAD.decode(s).map_err(|_| IdError::Token)?;
        let bytes: [u8; 16] = bytes.try_into().map_err(|_| IdError::Token)?;
        Ok(Self(bytes))
    }
}

/// The stored form of a secret token: its SHA-256, compared in constant time.
#[derive(Clone, Copy, Eq)]
pub struct TokenHash([u8; 32]);

impl TokenHash {
    /// Lower-case hex, as stored.
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }

    /// Reads the stored hex form back.
    ///
    /// # Errors
    /// [`IdError::Token`] when the text is not 64 hex digits.
    pub fn from_hex(s: &str) -> Result<Self, IdError> {
        if s.len() != 64 {
            return Err(IdError::Token);
        }
        let mut out = [0u8; 32];
        for (i, chunk) in s.as_bytes().chunks(2).enumerate() {
            let pair = std::str::from_utf8(chunk).map_err(|_| IdError::Token)?;
            out[i] = u8::from_str_radix(pair, 16).map_err(|_| IdError::Token)?;
        }
        Ok(Self(out))
    }
}

impl PartialEq for TokenHash {
    fn eq(&self, other: &Self) -> bool {
        self.0.ct_eq(&other.0).into()
    }
}

impl std::hash::Hash for TokenHash {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl fmt::Debug for TokenHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TokenHash({}..)", &self.to_hex()[..8])
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    use fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

macro_rules! token_newtype {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
        pub struct $name(Token128);

        impl $name {
            /// Wraps 16 random bytes drawn by the caller.
            pub fn from_random(bytes: [u8; 16]) -> Self {
                Self(Token128::from_bytes(bytes))
            }

            /// The underlying token.
            pub fn token(&self) -> &Token128 {
                &self.0
            }
        }

        impl FromStr for $name {
            type Err = IdError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                s.parse().map(Self)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

token_newtype!(
    /// A notify-me request's id: unguessable, shown to the shopper, and the key
    /// of the request in the store.
    RequestId
);

token_newtype!(
    /// The id of a held unit, handed to the checkout URL.
    HoldId
);

impl RequestId {
    /// The deterministic tie-break between two requests that joined in the
    /// same millisecond.
    pub fn tie_break(&self) -> u64 {
        let b = self.0.bytes();
        u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
    }

    /// Which of `shards` queue partitions this request's queue entry lives in.
    pub fn shard(&self, shards: u16) -> u16 {
        let b = self.0.bytes();
        u16::from_be_bytes([b[8], b[9]]) % shards.max(1)
    }
}

/// A secret link token: the item and request it belongs to, plus a 128-bit
/// secret whose hash the request stores. Written `{sku}~{request}.{secret}`
/// (`~` and `.` occur in neither a SKU's id part nor base64url), so one
/// transaction can address both the request and its SKU's counters — a click
/// is a single round trip — and the secret is checked against its hash.
#[derive(Clone, PartialEq, Eq)]
pub struct LinkToken {
    sku: Sku,
    request: RequestId,
    secret: Token128,
}

impl LinkToken {
    /// A fresh link token for `request` from 16 random bytes.
    pub fn new(sku: Sku, request: RequestId, random: [u8; 16]) -> Self {
        Self {
            sku,
            request,
            secret: Token128::from_bytes(random),
        }
    }

    /// The item the link is for.
    pub fn sku(&self) -> &Sku {
        &self.sku
    }

    /// The request the link belongs to.
    pub fn request(&self) -> RequestId {
        self.request
    }

    /// The hash of the secret, as the request stores it.
    pub fn secret_hash(&self) -> TokenHash {
        self.secret.hash()
    }
}

impl fmt::Display for LinkToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}~{}.{}", self.sku, self.request, self.secret)
    }
}

impl fmt::Debug for LinkToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LinkToken({}~{}..)", self.sku, self.request)
    }
}

impl FromStr for LinkToken {
    type Err = IdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (sku, rest) = s.split_once('~').ok_or(IdError::Token)?;
        let (request, secret) = rest.split_once('.').ok_or(IdError::Token)?;
        Ok(Self {
            sku: Sku::try_from(sku).map_err(|_| IdError::Token)?,
            request: request.parse()?,
            secret: secret.parse()?,
        })
    }
}

/// The reserve link's token: holds one unit when posted.
pub type ReserveToken = LinkToken;
/// The opt-out link's token: opts the contact out for good when posted.
pub type OptOutToken = LinkToken;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shop_s_sku_maps_to_one_restock_can_key() {
        let mapped = |s: &str| Sku::from_shop(s).map(String::from);
        assert_eq!(mapped("TEE / BLUE M").unwrap(), "TEE-BLUE-M");
        assert_eq!(
            mapped(" CHAIR-WAL ").unwrap(),
            "CHAIR-WAL",
            "a valid one is itself"
        );
        assert_eq!(mapped("Rug #4 (large)").unwrap(), "Rug-4-large");
        assert_eq!(mapped("Über tee").unwrap(), "ber-tee");
        assert!(mapped(" / ").is_err() && mapped("").is_err());
        assert!(mapped(&"A".repeat(65)).is_err(), "not cut short");
    }

    #[test]
    fn sku_accepts_shop_spellings_and_refuses_key_separators() {
        assert_eq!(Sku::try_from(" CHAIR-WAL ").unwrap().as_str(), "CHAIR-WAL");
        assert!(Sku::try_from("tee_red.xl").is_ok());
        for bad in ["", "a#b", "a b", "Q#x", &"x".repeat(65), "é"] {
            assert_eq!(Sku::try_from(bad), Err(IdError::Sku), "{bad:?}");
        }
    }

    #[test]
    fn tokens_round_trip_through_text() {
        let id = RequestId::from_random([7; 16]);
        let text = id.to_string();
        assert_eq!(text.len(), 22);
        assert_eq!(text.parse::<RequestId>().unwrap(), id);
        let link = LinkToken::new(Sku::try_from("CHAIR-WAL").unwrap(), id, [9; 16]);
        assert!(link.to_string().starts_with("CHAIR-WAL~"));
        let parsed: LinkToken = link.to_string().parse().unwrap();
        assert_eq!(parsed, link);
        assert_eq!(parsed.secret_hash(), link.secret_hash());
    }

    #[test]
    fn malformed_tokens_are_refused() {
        for bad in [
            "",
            "short",
            "!!!!!!!!!!!!!!!!!!!!!!",
            "a.b",
            "x~a.b",
            &"A".repeat(23),
        ] {
            assert!(bad.parse::<RequestId>().is_err(), "{bad:?}");
            assert!(bad.parse::<LinkToken>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn token_hash_round_trips_and_hides_the_secret_in_debug() {
        let t = Token128::from_bytes([1; 16]);
        let h = t.hash();
        assert_eq!(TokenHash::from_hex(&h.to_hex()).unwrap(), h);
        assert!(!format!("{t:?}").contains(&t.to_string()));
        assert!(TokenHash::from_hex("zz").is_err());
    }
}
