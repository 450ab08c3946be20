//! A run's configuration: the scenario's bottleneck and flows with the
//! simulator's own settings.

use std::time::Duration;

/// A run: a scenario's bottleneck and flows (`lbe-scenario`'s model, as
/// `lbe-lab` checked them) with the simulator's own settings.
#[derive(Clone, Debug)]
pub struct Config {
    /// The bottleneck: its rate, buffer and random loss (and the base RTT
    /// of flows that do not set their own), and the client->server
    /// direction (`reverse_rate`, `reverse_buffer`, `reverse_loss`). Cross
    /// traffic is not simulated.
    pub link: lbe_scenario::Link,
    /// The flows through it: bulk transfers, each with its sender's
    /// controller ([`lbe_scenario::Flow::sender_cc`]) as a quic-bulk
    /// download or upload ([`lbe_scenario::Flow::direction`]) or an HTTP/3
    /// download, with its endpoints' clocks; and foreground workloads.
    pub flows: Vec<lbe_scenario::Flow>,
    /// The analysis window; the whole run when `None`.
    pub window: Option<(Duration, Duration)>,
    /// Seeds the bottleneck's random loss and the endpoints' wake-up
    /// latencies.
    pub seed: u64,
    /// How long, on average, an endpoint's event loop takes to wake after a
    /// datagram arrives (each wake-up draws from an exponential distribution
    /// with this mean): it then handles everything that arrived meanwhile (the
    /// receiver acknowledges it with one ACK, the sender takes every ACK in
    /// before it sends again). See [`crate::HOST_LATENCY`].
    pub host_latency: Duration,
    /// Also write each flow's events as a qlog file (the sender's) into this
    /// directory, named as our apps name theirs (`lbe_cc::qlog_name`).
    pub qlog_dir: Option<std::path::PathBuf>,
}

#[cfg(test)]
impl Config {
    /// The scenario written in `text` (a scenario file's TOML) as this
    /// crate's tests run it: its link, flows, analysis window and seed (1
    /// where it sets none, as `lbe-lab` simulates it), the default host
    /// latency, and no qlog files.
    pub(crate) fn of_scenario_text(text: &str) -> Self {
        let s = lbe_scenario::parse(std::path::Path::new("s.toml"), text).unwrap();
        Self {
            link: s.link,
            flows: s.flows,
            window: s.window,
            seed: s.seed.unwrap_or(1),
            host_latency: crate::host_latency::HOST_LATENCY,
            qlog_dir: None,
        }
    }
}
