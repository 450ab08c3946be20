//! Bursty loss: the Gilbert–Elliott channel.
//!
//! The classic four-parameter model (E. N. Gilbert, "Capacity of a
//! burst-noise channel", 1960; E. O. Elliott, "Estimates of error rates for
//! codes on burst-noise channels", 1963), in the convention of
//! G. Hasslinger and O. Hohlfeld, "The Gilbert-Elliott Model for Packet Loss
//! in Real Time Services on the Internet" (MMB 2008), which Linux netem's
//! `loss gemodel p r 1-h 1-k` takes too:
//!
//! - two states, Good and Bad; the channel starts Good;
//! - `p` = P(Good → Bad), `r` = P(Bad → Good), per datagram;
//! - `k` = P(a datagram gets through | Good): `1 - k` is the loss
//!   probability in the Good state;
//! - `h` = P(a datagram gets through | Bad): `1 - h` is the loss probability
//!   in the Bad state.
//!
//! Per datagram: it is lost or not according to the state the channel is in
//! when it arrives, then the channel moves. The stationary share of the Bad
//! state is `p / (p + r)`, so the long-run loss rate is
//! `(r (1 - k) + p (1 - h)) / (p + r)` ([`GilbertElliott::loss_rate`]).
//! With `k = 1, h = 0` it is Gilbert's original two-state model (every
//! datagram in Bad is lost; mean burst `1 / r` datagrams).

use std::fmt;

/// The four parameters, each a probability in [0, 1].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GilbertElliott {
    /// P(Good → Bad) per datagram.
    pub p: f64,
    /// P(Bad → Good) per datagram.
    pub r: f64,
    /// P(no loss | Bad): `1 - h` is the loss probability in Bad.
    pub h: f64,
    /// P(no loss | Good): `1 - k` is the loss probability in Good.
    pub k: f64,
}

impl GilbertElliott {
    /// Checks that each parameter is a probability, and that the chain can
    /// leave Good or the Good state loses nothing (else nothing is defined
    /// to measure): a one-line error naming the parameter otherwise.
    pub fn new(p: f64, r: f64, h: f64, k: f64) -> Result<Self, String> {
        for (name, v) in [("p", p), ("r", r), ("h", h), ("k", k)] {
            if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
                return Err(format!(
                    "Gilbert-Elliott {name} = {v} is not a probability: it must be between 0 and 1"
                ));
            }
        }
        Ok(Self { p, r, h, k })
    }

    /// The long-run loss rate: `(r (1 - k) + p (1 - h)) / (p + r)`; the
    /// Good state's `1 - k` when the chain never moves (`p = r = 0`).
    pub fn loss_rate(&self) -> f64 {
        if self.p + self.r == 0.0 {
            return 1.0 - self.k;
        }
        (self.r * (1.0 - self.k) + self.p * (1.0 - self.h)) / (self.p + self.r)
    }
}

impl fmt::Display for GilbertElliott {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ge:p={},r={},h={},k={}", self.p, self.r, self.h, self.k)
    }
}

/// Parses `ge:p=0.01,r=0.3,h=0,k=1` (the order is free; `h` defaults to 0
/// and `k` to 1, Gilbert's model, as netem's `gemodel` defaults them; `p`
/// and `r` are required).
pub fn parse_gilbert_elliott(s: &str) -> Result<GilbertElliott, String> {
    const FORMS: &str = "expected ge:p=P,r=R[,h=H][,k=K] with probabilities between 0 and 1 \
                         (1-k: loss in Good, 1-h: loss in Bad; h defaults to 0, k to 1)";
    let t = s.trim();
    let Some(rest) = t.strip_prefix("ge:") else {
        return Err(format!("bad loss model '{s}': {FORMS}"));
    };
    let (mut p, mut r, mut h, mut k) = (None, None, None, None);
    for part in rest.split(',') {
        let Some((name, value)) = part.split_once('=') else {
            return Err(format!(
                "bad loss model '{s}': '{part}' is not NAME=VALUE; {FORMS}"
            ));
        };
        let slot = match name.trim() {
            "p" => &mut p,
            "r" => &mut r,
            "h" => &mut h,
            "k" => &mut k,
            other => {
                return Err(format!(
                    "bad loss model '{s}': unknown parameter '{other}'; {FORMS}"
                ))
            }
        };
        if slot.is_some() {
            return Err(format!(
                "bad loss model '{s}': '{}' given twice",
                name.trim()
            ));
        }
        let v = value.trim().parse::<f64>().map_err(|_| {
            format!(
                "bad loss model '{s}': '{}' is not a number; {FORMS}",
                value.trim()
            )
        })?;
        *slot = Some(v);
    }
    let (Some(p), Some(r)) = (p, r) else {
        return Err(format!(
            "bad loss model '{s}': p and r are required; {FORMS}"
        ));
    };
    GilbertElliott::new(p, r, h.unwrap_or(0.0), k.unwrap_or(1.0))
        .map_err(|e| format!("bad loss model '{s}': {e}"))
}

/// The channel's state machine; the caller supplies the uniform draws, so
/// that tests can drive it exactly ([`crate::Link`] draws from its seeded
/// generator).
#[derive(Clone, Debug)]
pub struct GeChannel {
    params: GilbertElliott,
    bad: bool,
}

impl GeChannel {
    /// A channel in the Good state.
    pub fn new(params: GilbertElliott) -> Self {
        Self { params, bad: false }
    }

    /// Whether the channel is in the Bad state now.
    pub fn is_bad(&self) -> bool {
        self.bad
    }

    /// One datagram: `u_loss` and `u_move` uniform in [0, 1). It is lost if
    /// `u_loss < 1 - k` (Good) or `u_loss < 1 - h` (Bad); then the channel
    /// moves Good → Bad if `u_move < p`, Bad → Good if `u_move < r`.
    /// Returns whether it is lost.
    pub fn step(&mut self, u_loss: f64, u_move: f64) -> bool {
        let g = &self.params;
        let (loss, leave) = if self.bad {
            (1.0 - g.h, g.r)
        } else {
            (1.0 - g.k, g.p)
        };
        let lost = u_loss < loss;
        if u_move < leave {
            self.bad = !self.bad;
        }
        lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_four_parameters_and_defaults_h_and_k() {
        assert_eq!(
            parse_gilbert_elliott("ge:p=0.01,r=0.3,h=0.2,k=0.99"),
            Ok(GilbertElliott {
                p: 0.01,
                r: 0.3,
                h: 0.2,
                k: 0.99
            })
        );
        assert_eq!(
            parse_gilbert_elliott("ge:r=0.5,p=0.1"),
            Ok(GilbertElliott {
                p: 0.1,
                r: 0.5,
                h: 0.0,
                k: 1.0
            })
        );
        for (bad, why) in [
            ("p=0.1,r=0.5", "expected ge:"),
            ("ge:p=0.1", "p and r are required"),
            ("ge:p=1.5,r=0.5", "p = 1.5 is not a probability"),
            ("ge:p=0.1,r=-0.5", "r = -0.5 is not a probability"),
            ("ge:p=0.1,r=0.5,x=1", "unknown parameter 'x'"),
            ("ge:p=0.1,p=0.2,r=0.5", "'p' given twice"),
            ("ge:p=0.1,r=abc", "'abc' is not a number"),
            ("ge:p=0.1,r", "'r' is not NAME=VALUE"),
            ("ge:p=NaN,r=0.5", "not a probability"),
        ] {
            let e = parse_gilbert_elliott(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn the_state_machine_step_by_step() {
        // p = 0.2, r = 0.4, loss 1-k = 0.1 in Good, 1-h = 0.7 in Bad.
        let mut ch = GeChannel::new(GilbertElliott::new(0.2, 0.4, 0.3, 0.9).unwrap());
        // (u_loss, u_move) -> (lost, bad afterwards)
        let steps = [
            ((0.05, 0.5), (true, false)),  // Good: 0.05 < 0.1 lost; 0.5 >= 0.2 stays
            ((0.1, 0.19), (false, true)),  // Good: 0.1 not < 0.1; 0.19 < 0.2 -> Bad
            ((0.69, 0.4), (true, true)),   // Bad: 0.69 < 0.7 lost; 0.4 not < 0.4 stays
            ((0.7, 0.39), (false, false)), // Bad: 0.7 not < 0.7; 0.39 < 0.4 -> Good
            ((0.5, 0.0), (false, true)),   // Good: kept; 0 < 0.2 -> Bad
            ((0.0, 0.99), (true, true)),   // Bad: lost; stays
        ];
        for (i, ((ul, um), (lost, bad))) in steps.into_iter().enumerate() {
            assert_eq!(ch.step(ul, um), lost, "step {i}");
            assert_eq!(ch.is_bad(), bad, "step {i}");
        }
    }

    #[test]
    fn the_stationary_loss_rate() {
        // Bad share 0.01 / (0.01 + 0.3) = 0.0323; loss 0.0323 (h = 0).
        let g = GilbertElliott::new(0.01, 0.3, 0.0, 1.0).unwrap();
        assert!((g.loss_rate() - 0.01 / 0.31).abs() < 1e-15);
        let g = GilbertElliott::new(0.2, 0.4, 0.3, 0.9).unwrap();
        // (0.4 * 0.1 + 0.2 * 0.7) / 0.6 = 0.3
        assert!((g.loss_rate() - 0.3).abs() < 1e-12);
        assert_eq!(
            GilbertElliott::new(0.0, 0.0, 0.5, 0.75)
                .unwrap()
                .loss_rate(),
            0.25
        );
    }

    proptest::proptest! {
        #[test]
        fn the_parser_never_panics(s in "\\PC{0,30}") {
            let _ = parse_gilbert_elliott(&s);
        }
    }
}
