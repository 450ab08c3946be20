//! Sans-IO less-than-best-effort congestion controllers.
//!
//! Every controller implements [`CongestionController`]: it is fed events that
//! carry their own time (packet sent, ACK with its RTT information, congestion
//! event, spurious-loss rollback, MTU change) and answers with a congestion
//! window in bytes, an optional pacing rate, a state name for qlog and a
//! [`Snapshot`] of its internals. Nothing in this crate reads a clock, opens a
//! socket or knows about quiche, so the same code runs inside a QUIC stack, in
//! a simulator and under tests that feed it exact event sequences.
//!
//! Randomness (CDG's probabilistic backoff) comes from a [`rng::SplitMix64`]
//! seeded through the controller's configuration.
//!
//! The controllers, by [`ControllerConfig::NAMES`]:
//!
//! * `ledbatpp`: [`ledbatpp`], LEDBAT++ (draft-irtf-iccrg-ledbat-plus-plus-01);
//! * `ledbat`: [`ledbat`], LEDBAT (RFC 6817) on RTT samples;
//! * `cdg`: [`cdg`], the CAIA delay-gradient controller (Linux `tcp_cdg`);
//! * `fixed`: [`fixed`], a constant window for end-to-end tests.
//!
//! A controller is named by a `--cc` spec, `NAME[:key=value,...]`
//! ([`spec`]; `"ledbatpp:target=25ms".parse::<ControllerConfig>()`), and
//! qlog files carry the spec in their names ([`qlog_name`]).
//!
//! [`rledbat`] runs LEDBAT++ at the receiver (RFC 9840's receiver-driven
//! LEDBAT, on QUIC): the window a downloading endpoint grants through flow
//! control.
//!
//! [`cubic`] is CUBIC (RFC 9438), the normal flow a deadline-aware flow
//! ([`deadline`]) hands over to; it is not a `--cc` controller of its own.
//!
//! The LEDBAT family reads its delay signal through [`delay`]: RTT minus the
//! peer's ACK delay, a current-delay filter and a base-delay history.
//!
//! # References
//!
//! The specifications and papers the controllers implement or quote. A
//! citation `[RFC 6817 §2.4.2](https://www.rfc-editor.org/rfc/rfc6817#section-2.4.2)` in these docs is that section of the table's
//! document (for the RFCs and drafts, the URL with `#section-2.4.2`); a seed
//! is cited by its file name in the design notes' `seeds/` directory, with
//! the paper's own section numbers.
//!
//! | cited as | authors | title | venue | URL |
//! | --- | --- | --- | --- | --- |
//! | RFC 6817 | S. Shalunov, G. Hazel, J. Iyengar, M. Kuehlewind | Low Extra Delay Background Transport (LEDBAT) | IETF RFC 6817, Experimental, 2012 | <https://www.rfc-editor.org/rfc/rfc6817> |
//! | draft -01, §N in [`ledbatpp`] | P. Balasubramanian, O. Ertugay, D. Havey | LEDBAT++: Congestion Control for Background Traffic (draft-irtf-iccrg-ledbat-plus-plus-01) | IRTF ICCRG Internet-Draft, 2020 | <https://datatracker.ietf.org/doc/html/draft-irtf-iccrg-ledbat-plus-plus-01> |
//! | RFC 9840 | M. Bagnulo, A. García-Martínez, G. Montenegro, P. Balasubramanian | rLEDBAT: Receiver-Driven Low Extra Delay Background Transport for TCP | IETF RFC 9840 (IRTF ICCRG), Experimental, 2025 | <https://www.rfc-editor.org/rfc/rfc9840> |
//! | RFC 9438 | L. Xu, S. Ha, I. Rhee, V. Goel, L. Eggert (Ed.) | CUBIC for Fast and Long-Distance Networks | IETF RFC 9438, Proposed Standard, 2023 | <https://www.rfc-editor.org/rfc/rfc9438> |
//! | RFC 9002 | J. Iyengar, I. Swett | QUIC Loss Detection and Congestion Control | IETF RFC 9002, Proposed Standard, 2021 | <https://www.rfc-editor.org/rfc/rfc9002> |
//! | RFC 9000 | J. Iyengar, M. Thomson | QUIC: A UDP-Based Multiplexed and Secure Transport | IETF RFC 9000, Proposed Standard, 2021 | <https://www.rfc-editor.org/rfc/rfc9000> |
//! | RFC 5681 | M. Allman, V. Paxson, E. Blanton | TCP Congestion Control | IETF RFC 5681, Draft Standard, 2009 | <https://www.rfc-editor.org/rfc/rfc5681> |
//! | RFC 7464 | N. Williams | JavaScript Object Notation (JSON) Text Sequences | IETF RFC 7464, Proposed Standard, 2015 | <https://www.rfc-editor.org/rfc/rfc7464> |
//! | CDG; Hayes and Armitage, 2011 | D. A. Hayes, G. Armitage | Revisiting TCP Congestion Control Using Delay Gradients | IFIP Networking 2011 (LNCS 6641) | <http://caia.swin.edu.au/urp/newtcp/> (CAIA's NewTCP project) |
//! | Linux `tcp_cdg` | K. K. Jonassen | `net/ipv4/tcp_cdg.c`, CDG for Linux (since 4.2, 2015) | Linux kernel source | <https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git/tree/net/ipv4/tcp_cdg.c> |
//! | seed `ledbatpp-experimental-evaluation` (seed 000 in the design notes) | M. Bagnulo, A. García-Martínez | An experimental evaluation of LEDBAT++ | Computer Networks 212, 2022 | <https://e-archivo.uc3m.es/handle/10016/35875> |
//! | seed `cdg-deadline-aware-lbe` (seed 002) | T.-C. Tangenes, D. A. Hayes, A. Petlund, D. Ros | Evaluating CDG as a Deadline-Aware Less-than-Best-Effort Transport Service | not named in the seed's text (authors at Simula Research Laboratory and the University of Oslo) | none known; the seed's text is the reference |
//! | seed `ledbat-optimal-parameters` | S. Q. V. Trang, N. Kuhn, E. Lochin, C. Baudoin, E. Dubois, P. Gelard | On The Existence Of Optimal LEDBAT Parameters | IEEE ICC 2014, Sydney | <http://oatao.univ-toulouse.fr/11769/> |
//! | seed `ledbat-dynamic-gain` | A. J. Abu, S. Gordon | A Framework for Dynamically Selecting Gain in LEDBAT Algorithm for High Speed Networks | Information Technology Journal 10(2): 358-366, 2011 | <https://doi.org/10.3923/itj.2011.358.366> |
//! | seed `ledbat-ns2-bittorrent-utp` | D. Rossi, C. Testa, S. Valenti, L. Muscariello | LEDBAT: the new BitTorrent congestion control protocol | IEEE ICCCN 2010, Zurich (preprint arXiv:0908.0812) | <https://arxiv.org/abs/0908.0812> |
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::fmt;
use std::time::Duration;
use std::time::Instant;

pub mod cdg;
pub mod cubic;
pub mod deadline;
pub mod delay;
pub mod fixed;
mod flight;
pub mod ledbat;
pub mod ledbatpp;
pub mod pacing;
pub mod params;
pub mod qlog_name;
mod recovery;
pub mod rledbat;
pub mod rng;
mod round;
pub mod spec;
#[cfg(test)]
mod testkit;
mod window;

pub use params::ParamError;
pub use spec::SpecError;

/// The largest congestion window any controller of this crate reports,
/// bytes (4 GiB: a full window at 100 Gbit/s over a 340 ms path).
pub const MAX_WINDOW_BYTES: u64 = 1 << 32;

/// One packet newly acknowledged by an ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckedPacket {
    /// Size of the packet on the wire, in bytes.
    pub bytes: u64,
    /// When the packet was sent.
    pub time_sent: Instant,
}

/// RTT information known when an ACK is processed (RFC 9002 §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RttInfo {
    /// The newest RTT sample: time from sending the largest newly acknowledged
    /// packet to receiving its ACK, ACK delay included.
    pub latest_rtt: Duration,
    /// The ACK delay the peer reported for `latest_rtt`, as reported (not yet
    /// capped by `max_ack_delay`).
    pub ack_delay: Duration,
    /// Whether this ACK produced `latest_rtt` (RFC 9002 §5.1: only when the
    /// largest acknowledged packet is newly acknowledged and ack-eliciting).
    /// When false, `latest_rtt` and `ack_delay` repeat an older sample.
    pub new_sample: bool,
    /// Minimum RTT seen on the path (ACK delay not subtracted).
    pub min_rtt: Duration,
    /// Smoothed RTT (RFC 9002 §5.3).
    pub smoothed_rtt: Duration,
    /// RTT variation (RFC 9002 §5.3).
    pub rttvar: Duration,
    /// The peer's `max_ack_delay` transport parameter.
    pub max_ack_delay: Duration,
}

/// A one-way delay sample from QUIC's timestamp extension
/// (draft-huitema-quic-ts-08): one packet's send and receive times, one of
/// them on the peer's clock.
///
/// The clocks differ by an unknown offset that drifts with their skew: for
/// a fixed instant `E` of this endpoint's clock, [`Self::raw_ns`] is the
/// one-way delay plus that offset. [`delay::DelaySource`] turns it into a
/// delay sample whose base (RFC 6817 §4.1's minimum) absorbs the offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OneWayDelaySample {
    /// A packet this endpoint sent, timed by the peer when it arrived: a
    /// sender's sample, the forward one-way delay of an ACK's largest
    /// acknowledged packet (quiche's `OneWayDelay`).
    Sent {
        /// When the packet was sent, by this endpoint's clock.
        time_sent: Instant,
        /// The peer's clock, since its epoch, when it received the packet.
        peer_receive_time: Duration,
    },
    /// A packet the peer sent, timed by the peer when it left and here when
    /// it arrived: a receiver's sample, the one-way delay of the data
    /// coming to it (quiche's `PeerTimestamp`).
    Received {
        /// The peer's clock, since its epoch, when it sent the packet.
        peer_send_time: Duration,
        /// When the packet arrived, by this endpoint's clock.
        time_received: Instant,
    },
}

impl OneWayDelaySample {
    /// This endpoint's time of the sample (send or receive).
    pub fn local_time(&self) -> Instant {
        match *self {
            Self::Sent { time_sent, .. } => time_sent,
            Self::Received { time_received, .. } => time_received,
        }
    }

    /// Receive time minus send time, in nanoseconds, with this endpoint's
    /// times counted from `epoch`: the one-way delay plus the clocks'
    /// offset (which depends on `epoch`, not on the sample).
    pub fn raw_ns(&self, epoch: Instant) -> i128 {
        let local = self.local_time();
        let local_ns = if local >= epoch {
            (local - epoch).as_nanos() as i128
        } else {
            -((epoch - local).as_nanos() as i128)
        };
        match *self {
            Self::Sent {
                peer_receive_time, ..
            } => peer_receive_time.as_nanos() as i128 - local_ns,
            Self::Received { peer_send_time, .. } => local_ns - peer_send_time.as_nanos() as i128,
        }
    }
}

/// An ACK frame's effect on the sender.
#[derive(Clone, Copy, Debug)]
pub struct AckEvent<'a> {
    /// When the ACK was processed.
    pub now: Instant,
    /// The packets this ACK newly acknowledges, in packet-number order.
    pub acked: &'a [AckedPacket],
    /// Bytes in flight when the ACK arrived, the packets it acknowledges
    /// still counted.
    pub bytes_in_flight: u64,
    /// RTT state after the ACK was processed.
    pub rtt: RttInfo,
    /// The one-way delay sample this ACK carries: at a sender, the forward
    /// one-way delay of the ACK's largest acknowledged packet, when the peer
    /// sends timestamps and this ACK gave a new RTT sample
    /// ([`OneWayDelaySample::Sent`]); at a receiver, the delay of a packet
    /// that came to it ([`OneWayDelaySample::Received`]).
    pub one_way_delay: Option<OneWayDelaySample>,
}

impl AckEvent<'_> {
    /// Total size of the newly acknowledged packets, in bytes.
    pub fn bytes_acked(&self) -> u64 {
        self.acked.iter().map(|p| p.bytes).sum()
    }
}

/// Packets declared lost (RFC 9002 §7.3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LossEvent {
    /// When the loss was detected.
    pub now: Instant,
    /// Total size of the packets declared lost, in bytes.
    pub lost_bytes: u64,
    /// When the largest lost packet was sent: a loss of a packet sent before
    /// the current recovery period started does not reduce the window again.
    pub largest_lost_time_sent: Instant,
    /// Bytes in flight when the loss was detected, lost packets still counted.
    pub bytes_in_flight: u64,
}

/// A controller's internals at one moment, for logs and qlog.
///
/// Fields a controller does not have are `None`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Snapshot {
    /// Congestion window, bytes.
    pub cwnd: u64,
    /// Slow-start threshold, bytes (`None` while in the initial slow start).
    pub ssthresh: Option<u64>,
    /// Base (minimum) delay estimate.
    pub base_delay: Option<Duration>,
    /// Current (filtered) delay estimate.
    pub current_delay: Option<Duration>,
    /// The controller's queuing delay estimate, current − base of
    /// [`delay`]: the minimum of the last `current_filter` RTT samples with
    /// the peer's ACK delay removed, minus the base (minimum) delay. Not the
    /// same as a qlog reader's latest RTT minus the trace's minimum.
    pub queuing_delay: Option<Duration>,
    /// Target queuing delay.
    pub target: Option<Duration>,
    /// Window gain in use (LEDBAT family).
    pub gain: Option<f64>,
    /// CDG's backoff scale G.
    pub backoff_scale: Option<Duration>,
    /// CDG's last delay gradient, signed, in microseconds per round.
    pub gradient_us: Option<i64>,
    /// The delay signal the controller's last sample came from:
    /// [`delay::Signal`] (`owd` or `rtt`), `None` before any sample and for
    /// controllers without a delay signal.
    pub delay_signal: Option<delay::Signal>,
}

/// A congestion controller driven by explicit events.
///
/// Times are passed in; implementations never read a clock. Sizes are bytes.
pub trait CongestionController: Send + fmt::Debug {
    /// The controller's name as used in `--cc` specs (`ledbatpp`, `cdg`...).
    fn name(&self) -> &'static str;

    /// A packet that counts towards bytes in flight was sent.
    /// `bytes_in_flight` is the value before this packet was added.
    fn on_packet_sent(&mut self, now: Instant, bytes: u64, bytes_in_flight: u64);

    /// An ACK newly acknowledged one or more packets.
    fn on_ack(&mut self, ack: &AckEvent<'_>);

    /// Packets were declared lost.
    fn on_congestion_event(&mut self, loss: &LossEvent);

    /// Persistent congestion was established (RFC 9002 §7.6): collapse to
    /// the minimum window.
    fn on_persistent_congestion(&mut self, now: Instant);

    /// Save the state that a spurious loss may have to restore; called before
    /// the first congestion event of a recovery period.
    fn checkpoint(&mut self);

    /// A loss turned out to be spurious: restore the last checkpoint.
    /// Returns whether anything was restored.
    fn rollback(&mut self) -> bool;

    /// The path's maximum datagram size changed (PMTUD).
    fn on_mtu_change(&mut self, max_datagram_size: u64);

    /// The congestion window, in bytes.
    fn window(&self) -> u64;

    /// Pacing rate in bytes per second, if the controller wants one.
    fn pacing_rate(&self) -> Option<u64> {
        None
    }

    /// A short state name for qlog's `congestion_state_updated`.
    fn state(&self, now: Instant) -> &'static str;

    /// The controller's internals.
    fn snapshot(&self) -> Snapshot;

    /// The delay signal the controller's last sample came from
    /// ([`Snapshot::delay_signal`]), without building a whole snapshot:
    /// quiche asks for it with every qlog metrics update.
    fn delay_signal(&self) -> Option<delay::Signal> {
        self.snapshot().delay_signal
    }
}

/// What a controller is built with besides its own parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathInfo {
    /// Maximum datagram size (the MSS of the RFCs), bytes.
    pub max_datagram_size: u64,
    /// Initial window, in packets (RFC 9002 §7.2 recommends 10).
    pub initial_window_packets: u64,
}

impl Default for PathInfo {
    fn default() -> Self {
        Self {
            max_datagram_size: 1200,
            initial_window_packets: 10,
        }
    }
}

/// A controller and its parameters, as named by a `--cc` spec.
#[derive(Clone, Debug, PartialEq)]
pub enum ControllerConfig {
    /// LEDBAT++ (draft-irtf-iccrg-ledbat-plus-plus-01), `ledbatpp`.
    LedbatPlusPlus(ledbatpp::LedbatPlusPlusConfig),
    /// LEDBAT (RFC 6817) on RTT, `ledbat`.
    Ledbat(ledbat::LedbatConfig),
    /// CDG, the CAIA delay-gradient controller, `cdg`.
    Cdg(cdg::CdgConfig),
    /// A constant window; proves that a plug-in is in control.
    Fixed(fixed::FixedConfig),
    /// CDG or LEDBAT++ steered towards a deadline ([`deadline`]): spec key
    /// `deadline` on `cdg` or `ledbatpp`.
    Deadline(deadline::DeadlineConfig),
}

impl ControllerConfig {
    /// Names of every controller this crate provides.
    pub const NAMES: &'static [&'static str] = &["ledbatpp", "ledbat", "cdg", "fixed"];

    /// The configuration for `name` with default parameters.
    pub fn default_for(name: &str) -> Option<Self> {
        match name {
            "ledbatpp" => Some(Self::LedbatPlusPlus(Default::default())),
            "ledbat" => Some(Self::Ledbat(Default::default())),
            "cdg" => Some(Self::Cdg(Default::default())),
            "fixed" => Some(Self::Fixed(Default::default())),
            _ => None,
        }
    }

    /// The controller's name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::LedbatPlusPlus(_) => "ledbatpp",
            Self::Ledbat(_) => "ledbat",
            Self::Cdg(_) => "cdg",
            Self::Fixed(_) => "fixed",
            Self::Deadline(d) => d.inner().name(),
        }
    }

    /// The target queuing delay, for the controllers that have one
    /// (LEDBAT++ and LEDBAT).
    pub fn target(&self) -> Option<Duration> {
        match self {
            Self::LedbatPlusPlus(c) => Some(c.target()),
            Self::Ledbat(c) => Some(c.target()),
            Self::Cdg(_) | Self::Fixed(_) => None,
            Self::Deadline(d) => d.inner().target(),
        }
    }

    /// Sets one `key=value` parameter.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ParamError> {
        match self {
            Self::LedbatPlusPlus(c) => c.set(key, value),
            Self::Ledbat(c) => c.set(key, value),
            Self::Cdg(c) => c.set(key, value),
            Self::Fixed(c) => c.set(key, value),
            Self::Deadline(d) => d.inner_mut().set(key, value),
        }
    }

    /// Builds a controller for a path.
    pub fn build(&self, path: PathInfo) -> Box<dyn CongestionController> {
        match self {
            Self::LedbatPlusPlus(c) => Box::new(ledbatpp::LedbatPlusPlus::new(c.clone(), path)),
            Self::Ledbat(c) => Box::new(ledbat::Ledbat::new(c.clone(), path)),
            Self::Cdg(c) => Box::new(cdg::Cdg::new(c.clone(), path)),
            Self::Fixed(c) => Box::new(fixed::Fixed::new(c.clone(), path)),
            Self::Deadline(d) => Box::new(d.build(path)),
        }
    }

    /// This controller steered towards `deadline` ([`deadline`]); for CDG
    /// and LEDBAT++ only. An existing deadline is replaced.
    pub fn with_deadline(self, deadline: std::time::Duration) -> Result<Self, SpecError> {
        let inner = match self {
            Self::Deadline(d) => d.inner().clone(),
            other => other,
        };
        deadline::DeadlineConfig::new(inner, deadline).map(Self::Deadline)
    }

    /// The progress handle of a deadline-aware configuration.
    pub fn progress(&self) -> Option<&deadline::Progress> {
        match self {
            Self::Deadline(d) => Some(d.progress()),
            _ => None,
        }
    }

    /// Gives a deadline-aware configuration its transfer's progress handle
    /// (every controller built from it afterwards reads this one); returns
    /// whether the configuration has a deadline.
    pub fn set_progress(&mut self, progress: deadline::Progress) -> bool {
        match self {
            Self::Deadline(d) => {
                d.set_progress(progress);
                true
            }
            _ => false,
        }
    }
}
