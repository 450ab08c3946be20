//! The toolkit quiche-lbe's apps share, on top of the plug-in bridge
//! (`quiche-lbe`):
//!
//! - the quiche configurations our apps use: certificates, transport
//!   defaults, and the ALPN entry by which a client names the controller
//!   its server should send with ([`tls`]);
//! - connections driven over UDP with mio event loops ([`endpoint`]);
//! - what the apps' command lines share: signals, progress bars, one-line
//!   usage errors, `--cc` help ([`cli`]);
//! - what a transfer with a deadline reports ([`deadline`]);
//! - Python packages from PyPI in a virtualenv of their own, for the
//!   tests and tools that need one ([`python_venv`]).
//!
//! Someone who only embeds the controllers in their own quiche code needs
//! `quiche-lbe` alone; this crate is where clap, indicatif, mio and
//! signal-hook come in.

pub mod cli;
pub mod deadline;
pub mod endpoint;
pub mod python_venv;
pub mod tls;

pub use quiche_lbe::Error;
