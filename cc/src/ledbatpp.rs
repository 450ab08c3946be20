//! LEDBAT++ (draft-irtf-iccrg-ledbat-plus-plus-01), on QUIC RTT samples.
//!
//! <https://datatracker.ietf.org/doc/html/draft-irtf-iccrg-ledbat-plus-plus-01>.
//! The -01 revision is what seed `ledbatpp-experimental-evaluation`
//! measured (its §3 and appendix summarise it); with `profile=draft` (the
//! default) this controller is -01 and nothing else. No change from later
//! revisions is adopted. The draft's sentences are quoted beside the code
//! that implements them: those that the issue tracker and the seed quote
//! from it (the -01 text itself was not at hand when this was written);
//! where only the seed's summary (its §3) was available, it is quoted as
//! the seed's.
//! Per ACK, in this order:
//!
//! 1. the delay sample ([`crate::delay`]) updates current and base delay,
//!    and GAIN = 1 / min(16, CEIL(2·T / base)) (§4.2), CEIL(X) being "the
//!    smallest integer larger than X";
//! 2. round bookkeeping (a round ends with the first ACK for a packet sent
//!    at or after its start): the countdown to the initial slowdown and the
//!    ramp-up's round bound advance when the ACK ends a round;
//! 3. time-driven transitions: a freeze whose 2 RTTs have passed ends, a
//!    periodic slowdown that is due starts;
//! 4. the window rule of the phase:
//!    * initial slow start (§4.1): `cwnd += GAIN · bytes_acked`, left when
//!      queuing delay > 3/4·T, on loss;
//!    * congestion avoidance (§4.3), a per-round rule spread over the
//!      round's ACKs, each ACK applying its share `bytes_acked / W` with W
//!      the window when the round began:
//!      `q ≤ T: W += GAIN·MSS`, `q > T: W += max(GAIN·MSS − C·W·(q/T − 1), −W/2)`;
//!    * slowdown (§4.4): window held at 2 packets for 2 RTTs of time;
//!    * ramp-up (§4.4): slow start back to ssthresh (the pre-slowdown
//!      window), not left on delay (§4.1).
//!
//! An ACK whose processing changes the phase (slow start exit, slowdown
//! start, end of a freeze) does not also grow the window.
//!
//! Loss ("LEDBAT++ reacts by reducing the CW to half of its value when a
//! loss is detected", seed §3): halve, at most once per
//! recovery period — a loss of a packet sent no later than the start of the
//! current recovery period does not reduce again ([RFC 9002 §7.3.2](https://www.rfc-editor.org/rfc/rfc9002#section-7.3.2)); the
//! window never increases during recovery. Minimum window 2 packets.
//!
//! The window does not grow while less than half of it is in flight (the
//! sender is application-limited; [RFC 9002 §7.8](https://www.rfc-editor.org/rfc/rfc9002#section-7.8) and Linux's slow-start
//! cwnd-limited rule); decreases always apply.
//!
//! # Choices the draft leaves open
//!
//! * **Which RTT the freeze lasts.** §4.4 "Keep CWND frozen at 2 packets
//!   for 2 RTT". The RTT is the smoothed RTT ([RFC 9002 §5.3](https://www.rfc-editor.org/rfc/rfc9002#section-5.3)) of the last ACK
//!   before the slowdown, so it includes the queue the flow had built. The
//!   freeze is there to drain that queue and measure the base delay; with
//!   the min RTT instead, a queue longer than 2 base RTTs (20 ms base and
//!   the 45 ms that ends slow start) would still be draining when the freeze
//!   ends. The freeze ends at the first ACK at or after `start + 2·RTT`
//!   (this crate has no timers), so it lasts at most one ACK gap longer.
//! * **D, the slowdown's duration.** §4.4 schedules the next slowdown 9
//!   slowdown durations later, so that at most a tenth of the time is spent
//!   slowed down; D runs from the start of the slowdown to the end of the
//!   ramp-up, and is that time as measured. (The seed's summary says
//!   "after a period equal to 9·T_ss", T_ss being "the time that it takes
//!   for the slow-start to ramp back up"; counting the freeze too, as here,
//!   puts each slowdown 9 freezes, about 18 RTTs, later than T_ss alone.)
//! * **CEIL.** The draft defines CEIL(X) as "the smallest integer larger
//!   than X" and this controller follows it: when 2T/base is a whole number
//!   GAIN is one step smaller than with the usual ceiling (base 60 ms: 1/3
//!   instead of 1/2; 120 ms: 1/2 instead of 1; 30 ms: 1/5; 20 ms: 1/7;
//!   40 ms: 1/4). Any other base gets the same GAIN either way. The seed's
//!   prose ("equal to 0.5 for base RTTs of 60 ms") reads as the usual
//!   ceiling, its footnote as the draft's.
//! * **An application-limited ramp-up.** A sender that does not fill its
//!   window never reaches ssthresh, and a ramp-up that never ends never
//!   schedules the next slowdown and never reacts to delay (the ramp-up
//!   does not leave on delay, §4.1). The ramp-up therefore also ends after
//!   `2·R + 1` rounds, R = `ceil(log_{1+GAIN}(ssthresh / 2 packets))` being
//!   the rounds a window-limited ramp-up takes; the window stays where it
//!   is (restoring an unused window would allow a burst) and D is the time
//!   spent. The slow start after persistent congestion (not left on delay
//!   either) has the same bound.
//! * **A schedule that would overflow.** The wait `9·D` is capped at the
//!   base-delay history (`base_history · base_bucket`, 10 minutes): a
//!   slowdown is how LEDBAT++ re-measures the base delay, and the history
//!   forgets a minimum after that long. Should `now + wait` still not be
//!   representable, the slowdown is due at once rather than never.
//! * **The initial slowdown** (seed §3: "An initial slow-down is performed
//!   2 RTTs after exiting the initial slow-start") counts rounds of
//!   congestion avoidance, i.e. RTTs at the queue the flow holds then.
//!
//! # Profiles
//!
//! `profile=draft` (default) is -01 as above. `profile=seed` adds the two
//! fixes seed `ledbatpp-experimental-evaluation` proposes (§5.1.3), each
//! also a key of its own; keys given after the profile override it:
//!
//! * `restore=jump`: "LEDBAT++ could restore the rate it was using before
//!   the periodic slow down without using the exponential increase. This
//!   would effectively limit the penalty to 2 RTTs". At the end of the
//!   freeze the window returns to ssthresh at once. So that the slowdowns
//!   keep the draft's frequency (the fix shortens each penalty, it is not
//!   meant to make slowdowns more frequent), D is then the freeze plus the
//!   time a ramp-up would have taken, `R` rounds of the freeze's RTT.
//! * `skip_rtt_after_restore=true`: "not considering the RTTs measured in
//!   the RTT after the exit of the exponential growth". Once the window is
//!   restored (ramp-up reached ssthresh, or the jump) at time `r`, the
//!   samples of packets sent before `r + srtt` are ignored: those sent
//!   before `r` carry the ramp-up's queue, those sent in `[r, r + srtt)` the
//!   queue of the restored window's first burst. Those ACKs neither feed the
//!   delay filters nor move the window (losses still count).
//!
//! `profile=full` is our design, the default of `h3-serve
//! --background-cc`: LEDBAT++ that fills an idle
//! link and still gets out of the way. It is the options below, each a key
//! of its own and usable alone; the initial slowdown stays the draft's (it
//! is what removes the late-comer advantage). Measured effects are from
//! the simulator, 20 Mbit/s, 500 ms buffer unless said (sweeps/ledbatpp-profiles-*.toml;
//! docs/ledbatpp-profiles.md). "Empty queue" is a queuing delay of at
//! most `empty_queue` (default 15 ms, T/4).
//!
//! * `skip_rtt_after_restore=true`: the seed's second fix, above.
//! * `restore=guarded`: the seed's jump back to the pre-slowdown window,
//!   but only if the freeze's own reading (the smallest queuing delay of
//!   the samples taken while frozen) is an empty queue; else the draft's
//!   ramp-up. A freeze that still sees a queue means someone else holds
//!   the link, and jumping back would push them. The jump is not a burst:
//!   pacing spreads the restored window over a round (1.2 × cwnd/srtt).
//! * `slowdown_duty=F` with `slowdown_period_min`/`slowdown_period_max`:
//!   the next slowdown starts `D/F` after the last one began, D the time
//!   it actually took (freeze, and ramp-up if any), within the bounds
//!   (full: 2 %, 10 s to 60 s), instead of 9·D after its end. With a jump
//!   restore D is about 2 RTTs and the draft's 9·D would slow down every
//!   ~20 RTTs; the duty bounds the cost to ~2 % and the ceiling keeps the
//!   base delay fresh (≥ one freeze a minute).
//! * `decrease=excess_queue`: above T a round takes `C·W·(q − T)/srtt` off
//!   the window, the bytes of the queue above T, instead of the draft's
//!   `C·W·(q/T − 1)`, which is srtt/T times that: at 300 ms base RTT six
//!   times the excess, so the window overshoots down, the queue empties and
//!   the link idles (alone, no slowdowns, 300 ms: 0.946 of the link with
//!   the draft's rule, 1.0 with this one). Against CUBIC the queue is far
//!   above T and both rules hit the −W/2 cap.
//! * `fill_empty_queue=true`: in congestion avoidance with an empty queue
//!   the window grows by one byte per byte acknowledged (slow start)
//!   instead of GAIN·MSS per round, paced at 2 × cwnd over the current
//!   delay (the smoothed RTT may still hold a queue that is gone). An empty
//!   queue is an idle link: after CUBIC leaves (50 ms) the draft is back to
//!   0.9 of the link after 17.5 s, full after 1.25–1.5 s (with
//!   `pacing_rtt=current`, below). It also
//!   lets two flows converge: a flow whose freeze drained the queue regains
//!   its share at once, rather than at one GAIN a round. Not within
//!   `fill_quiet` (2 s) of any loss: with a 30 ms buffer CUBIC's sawtooth
//!   empties the queue after each of its losses, and filling then took 96 %
//!   of the link from CUBIC; with the quiet time CUBIC keeps ≥ 7× LEDBAT++.
//! * `loss_on_empty_queue=ignore`: a loss that comes with an empty queue
//!   does not reduce the window: for an LBE flow a loss without queue
//!   growth is not congestion (it is random loss; a full buffer comes with
//!   a queue). 1 % loss at 300 ms: 0.25 Mbit/s with the draft, ~14 with
//!   full. With a 30 ms buffer the losses come with the buffer's queue
//!   (> 15 ms) and still count, so LEDBAT++ still yields to CUBIC there.
//! * `decrease_constant=0.25` (the draft's C, a key of its own; 1 in the
//!   draft): a quarter of the decrease. Two flows hold the queue where each
//!   one's decrease matches its increase, `q − T = GAIN·MSS·srtt/(C·W)`
//!   (`excess_queue`), at 20 ms base about 0.15 ms with C = 1; the two
//!   flows' base delays differ by about as much (the late flow measures
//!   its minimum behind the other's packets; 0.1 ms in the simulator), so
//!   the flow with the lower base reads the queue above T all the time and
//!   gives way while the other grows (two flows at 20 ms: Jain 0.83–0.92).
//!   A quarter of the decrease puts the queue four times further above T,
//!   where such an error matters a quarter as much: Jain 0.985–0.993 at
//!   20 ms, four flows 0.995–0.996 (0.908–0.925 with C = 1). Against CUBIC
//!   the queue is hundreds of ms above T and the decrease still reaches the
//!   −W/2 cap within a few rounds (CUBIC's share with a 500 ms buffer
//!   0.998 either way). Measured over 6 seeds: C = 0.5 left two flows at
//!   20 ms at 0.88 on one seed of three; C = 0.2 and 0.15 left four flows
//!   at 0.87–0.89 on one seed of six; 0.25 met both on all six.
//! * `target_margin=4ms`: the decrease starts at T − 4 ms instead of T
//!   (the same rule, from a lower point). An LBE flow holds the queue a
//!   little above where its decrease starts (the excess above), so with the
//!   decrease from T the mean queue is T plus that: 60.3–62.9 ms alone at
//!   10–300 ms with C = 1/4. From T − 4 ms it is 56.5–59.2 ms, within the
//!   issue's ≤ 60 ms; utilization is unchanged (0.983–0.992).
//! * `pacing_rtt=current`: pace the window over the current delay (the
//!   minimum of the latest samples) when it is below the smoothed RTT. quiche
//!   times a packet from when it is built, so the time it waits for the
//!   pacer is part of its RTT sample; after CUBIC leaves, the smoothed RTT
//!   still holds CUBIC's 450 ms queue, the pacer spreads LEDBAT++'s few
//!   packets over it, and their samples (150–220 ms for a 50 ms path) read as
//!   a queue that holds `fill_empty_queue` back. Paced over the current
//!   delay, the window follows the path's real round trip: back to 0.9 of
//!   the link 1.25–1.5 s after CUBIC stops on every seed (up to 3.25 s
//!   without).
//! * `fill_window_limited=true`: `fill_empty_queue` counts an empty queue
//!   only on packets sent while at least 4/5 of the window was in flight.
//!   A sender that stops sending for a moment (a busy host) drains its own
//!   queue; that is no room on the link, and filling then takes the window
//!   far above the path's: in real time alone at 300 ms, a stall that left
//!   79 % of a 894 kB window in flight emptied the queue, filling took the
//!   window to 1.7 MB within 0.35 s, and the mean queue over [10 s, 40 s]
//!   was 98 ms. 4/5 and not the whole window, because a paced flow whose
//!   round trip just shrank (another flow's freeze) keeps less than its
//!   window in flight: with "within two packets of the window" two flows at
//!   50 ms fell to Jain 0.93–0.96; with 4/5 0.997–1.000. A shorter stall at
//!   a long RTT (where the queue is a small part of the window) still reads
//!   as room.
//! * `gentle_freeze=true` (not in full): a periodic freeze holds half the
//!   window, not 2 packets, when the previous freeze read an empty queue
//!   (BBRv2's PROBE_RTT, seed §5.1.3). At short RTTs half the window still
//!   holds a queue (window ≈ BDP + T's worth), so the freeze does not
//!   re-measure the base delay; the duty cycle already bounds the cost.
//!
//! # Deadline steering
//!
//! [`crate::deadline`] steers TARGET and GAIN and, above its level 0, how
//! much the controller defers ([`Deference`]: slowdowns held, and at its
//! top level no decrease above T) and when it slow-starts
//! ([`LedbatPlusPlus::slow_start_to`], one byte per byte acknowledged).
//! Unsteered ([`Deference::Full`], no catch-up) it is the profile above.

use std::time::Duration;
use std::time::Instant;

use crate::delay;
use crate::delay::DelayConfig;
use crate::delay::DelayEstimator;
use crate::flight::FlightSize;
use crate::pacing;
use crate::params;
use crate::recovery::RecoveryPeriod;
use crate::round;
use crate::round::Rounds;
use crate::window::Checkpoint;
use crate::window::HasWindow;
use crate::window::WindowBounds;
use crate::AckEvent;
use crate::CongestionController;
use crate::LossEvent;
use crate::ParamError;
use crate::PathInfo;
use crate::Snapshot;
use crate::MAX_WINDOW_BYTES;

/// TARGET queuing delay T: 60 ms (draft -01 §4; seed §3).
pub const TARGET: Duration = Duration::from_millis(60);
/// Upper bound of the GAIN divisor: GAIN ≥ 1/16 (draft -01 §4.2).
pub const GAIN_DIVISOR_MAX: u64 = 16;
/// Constant C of the multiplicative decrease, dimensionless (draft -01 §4.3).
pub const DECREASE_CONSTANT: f64 = 1.0;
/// Slow start ends when queuing delay exceeds this fraction of T
/// (draft -01 §4.1: 3/4).
pub const SLOW_START_EXIT: f64 = 0.75;
/// Minimum window, packets (draft -01 §4.3 and §4.4: 2).
pub const MIN_CWND: u64 = 2;
/// The fraction of the window a loss leaves, dimensionless: "LEDBAT++ reacts
/// by reducing the CW to half of its value when a loss is detected" (seed
/// §3). [`crate::deadline`]'s top level uses CUBIC's β instead.
pub const HALVE: f64 = 0.5;
/// Initial window, packets (draft -01 §4.1: "LEDBAT++ sender limits the
/// initial window to 2 packets").
pub const INIT_CWND: u64 = 2;
/// Length of the slowdown freeze, in RTTs of time (draft -01 §4.4: 2).
pub const SLOWDOWN_RTTS: u64 = 2;
/// Rounds from the end of the initial slow start to the initial slowdown
/// (draft -01 §4.4: 2 RTTs).
pub const INITIAL_SLOWDOWN_RTTS: u64 = 2;
/// The next slowdown is due this many slowdown durations after the last one
/// ended (draft -01 §4.4: 9, i.e. ≤ 10 % of the time slowed down).
pub const SLOWDOWN_INTERVAL: u32 = 9;

/// What counts as an empty queue by default: T/4 (module docs, profile=full).
pub const EMPTY_QUEUE: Duration = Duration::from_millis(15);
/// Upper bound of the slowdown period with `slowdown_duty` (the default
/// base-delay history, 10 minutes).
pub const SLOWDOWN_PERIOD_MAX: Duration = Duration::from_secs(600);
/// `profile=full`: slowdowns take at most this fraction of the time.
pub const FULL_SLOWDOWN_DUTY: f64 = 0.02;
/// `profile=full`: at most one slowdown per this long.
pub const FULL_SLOWDOWN_PERIOD_MIN: Duration = Duration::from_secs(10);
/// `profile=full`: at least one slowdown per this long.
pub const FULL_SLOWDOWN_PERIOD_MAX: Duration = Duration::from_secs(60);
/// How long `fill_empty_queue` waits after a loss by default.
pub const FILL_QUIET: Duration = Duration::from_secs(2);
/// `fill_window_limited`: the share of the window in flight that counts as
/// a full window.
pub const FILL_WINDOW_FULL: f64 = 0.8;
/// `profile=full`: the decrease constant C (the draft's is 1).
pub const FULL_DECREASE_CONSTANT: f64 = 0.25;
/// `profile=full`: the decrease starts this much below T.
pub const FULL_TARGET_MARGIN: Duration = Duration::from_millis(4);
/// `profile=full`: whether the periodic freeze may be gentle.
pub const FULL_GENTLE_FREEZE: bool = false;

/// How the window returns after a slowdown's freeze.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Restore {
    /// Slow start back to the pre-slowdown window (the draft).
    #[default]
    SlowStart,
    /// Jump straight back to it (seed §5.1.3, first fix).
    Jump,
    /// Jump back if the queue measured while frozen was empty (at most
    /// `empty_queue`), else slow start as the draft.
    Guarded,
}

/// How much a round above TARGET takes off the window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Decrease {
    /// `C·W·(q/T − 1)` (the draft, §4.3).
    #[default]
    Draft,
    /// `C·W·(q − T)/srtt`: the bytes of the queue above T.
    ExcessQueue,
}

/// What a loss does when it comes with an empty queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EmptyQueueLoss {
    /// Halve, as any other loss (the draft).
    #[default]
    Halve,
    /// Nothing: the loss is not congestion.
    Ignore,
}

/// The round trip a window is paced over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PacingRtt {
    /// The smoothed RTT (RFC 9002 §5.3), as every controller of this crate.
    #[default]
    Smoothed,
    /// The current delay (the minimum of the latest samples), when smaller.
    Current,
}

/// How much LEDBAT++ defers to other traffic; [`crate::deadline`] lowers it
/// above level 0 (`LedbatPlusPlus::set_deference`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Deference {
    /// LEDBAT++ as configured: periodic slowdowns and the decrease above T.
    #[default]
    Full,
    /// The decrease above T, but no slowdowns (a due one waits).
    DelayOnly,
    /// Neither: additive increase and the loss decrease only (Reno-like
    /// with GAIN 1; [`crate::deadline`] also sets CUBIC's β for it,
    /// `LedbatPlusPlus::set_loss_beta`).
    None,
}

/// Parameters of [`LedbatPlusPlus`]. Defaults are draft -01's; fields are
/// set only through [`LedbatPlusPlusConfig::set`], which range-checks every
/// value, so every config is one the per-ACK code can run.
#[derive(Clone, Debug, PartialEq)]
pub struct LedbatPlusPlusConfig {
    /// TARGET queuing delay T. Default 60 ms. Key `target`, 1 ms to 1 s.
    target: Duration,
    /// Largest GAIN divisor. Default 16. Key `gain_divisor_max`, 1 to 1024.
    gain_divisor_max: u64,
    /// Constant C of the decrease rule. Default 1. Key `decrease_constant`,
    /// 0.01 to 100.
    decrease_constant: f64,
    /// Slow start ends when q > this · T. Default 0.75. Key `ss_exit`,
    /// 0.01 to 1.
    slow_start_exit: f64,
    /// Minimum window, packets. Default 2. Key `min_cwnd`, 1 to 64.
    min_cwnd: u64,
    /// Initial window, packets (never below `min_cwnd`). Default 2.
    /// Key `init_cwnd`, 1 to 1000.
    init_cwnd: u64,
    /// Whether periodic slowdowns happen at all. Default true. Key `slowdown`.
    slowdown: bool,
    /// Freeze length, RTTs of time. Default 2. Key `slowdown_rtts`, 1 to 16.
    slowdown_rtts: u32,
    /// Rounds from the end of the initial slow start to the initial
    /// slowdown. Default 2. Key `initial_slowdown_rtts`, 1 to 1000.
    initial_slowdown_rtts: u64,
    /// Next slowdown due this many slowdown durations after the last ended.
    /// Default 9. Key `slowdown_interval`, 1 to 1000.
    slowdown_interval: u32,
    /// How the window returns after a freeze. Default slow start.
    /// Key `restore`, `slow_start` or `jump`.
    restore: Restore,
    /// Ignore delay samples for one round trip after the window is restored.
    /// Default false. Key `skip_rtt_after_restore`.
    skip_rtt_after_restore: bool,
    /// A queuing delay at most this is an empty queue (`restore=guarded`,
    /// `gentle_freeze`, `loss_on_empty_queue`). Default 15 ms (T/4).
    /// Key `empty_queue`, 0 to 1 s.
    empty_queue: Duration,
    /// Fraction of time a periodic slowdown may take: when set, the next
    /// slowdown starts `D / duty` after the last one started (clamped to
    /// the period bounds) instead of 9·D after it ended. Default unset.
    /// Key `slowdown_duty`, 0.001 to 0.5.
    slowdown_duty: Option<f64>,
    /// Shortest period between slowdown starts with `slowdown_duty`.
    /// Default 0. Key `slowdown_period_min`, 0 to 10 min.
    slowdown_period_min: Duration,
    /// Longest period between slowdown starts with `slowdown_duty` (the
    /// minimum wins if larger). Default 10 min. Key `slowdown_period_max`,
    /// 1 s to 10 min.
    slowdown_period_max: Duration,
    /// A periodic freeze holds half the window, not 2 packets, when the
    /// previous freeze measured an empty queue. Default false.
    /// Key `gentle_freeze`.
    gentle_freeze: bool,
    /// In congestion avoidance with an empty queue, grow by one byte per
    /// acknowledged byte instead of GAIN·MSS per round, paced as a slow start.
    /// Default false. Key `fill_empty_queue`.
    fill_empty_queue: bool,
    /// `fill_empty_queue` waits this long after any loss: an empty queue
    /// with losses is a shallow buffer shared with a loss-based flow, not an
    /// idle link. Default 2 s. Key `fill_quiet`, 0 to 10 min.
    fill_quiet: Duration,
    /// The decrease rule above T. Default draft. Key `decrease`, `draft` or
    /// `excess_queue`.
    decrease: Decrease,
    /// What a loss with an empty queue does. Default halve.
    /// Key `loss_on_empty_queue`, `halve` or `ignore`.
    loss_on_empty_queue: EmptyQueueLoss,
    /// `fill_empty_queue` counts an empty queue only on packets sent while
    /// at least 4/5 of the window was in flight. Default false.
    /// Key `fill_window_limited`.
    fill_window_limited: bool,
    /// The decrease applies above T minus this (at most T). Default 0.
    /// Key `target_margin`, 0 to 1 s.
    target_margin: Duration,
    /// The round trip the pacing rate spreads the window over. Default
    /// the smoothed RTT. Key `pacing_rtt`, `smoothed` or `current`.
    pacing_rtt: PacingRtt,
    /// Delay filters (keys `current_filter`, `base_history`, `base_bucket`).
    delay: DelayConfig,
}

impl Default for LedbatPlusPlusConfig {
    fn default() -> Self {
        Self {
            target: TARGET,
            gain_divisor_max: GAIN_DIVISOR_MAX,
            decrease_constant: DECREASE_CONSTANT,
            slow_start_exit: SLOW_START_EXIT,
            min_cwnd: MIN_CWND,
            init_cwnd: INIT_CWND,
            slowdown: true,
            slowdown_rtts: SLOWDOWN_RTTS as u32,
            initial_slowdown_rtts: INITIAL_SLOWDOWN_RTTS,
            slowdown_interval: SLOWDOWN_INTERVAL,
            restore: Restore::SlowStart,
            skip_rtt_after_restore: false,
            empty_queue: EMPTY_QUEUE,
            slowdown_duty: None,
            slowdown_period_min: Duration::ZERO,
            slowdown_period_max: SLOWDOWN_PERIOD_MAX,
            gentle_freeze: false,
            loss_on_empty_queue: EmptyQueueLoss::Halve,
            decrease: Decrease::Draft,
            fill_empty_queue: false,
            fill_quiet: FILL_QUIET,
            target_margin: Duration::ZERO,
            fill_window_limited: false,
            pacing_rtt: PacingRtt::Smoothed,
            delay: DelayConfig::default(),
        }
    }
}

impl LedbatPlusPlusConfig {
    /// Every spec key.
    pub const KEYS: &'static [&'static str] = &[
        "profile",
        "target",
        "gain_divisor_max",
        "decrease_constant",
        "ss_exit",
        "min_cwnd",
        "init_cwnd",
        "slowdown",
        "slowdown_rtts",
        "initial_slowdown_rtts",
        "slowdown_interval",
        "restore",
        "skip_rtt_after_restore",
        "empty_queue",
        "slowdown_duty",
        "slowdown_period_min",
        "slowdown_period_max",
        "gentle_freeze",
        "loss_on_empty_queue",
        "decrease",
        "fill_empty_queue",
        "fill_quiet",
        "target_margin",
        "pacing_rtt",
        "fill_window_limited",
        "current_filter",
        "base_history",
        "base_bucket",
    ];

    /// Sets one spec parameter.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ParamError> {
        if let Some(result) = self.delay.set(key, value) {
            return result;
        }
        match key {
            "profile" => {
                // A profile sets every key of its own (module docs).
                let draft = Self::default();
                self.restore = draft.restore;
                self.skip_rtt_after_restore = draft.skip_rtt_after_restore;
                self.empty_queue = draft.empty_queue;
                self.slowdown_duty = draft.slowdown_duty;
                self.slowdown_period_min = draft.slowdown_period_min;
                self.slowdown_period_max = draft.slowdown_period_max;
                self.gentle_freeze = draft.gentle_freeze;
                self.loss_on_empty_queue = draft.loss_on_empty_queue;
                self.decrease = draft.decrease;
                self.fill_empty_queue = draft.fill_empty_queue;
                self.fill_quiet = draft.fill_quiet;
                self.target_margin = draft.target_margin;
                self.pacing_rtt = draft.pacing_rtt;
                self.fill_window_limited = draft.fill_window_limited;
                self.decrease_constant = draft.decrease_constant;
                match params::one_of(key, value, &["draft", "seed", "full"])? {
                    "seed" => {
                        self.restore = Restore::Jump;
                        self.skip_rtt_after_restore = true;
                    }
                    "full" => {
                        self.restore = Restore::Guarded;
                        self.skip_rtt_after_restore = true;
                        self.slowdown_duty = Some(FULL_SLOWDOWN_DUTY);
                        self.slowdown_period_min = FULL_SLOWDOWN_PERIOD_MIN;
                        self.slowdown_period_max = FULL_SLOWDOWN_PERIOD_MAX;
                        self.gentle_freeze = FULL_GENTLE_FREEZE;
                        self.loss_on_empty_queue = EmptyQueueLoss::Ignore;
                        self.decrease = Decrease::ExcessQueue;
                        self.fill_empty_queue = true;
                        self.decrease_constant = FULL_DECREASE_CONSTANT;
                        self.target_margin = FULL_TARGET_MARGIN;
                        self.pacing_rtt = PacingRtt::Current;
                        self.fill_window_limited = true;
                    }
                    _ => (),
                }
            }
            "target" => {
                self.target = params::duration_in(
                    key,
                    value,
                    Duration::from_millis(1),
                    Duration::from_secs(1),
                )?
            }
            "gain_divisor_max" => self.gain_divisor_max = params::u64_in(key, value, 1, 1024)?,
            "decrease_constant" => {
                self.decrease_constant = params::f64_in(key, value, 0.01, 100.0)?
            }
            "ss_exit" => self.slow_start_exit = params::f64_in(key, value, 0.01, 1.0)?,
            "min_cwnd" => self.min_cwnd = params::u64_in(key, value, 1, 64)?,
            "init_cwnd" => self.init_cwnd = params::u64_in(key, value, 1, 1000)?,
            "slowdown" => self.slowdown = params::bool_value(key, value)?,
            "slowdown_rtts" => self.slowdown_rtts = params::u64_in(key, value, 1, 16)? as u32,
            "initial_slowdown_rtts" => {
                self.initial_slowdown_rtts = params::u64_in(key, value, 1, 1000)?
            }
            "slowdown_interval" => {
                self.slowdown_interval = params::u64_in(key, value, 1, 1000)? as u32
            }
            "restore" => {
                self.restore = match params::one_of(key, value, &["slow_start", "jump", "guarded"])?
                {
                    "jump" => Restore::Jump,
                    "guarded" => Restore::Guarded,
                    _ => Restore::SlowStart,
                }
            }
            "skip_rtt_after_restore" => {
                self.skip_rtt_after_restore = params::bool_value(key, value)?
            }
            "empty_queue" => {
                self.empty_queue =
                    params::duration_in(key, value, Duration::ZERO, Duration::from_secs(1))?
            }
            "slowdown_duty" => self.slowdown_duty = Some(params::f64_in(key, value, 0.001, 0.5)?),
            "slowdown_period_min" => {
                self.slowdown_period_min =
                    params::duration_in(key, value, Duration::ZERO, SLOWDOWN_PERIOD_MAX)?
            }
            "slowdown_period_max" => {
                self.slowdown_period_max =
                    params::duration_in(key, value, Duration::from_secs(1), SLOWDOWN_PERIOD_MAX)?
            }
            "gentle_freeze" => self.gentle_freeze = params::bool_value(key, value)?,
            "fill_empty_queue" => self.fill_empty_queue = params::bool_value(key, value)?,
            "fill_quiet" => {
                self.fill_quiet =
                    params::duration_in(key, value, Duration::ZERO, SLOWDOWN_PERIOD_MAX)?
            }
            "target_margin" => {
                self.target_margin =
                    params::duration_in(key, value, Duration::ZERO, Duration::from_secs(1))?
            }
            "fill_window_limited" => self.fill_window_limited = params::bool_value(key, value)?,
            "pacing_rtt" => {
                self.pacing_rtt = match params::one_of(key, value, &["smoothed", "current"])? {
                    "current" => PacingRtt::Current,
                    _ => PacingRtt::Smoothed,
                }
            }
            "decrease" => {
                self.decrease = match params::one_of(key, value, &["draft", "excess_queue"])? {
                    "excess_queue" => Decrease::ExcessQueue,
                    _ => Decrease::Draft,
                }
            }
            "loss_on_empty_queue" => {
                self.loss_on_empty_queue = match params::one_of(key, value, &["halve", "ignore"])? {
                    "ignore" => EmptyQueueLoss::Ignore,
                    _ => EmptyQueueLoss::Halve,
                }
            }
            _ => return Err(params::unknown_key("ledbatpp", key, Self::KEYS)),
        }
        Ok(())
    }

    /// TARGET queuing delay T.
    pub fn target(&self) -> Duration {
        self.target
    }

    /// How the window returns after a freeze.
    pub fn restore(&self) -> Restore {
        self.restore
    }

    /// Whether delay samples are ignored for one round trip after a restore.
    pub fn skip_rtt_after_restore(&self) -> bool {
        self.skip_rtt_after_restore
    }

    /// The largest GAIN divisor.
    pub fn gain_divisor_max(&self) -> u64 {
        self.gain_divisor_max
    }
}

/// What the controller is doing; the data of each phase lives in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// The initial slow start, the only one left on delay (§4.1).
    InitialSlowStart,
    /// Slow start back to ssthresh after persistent congestion; not left on
    /// delay (§4.1: only the initial slow start is).
    SlowStart {
        /// Round ends left before it is deemed application-limited.
        rounds_left: u64,
    },
    CongestionAvoidance,
    /// The freeze at the minimum window (§4.4), from `start` until the first
    /// ACK at or after `until` = `start + slowdown_rtts · rtt`.
    Slowdown {
        start: Instant,
        until: Instant,
        /// The smoothed RTT before the slowdown.
        rtt: Duration,
        /// The smallest queuing delay measured while frozen (`Duration::MAX`
        /// before the first sample).
        min_queue: Duration,
    },
    /// Slow start back to ssthresh after a freeze (§4.4).
    RampUp {
        /// When the slowdown began (D runs from here).
        slowdown_start: Instant,
        /// Round ends left before the ramp-up is deemed application-limited.
        rounds_left: u64,
    },
}

/// When the next periodic slowdown is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Schedule {
    /// None planned: before the initial slow start ends, during a slowdown,
    /// or with `slowdown=false`.
    None,
    /// The initial slowdown, after this many more round ends (§4.4).
    AfterRounds(u64),
    /// A periodic slowdown, at the first ACK in congestion avoidance at or
    /// after this time.
    At(Instant),
}

/// Everything a spurious loss may have to restore.
#[derive(Clone, Copy, Debug)]
struct State {
    cwnd: f64,
    /// `f64::INFINITY` until the initial slow start ends.
    ssthresh: f64,
    phase: Phase,
    next_slowdown: Schedule,
    recovery: RecoveryPeriod,
    /// Delay samples of packets sent before this are ignored
    /// (`skip_rtt_after_restore`).
    skip_until: Option<Instant>,
    /// The last freeze measured an empty queue (`gentle_freeze`).
    last_freeze_empty: bool,
    /// The current slow start is a catch-up ([`LedbatPlusPlus::slow_start_to`]):
    /// it grows one byte per byte acknowledged, not GAIN.
    catching_up: bool,
}

impl HasWindow<f64> for State {
    fn window_mut(&mut self) -> &mut f64 {
        &mut self.cwnd
    }
}

/// The LEDBAT++ controller (see the module docs).
#[derive(Debug)]
pub struct LedbatPlusPlus {
    cfg: LedbatPlusPlusConfig,
    bounds: WindowBounds<f64>,
    /// `target · slow_start_exit`.
    exit_delay: Duration,
    /// TARGET in nanoseconds (≥ 1 ms, so never zero).
    target_ns: f64,
    /// `target_margin` in nanoseconds, at most `target_ns`.
    margin_ns: f64,
    /// Longest wait for the next slowdown: the base-delay history.
    max_slowdown_wait: Duration,
    s: State,
    /// The window when the current round began (W of the §4.3 rule).
    round_cwnd: f64,
    rounds: Rounds,
    delay: DelayEstimator,
    flight: FlightSize,
    /// Smoothed RTT of the latest ACK that carried a sample.
    srtt: Option<Duration>,
    /// GAIN, recomputed when the base delay changes.
    gain: f64,
    gain_base: Option<Duration>,
    saved: Checkpoint<State>,
    /// The last ACK in congestion avoidance grew by `fill_empty_queue`.
    filling: bool,
    /// Since when every packet sent left at least 4/5 of the window in
    /// flight (`fill_window_limited`); `None` after one that did not.
    window_full_since: Option<Instant>,
    /// When the latest loss was reported (`fill_quiet`).
    last_loss: Option<Instant>,
    /// How far [`crate::deadline`] has taken the controller out of its LBE
    /// behaviour ([`Deference::Full`] unless steered).
    deference: Deference,
    /// The fraction of the window a loss leaves: [`HALVE`] ("halve", seed
    /// §3) unless [`crate::deadline`] sets CUBIC's β at its top level
    /// (`LedbatPlusPlus::set_loss_beta`).
    loss_beta: f64,
}

impl LedbatPlusPlus {
    /// A LEDBAT++ controller for `path`, in its initial slow start at
    /// `init_cwnd` packets (2, §4.1; the path's initial window is not used).
    pub fn new(cfg: LedbatPlusPlusConfig, path: PathInfo) -> Self {
        let bounds = WindowBounds::<f64>::new(path.max_datagram_size, cfg.min_cwnd);
        let cwnd = bounds.clamp(cfg.init_cwnd as f64 * bounds.mss);
        let history = cfg
            .delay
            .base_bucket
            .saturating_mul(cfg.delay.base_history as u32);
        Self {
            bounds,
            exit_delay: cfg.target.mul_f64(cfg.slow_start_exit),
            target_ns: delay::nanos(cfg.target),
            margin_ns: delay::nanos(cfg.target_margin.min(cfg.target)),
            max_slowdown_wait: history,
            s: State {
                cwnd,
                ssthresh: f64::INFINITY,
                phase: Phase::InitialSlowStart,
                next_slowdown: Schedule::None,
                recovery: RecoveryPeriod::default(),
                skip_until: None,
                last_freeze_empty: false,
                catching_up: false,
            },
            round_cwnd: cwnd,
            rounds: Rounds::default(),
            delay: DelayEstimator::new(&cfg.delay),
            flight: FlightSize::default(),
            srtt: None,
            gain: 1.0 / cfg.gain_divisor_max as f64,
            gain_base: None,
            saved: Checkpoint::default(),
            filling: false,
            window_full_since: None,
            last_loss: None,
            deference: Deference::Full,
            loss_beta: HALVE,
            cfg,
        }
    }

    /// GAIN for a base delay; the smallest GAIN while the base is unknown
    /// or zero.
    fn gain_for(&self, base: Option<Duration>) -> f64 {
        let max = self.cfg.gain_divisor_max;
        let divisor = match base {
            // §4.2, seed Eq. (2): GAIN = 1 / min(16, CEIL(2·T / RTT_b)), and
            // "CEIL(X) is defined as the smallest integer larger than X":
            // floor(X) + 1, so 2T/base = 2 gives 3 (not ceil's 2; module docs).
            Some(b) if !b.is_zero() => {
                ((2 * self.cfg.target.as_nanos()) / b.as_nanos() + 1).min(max as u128) as u64
            }
            _ => max,
        };
        1.0 / divisor as f64
    }

    /// The loss decrease: halving unless steered (`loss_beta`).
    fn decrease_on_loss(&mut self) {
        self.s.cwnd = (self.s.cwnd * self.loss_beta).max(self.bounds.min);
    }

    /// Leaves the initial slow start: "An initial slow-down is performed 2
    /// RTTs after exiting the initial slow-start" (seed §3, of §4.4).
    fn leave_initial_slow_start(&mut self, now: Instant) {
        self.s.ssthresh = self.s.cwnd;
        self.s.phase = Phase::CongestionAvoidance;
        if self.cfg.slowdown {
            self.s.next_slowdown = Schedule::AfterRounds(self.cfg.initial_slowdown_rtts);
        }
        self.rounds.restart(now);
        self.round_cwnd = self.s.cwnd;
    }

    /// Rounds of slow start from the minimum window to ssthresh:
    /// `ceil(log_{1+GAIN}(ssthresh / min_cwnd))` (GAIN ≥ 1/1024, so the
    /// logarithm's base is above 1).
    fn rounds_to_restore(&self) -> u64 {
        let ratio = self.s.ssthresh / self.bounds.min;
        if ratio > 1.0 {
            (ratio.ln() / self.gain.ln_1p()).ceil().min(1e6) as u64
        } else {
            0
        }
    }

    /// Starts a slowdown; `periodic` is false for the initial one.
    fn start_slowdown(&mut self, now: Instant, periodic: bool) {
        // §4.4: ssthresh keeps the window to return to, then "Keep CWND
        // frozen at 2 packets for 2 RTT" (RTT: module docs).
        let rtt = self.srtt.unwrap_or(Duration::ZERO);
        let freeze = rtt.saturating_mul(self.cfg.slowdown_rtts);
        self.s.ssthresh = self.s.cwnd;
        self.s.cwnd = if periodic && self.cfg.gentle_freeze && self.s.last_freeze_empty {
            // `gentle_freeze`: half the window (module docs).
            (self.s.cwnd / 2.0).max(self.bounds.min)
        } else {
            self.bounds.min
        };
        self.s.phase = Phase::Slowdown {
            start: now,
            until: now.checked_add(freeze).unwrap_or(now),
            rtt,
            min_queue: Duration::MAX,
        };
        self.s.next_slowdown = Schedule::None;
        self.rounds.restart(now);
        self.round_cwnd = self.s.cwnd;
    }

    /// The freeze is over: ramp up (§4.4; seed §3: "then performs a
    /// slow-start increase back to the CW value that it was using before the
    /// periodic decrease"), or jump back (`restore=jump`).
    fn end_freeze(&mut self, now: Instant, start: Instant, rtt: Duration, min_queue: Duration) {
        let empty = min_queue <= self.cfg.empty_queue;
        self.s.last_freeze_empty = empty;
        let jump = match self.cfg.restore {
            Restore::SlowStart => false,
            Restore::Jump => true,
            Restore::Guarded => empty,
        };
        match jump {
            false => {
                let full = self.rounds_to_restore();
                self.s.phase = Phase::RampUp {
                    slowdown_start: start,
                    rounds_left: full.saturating_mul(2).saturating_add(1),
                };
                self.rounds.restart(now);
                self.round_cwnd = self.s.cwnd;
            }
            true => {
                self.s.cwnd = self.s.ssthresh.max(self.bounds.min);
                // The time a ramp-up would have taken, in RTTs of the freeze.
                let ramp = rtt.saturating_mul(self.rounds_to_restore().min(u32::MAX as u64) as u32);
                let duration = now.saturating_duration_since(start).saturating_add(ramp);
                self.finish_slowdown(now, start, duration, true);
            }
        }
    }

    /// The slowdown that began at `start` counts as `duration` for the
    /// draft's schedule: schedules the next one and returns to congestion
    /// avoidance.
    fn finish_slowdown(
        &mut self,
        now: Instant,
        start: Instant,
        duration: Duration,
        restored: bool,
    ) {
        let due = match self.cfg.slowdown_duty {
            // `slowdown_duty`: the time actually spent, over the duty, from
            // the start of this slowdown, within the period bounds.
            Some(duty) => {
                let spent = now.saturating_duration_since(start);
                let period = spent
                    .div_f64(duty)
                    .min(self.cfg.slowdown_period_max)
                    .max(self.cfg.slowdown_period_min);
                start.checked_add(period).unwrap_or(now).max(now)
            }
            // §4.4: the next slowdown is 9 slowdown durations later, capped
            // at the base-delay history (module docs).
            None => {
                let wait = duration
                    .saturating_mul(self.cfg.slowdown_interval)
                    .min(self.max_slowdown_wait);
                now.checked_add(wait).unwrap_or(now)
            }
        };
        self.s.next_slowdown = Schedule::At(due);
        self.s.phase = Phase::CongestionAvoidance;
        self.rounds.restart(now);
        self.round_cwnd = self.s.cwnd;
        if restored && self.cfg.skip_rtt_after_restore {
            let rtt = self.srtt.unwrap_or(Duration::ZERO);
            self.s.skip_until = Some(now.checked_add(rtt).unwrap_or(now));
        }
    }

    /// Round-end bookkeeping; returns whether the phase changed.
    fn on_round_end(&mut self, now: Instant) -> bool {
        let mut changed = false;
        match self.s.phase {
            Phase::CongestionAvoidance => match self.s.next_slowdown {
                Schedule::AfterRounds(n) if n > 1 => {
                    self.s.next_slowdown = Schedule::AfterRounds(n - 1)
                }
                // Held while steered above level 0 (`Deference`).
                Schedule::AfterRounds(_) if self.deference == Deference::Full => {
                    self.start_slowdown(now, false);
                    changed = true;
                }
                Schedule::AfterRounds(_) => (),
                Schedule::At(_) | Schedule::None => (),
            },
            Phase::RampUp {
                slowdown_start,
                rounds_left,
            } => {
                if rounds_left <= 1 {
                    // Application-limited: the window stays (module docs).
                    let duration = now.saturating_duration_since(slowdown_start);
                    self.finish_slowdown(now, slowdown_start, duration, false);
                    changed = true;
                } else {
                    self.s.phase = Phase::RampUp {
                        slowdown_start,
                        rounds_left: rounds_left - 1,
                    };
                }
            }
            Phase::SlowStart { rounds_left } => {
                if rounds_left <= 1 {
                    // Application-limited: the window stays (module docs).
                    self.s.phase = Phase::CongestionAvoidance;
                    changed = true;
                } else {
                    self.s.phase = Phase::SlowStart {
                        rounds_left: rounds_left - 1,
                    };
                }
            }
            Phase::InitialSlowStart | Phase::Slowdown { .. } => (),
        }
        self.round_cwnd = self.s.cwnd;
        changed
    }

    fn in_slow_start(&self) -> bool {
        matches!(
            self.s.phase,
            Phase::InitialSlowStart | Phase::SlowStart { .. } | Phase::RampUp { .. }
        )
    }

    fn state_name(&self) -> &'static str {
        match self.s.phase {
            Phase::Slowdown { .. } => "slowdown",
            Phase::RampUp { .. } => "ramp_up",
            _ if self.s.recovery.in_recovery() => "recovery",
            Phase::InitialSlowStart | Phase::SlowStart { .. } => "slow_start",
            Phase::CongestionAvoidance => "congestion_avoidance",
        }
    }

    /// Sets TARGET and the largest GAIN divisor ([`crate::deadline`] steers
    /// them); clamped to the spec's ranges (1 ms to 1 s, 1 to 1024). GAIN is
    /// recomputed from the current base delay (§4.2) at once.
    pub fn set_target_and_gain_divisor_max(&mut self, target: Duration, gain_divisor_max: u64) {
        let target = target.clamp(Duration::from_millis(1), Duration::from_secs(1));
        self.cfg.target = target;
        self.cfg.gain_divisor_max = gain_divisor_max.clamp(1, 1024);
        self.target_ns = delay::nanos(target);
        self.margin_ns = delay::nanos(self.cfg.target_margin.min(target));
        self.exit_delay = target.mul_f64(self.cfg.slow_start_exit);
        self.gain = self.gain_for(self.gain_base);
    }

    /// Sets how much the controller defers ([`crate::deadline`] above level
    /// 0): without slowdowns a slowdown that falls due waits until
    /// [`Deference::Full`] is back, then starts at the next ACK (or round
    /// end, for the initial one); one under way runs its course.
    pub fn set_deference(&mut self, deference: Deference) {
        self.deference = deference;
    }

    /// How much the controller defers ([`LedbatPlusPlus::set_deference`]).
    pub fn deference(&self) -> Deference {
        self.deference
    }

    /// Sets the fraction of the window a loss leaves ([`crate::deadline`]:
    /// CUBIC's β = 0.7 at its top level, [`HALVE`] below), clamped to
    /// 0.5..=0.7: never a deeper cut than the draft's nor a shallower one
    /// than CUBIC's.
    pub fn set_loss_beta(&mut self, beta: f64) {
        self.loss_beta = beta.clamp(HALVE, crate::cubic::BETA_CUBIC);
    }

    /// Lets the window slow-start up to `bytes` ([`crate::deadline`]'s
    /// catch-up, as `Cdg::slow_start_to`): in congestion avoidance or a
    /// catch-up, out of recovery and below `bytes`, ssthresh becomes `bytes`
    /// (and the round bound starts anew) and the window
    /// grows one byte per byte acknowledged (not GAIN) until it gets there,
    /// not left on delay; a loss ends it as usual, and it has the round
    /// bound of any slow start after the initial one (module docs). Returns
    /// whether it did.
    pub fn slow_start_to(&mut self, bytes: u64) -> bool {
        let catching_up = matches!(self.s.phase, Phase::SlowStart { .. }) && self.s.catching_up;
        if !(self.s.phase == Phase::CongestionAvoidance || catching_up)
            || self.s.recovery.in_recovery()
            || self.s.cwnd >= bytes as f64
        {
            return false;
        }
        self.s.ssthresh = (bytes as f64).min(MAX_WINDOW_BYTES as f64);
        // Doubling each round: log2 of the way up, twice, as the bound.
        let rounds = (self.s.ssthresh / self.s.cwnd.max(1.0)).log2().ceil() as u64;
        self.s.phase = Phase::SlowStart {
            rounds_left: rounds.saturating_mul(2).saturating_add(1),
        };
        self.s.catching_up = true;
        true
    }
}

impl CongestionController for LedbatPlusPlus {
    fn name(&self) -> &'static str {
        "ledbatpp"
    }

    fn on_packet_sent(&mut self, now: Instant, bytes: u64, bytes_in_flight: u64) {
        self.flight.on_packet_sent(bytes, bytes_in_flight);
        // `fill_window_limited`: is the window full after this packet?
        let after = bytes_in_flight.saturating_add(bytes) as f64;
        if after >= FILL_WINDOW_FULL * self.s.cwnd {
            self.window_full_since.get_or_insert(now);
        } else {
            self.window_full_since = None;
        }
    }

    fn on_ack(&mut self, ack: &AckEvent<'_>) {
        let now = ack.now;
        let bytes = ack.bytes_acked() as f64;
        let largest = round::largest_sent(ack.acked);

        self.s.recovery.on_ack(largest);
        if ack.rtt.new_sample {
            self.srtt = Some(ack.rtt.smoothed_rtt);
        }
        let skipping = match self.s.skip_until {
            Some(until) if largest.is_some_and(|sent| sent >= until) => {
                self.s.skip_until = None;
                false
            }
            Some(_) => true,
            None => false,
        };
        if ack.rtt.new_sample && !skipping {
            self.delay.on_sample(now, delay::adjusted_rtt(&ack.rtt));
        } else {
            self.delay.advance(now);
        }
        let base = self.delay.base();
        if base != self.gain_base {
            self.gain_base = base;
            self.gain = self.gain_for(base);
        }

        if let Phase::Slowdown { min_queue, .. } = &mut self.s.phase {
            if ack.rtt.new_sample && !skipping {
                *min_queue = (*min_queue).min(self.delay.queuing());
            }
        }
        let mut changed = self.rounds.on_ack(now, largest) && self.on_round_end(now);
        match self.s.phase {
            Phase::Slowdown {
                start,
                until,
                rtt,
                min_queue,
            } if now >= until => {
                self.end_freeze(now, start, rtt, min_queue);
                changed = true;
            }
            Phase::CongestionAvoidance => {
                if let Schedule::At(due) = self.s.next_slowdown {
                    if now >= due && self.deference == Deference::Full {
                        self.start_slowdown(now, true);
                        changed = true;
                    }
                }
            }
            _ => (),
        }
        if changed {
            return;
        }

        let may_grow = !self.s.recovery.in_recovery()
            && self.flight.at_ack(ack.bytes_in_flight).saturating_mul(2) >= self.s.cwnd as u64;
        let q = self.delay.queuing();
        match self.s.phase {
            Phase::Slowdown { .. } => (),
            // §4.1: "Exit slow start on excessive delay SHOULD be applied
            // only during the initial slow start", the exit being at a
            // queuing delay above 3/4 of TARGET.
            Phase::InitialSlowStart if q > self.exit_delay => self.leave_initial_slow_start(now),
            Phase::InitialSlowStart | Phase::SlowStart { .. } | Phase::RampUp { .. } => {
                if may_grow {
                    // §4.1: slow start adds GAIN per acknowledged byte (a
                    // catch-up one byte: `slow_start_to`).
                    let gain = match self.s.phase {
                        Phase::SlowStart { .. } if self.s.catching_up => 1.0,
                        _ => self.gain,
                    };
                    self.s.cwnd = (self.s.cwnd + gain * bytes).min(MAX_WINDOW_BYTES as f64);
                    if self.s.cwnd >= self.s.ssthresh {
                        // ssthresh may predate an MTU increase.
                        self.s.cwnd = self.s.ssthresh.max(self.bounds.min);
                        match self.s.phase {
                            Phase::RampUp { slowdown_start, .. } => {
                                let duration = now.saturating_duration_since(slowdown_start);
                                self.finish_slowdown(now, slowdown_start, duration, true);
                            }
                            _ => self.s.phase = Phase::CongestionAvoidance,
                        }
                    }
                }
            }
            Phase::CongestionAvoidance => {
                if skipping {
                    return;
                }
                // §4.3, seed Eqs. (3) and (4): per RTT, CW += GAIN if q < T,
                // CW += max(−CW/2, GAIN − C·CW·(q/T − 1)) if q > T (in MSS),
                // spread over the round's ACKs.
                let w = self.round_cwnd.max(self.bounds.min);
                let quiet = self
                    .last_loss
                    .is_none_or(|t| now.saturating_duration_since(t) >= self.cfg.fill_quiet);
                // `fill_window_limited`: the ACKed packets went out with the
                // window full (an empty queue behind a sender that did not
                // send is no sign of room).
                let limited = !self.cfg.fill_window_limited
                    || matches!(
                        (self.window_full_since, largest),
                        (Some(since), Some(sent)) if sent >= since
                    );
                self.filling =
                    self.cfg.fill_empty_queue && quiet && limited && q <= self.cfg.empty_queue;
                let mut change = if self.filling {
                    // `fill_empty_queue`: one byte per byte acknowledged.
                    bytes
                } else {
                    self.gain * self.bounds.mss * bytes / w
                };
                // `target_margin`: the decrease starts that much below T.
                let from = self.target_ns - self.margin_ns;
                let q = delay::nanos(q);
                if q > from && self.deference != Deference::None {
                    // `decrease=excess_queue`: the excess over one RTT,
                    // (q − T)/srtt of the window, instead of (q − T)/T.
                    let per = match (self.cfg.decrease, self.srtt) {
                        (Decrease::ExcessQueue, Some(srtt)) if !srtt.is_zero() => {
                            delay::nanos(srtt)
                        }
                        _ => self.target_ns,
                    };
                    change -= self.cfg.decrease_constant * ((q - from) / per) * bytes;
                    change = change.max(-bytes / 2.0);
                }
                if !may_grow {
                    change = change.min(0.0);
                }
                self.s.cwnd = self.bounds.clamp(self.s.cwnd + change);
            }
        }
    }

    fn on_congestion_event(&mut self, loss: &LossEvent) {
        self.last_loss = Some(loss.now);
        self.filling = false;
        if self.cfg.loss_on_empty_queue == EmptyQueueLoss::Ignore
            && self.delay.current().is_some()
            && self.delay.queuing() <= self.cfg.empty_queue
        {
            // Not congestion for an LBE flow (module docs).
            return;
        }
        if !self.s.recovery.on_loss(loss) {
            return;
        }
        match self.s.phase {
            Phase::Slowdown { .. } => {
                // The window is already at the minimum: lower the ramp-up's goal.
                self.s.ssthresh = (self.s.ssthresh / 2.0).max(self.bounds.min);
            }
            Phase::InitialSlowStart => {
                self.decrease_on_loss();
                self.leave_initial_slow_start(loss.now);
            }
            Phase::RampUp { slowdown_start, .. } => {
                // A loss ends the ramp-up (RFC 5681's halving applies).
                self.decrease_on_loss();
                self.s.ssthresh = self.s.cwnd;
                let duration = loss.now.saturating_duration_since(slowdown_start);
                self.finish_slowdown(loss.now, slowdown_start, duration, false);
            }
            Phase::SlowStart { .. } | Phase::CongestionAvoidance => {
                self.decrease_on_loss();
                self.s.ssthresh = self.s.cwnd;
                self.s.phase = Phase::CongestionAvoidance;
            }
        }
    }

    fn on_persistent_congestion(&mut self, _now: Instant) {
        self.s.cwnd = self.bounds.min;
        self.s.catching_up = false;
        if self.s.phase == Phase::CongestionAvoidance && self.s.ssthresh > self.bounds.min {
            // Slow start back towards ssthresh, not left on delay (§4.1).
            let full = self.rounds_to_restore();
            self.s.phase = Phase::SlowStart {
                rounds_left: full.saturating_mul(2).saturating_add(1),
            };
        }
    }

    fn checkpoint(&mut self) {
        self.saved.save(&self.s);
    }

    fn rollback(&mut self) -> bool {
        self.saved.rollback(&mut self.s, &self.bounds)
    }

    fn on_mtu_change(&mut self, max_datagram_size: u64) {
        self.bounds
            .on_mtu_change(max_datagram_size, &mut self.s.cwnd);
        if let Phase::Slowdown { .. } = self.s.phase {
            // The freeze is at 2 packets of the new size.
            self.s.cwnd = self.bounds.min;
        }
    }

    fn window(&self) -> u64 {
        self.s.cwnd as u64
    }

    /// [`pacing`]: 2 × cwnd/srtt in a slow start (initial, after persistent
    /// congestion, ramp-up) while cwnd < ssthresh/2, else 1.2 × cwnd/srtt.
    fn pacing_rate(&self) -> Option<u64> {
        if self.filling && self.s.phase == Phase::CongestionAvoidance {
            // `fill_empty_queue`: the queue is empty, so the current delay is
            // the round trip (the smoothed RTT may still hold a queue gone).
            let rtt = self.delay.current().or(self.srtt);
            return pacing::rate(self.window(), rtt, true);
        }
        let slow_start =
            self.in_slow_start() && pacing::in_slow_start(self.s.cwnd, self.s.ssthresh);
        // `pacing_rtt=current` (module docs).
        let rtt = match (self.cfg.pacing_rtt, self.delay.current(), self.srtt) {
            (PacingRtt::Current, Some(current), Some(srtt)) => Some(current.min(srtt)),
            _ => self.srtt,
        };
        pacing::rate(self.window(), rtt, slow_start)
    }

    fn state(&self, _now: Instant) -> &'static str {
        self.state_name()
    }

    fn snapshot(&self) -> Snapshot {
        let gain = self.gain;
        self.delay
            .snapshot(self.window(), self.s.ssthresh, self.cfg.target, gain)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::ms;
    use crate::testkit::Driver;
    use crate::testkit::MSS;

    const NS: Duration = Duration::from_nanos(1);

    /// A controller on a path whose own initial window (10) LEDBAT++ ignores.
    fn driver(cfg: LedbatPlusPlusConfig) -> Driver<LedbatPlusPlus> {
        let path = PathInfo {
            max_datagram_size: MSS,
            initial_window_packets: 10,
        };
        Driver::new(LedbatPlusPlus::new(cfg, path))
    }

    fn config(spec: &[(&str, &str)]) -> LedbatPlusPlusConfig {
        let mut cfg = LedbatPlusPlusConfig::default();
        for (k, v) in spec {
            cfg.set(k, v).unwrap();
        }
        cfg
    }

    fn state(d: &Driver<LedbatPlusPlus>) -> &'static str {
        d.cc.state(d.now)
    }

    #[test]
    fn the_initial_window_is_two_packets() {
        let d = driver(config(&[]));
        assert_eq!((state(&d), d.cc.window()), ("slow_start", 2 * MSS));
        assert_eq!(driver(config(&[("init_cwnd", "10")])).cc.window(), 12_000);
        // Never below the minimum window.
        let d = driver(config(&[("min_cwnd", "4")]));
        assert_eq!(d.cc.window(), 4 * MSS);
    }

    #[test]
    fn gain_uses_the_smallest_integer_larger_than_2t_over_base() {
        let d = driver(config(&[]));
        assert_eq!(d.cc.snapshot().gain, Some(1.0 / 16.0), "no base yet");
        // GAIN = 1 / min(16, CEIL(2·60 ms / base)), CEIL(X) > X.
        let cases = [
            (ms(5), 16.0),                       // CEIL(24) = 25, capped
            (Duration::from_micros(7500), 16.0), // CEIL(16) = 17, capped
            (ms(8), 16.0),                       // CEIL(15) = 16
            (Duration::from_micros(8500), 15.0), // CEIL(14.1) = 15
            (ms(30), 5.0),                       // CEIL(4) = 5
            (ms(35), 4.0),                       // CEIL(3.43) = 4
            (ms(40), 4.0),                       // CEIL(3) = 4
            (ms(60), 3.0),                       // CEIL(2) = 3
            (ms(100), 2.0),                      // CEIL(1.2) = 2
            (ms(120), 2.0),                      // CEIL(1) = 2
            (ms(200), 1.0),                      // CEIL(0.6) = 1
        ];
        for (base, divisor) in cases {
            let mut d = driver(config(&[]));
            d.ack_old(base, MSS, base);
            assert_eq!(d.cc.snapshot().gain, Some(1.0 / divisor), "base {base:?}");
        }
    }

    #[test]
    fn initial_slow_start_adds_gain_per_byte_and_exits_above_three_quarters_of_target() {
        // Base 35 ms: GAIN 1/4, each 1200-byte ACK adds 300 bytes.
        let mut d = driver(config(&[("init_cwnd", "10")]));
        d.ack_old(ms(1), MSS, ms(35));
        assert_eq!(d.cc.window(), 12_000 + 300);
        // q = 45 ms = 3/4·T exactly: still slow start (the rule is q > 3/4·T).
        for _ in 0..4 {
            d.ack_old(ms(1), MSS, ms(80));
        }
        assert_eq!(d.cc.snapshot().queuing_delay, Some(ms(45)));
        assert_eq!(state(&d), "slow_start");
        assert_eq!(d.cc.window(), 12_000 + 5 * 300);
        // 81 ms needs four samples to pass the min-of-4 filter; the fourth
        // ends slow start and does not grow the window.
        for _ in 0..3 {
            d.ack_old(ms(1), MSS, ms(81));
            assert_eq!(state(&d), "slow_start");
        }
        d.ack_old(ms(1), MSS, ms(81));
        assert_eq!(state(&d), "congestion_avoidance");
        assert_eq!(d.cc.window(), 12_000 + 8 * 300);
        assert_eq!(d.cc.snapshot().ssthresh, Some(14_400));
    }

    /// Current filter of one sample; 39 packets and base 35 ms (GAIN 1/4),
    /// one ACK of 4 packets (+1200), then q = 90 ms = 1.5·T ends slow start
    /// at exactly 48000 bytes.
    fn in_congestion_avoidance_at_48000(q_sample: Duration) -> Driver<LedbatPlusPlus> {
        let mut d = driver(config(&[("current_filter", "1"), ("init_cwnd", "39")]));
        d.ack_old(ms(1), 4 * MSS, ms(35));
        d.ack_old(ms(1), MSS, q_sample);
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 48_000));
        d
    }

    #[test]
    fn one_round_at_one_and_a_half_target_halves_and_adds_gain() {
        let mut d = in_congestion_avoidance_at_48000(ms(125));
        // One round: ACKs for W = 48000 bytes, q = 1.5·T throughout.
        // W' = W + max(GAIN·MSS − C·W·(q/T − 1), −W/2) = 48000 + 300 − 24000.
        for _ in 0..40 {
            d.ack_old(ms(1), MSS, ms(125));
        }
        assert_eq!(d.cc.snapshot().queuing_delay, Some(ms(90)));
        assert_eq!(d.cc.window(), 24_300);

        // Next round, q = 0: W' = W + GAIN·MSS, spread over 20 ACKs.
        let sent = d.last_ack;
        d.advance(ms(1));
        d.ack(sent, 1215, ms(35)); // ends the round: W = 24300
        for _ in 0..19 {
            d.ack_old(ms(1), 1215, ms(35));
        }
        assert_eq!(d.cc.snapshot().queuing_delay, Some(Duration::ZERO));
        assert_eq!(d.cc.window(), 24_300 + 300);
    }

    #[test]
    fn decrease_is_capped_at_half_the_window_per_round() {
        // q = 180 ms = 3·T: GAIN·MSS − W·(3 − 1) is far below −W/2.
        let mut d = in_congestion_avoidance_at_48000(ms(215));
        for _ in 0..40 {
            d.ack_old(ms(1), MSS, ms(215));
        }
        assert_eq!(d.cc.snapshot().queuing_delay, Some(ms(180)));
        assert_eq!(d.cc.window(), 24_000);
    }

    /// Base 240 ms (GAIN 1), current filter of one, 10 packets, one ACK per
    /// round acknowledging the window: slow start doubles per round, then a
    /// 286 ms sample (q = 46 ms > 45 ms) ends it at 48000 bytes. Two rounds
    /// later (+1 MSS in the first) the initial slowdown starts. Returns when.
    fn to_the_initial_slowdown(d: &mut Driver<LedbatPlusPlus>) -> Instant {
        d.ack(d.epoch - ms(240), 12_000, ms(240));
        assert_eq!(d.cc.window(), 24_000);
        d.round(ms(240), 24_000);
        assert_eq!(d.cc.window(), 48_000);
        d.round(ms(286), 48_000);
        assert_eq!((state(d), d.cc.window()), ("congestion_avoidance", 48_000));
        let exit = d.now;
        d.round(ms(240), 48_000);
        assert_eq!((state(d), d.cc.window()), ("congestion_avoidance", 49_200));
        d.round(ms(240), 49_200);
        assert_eq!((state(d), d.cc.window()), ("slowdown", 2 * MSS));
        assert_eq!(d.cc.snapshot().ssthresh, Some(49_200));
        assert_eq!(d.now - exit, ms(480), "2 RTTs after slow start");
        d.now
    }

    fn base_240(extra: &[(&str, &str)]) -> Driver<LedbatPlusPlus> {
        let mut spec = vec![("current_filter", "1"), ("init_cwnd", "10")];
        spec.extend_from_slice(extra);
        driver(config(&spec))
    }

    #[test]
    fn the_freeze_lasts_two_rtts_of_time_not_two_rounds() {
        let mut d = base_240(&[]);
        let slowdown = to_the_initial_slowdown(&mut d);
        // The smoothed RTT before the slowdown was 240 ms: frozen until
        // slowdown + 480 ms, however many rounds end meanwhile (four here).
        for _ in 0..4 {
            d.advance(ms(100));
            d.ack(d.last_ack, 2 * MSS, ms(240));
            assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
        }
        d.advance(ms(80) - NS);
        d.ack(d.last_ack, 2 * MSS, ms(240));
        assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
        d.advance(NS);
        d.ack(d.last_ack, 2 * MSS, ms(240));
        assert_eq!(d.now - slowdown, ms(480));
        assert_eq!((state(&d), d.cc.window()), ("ramp_up", 2 * MSS));
    }

    #[test]
    fn the_ramp_up_is_not_left_on_delay_and_schedules_nine_durations_later() {
        let mut d = base_240(&[]);
        let slowdown = to_the_initial_slowdown(&mut d);
        d.round(ms(240), 2 * MSS);
        d.round(ms(240), 2 * MSS);
        assert_eq!((state(&d), d.cc.window()), ("ramp_up", 2 * MSS));
        // q = 100 ms, above T and far above 3/4·T: slow start (GAIN 1) goes
        // on to ssthresh all the same, and stops there.
        for expect in [4_800, 9_600, 19_200, 38_400] {
            let w = d.cc.window();
            d.round(ms(340), w);
            assert_eq!((state(&d), d.cc.window()), ("ramp_up", expect));
            assert_eq!(d.cc.snapshot().queuing_delay, Some(ms(100)));
        }
        d.round(ms(340), 38_400);
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 49_200));
        let end = d.now;
        // D, measured: 480 ms of freeze and 5 rounds of 340 ms.
        let duration = end - slowdown;
        assert_eq!(duration, ms(2180));

        // The next slowdown is due 9 × D after the end of the ramp-up.
        d.ack_old(9 * duration - NS, MSS, ms(240));
        assert_eq!(state(&d), "congestion_avoidance");
        assert!(d.cc.window() > 49_200);
        d.ack_old(NS, MSS, ms(240));
        assert_eq!(d.now - end, ms(19_620));
        assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
    }

    #[test]
    fn a_loss_ends_the_ramp_up_and_d_is_the_time_spent() {
        let mut d = base_240(&[]);
        let slowdown = to_the_initial_slowdown(&mut d);
        d.round(ms(240), 2 * MSS);
        d.round(ms(240), 2 * MSS);
        d.round(ms(240), 2 * MSS);
        assert_eq!((state(&d), d.cc.window()), ("ramp_up", 4_800));
        d.advance(ms(20));
        d.loss(d.now - ms(10));
        let end = d.now;
        assert_eq!((state(&d), d.cc.window()), ("recovery", 2_400));
        assert_eq!(d.cc.snapshot().ssthresh, Some(2_400));
        assert_eq!(end - slowdown, ms(740));
        // Recovery ends with an ACK of a packet sent after it began.
        d.advance(ms(240));
        d.ack(end + NS, MSS, ms(240));
        assert_eq!(state(&d), "congestion_avoidance");
        d.ack_old(9 * ms(740) - ms(240) - NS, MSS, ms(240));
        assert_eq!(state(&d), "congestion_avoidance");
        d.ack_old(NS, MSS, ms(240));
        assert_eq!(state(&d), "slowdown");
    }

    #[test]
    fn an_application_limited_ramp_up_ends_after_twice_the_rounds_of_a_full_one() {
        let mut d = base_240(&[]);
        let slowdown = to_the_initial_slowdown(&mut d);
        d.round(ms(240), 2 * MSS);
        d.round(ms(240), 2 * MSS);
        assert_eq!(state(&d), "ramp_up");
        // A full ramp-up takes R = ceil(log2(49200 / 2400)) = 5 rounds. With
        // less than half the window in flight the window cannot grow; the
        // ramp-up ends at the end of round 2·R + 1 = 11, the window as is.
        let limited = |d: &mut Driver<LedbatPlusPlus>| {
            let sent = d.last_ack;
            d.advance(ms(240));
            d.ack_full(sent, 1000, ms(240), Duration::ZERO, true, Some(1000));
        };
        for _ in 0..10 {
            limited(&mut d);
            assert_eq!((state(&d), d.cc.window()), ("ramp_up", 2 * MSS));
        }
        limited(&mut d);
        assert_eq!(
            (state(&d), d.cc.window()),
            ("congestion_avoidance", 2 * MSS)
        );
        let end = d.now;
        assert_eq!(end - slowdown, ms(480 + 11 * 240));
        d.ack_old(9 * ms(3120) - NS, MSS, ms(240));
        assert_eq!(state(&d), "congestion_avoidance");
        d.ack_old(NS, MSS, ms(240));
        assert_eq!(state(&d), "slowdown");
    }

    #[test]
    fn restore_jump_returns_to_the_window_after_the_freeze() {
        let mut d = base_240(&[("restore", "jump")]);
        let slowdown = to_the_initial_slowdown(&mut d);
        d.round(ms(240), 2 * MSS);
        assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
        d.round(ms(240), 2 * MSS);
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 49_200));
        let end = d.now;
        assert_eq!(end - slowdown, ms(480));
        // Scheduled as if the ramp-up had taken ceil(log2(49200/2400)) = 5
        // rounds of the freeze's 240 ms: D = 480 + 1200 ms, next 9·D later.
        d.ack_old(ms(15_120) - NS, MSS, ms(240));
        assert_eq!(state(&d), "congestion_avoidance");
        d.ack_old(NS, MSS, ms(240));
        assert_eq!(state(&d), "slowdown");
    }

    #[test]
    fn the_wait_for_the_next_slowdown_is_capped_at_the_base_history() {
        // History of one 1 s bucket: 9·D = 15.12 s is capped at 1 s.
        let mut d = base_240(&[
            ("restore", "jump"),
            ("base_bucket", "1s"),
            ("base_history", "1"),
        ]);
        to_the_initial_slowdown(&mut d);
        d.round(ms(240), 2 * MSS);
        d.round(ms(240), 2 * MSS);
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 49_200));
        d.ack_old(ms(1000) - NS, MSS, ms(240));
        assert_eq!(state(&d), "congestion_avoidance");
        d.ack_old(NS, MSS, ms(240));
        assert_eq!(state(&d), "slowdown");
    }

    /// A jump restore at `r` with srtt 240 ms, then ACKs with q = 180 ms:
    /// for packets sent before `r`, for one sent at `r + 240 ms − 1 ns`, then
    /// for one sent at `r + 240 ms`. Returns the window and current delay
    /// after each group.
    fn samples_after_restore(spec: &[(&str, &str)]) -> [(u64, Option<Duration>); 3] {
        let mut d = base_240(spec);
        to_the_initial_slowdown(&mut d);
        d.round(ms(240), 2 * MSS);
        d.round(ms(240), 2 * MSS);
        let restored = d.now;
        assert_eq!(d.cc.window(), 49_200);
        let snap = |d: &Driver<LedbatPlusPlus>| (d.cc.window(), d.cc.snapshot().current_delay);
        for _ in 0..10 {
            d.ack_old(ms(1), MSS, ms(420));
        }
        let before = snap(&d);
        d.advance(ms(250));
        d.ack(restored + ms(240) - NS, MSS, ms(420));
        let inside = snap(&d);
        d.advance(ms(1));
        d.ack(restored + ms(240), MSS, ms(420));
        [before, inside, snap(&d)]
    }

    #[test]
    fn skip_rtt_after_restore_ignores_the_round_trip_after_the_restore() {
        // Without the option, q = 180 ms: each 1200-byte ACK removes
        // max(1200·1200/49200 − 2·1200, −600) = −600 bytes.
        let [before, inside, after] = samples_after_restore(&[("restore", "jump")]);
        assert_eq!(before, (49_200 - 10 * 600, Some(ms(420))));
        assert_eq!(inside.0, 49_200 - 11 * 600);
        assert_eq!(after.0, 49_200 - 12 * 600);
        // With it, the samples of packets sent before restore + srtt are
        // ignored (the window does not move either); the first packet sent
        // at restore + srtt counts.
        for spec in [
            &[("restore", "jump"), ("skip_rtt_after_restore", "true")][..],
            &[("profile", "seed")][..],
        ] {
            let [before, inside, after] = samples_after_restore(spec);
            assert_eq!(before, (49_200, Some(ms(240))), "{spec:?}");
            assert_eq!(inside, (49_200, Some(ms(240))), "{spec:?}");
            assert_eq!(after, (49_200 - 600, Some(ms(420))), "{spec:?}");
        }
    }

    #[test]
    fn loss_halves_once_per_recovery_period() {
        let mut d = in_congestion_avoidance_at_48000(ms(125));
        let before_loss = d.now - ms(1);
        d.advance(ms(1));
        d.loss(before_loss);
        let recovery = d.now;
        assert_eq!((state(&d), d.cc.window()), ("recovery", 24_000));
        // A loss of a packet sent before recovery began: no second halving.
        d.advance(ms(1));
        d.loss(recovery);
        assert_eq!(d.cc.window(), 24_000);
        // No increase during recovery, even at q = 0.
        for _ in 0..4 {
            d.ack_old(ms(1), MSS, ms(35));
        }
        assert_eq!((state(&d), d.cc.window()), ("recovery", 24_000));
        // An ACK of a packet sent after recovery began ends it.
        d.advance(ms(1));
        d.ack(recovery + ms(1), MSS, ms(35));
        assert_eq!(state(&d), "congestion_avoidance");
        assert_eq!(d.cc.window(), 24_000 + 300 * MSS / 24_000);
        // A later loss halves again, down to the 2-packet floor.
        for _ in 0..10 {
            d.advance(ms(1));
            let sent = d.now - NS;
            d.loss(sent);
        }
        assert_eq!(d.cc.window(), 2 * MSS);
    }

    #[test]
    fn loss_in_slow_start_ends_it_and_schedules_the_initial_slowdown() {
        let mut d = base_240(&[]);
        d.ack(d.epoch - ms(240), 12_000, ms(240));
        d.round(ms(240), 24_000);
        assert_eq!(d.cc.window(), 48_000);
        d.advance(ms(10));
        d.loss(d.now - ms(5));
        let loss = d.now;
        assert_eq!((state(&d), d.cc.window()), ("recovery", 24_000));
        assert_eq!(d.cc.snapshot().ssthresh, Some(24_000));
        d.advance(ms(230));
        // First round after the loss (the packet was sent after it began).
        d.ack(loss + NS, 24_000, ms(240));
        assert_eq!(state(&d), "congestion_avoidance");
        d.round(ms(240), 24_000); // second: slowdown
        assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
    }

    #[test]
    fn a_delayed_ack_does_not_read_as_queuing_delay() {
        // 50 ms path; every ACK but the first held 25 ms by the peer.
        let run = |reported: Duration| {
            // Slow start exit at 22.5 ms; GAIN 1/CEIL(1.2) = 1/2.
            let mut d = driver(config(&[("target", "30ms"), ("init_cwnd", "10")]));
            d.ack_old(ms(1), MSS, ms(50));
            for _ in 0..20 {
                d.advance(ms(1));
                d.ack_full(d.epoch - ms(1), MSS, ms(75), reported, true, None);
            }
            (d.cc.snapshot(), state(&d))
        };
        let (snap, st) = run(ms(25));
        assert_eq!(snap.base_delay, Some(ms(50)));
        assert_eq!(snap.queuing_delay, Some(Duration::ZERO));
        assert_eq!(st, "slow_start");
        assert_eq!(snap.cwnd, 12_000 + 21 * 600);
        // The same RTTs without the ACK delay: 25 ms of queue, slow start ends.
        let (snap, st) = run(Duration::ZERO);
        assert_eq!(snap.queuing_delay, Some(ms(25)));
        assert_eq!(st, "congestion_avoidance");
    }

    #[test]
    fn persistent_congestion_slow_starts_without_the_delay_exit_and_rollback_restores() {
        let mut d = in_congestion_avoidance_at_48000(ms(125));
        d.cc.checkpoint();
        d.advance(ms(1));
        d.loss(d.now - ms(1));
        d.cc.on_persistent_congestion(d.now);
        assert_eq!(d.cc.window(), 2 * MSS);
        assert!(d.cc.rollback());
        assert_eq!(d.cc.window(), 48_000);
        assert_eq!(state(&d), "congestion_avoidance");
        assert!(!d.cc.rollback(), "one checkpoint, one rollback");
        // Persistent congestion in congestion avoidance: slow start back to
        // ssthresh (48000), and q = 90 ms does not end it.
        d.cc.on_persistent_congestion(d.now);
        assert_eq!((state(&d), d.cc.window()), ("slow_start", 2 * MSS));
        d.ack_old(ms(1), MSS, ms(125));
        assert_eq!((state(&d), d.cc.window()), ("slow_start", 2 * MSS + 300));
        // Application-limited, it does not stay there: R =
        // ceil(log_{5/4}(48000 / 2400)) = 14 rounds, so round 2·R + 1 = 29
        // ends it at the window it has.
        let limited = |d: &mut Driver<LedbatPlusPlus>| {
            let sent = d.last_ack;
            d.advance(ms(35));
            d.ack_full(sent, 100, ms(35), Duration::ZERO, true, Some(100));
        };
        for _ in 0..28 {
            limited(&mut d);
            assert_eq!((state(&d), d.cc.window()), ("slow_start", 2 * MSS + 300));
        }
        limited(&mut d);
        assert_eq!(
            (state(&d), d.cc.window()),
            ("congestion_avoidance", 2 * MSS + 300)
        );
    }

    #[test]
    fn slowdowns_can_be_turned_off() {
        let mut d = base_240(&[("slowdown", "false")]);
        d.ack(d.epoch - ms(240), 12_000, ms(240));
        d.round(ms(240), 24_000);
        d.round(ms(286), 48_000);
        for _ in 0..10 {
            let w = d.cc.window();
            d.round(ms(240), w);
            assert_eq!(state(&d), "congestion_avoidance");
        }
    }

    #[test]
    fn pacing_is_twice_the_window_rate_in_slow_start_and_1_2_times_after() {
        let mut d = base_240(&[]);
        assert_eq!(d.cc.pacing_rate(), None, "no RTT sample yet");
        d.ack(d.epoch - ms(240), 12_000, ms(240));
        // 24000 bytes per 240 ms = 100 kB/s; slow start: 2×.
        assert_eq!(d.cc.pacing_rate(), Some(200_000));
        d.round(ms(240), 24_000);
        d.round(ms(286), 48_000);
        // Congestion avoidance at 48000 bytes, srtt 286 ms: 1.2×.
        assert_eq!(
            d.cc.pacing_rate(),
            Some((1.2 * 48_000.0 / 0.286_f64).round() as u64)
        );
        d.round(ms(240), 48_000);
        d.round(ms(240), 49_200);
        // Slowdown: 1.2 × 2400 / 0.24 s.
        assert_eq!(state(&d), "slowdown");
        assert_eq!(d.cc.pacing_rate(), Some(12_000));
        d.round(ms(240), 2 * MSS);
        d.round(ms(240), 2 * MSS);
        // Ramp-up below ssthresh/2: 2 × 2400 / 0.24 s.
        assert_eq!(state(&d), "ramp_up");
        assert_eq!(d.cc.pacing_rate(), Some(20_000));
        for w in [2_400, 4_800, 9_600] {
            d.round(ms(240), w);
        }
        // 19200 bytes, still below 49200/2: 2 × 19200 / 0.24 s.
        assert_eq!((state(&d), d.cc.window()), ("ramp_up", 19_200));
        assert_eq!(d.cc.pacing_rate(), Some(160_000));
        // 38400 bytes, no longer below 49200/2: 1.2 × 38400 / 0.24 s.
        d.round(ms(240), 19_200);
        assert_eq!((state(&d), d.cc.window()), ("ramp_up", 38_400));
        assert_eq!(d.cc.pacing_rate(), Some(192_000));
    }

    #[test]
    fn profiles_set_the_seed_fixes_and_later_keys_override() {
        let draft = config(&[]);
        assert_eq!(draft.restore(), Restore::SlowStart);
        assert!(!draft.skip_rtt_after_restore());
        assert_eq!(config(&[("profile", "draft")]), draft);
        let seed = config(&[("profile", "seed")]);
        assert_eq!(seed.restore(), Restore::Jump);
        assert!(seed.skip_rtt_after_restore());
        assert_eq!(
            seed,
            config(&[("restore", "jump"), ("skip_rtt_after_restore", "true")])
        );
        let mixed = config(&[("profile", "seed"), ("restore", "slow_start")]);
        assert_eq!(mixed.restore(), Restore::SlowStart);
        assert!(mixed.skip_rtt_after_restore());
        assert_eq!(
            config(&[("skip_rtt_after_restore", "true"), ("profile", "draft")]),
            draft,
            "a profile resets both of its keys"
        );
    }

    /// The initial slowdown of [`base_240`] with `extra`, its freeze's two
    /// rounds at `freeze_rtt` (base 240 ms). Returns the slowdown's start.
    fn through_the_initial_freeze(
        extra: &[(&str, &str)],
        freeze_rtt: Duration,
    ) -> (Driver<LedbatPlusPlus>, Instant) {
        let mut d = base_240(extra);
        let start = to_the_initial_slowdown(&mut d);
        d.round(freeze_rtt, 2 * MSS);
        assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
        d.round(freeze_rtt, 2 * MSS);
        (d, start)
    }

    #[test]
    fn restore_guarded_jumps_only_after_a_freeze_with_an_empty_queue() {
        // q = 15 ms while frozen (the default empty_queue): jump back.
        let (d, _) = through_the_initial_freeze(&[("restore", "guarded")], ms(255));
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 49_200));
        // q = 16 ms: slow start back, as the draft.
        let (d, _) = through_the_initial_freeze(&[("restore", "guarded")], ms(256));
        assert_eq!((state(&d), d.cc.window()), ("ramp_up", 2 * MSS));
        // The threshold is the key empty_queue.
        let spec = [("restore", "guarded"), ("empty_queue", "20ms")];
        let (d, _) = through_the_initial_freeze(&spec, ms(256));
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 49_200));
        // The smallest reading of the freeze counts: 100 ms, then 10 ms.
        let mut d = base_240(&[("restore", "guarded")]);
        to_the_initial_slowdown(&mut d);
        d.round(ms(340), 2 * MSS);
        d.round(ms(250), 2 * MSS);
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 49_200));
        // restore=jump ignores the reading.
        let (d, _) = through_the_initial_freeze(&[("restore", "jump")], ms(340));
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 49_200));
    }

    #[test]
    fn slowdown_duty_schedules_the_next_slowdown_from_the_time_spent() {
        // A jump restore 480 ms after the slowdown began; the next is due
        // at start + clamp(480 ms / duty, period_min, period_max).
        let cases = [
            (&[("slowdown_duty", "0.1")][..], ms(4_800)),
            (
                &[("slowdown_duty", "0.01"), ("slowdown_period_max", "10s")][..],
                ms(10_000),
            ),
            (
                &[("slowdown_duty", "0.5"), ("slowdown_period_min", "2s")][..],
                ms(2_000),
            ),
            // The minimum wins over a smaller maximum.
            (
                &[
                    ("slowdown_duty", "0.5"),
                    ("slowdown_period_min", "3s"),
                    ("slowdown_period_max", "1s"),
                ][..],
                ms(3_000),
            ),
        ];
        for (extra, period) in cases {
            let mut spec = vec![("restore", "jump")];
            spec.extend_from_slice(extra);
            let (mut d, start) = through_the_initial_freeze(&spec, ms(240));
            assert_eq!(d.now - start, ms(480));
            d.ack_old(period - ms(480) - NS, MSS, ms(240));
            assert_eq!(state(&d), "congestion_avoidance", "{extra:?}");
            d.ack_old(NS, MSS, ms(240));
            assert_eq!(
                (state(&d), d.cc.window()),
                ("slowdown", 2 * MSS),
                "{extra:?}"
            );
        }
        // With a ramp-up the time spent includes it: 480 ms + 5 rounds of
        // 240 ms, over 0.1.
        let (mut d, start) = through_the_initial_freeze(&[("slowdown_duty", "0.1")], ms(240));
        for w in [2_400, 4_800, 9_600, 19_200, 38_400] {
            d.round(ms(240), w);
        }
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 49_200));
        assert_eq!(d.now - start, ms(1_680));
        d.ack_old(ms(16_800 - 1_680) - NS, MSS, ms(240));
        assert_eq!(state(&d), "congestion_avoidance");
        d.ack_old(NS, MSS, ms(240));
        assert_eq!(state(&d), "slowdown");
    }

    #[test]
    fn gentle_freeze_holds_half_the_window_after_an_empty_freeze() {
        let spec = [
            ("restore", "guarded"),
            ("gentle_freeze", "true"),
            ("slowdown_duty", "0.1"),
        ];
        // The initial freeze is at 2 packets and reads an empty queue.
        let (mut d, start) = through_the_initial_freeze(&spec, ms(240));
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 49_200));
        d.ack_old(ms(4_800 - 480) - NS, MSS, ms(240));
        let before = d.cc.window();
        d.ack_old(NS, MSS, ms(240));
        assert_eq!(d.now - start, ms(4_800));
        // The periodic freeze after it: half the window.
        assert_eq!((state(&d), d.cc.window()), ("slowdown", before / 2));
        assert_eq!(d.cc.snapshot().ssthresh, Some(before));
        // It reads q = 100 ms (not empty): slow start back from there...
        d.round(ms(340), before / 2);
        d.round(ms(340), before / 2);
        assert_eq!((state(&d), d.cc.window()), ("ramp_up", before / 2));
        d.round(ms(240), before - before / 2);
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", before));
        // ...and the next freeze is a full one.
        for _ in 0..100_000 {
            if state(&d) == "slowdown" {
                break;
            }
            d.ack_old(ms(1), MSS, ms(240));
        }
        assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
    }

    #[test]
    fn loss_on_empty_queue_ignore_keeps_the_window_when_the_queue_is_empty() {
        // GAIN 1/4; each ACK at q <= T adds 300·1200/48000 = 7.5 bytes.
        let run = |extra: &[(&str, &str)]| {
            let mut spec = vec![("current_filter", "1"), ("init_cwnd", "39")];
            spec.extend_from_slice(extra);
            let mut d = driver(config(&spec));
            d.ack_old(ms(1), 4 * MSS, ms(35));
            d.ack_old(ms(1), MSS, ms(125));
            assert_eq!(d.cc.window(), 48_000);
            // q = 15 ms, then a loss.
            d.ack_old(ms(1), MSS, ms(50));
            d.advance(ms(1));
            d.loss(d.now - NS);
            let at_15 = (state(&d), d.cc.window());
            // q = 16 ms, then a loss.
            d.ack_old(ms(1), MSS, ms(51));
            d.advance(ms(1));
            d.loss(d.now - NS);
            (at_15, (state(&d), d.cc.window()))
        };
        assert_eq!(
            run(&[("loss_on_empty_queue", "ignore")]),
            (
                ("congestion_avoidance", 48_007),
                ("recovery", 24_007) // 48015 / 2
            )
        );
        // The draft halves at any queue.
        assert_eq!(run(&[]).0, ("recovery", 24_003));
        assert_eq!(
            run(&[("loss_on_empty_queue", "ignore"), ("empty_queue", "0ms")]).0,
            ("recovery", 24_003)
        );
    }

    /// Base 30 ms (GAIN 1/5), current filter of one: 39 packets, one ACK
    /// of 5 packets (+1200), then q = 90 ms ends slow start at 48000 bytes.
    fn base_30_at_48000(extra: &[(&str, &str)]) -> Driver<LedbatPlusPlus> {
        let mut spec = vec![("current_filter", "1"), ("init_cwnd", "39")];
        spec.extend_from_slice(extra);
        let mut d = driver(config(&spec));
        d.ack_old(ms(1), 5 * MSS, ms(30));
        d.ack_old(ms(1), MSS, ms(120));
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 48_000));
        d
    }

    #[test]
    fn decrease_excess_queue_takes_the_queue_above_target_over_one_rtt() {
        // One round at q = 90 ms, srtt 120 ms; each ACK's share of GAIN·MSS
        // is 240·1200/48000 = 6 bytes.
        let round = |extra: &[(&str, &str)]| {
            let mut d = base_30_at_48000(extra);
            for _ in 0..40 {
                d.ack_old(ms(1), MSS, ms(120));
            }
            d.cc.window()
        };
        // Draft: (q/T − 1) = 1/2 of each acknowledged byte: 6 − 600.
        assert_eq!(round(&[]), 48_000 - 40 * 594);
        // excess_queue: (q − T)/srtt = 30/120 of each byte: 6 − 300.
        assert_eq!(round(&[("decrease", "excess_queue")]), 48_000 - 40 * 294);
    }

    #[test]
    fn target_margin_starts_the_decrease_below_target() {
        // One round at q = 58 ms (srtt 88 ms), 2 ms below T; each ACK's share
        // of GAIN·MSS is 6 bytes.
        let round = |extra: &[(&str, &str)]| {
            let mut d = base_30_at_48000(extra);
            for _ in 0..40 {
                d.ack_old(ms(1), MSS, ms(88));
            }
            d.cc.window()
        };
        // Draft: below T, only the increase.
        assert_eq!(round(&[]), 48_000 + 40 * 6);
        // 4 ms margin: the decrease applies above 56 ms, per T as the draft:
        // 6 − 1200·(58 − 56)/60 = −34 a byte.
        assert_eq!(round(&[("target_margin", "4ms")]), 48_000 - 40 * 34);
        // With excess_queue, per srtt: 6 − 1200·2/88 = −21.27…
        assert_eq!(
            round(&[("target_margin", "4ms"), ("decrease", "excess_queue")]),
            47_149
        );
        // A margin above T is T: every queue decreases.
        let mut d = base_30_at_48000(&[("target_margin", "1s")]);
        d.ack_old(ms(1), MSS, ms(30));
        assert_eq!(d.cc.window(), 48_000 + 6);
        d.ack_old(ms(1), MSS, ms(31));
        // 6 − 1200·1/60 = −14.
        assert_eq!(d.cc.window(), 48_000 + 6 - 14);
    }

    #[test]
    fn pacing_rtt_current_paces_over_the_current_delay_when_smaller() {
        let run = |extra: &[(&str, &str)]| {
            let mut spec = vec![("current_filter", "2"), ("init_cwnd", "40")];
            spec.extend_from_slice(extra);
            let mut d = driver(config(&spec));
            // Initial slow start, base 30 ms, GAIN 1/5 (240 bytes an ACK);
            // the second sample (70 ms) leaves the current delay at 30 ms.
            d.ack_old(ms(1), MSS, ms(30));
            let first = (d.cc.window(), d.cc.pacing_rate());
            d.ack_old(ms(1), MSS, ms(70));
            (first, (d.cc.window(), d.cc.pacing_rate()))
        };
        let rate =
            |ratio: f64, cwnd: u64, rtt_s: f64| Some((ratio * cwnd as f64 / rtt_s).round() as u64);
        assert_eq!(
            run(&[]),
            (
                (48_240, rate(2.0, 48_240, 0.030)),
                (48_480, rate(2.0, 48_480, 0.070))
            )
        );
        assert_eq!(
            run(&[("pacing_rtt", "current")]),
            (
                (48_240, rate(2.0, 48_240, 0.030)),
                (48_480, rate(2.0, 48_480, 0.030))
            )
        );
    }

    #[test]
    fn fill_empty_queue_grows_by_gain_per_byte_and_paces_at_twice_the_rate() {
        let run = |extra: &[(&str, &str)]| {
            let mut d = base_30_at_48000(extra);
            // q = 15 ms (empty), then q = 16 ms.
            d.ack_old(ms(1), MSS, ms(45));
            let empty = (d.cc.window(), d.cc.pacing_rate());
            d.ack_old(ms(1), MSS, ms(46));
            (empty, (d.cc.window(), d.cc.pacing_rate()))
        };
        let rate =
            |ratio: f64, cwnd: u64, rtt_s: f64| Some((ratio * cwnd as f64 / rtt_s).round() as u64);
        // Without it: 6 bytes per 1200-byte ACK, 1.2 × cwnd / srtt.
        assert_eq!(
            run(&[]),
            (
                (48_006, rate(1.2, 48_006, 0.045)),
                (48_012, rate(1.2, 48_012, 0.046))
            )
        );
        // With it, at the empty queue: one byte per byte, 2 × cwnd / current
        // delay; above empty_queue the draft's rule again.
        assert_eq!(
            run(&[("fill_empty_queue", "true")]),
            (
                (49_200, rate(2.0, 49_200, 0.045)),
                (49_206, rate(1.2, 49_206, 0.046))
            )
        );
    }

    #[test]
    fn fill_empty_queue_waits_fill_quiet_after_any_loss() {
        let spec = [
            ("fill_empty_queue", "true"),
            ("loss_on_empty_queue", "ignore"),
        ];
        let mut d = base_30_at_48000(&spec);
        d.ack_old(ms(1), MSS, ms(45));
        assert_eq!(d.cc.window(), 49_200);
        // A loss at q = 15 ms: ignored for the window, but it is a loss.
        d.advance(ms(1));
        d.loss(d.now - NS);
        let loss = d.now;
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 49_200));
        // For 2 s (the default fill_quiet) the draft's 6 bytes per ACK.
        d.ack_old(ms(1), MSS, ms(45));
        assert_eq!(d.cc.window(), 49_206);
        d.ack_old(ms(2_000) - ms(1) - NS, MSS, ms(45));
        assert_eq!(d.now - loss, ms(2_000) - NS);
        assert_eq!(d.cc.window(), 49_212);
        d.ack_old(NS, MSS, ms(45));
        assert_eq!(d.cc.window(), 49_212 + 1_200);
    }

    #[test]
    fn fill_window_limited_fills_only_on_packets_sent_with_the_window_full() {
        let mut d = driver(config(&[
            ("current_filter", "1"),
            ("init_cwnd", "39"),
            ("slowdown", "false"),
            ("fill_empty_queue", "true"),
            ("fill_window_limited", "true"),
        ]));
        let start = d.now;
        // The whole window (39 packets) goes out at the start.
        d.cc.on_packet_sent(start, MSS, 38 * MSS);
        d.ack_old(ms(1), 5 * MSS, ms(30));
        d.ack_old(ms(1), MSS, ms(120));
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 48_000));
        // q = 15 ms (empty), for a packet sent before the window was full:
        // the draft's 6 bytes.
        d.ack_old(ms(1), MSS, ms(45));
        assert_eq!(d.cc.window(), 48_006);
        // For one sent with it full: one byte per byte.
        d.advance(ms(1));
        d.ack(start, MSS, ms(45));
        assert_eq!(d.cc.window(), 49_206);
        // A packet that leaves less than 4/5 of the window in flight: no
        // fill, even for packets sent before it.
        d.cc.on_packet_sent(d.now, MSS, 30_000);
        d.advance(ms(1));
        d.ack(start, MSS, ms(45));
        assert_eq!(d.cc.window(), 49_212);
        // Full again (4/5 is 39_370 bytes) from `full`: packets sent from
        // then on fill.
        let full = d.now;
        d.cc.on_packet_sent(full, MSS, 38_400);
        d.advance(ms(1));
        d.ack(start, MSS, ms(45));
        assert_eq!(d.cc.window(), 49_218);
        d.ack(full, MSS, ms(45));
        assert_eq!(d.cc.window(), 50_418);
    }

    #[test]
    fn profile_full_sets_its_options_and_a_profile_resets_them() {
        let full = config(&[("profile", "full")]);
        assert_eq!(
            full,
            config(&[
                ("restore", "guarded"),
                ("skip_rtt_after_restore", "true"),
                ("slowdown_duty", "0.02"),
                ("slowdown_period_min", "10s"),
                ("slowdown_period_max", "60s"),
                ("loss_on_empty_queue", "ignore"),
                ("decrease", "excess_queue"),
                ("fill_empty_queue", "true"),
                ("decrease_constant", "0.25"),
                ("target_margin", "4ms"),
                ("pacing_rtt", "current"),
                ("fill_window_limited", "true"),
            ])
        );
        assert_eq!(
            config(&[("profile", "full"), ("profile", "draft")]),
            config(&[])
        );
        assert_eq!(
            config(&[("profile", "full"), ("profile", "seed")]),
            config(&[("profile", "seed")])
        );
        let mixed = config(&[("profile", "full"), ("restore", "jump")]);
        assert_eq!(mixed.restore(), Restore::Jump);
        assert_eq!(mixed.loss_on_empty_queue, EmptyQueueLoss::Ignore);
        // The draft's C is a key of its own, which profile=full sets.
        let c = config(&[("decrease_constant", "0.5"), ("profile", "full")]);
        assert_eq!(c.decrease_constant, FULL_DECREASE_CONSTANT);
        let c = config(&[("profile", "full"), ("decrease_constant", "0.5")]);
        assert_eq!(c.decrease_constant, 0.5);
    }

    #[test]
    fn spec_keys_are_checked() {
        let mut cfg = LedbatPlusPlusConfig::default();
        cfg.set("target", "25ms").unwrap();
        assert_eq!(cfg.target(), ms(25));
        let err = |cfg: &mut LedbatPlusPlusConfig, k: &str, v: &str| {
            cfg.set(k, v).unwrap_err().to_string()
        };
        assert_eq!(
            err(&mut cfg, "target", "0ms"),
            "bad value '0ms' for 'target': expected a duration with a unit (e.g. 60ms) from 1ms to 1s"
        );
        assert_eq!(
            err(&mut cfg, "restore", "teleport"),
            "bad value 'teleport' for 'restore': expected one of slow_start, jump, guarded"
        );
        assert_eq!(
            err(&mut cfg, "slowdown_duty", "0.6"),
            "bad value '0.6' for 'slowdown_duty': expected a number from 0.001 to 0.5"
        );
        assert_eq!(
            err(&mut cfg, "slowdown_period_max", "0s"),
            "bad value '0s' for 'slowdown_period_max': expected a duration with a unit (e.g. 60ms) from 1s to 600s"
        );
        assert_eq!(
            err(&mut cfg, "loss_on_empty_queue", "retry"),
            "bad value 'retry' for 'loss_on_empty_queue': expected one of halve, ignore"
        );
        assert!(cfg.set("empty_queue", "2s").is_err());
        assert!(cfg.set("gentle_freeze", "half").is_err());
        assert_eq!(
            err(&mut cfg, "profile", "rfc"),
            "bad value 'rfc' for 'profile': expected one of draft, seed, full"
        );
        assert_eq!(
            err(&mut cfg, "init_cwnd", "0"),
            "bad value '0' for 'init_cwnd': expected a whole number from 1 to 1000"
        );
        assert_eq!(
            err(&mut cfg, "slowdown_interval", "0"),
            "bad value '0' for 'slowdown_interval': expected a whole number from 1 to 1000"
        );
        assert_eq!(
            err(&mut cfg, "slowdown_rtts", "17"),
            "bad value '17' for 'slowdown_rtts': expected a whole number from 1 to 16"
        );
        assert_eq!(
            err(&mut cfg, "decrease_constant", "NaN"),
            "bad value 'NaN' for 'decrease_constant': expected a number from 0.01 to 100"
        );
        assert!(cfg.set("gain_divisor_max", "0").is_err());
        assert!(cfg.set("ss_exit", "1.5").is_err());
        assert!(cfg.set("ss_exit", "inf").is_err());
        assert!(cfg.set("current_filter", "0").is_err());
        assert!(cfg.set("initial_slowdown_rtts", "0").is_err());
        assert_eq!(cfg, config(&[("target", "25ms")]), "errors change nothing");
        let e = err(&mut cfg, "gain", "1");
        assert!(
            e.starts_with("unknown parameter 'gain' for 'ledbatpp' (allowed: profile, target, "),
            "{e}"
        );
        assert!(e.contains("skip_rtt_after_restore"), "{e}");
    }

    #[test]
    fn deference_none_grows_above_target_and_delay_only_still_decreases() {
        // As one_round_at_one_and_a_half_target_halves_and_adds_gain: one
        // round at q = 1.5·T. Without deference the decrease is gone and
        // the round adds GAIN·MSS; DelayOnly keeps the draft's rule.
        let mut d = in_congestion_avoidance_at_48000(ms(125));
        d.cc.set_deference(Deference::None);
        for _ in 0..40 {
            d.ack_old(ms(1), MSS, ms(125));
        }
        assert_eq!(d.cc.window(), 48_000 + 300);
        let mut d = in_congestion_avoidance_at_48000(ms(125));
        d.cc.set_deference(Deference::DelayOnly);
        for _ in 0..40 {
            d.ack_old(ms(1), MSS, ms(125));
        }
        assert_eq!(d.cc.window(), 24_300);
    }

    #[test]
    fn a_slowdown_due_waits_until_full_deference_is_back() {
        // The initial slowdown is due at the second round end after the
        // initial slow start; held, it starts at the first round end once
        // the deference is Full again.
        let mut d = in_congestion_avoidance_at_48000(ms(125));
        d.cc.set_deference(Deference::DelayOnly);
        for _ in 0..4 {
            d.round(ms(35), MSS);
            assert_eq!(state(&d), "congestion_avoidance");
        }
        d.cc.set_deference(Deference::Full);
        d.round(ms(35), MSS);
        assert_eq!((state(&d), d.cc.window()), ("slowdown", 2 * MSS));
    }

    #[test]
    fn slow_start_to_grows_one_byte_per_byte_from_congestion_avoidance_only() {
        // Not in the initial slow start (it is growing already).
        let mut d = driver(config(&[]));
        assert!(!d.cc.slow_start_to(100_000));
        let mut d = in_congestion_avoidance_at_48000(ms(125));
        assert!(!d.cc.slow_start_to(48_000), "not below the window");
        assert!(d.cc.slow_start_to(60_000));
        assert_eq!(
            (state(&d), d.cc.snapshot().ssthresh),
            ("slow_start", Some(60_000))
        );
        // One byte per byte acknowledged (GAIN is 1/4), not left on the
        // queue of 1.5·T; at ssthresh, back to congestion avoidance.
        d.ack_old(ms(1), MSS, ms(125));
        assert_eq!(d.cc.window(), 49_200);
        for _ in 0..9 {
            d.ack_old(ms(1), MSS, ms(125));
        }
        assert_eq!((state(&d), d.cc.window()), ("congestion_avoidance", 60_000));
        // Again from congestion avoidance; not during a recovery.
        assert!(d.cc.slow_start_to(70_000));
        d.loss(d.now);
        assert_eq!((state(&d), d.cc.window()), ("recovery", 30_000));
        assert!(!d.cc.slow_start_to(70_000));
    }
}
