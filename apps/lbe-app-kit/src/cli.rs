//! Pieces every command-line app here shares: stopping on signals, the
//! progress bar, and one-line usage errors.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use indicatif::ProgressBar;
use indicatif::ProgressDrawTarget;
use indicatif::ProgressStyle;

use crate::Error;

/// A flag set by SIGINT or SIGTERM.
pub fn stop_on_signals() -> Result<Arc<AtomicBool>, Error> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, stop.clone())
            .map_err(|e| Error::new(format!("cannot handle signal {signal}: {e}")))?;
    }
    Ok(stop)
}

/// A progress bar on stderr (hidden when stderr is not a terminal): bytes
/// out of `total`, or a spinner counting bytes when the total is unknown.
pub fn progress_bar(total: Option<u64>) -> ProgressBar {
    let bar = match total {
        Some(n) => ProgressBar::new(n).with_style(
            ProgressStyle::with_template(
                "{bar:40} {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
            )
            .expect("valid template"),
        ),
        None => ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("{spinner} {bytes} {binary_bytes_per_sec} {elapsed}")
                .expect("valid template"),
        ),
    };
    bar.set_draw_target(ProgressDrawTarget::stderr());
    bar
}

/// clap's message for a usage error, on one line and without its
/// `error: ` prefix.
pub fn one_line(e: &clap::Error) -> String {
    let text = e.to_string();
    let lines: Vec<&str> = text
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    lines.join(" ").trim_start_matches("error: ").to_string()
}

/// Parses the command line, or exits: help and version go to stdout with
/// status 0; a usage error is one line on stderr, `TOOL: error: ...`, with
/// status 2.
pub fn parse_or_exit<T: clap::Parser>(tool: &str) -> T {
    match T::try_parse() {
        Ok(parsed) => parsed,
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            std::process::exit(0);
        }
        Err(e) => {
            eprintln!("{tool}: error: {} (see --help)", one_line(&e));
            std::process::exit(2);
        }
    }
}

/// `--cc`'s help: the grammar and every controller name
/// ([`quiche_lbe::spec::controller_names`]).
pub fn cc_help(role: &str) -> String {
    format!(
        "{role}: NAME[:key=value,...], NAME one of {}",
        quiche_lbe::spec::controller_names().join(", ")
    )
}

/// `--background-cc`'s help: the plug-ins, to which a live connection can
/// be switched ([`quiche_lbe::spec::plugin_names`]), or cubic.
pub fn background_cc_help() -> String {
    format!(
        "Controller for background connections: NAME[:key=value,...], NAME one of {} (or cubic: no switch)",
        quiche_lbe::spec::plugin_names().join(", ")
    )
}

/// A `--cc` value parser for clap: the spec, or the spec's one-line error.
pub fn parse_cc(text: &str) -> Result<quiche_lbe::CcSpec, String> {
    text.parse()
        .map_err(|e: quiche_lbe::SpecError| e.to_string())
}

/// A switch given as `on` or `off` on the command line (`--pacing off`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnOff {
    #[default]
    On,
    Off,
}

impl OnOff {
    /// Whether the switch is on.
    pub fn is_on(self) -> bool {
        self == OnOff::On
    }
}

/// Command-line options every server here takes (`#[command(flatten)]`).
#[derive(clap::Args, Clone, Debug)]
pub struct ServerFlags {
    /// Write one .sqlog per connection here.
    #[arg(long)]
    pub qlog_dir: Option<std::path::PathBuf>,
    /// PEM certificate chain (default: a self-signed one made at start).
    #[arg(long, requires = "key")]
    pub cert: Option<std::path::PathBuf>,
    /// PEM private key for --cert.
    #[arg(long, requires = "cert")]
    pub key: Option<std::path::PathBuf>,
    /// Write the self-signed certificate made at start to this file (PEM),
    /// for clients to trust with --ca. Its names are localhost, 127.0.0.1
    /// and ::1.
    #[arg(long, value_name = "PATH", conflicts_with = "cert")]
    pub write_cert: Option<std::path::PathBuf>,
    /// Skip address validation with Retry.
    #[arg(long)]
    pub no_retry: bool,
    /// Print nothing per request and connection.
    #[arg(long, short)]
    pub quiet: bool,
    /// Release datagrams at the times quiche's pacer sets (off: as soon as
    /// quiche builds them). A client can also ask for its own connection
    /// to be sent unpaced.
    #[arg(long, value_enum, default_value_t = OnOff::On)]
    pub pacing: OnOff,
}

impl ServerFlags {
    /// The certificate the flags name; with `--write-cert`, a self-signed
    /// one made now and written there.
    pub fn certificate(&self) -> Result<crate::tls::Certificate, Error> {
        Ok(match (&self.cert, &self.key, &self.write_cert) {
            (Some(chain), Some(key), _) => crate::tls::Certificate::Files {
                chain: chain.clone(),
                key: key.clone(),
            },
            (_, _, Some(path)) => {
                let cert = crate::tls::SelfSignedCert::generate()?;
                cert.write_pem(path)?;
                crate::tls::Certificate::Generated(cert)
            }
            _ => crate::tls::Certificate::SelfSigned,
        })
    }
}

/// Command-line options every client here takes (`#[command(flatten)]`):
/// how the server's certificate is checked. The default is against the
/// system's roots.
#[derive(clap::Args, Clone, Debug)]
pub struct ClientTlsFlags {
    /// Do not verify the server's certificate (prints a warning): for a
    /// test server whose certificate you do not have.
    #[arg(long, short = 'k', conflicts_with = "ca")]
    pub insecure: bool,
    /// Verify the server's certificate against the certificates in this
    /// PEM file instead of the system's roots: a private CA, or a server's
    /// own self-signed certificate (h3-serve/quic-bulk server --write-cert).
    #[arg(long, value_name = "PATH")]
    pub ca: Option<std::path::PathBuf>,
}

impl ClientTlsFlags {
    /// Whom the flags trust. `--insecure` prints its one-line warning to
    /// stderr here, as `TOOL: warning: ...`; a `--ca` file that cannot be
    /// read or holds no certificate is an error.
    pub fn trust(&self, tool: &str) -> Result<crate::tls::ServerTrust, Error> {
        if self.insecure {
            eprintln!(
                "{tool}: warning: not verifying the server's certificate (--insecure): anyone on \
                 the path can impersonate the server"
            );
            return Ok(crate::tls::ServerTrust::Insecure);
        }
        match &self.ca {
            Some(path) => {
                crate::tls::ServerTrust::ca_file(path).map_err(|e| Error::new(format!("--ca: {e}")))
            }
            None => Ok(crate::tls::ServerTrust::SystemRoots),
        }
    }
}
