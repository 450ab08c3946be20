//! The bridge between the sans-IO controllers of `lbe-cc` and quiche.
//!
//! quiche (patched, see `patches/`) accepts congestion controllers through
//! its `CongestionControl` trait. This crate:
//!
//! - runs any `lbe-cc` controller behind that trait ([`adapter`]);
//! - parses `--cc` spec strings into either quiche's own controllers or a
//!   configured plug-in, and installs them on a config or a connection
//!   ([`spec`]);
//! - registers the plug-ins with quiche by name, so that quiche's
//!   `Config::set_cc_algorithm_name("ledbatpp")` and everything built on it
//!   (C, tokio-quiche) reach them ([`register()`], [`registry`]);
//! - sets up one qlog file per connection ([`qlog`]);
//! - runs receiver-side LEDBAT++ on a downloading connection, through flow
//!   control (RFC 9840 on QUIC, [`receiver`]).
//!
//! That is all a quiche user who embeds the controllers needs; the apps'
//! toolkit (mio event loops, TLS set-up, command-line helpers) is the
//! `lbe-app-kit` crate (`apps/lbe-app-kit`).
//!
//! With no feature the crate builds on a quiche with our core patches
//! alone (`patches/core`: plug-ins, chosen by name; `docs/adopting.md`).
//! The features need more of them (`docs/patches.md`):
//!
//! - `one-way-delay`: a plug-in gets the one-way delay of each ACK where
//!   the peer sends timestamps (ext 0008);
//! - `receiver`: the [`receiver`] module (ext 0003, 0004 and 0008);
//! - `cubic-rollback`: `cubic:rollback=off` in a spec (lab 0002).

#![deny(missing_docs)]

use std::fmt;

pub mod adapter;
pub mod qlog;
#[cfg(feature = "receiver")]
pub mod receiver;
pub mod registry;
pub mod spec;

pub use adapter::PluginFactory;
#[cfg(feature = "receiver")]
pub use receiver::ReceiverLbe;
pub use registry::register;
pub use spec::CcSpec;
pub use spec::SpecError;

pub use lbe_cc;
pub use quiche;

/// A set-up failure, worded for the person running the tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(String);

impl Error {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Error(message.into())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl From<SpecError> for Error {
    fn from(e: SpecError) -> Self {
        Error(e.to_string())
    }
}
