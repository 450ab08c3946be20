//! The `--cc` spec string: `NAME[:key=value[,key=value…]]`.
//!
//! `NAME` is one of quiche's own controllers (`cubic`, `reno`, `bbr2`; only
//! `cubic` takes a parameter, `rollback=on|off`, see [`CUBIC_ROLLBACK`]) or
//! one of the `lbe-cc` plug-ins (`ledbatpp`, `ledbat`, `cdg`, and `fixed`
//! for tests), whose parameters map onto their config structs:
//! `ledbatpp:target=25ms`, `cdg:g=0.5`, `ledbat:target=5ms,decrease_gain=10`.
//!
//! The grammar and the plug-ins' parameters are `lbe-cc`'s
//! ([`lbe_cc::spec`]); this module adds quiche's controllers.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use lbe_cc::params::bool_value;
use lbe_cc::spec::SpecParts;
use lbe_cc::ControllerConfig;
use quiche::CongestionControlAlgorithm;

use crate::adapter::PluginFactory;

/// quiche's built-in controllers, by the names specs use.
const BUILTINS: &[(&str, CongestionControlAlgorithm)] = &[
    ("cubic", CongestionControlAlgorithm::CUBIC),
    ("reno", CongestionControlAlgorithm::Reno),
    ("bbr2", CongestionControlAlgorithm::Bbr2Gcongestion),
];

/// `cubic:rollback=on|off` (default on, quiche's behaviour): whether quiche's
/// CUBIC undoes a congestion event after a recovery episode that lost fewer
/// than max(2, 20 % of cwnd) packets (`patches/lab/0002-cubic-rollback-switch.patch`).
/// `rollback=off` needs the crate's `cubic-rollback` feature, and so that
/// patch; without it the spec is refused ([`ROLLBACK_NEEDS_THE_FEATURE`]).
///
/// quiche cites draft-ietf-tcpm-rfc8312bis-00 §4.9 for it ("Spurious
/// Congestion Events",
/// <https://datatracker.ietf.org/doc/html/draft-ietf-tcpm-rfc8312bis-00#section-4.9>),
/// which reads: "CUBIC MAY implement an algorithm to detect spurious
/// retransmissions, such as DSACK \[RFC3708\], Forward RTO-Recovery \[RFC5682\]
/// or Eifel \[RFC3522\]. Once a spurious congestion event is detected, CUBIC
/// SHOULD restore the original values of above mentioned variables" (cwnd,
/// ssthresh, W_max, K, epoch start). A small loss count is not such a
/// detector: through a drop-tail bottleneck, where a flow loses one or two
/// packets per episode, most real reductions are undone one RTT later
/// (148 of 165 in our lab's CDG G = 120 ms against CUBIC run), and CUBIC
/// took 82-91 % of the link from Reno. `rollback=off` keeps every reduction,
/// as Reno does; docs/cdg-and-cubic.md has
/// the measurements.
pub const CUBIC_ROLLBACK: &str = "rollback";

/// Why `cubic:rollback=off` is refused by a build without the
/// `cubic-rollback` feature (quiche with the core and ext patches only).
pub const ROLLBACK_NEEDS_THE_FEATURE: &str =
    "rollback=off needs quiche-lbe's cubic-rollback feature (quiche with patches/lab/0002)";

/// A parsed `--cc` spec.
#[derive(Clone, Debug, PartialEq)]
pub struct CcSpec {
    text: String,
    kind: Kind,
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Builtin {
        algorithm: CongestionControlAlgorithm,
        /// [`CUBIC_ROLLBACK`]; always `true` (quiche's default) for the
        /// other built-ins, which ignore it.
        cubic_rollback: bool,
    },
    /// Boxed: a plug-in's config is far larger than a built-in's name.
    Plugin(Box<ControllerConfig>),
}

/// Why a spec string was rejected.
pub use lbe_cc::SpecError;

/// The plug-ins' names (`lbe-cc`'s controllers).
pub fn plugin_names() -> &'static [&'static str] {
    ControllerConfig::NAMES
}

/// Every controller name a spec may start with: quiche's, then the
/// plug-ins'.
pub fn controller_names() -> Vec<&'static str> {
    BUILTINS
        .iter()
        .map(|(name, _)| *name)
        .chain(ControllerConfig::NAMES.iter().copied())
        .collect()
}

impl FromStr for CcSpec {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<Self, SpecError> {
        let names = controller_names();
        let parts = SpecParts::parse(text, &names)?;
        let name = parts.name;
        let kind = match BUILTINS.iter().find(|(n, _)| *n == name) {
            Some((_, algorithm)) => {
                let mut cubic_rollback = true;
                for (key, value) in &parts.params {
                    if *algorithm != CongestionControlAlgorithm::CUBIC {
                        return Err(SpecError::new(format!(
                            "'{name}' is quiche's own controller and takes no parameters (got '{key}')"
                        )));
                    }
                    if *key != CUBIC_ROLLBACK {
                        return Err(SpecError::new(format!(
                            "'{name}' is quiche's own controller and takes only {CUBIC_ROLLBACK}=on|off (got '{key}')"
                        )));
                    }
                    cubic_rollback = bool_value(key, value)
                        .map_err(|e| SpecError::new(format!("--cc '{}': {e}", parts.text)))?;
                }
                if !cubic_rollback && !cfg!(feature = "cubic-rollback") {
                    return Err(SpecError::new(format!(
                        "--cc '{}': {ROLLBACK_NEEDS_THE_FEATURE}",
                        parts.text
                    )));
                }
                Kind::Builtin {
                    algorithm: *algorithm,
                    cubic_rollback,
                }
            }
            None => Kind::Plugin(Box::new(ControllerConfig::from_parts(&parts)?)),
        };
        Ok(CcSpec {
            text: parts.text.to_string(),
            kind,
        })
    }
}

impl fmt::Display for CcSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl CcSpec {
    /// The controller's name (`ledbatpp`, `cubic`...).
    pub fn name(&self) -> &str {
        self.text.split(':').next().unwrap_or(&self.text)
    }

    /// The spec as given, trimmed.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The spec as qlog file names carry it ([`lbe_cc::qlog_name::cc_tag`]):
    /// `ledbatpp:target=25ms,ss_exit=0.5` is `ledbatpp+target=25ms+ss_exit=0.5`.
    pub fn file_tag(&self) -> String {
        lbe_cc::qlog_name::cc_tag(&self.text)
    }

    /// The plug-in's configuration, or `None` for quiche's own controllers.
    pub fn plugin(&self) -> Option<&ControllerConfig> {
        match &self.kind {
            Kind::Plugin(config) => Some(&**config),
            Kind::Builtin { .. } => None,
        }
    }

    /// Whether quiche's CUBIC may undo congestion events ([`CUBIC_ROLLBACK`]);
    /// `true` for every other spec.
    pub fn cubic_rollback(&self) -> bool {
        match self.kind {
            Kind::Builtin { cubic_rollback, .. } => cubic_rollback,
            Kind::Plugin(_) => true,
        }
    }

    /// Refuses a controller a live connection cannot be switched to (a
    /// background connection's, `h3-serve --background-cc`). `cubic` with
    /// quiche's defaults is accepted: it is what connections already run
    /// (so not `cubic:rollback=off`).
    pub fn check_background(&self) -> Result<(), String> {
        if self.plugin().is_some() || (self.name() == "cubic" && self.cubic_rollback()) {
            return Ok(());
        }
        Err(format!(
            "--background-cc '{self}': quiche cannot switch a live connection to its own '{}'; use one of the plug-ins ({}) or plain cubic",
            self.as_str(),
            plugin_names().join(", ")
        ))
    }

    /// This spec with `deadline=` added ([`lbe_cc::deadline`]): the text
    /// gains the key, so file names and reports show it. Only `cdg` and
    /// `ledbatpp` take a deadline; a spec that has one already is refused.
    pub fn with_deadline(&self, deadline: std::time::Duration) -> Result<Self, SpecError> {
        let separator = if self.text.contains(':') { ',' } else { ':' };
        let text = format!(
            "{}{separator}{}={}",
            self.text,
            lbe_cc::spec::DEADLINE_KEY,
            lbe_units::fmt_duration(deadline)
        );
        if self.plugin().is_none() {
            return Err(SpecError::new(format!(
                "'{}' is quiche's own controller: a deadline steers only {}",
                self.name(),
                lbe_cc::deadline::DeadlineConfig::INNER.join(" and ")
            )));
        }
        text.parse()
    }

    /// The progress handle of a deadline-aware plug-in.
    pub fn progress(&self) -> Option<&lbe_cc::deadline::Progress> {
        self.plugin().and_then(|c| c.progress())
    }

    /// Gives a deadline-aware plug-in its transfer's progress handle (the
    /// factory made afterwards builds controllers that read it); returns
    /// whether the spec has a deadline.
    pub fn set_progress(&mut self, progress: lbe_cc::deadline::Progress) -> bool {
        match &mut self.kind {
            Kind::Plugin(config) => config.set_progress(progress),
            Kind::Builtin { .. } => false,
        }
    }

    /// The factory that quiche installs for a plug-in.
    pub fn factory(&self) -> Option<Arc<dyn quiche::CongestionControlFactory>> {
        self.plugin()
            .map(|c| PluginFactory::new(c.clone()) as Arc<dyn quiche::CongestionControlFactory>)
    }

    fn algorithm(&self) -> CongestionControlAlgorithm {
        match self.kind {
            Kind::Builtin { algorithm, .. } => algorithm,
            // Plug-ins run on the legacy recovery; this is what a connection
            // falls back to if the plug-in is removed.
            Kind::Plugin(_) => CongestionControlAlgorithm::CUBIC,
        }
    }

    /// Makes every connection created from `config` use this controller.
    pub fn configure(&self, config: &mut quiche::Config) {
        config.set_cc_algorithm(self.algorithm());
        #[cfg(feature = "cubic-rollback")]
        config.set_enable_cubic_rollback(self.cubic_rollback());
        config.set_custom_congestion_control(self.factory());
    }

    /// Chooses this controller for a connection from inside a BoringSSL
    /// handshake callback, before it has sent anything.
    pub fn configure_in_handshake(&self, ssl: &mut boring::ssl::SslRef) -> quiche::Result<()> {
        <quiche::Connection>::set_cc_algorithm_in_handshake(ssl, self.algorithm())?;
        #[cfg(feature = "cubic-rollback")]
        <quiche::Connection>::set_enable_cubic_rollback_in_handshake(ssl, self.cubic_rollback())?;
        <quiche::Connection>::set_custom_congestion_control_in_handshake(ssl, self.factory())
    }

    /// Switches a live connection to this controller (see
    /// `quiche::Connection::set_custom_congestion_control`; quiche's built-in
    /// controllers other than the configuration's cannot be switched to).
    pub fn switch(&self, conn: &mut quiche::Connection) -> quiche::Result<()> {
        match self.kind {
            Kind::Plugin(_) => conn.set_custom_congestion_control(self.factory()),
            Kind::Builtin { .. } => Err(quiche::Error::CongestionControl),
        }
    }

    /// Switches `conn` to this spec made deadline-aware for a transfer of
    /// `total_bytes` (quic-bulk's and h3-serve's downloads with a deadline);
    /// the caller feeds the returned handle the bytes delivered
    /// ([`stream_delivered`]).
    pub fn switch_with_deadline(
        &self,
        conn: &mut quiche::Connection,
        deadline: std::time::Duration,
        total_bytes: u64,
    ) -> Result<lbe_cc::deadline::Progress, String> {
        let mut spec = self
            .with_deadline(deadline)
            .map_err(|e| format!("bad deadline: {e}"))?;
        let progress = lbe_cc::deadline::Progress::new(total_bytes);
        spec.set_progress(progress.clone());
        spec.switch(conn)
            .map_err(|e| format!("cannot switch to {spec}: {e}"))?;
        Ok(progress)
    }
}

/// The bytes of a stream the peer has received, for a deadline-aware
/// transfer's progress handle: `stream_acked` is
/// `quiche::Connection::stream_acked_bytes` (ext patch 0005: the stream's
/// contiguously acknowledged bytes), never counted above `written`, the
/// bytes the application wrote; all of them once the stream is complete and
/// collected (or was never opened, when `written` is 0). quiche's
/// `Stats::acked_bytes`, used before, counts whole packets: it overstated a
/// bulk download's progress by about 3.5 %, so the controller took the
/// transfer for done 3.5 MB early and stopped steering.
pub fn stream_delivered(stream_acked: quiche::Result<u64>, written: u64) -> u64 {
    match stream_acked {
        Ok(acked) => acked.min(written),
        Err(_) => written,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_s_delivered_bytes_are_its_acknowledged_bytes_up_to_what_was_written() {
        assert_eq!(stream_delivered(Ok(5_000), 10_000), 5_000);
        assert_eq!(stream_delivered(Ok(12_000), 10_000), 10_000);
        let collected = Err(quiche::Error::InvalidStreamState(0));
        assert_eq!(stream_delivered(collected, 10_000), 10_000);
        let never_opened = Err(quiche::Error::InvalidStreamState(4));
        assert_eq!(stream_delivered(never_opened, 0), 0);
    }

    #[test]
    fn background_controllers() {
        for ok in [
            "ledbatpp",
            "ledbat:target=25ms",
            "cdg",
            "fixed:packets=4",
            "cubic",
            "cubic:rollback=on",
        ] {
            ok.parse::<CcSpec>().unwrap().check_background().unwrap();
        }
        let rollback_off = cfg!(feature = "cubic-rollback").then_some("cubic:rollback=off");
        for bad in ["reno", "bbr2"].into_iter().chain(rollback_off) {
            let e = bad
                .parse::<CcSpec>()
                .unwrap()
                .check_background()
                .unwrap_err();
            assert!(e.contains("cannot switch"), "{e}");
        }
    }

    #[test]
    fn builtins_and_plugins_parse() {
        let s: CcSpec = "cubic".parse().unwrap();
        assert_eq!(s.name(), "cubic");
        assert!(s.plugin().is_none());
        let s: CcSpec = "bbr2".parse().unwrap();
        assert_eq!(s.algorithm(), CongestionControlAlgorithm::Bbr2Gcongestion);
        let s: CcSpec = " fixed:packets=4 ".parse().unwrap();
        assert_eq!(s.as_str(), "fixed:packets=4");
        assert_eq!(s.name(), "fixed");
        assert_eq!(s.file_tag(), "fixed+packets=4");
        match s.plugin() {
            Some(ControllerConfig::Fixed(c)) => assert_eq!(c.packets, 4),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[cfg(feature = "cubic-rollback")]
    #[test]
    fn cubic_rollback_is_on_unless_turned_off() {
        let on: CcSpec = "cubic".parse().unwrap();
        assert!(on.cubic_rollback());
        let off: CcSpec = "cubic:rollback=off".parse().unwrap();
        assert!(!off.cubic_rollback());
        assert_eq!(off.name(), "cubic");
        assert_eq!(off.algorithm(), CongestionControlAlgorithm::CUBIC);
        assert_eq!(off.file_tag(), "cubic+rollback=off");
        assert!(off.plugin().is_none());
        let explicit: CcSpec = "cubic:rollback=on".parse().unwrap();
        assert!(explicit.cubic_rollback());
        assert!("reno".parse::<CcSpec>().unwrap().cubic_rollback());
        assert!("ledbatpp".parse::<CcSpec>().unwrap().cubic_rollback());
    }

    #[test]
    fn a_deadline_joins_the_spec_text_and_takes_a_progress_handle() {
        let plain: CcSpec = "cdg".parse().unwrap();
        let mut s = plain
            .with_deadline(std::time::Duration::from_secs(120))
            .unwrap();
        assert_eq!(s.as_str(), "cdg:deadline=120s");
        assert_eq!(s, "cdg:deadline=120s".parse().unwrap());
        let s2 = "ledbatpp:target=25ms".parse::<CcSpec>().unwrap();
        assert_eq!(
            s2.with_deadline(std::time::Duration::from_millis(1500))
                .unwrap()
                .as_str(),
            "ledbatpp:target=25ms,deadline=1500ms"
        );
        let progress = lbe_cc::deadline::Progress::new(1000);
        assert!(s.set_progress(progress.clone()));
        assert_eq!(s.progress().map(|p| p.total_bytes()), Some(1000));
        assert!(!plain.clone().set_progress(progress));
        assert_eq!(
            "cubic"
                .parse::<CcSpec>()
                .unwrap()
                .with_deadline(std::time::Duration::from_secs(1))
                .unwrap_err()
                .to_string(),
            "'cubic' is quiche's own controller: a deadline steers only cdg and ledbatpp"
        );
        assert_eq!(
            s.with_deadline(std::time::Duration::from_secs(1))
                .unwrap_err()
                .to_string(),
            "parameter 'deadline' given twice in --cc 'cdg:deadline=120s,deadline=1s'"
        );
    }

    #[test]
    fn errors_name_what_is_allowed() {
        let names = controller_names().join(", ");
        let cases = [
            (
                "vegas",
                format!("unknown congestion controller 'vegas' (allowed: {names})"),
            ),
            (
                "",
                format!("empty controller name in --cc '': expected NAME[:key=value,...] with NAME one of {names}"),
            ),
            (
                "fixed:packets",
                "malformed parameter 'packets' in --cc 'fixed:packets': expected key=value".into(),
            ),
            (
                "fixed:packets=",
                "malformed parameter 'packets=' in --cc 'fixed:packets=': expected key=value".into(),
            ),
            (
                "fixed:packets=2,packets=3",
                "parameter 'packets' given twice in --cc 'fixed:packets=2,packets=3'".into(),
            ),
            (
                "cubic:beta=0.7",
                "'cubic' is quiche's own controller and takes only rollback=on|off (got 'beta')"
                    .into(),
            ),
            (
                "reno:rollback=off",
                "'reno' is quiche's own controller and takes no parameters (got 'rollback')".into(),
            ),
            (
                "cubic:rollback=maybe",
                "--cc 'cubic:rollback=maybe': bad value 'maybe' for 'rollback': expected true or false".into(),
            ),
            (
                "fixed:size=3",
                "--cc 'fixed:size=3': unknown parameter 'size' for 'fixed' (allowed: packets)".into(),
            ),
            (
                "fixed:packets=0",
                "--cc 'fixed:packets=0': bad value '0' for 'packets': expected a whole number from 1 to 100000".into(),
            ),
        ];
        for (spec, message) in cases {
            let error: String = spec.parse::<CcSpec>().unwrap_err().to_string();
            assert_eq!(error, message, "{spec}");
        }
    }

    #[test]
    fn every_name_is_listed_and_parses() {
        for name in controller_names() {
            let spec: CcSpec = name.parse().unwrap();
            assert_eq!(spec.name(), name);
        }
    }
}
