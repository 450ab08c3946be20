//! The set-ups the workspace's tests share, in one place:
//!
//! - [`Scratch`]: a scratch directory, removed on drop; [`fresh_dir`]: an
//!   emptied directory that is kept (for outputs to inspect after a run).
//! - [`content`]: deterministic, incompressible-looking file content.
//! - [`ChildGuard`], [`Run`]: child processes killed on drop, and what a
//!   finished one printed; [`wait_for`]: polling with a hang guard.
//! - [`qlog_events`], [`cc_states`], [`qlogs_named`]: reading JSON-SEQ qlogs.
//! - [`scenario_text`]: the `[link]`, `[[flow]]` and `[analysis]` tables of inline
//!   scenario files.
//! - [`figure`]: THE writer of the `flake-figure:` lines that
//!   `scripts/flake-check.sh` collects over repeated runs.
//!
//! It is a dev-dependency only, and depends on no workspace crate: the
//! set-ups that need one crate's types (an in-process h3-serve, a
//! quic-bulk client) stay with that crate's tests and build on these.

#![forbid(unsafe_code)]

mod figure;
mod process;
mod qlog;
pub mod scenario_text;
mod scratch;

pub use figure::figure;
pub use figure::figure_line;
pub use process::wait_for;
pub use process::ChildGuard;
pub use process::Run;
pub use qlog::cc_states;
pub use qlog::qlog_events;
pub use qlog::qlogs_named;
pub use scratch::content;
pub use scratch::fresh_dir;
pub use scratch::Scratch;

/// 10^6 bytes.
pub const MB: u64 = 1_000_000;
