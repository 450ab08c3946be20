//! Writes a seeded cellular-like trace in Mahimahi's format to stdout
//! (`lbe_link::trace_gen`): `lbe-trace-gen MEAN_RATE VOLATILITY REVERSION
//! OUTAGES_PER_MINUTE OUTAGE DURATION SEED`, e.g.
//! `lbe-trace-gen 10mbit 0.3 0.1 2 1s 120s 1`.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use lbe_link::trace_gen::{generate, CellularProfile};

fn profile(args: &[String]) -> Result<(CellularProfile, u64), String> {
    let [rate, vol, rev, per_min, outage, duration, seed] = args else {
        return Err(
            "usage: lbe-trace-gen MEAN_RATE VOLATILITY REVERSION OUTAGES_PER_MINUTE OUTAGE DURATION SEED"
                .into(),
        );
    };
    let num = |s: &str, what: &str| -> Result<f64, String> {
        s.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("bad {what} '{s}': expected a number, at least 0"))
    };
    Ok((
        CellularProfile {
            mean_rate_bps: lbe_units::parse_rate(rate)?,
            volatility: num(vol, "volatility")?,
            reversion: num(rev, "reversion")?.min(1.0),
            outages_per_minute: num(per_min, "outages per minute")?,
            outage: lbe_units::parse_duration(outage)?,
            duration: lbe_units::parse_duration(duration)?,
        },
        seed.parse().map_err(|_| format!("bad seed '{seed}'"))?,
    ))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match profile(&args) {
        Ok((p, seed)) => {
            print!("{}", generate(&p, seed));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("lbe-trace-gen: {e}");
            ExitCode::from(2)
        }
    }
}
