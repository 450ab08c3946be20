//! Background downloads over HTTP/3.
//!
//! - [`server`]: `h3-serve`, a static file server (GET, HEAD, single byte
//!   ranges, `ETag`/`Last-Modified`, `Repr-Digest`) that sends a
//!   connection with a less-than-best-effort controller once one of its
//!   requests asks for the lowest urgency (`priority: u=7`, RFC 9218).
//! - [`fetch`]: `h3-fetch`, a resumable, verifying download client.
//! - [`client`]: a one-shot in-memory [`client::request`], over the HTTP/3
//!   request plumbing of `lbe_h3::client`.
//! - [`files`], [`digest`]: path resolution under the root, SHA-256.
//!   HTTP field syntax ([`fields`]), the background rule and the response
//!   writer are `lbe_h3`'s, which the simulator runs too.
//! - [`aioquic`]: an independent HTTP/3 server (aioquic, from PyPI) in a
//!   virtualenv, for the interop tests and `lbe-lab`.
//!
//! Both binaries are thin command lines over these modules; the QUIC
//! event loops are `lbe_app_kit::endpoint`'s.

pub mod aioquic;
pub mod client;
pub mod digest;
pub mod fetch;
pub mod files;
pub mod server;

pub use lbe_h3::fields;
pub use lbe_h3::ALPN;
