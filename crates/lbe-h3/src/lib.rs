//! HTTP/3 around a quiche connection, sans-IO: what `h3-serve` and
//! `h3-fetch` do with each request and response, in one place, so that
//! the apps (driven by mio, `lbe_app_kit::endpoint`) and the simulator
//! (`lbe-sim`, driven by virtual time) run the same code.
//!
//! - [`fields`]: the HTTP fields both sides read and write (ranges,
//!   entity tags, RFC 9218's Priority, `Repr-Digest`, our deadline).
//! - [`background`]: the server's rule: a request with urgency 7 sends
//!   its connection with a less-than-best-effort controller.
//! - [`response`]: a response being written, pumped into quiche as stream
//!   capacity allows.
//! - [`client`]: one request at a time on a client connection, and the
//!   request fields `h3-fetch` sends.
//! - [`code`]: the HTTP/3 error codes we send.
#![forbid(unsafe_code)]

pub mod background;
pub mod client;
pub mod fields;
pub mod response;

/// The ALPN of HTTP/3.
pub const ALPN: &[u8] = b"h3";

/// HTTP/3 error codes (RFC 9114 §8.1) we send.
pub mod code {
    pub const NO_ERROR: u64 = 0x100;
    pub const INTERNAL_ERROR: u64 = 0x102;
    pub const REQUEST_CANCELLED: u64 = 0x10c;
}
