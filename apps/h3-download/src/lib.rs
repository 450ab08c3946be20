//! Background downloads over HTTP/3.
//!
//! - [`server`]: `h3-serve`, a static file server (GET, HEAD, single byte
//!   ranges, `ETag`/`Last-Modified`, `Repr-Digest`) that sends a
//!   connection with a less-than-best-effort controller once one of its
//!   requests asks for the lowest urgency (`priority: u=7`, RFC 9218).
//! - [`fetch`]: `h3-fetch`, a resumable, verifying download client.
//! - [`client`]: the HTTP/3 request plumbing of the client side, and a
//!   one-shot in-memory [`client::request`].
//! - [`files`], [`fields`], [`digest`]: path resolution under the root,
//!   HTTP field syntax, SHA-256.
//! - [`aioquic`]: an independent HTTP/3 server (aioquic, from PyPI) in a
//!   virtualenv, for the interop tests and `lbe-lab`.
//!
//! Both binaries are thin command lines over these modules; the QUIC
//! event loops are `lbe_app_kit::endpoint`'s.

pub mod aioquic;
pub mod client;
pub mod digest;
pub mod fetch;
pub mod fields;
pub mod files;
pub mod server;

/// The ALPN of HTTP/3.
pub const ALPN: &[u8] = b"h3";
