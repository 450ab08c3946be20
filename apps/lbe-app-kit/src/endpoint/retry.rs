//! Stateless Retry tokens (RFC 9000 §8.1.2): a server proves a client owns
//! its address before keeping any state for it.
//!
//! Token layout: `issued_at` (8 bytes, seconds since the Unix epoch, big
//! endian) ‖ original DCID length (1 byte) ‖ original DCID ‖
//! HMAC-SHA256(key, issued_at ‖ client address ‖ original DCID).

use std::net::SocketAddr;
use std::time::Duration;
use std::time::SystemTime;

use ring::hmac;
use ring::rand::SystemRandom;

use crate::Error;

/// How long a token stays valid. A Retry round trip takes one RTT; ten
/// seconds allows for slow paths without making tokens reusable for long.
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(10);

/// Mints and checks tokens with a key made at start.
pub struct RetryTokens {
    key: hmac::Key,
}

fn seconds_now() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn signed_input(issued_at: u64, peer: &SocketAddr, odcid: &[u8]) -> Vec<u8> {
    let mut input = issued_at.to_be_bytes().to_vec();
    match peer {
        SocketAddr::V4(a) => input.extend_from_slice(&a.ip().octets()),
        SocketAddr::V6(a) => input.extend_from_slice(&a.ip().octets()),
    }
    input.extend_from_slice(&peer.port().to_be_bytes());
    input.extend_from_slice(odcid);
    input
}

impl RetryTokens {
    /// A minter with a fresh random key.
    pub fn new(rng: &SystemRandom) -> Result<Self, Error> {
        let key = hmac::Key::generate(hmac::HMAC_SHA256, rng)
            .map_err(|_| Error::new("cannot generate a retry-token key"))?;
        Ok(RetryTokens { key })
    }

    /// A token for `peer`, whose first Initial had destination `odcid`.
    pub fn mint(&self, peer: &SocketAddr, odcid: &[u8]) -> Vec<u8> {
        self.mint_at(seconds_now(), peer, odcid)
    }

    fn mint_at(&self, issued_at: u64, peer: &SocketAddr, odcid: &[u8]) -> Vec<u8> {
        let tag = hmac::sign(&self.key, &signed_input(issued_at, peer, odcid));
        let mut token = issued_at.to_be_bytes().to_vec();
        token.push(odcid.len() as u8);
        token.extend_from_slice(odcid);
        token.extend_from_slice(tag.as_ref());
        token
    }

    /// The original DCID if `token` was minted by us for `peer` and is
    /// still fresh.
    pub fn validate<'t>(&self, token: &'t [u8], peer: &SocketAddr) -> Option<&'t [u8]> {
        self.validate_at(seconds_now(), token, peer)
    }

    fn validate_at<'t>(&self, now: u64, token: &'t [u8], peer: &SocketAddr) -> Option<&'t [u8]> {
        let issued_at = u64::from_be_bytes(token.get(..8)?.try_into().ok()?);
        let len = *token.get(8)? as usize;
        let odcid = token.get(9..9 + len)?;
        let tag = token.get(9 + len..)?;
        if now.saturating_sub(issued_at) > TOKEN_LIFETIME.as_secs() || issued_at > now + 1 {
            return None;
        }
        hmac::verify(&self.key, &signed_input(issued_at, peer, odcid), tag).ok()?;
        Some(odcid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_rejections() {
        let tokens = RetryTokens::new(&SystemRandom::new()).unwrap();
        let peer: SocketAddr = "127.0.0.1:4000".parse().unwrap();
        let other: SocketAddr = "127.0.0.1:4001".parse().unwrap();
        let t = tokens.mint_at(1000, &peer, b"odcid-12");

        assert_eq!(tokens.validate_at(1005, &t, &peer), Some(&b"odcid-12"[..]));
        // Another address, an expired token, a tampered one, truncated ones.
        assert_eq!(tokens.validate_at(1005, &t, &other), None);
        assert_eq!(tokens.validate_at(1011, &t, &peer), None);
        let mut bad = t.clone();
        bad[10] ^= 1;
        assert_eq!(tokens.validate_at(1005, &bad, &peer), None);
        for n in 0..t.len() {
            assert_eq!(tokens.validate_at(1005, &t[..n], &peer), None);
        }
        // Another server's key.
        let stranger = RetryTokens::new(&SystemRandom::new()).unwrap();
        assert_eq!(stranger.validate_at(1005, &t, &peer), None);
    }
}
