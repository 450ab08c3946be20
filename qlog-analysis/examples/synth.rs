//! Write a few synthetic sender traces into a directory, to try the CLI on:
//! `cargo run --example synth -- /tmp/run && qlog-analysis report /tmp/run --out /tmp/run/report.html`

use qlog_analysis::synth::{epoch_plus, write_sender_file, SynthFlow};

fn main() -> std::io::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "synth-run".into());
    let dir = std::path::Path::new(&dir);
    std::fs::create_dir_all(dir)?;
    // `synth DIR SECONDS`: one long 20 Mbit/s flow instead (for memory and speed checks).
    if let Some(secs) = std::env::args().nth(2).and_then(|s| s.parse::<f64>().ok()) {
        let flow = SynthFlow {
            rate_bps: 20e6,
            duration_s: secs,
            loss_every: 200,
            slowdown_every_s: 5.0,
            ..Default::default()
        };
        let truth = write_sender_file(&flow, &dir.join("long-server-ledbatpp.sqlog"))?;
        println!(
            "long-server-ledbatpp.sqlog: {} bytes acked, {} events",
            truth.bytes_acked, truth.events
        );
        return Ok(());
    }
    let flows = [
        (
            "1-server-ledbatpp.sqlog",
            SynthFlow {
                rate_bps: 6e6,
                duration_s: 40.0,
                slowdown_every_s: 6.0,
                loss_every: 400,
                queue_ms: 50.0,
                wall_clock: Some(epoch_plus(0.0)),
                ..Default::default()
            },
        ),
        (
            "2-server-cubic.sqlog",
            SynthFlow {
                rate_bps: 13e6,
                duration_s: 30.0,
                queue_ms: 120.0,
                queue_period_s: 3.0,
                loss_every: 150,
                wall_clock: Some(epoch_plus(10.0)),
                ..Default::default()
            },
        ),
    ];
    for (name, flow) in flows {
        let truth = write_sender_file(&flow, &dir.join(name))?;
        println!(
            "{name}: {} bytes acked, {} events",
            truth.bytes_acked, truth.events
        );
    }
    std::fs::write(
        dir.join("scenario.toml"),
        "[link]\nrate = \"20mbit\"\nrtt = \"40ms\"\nbuffer = \"500ms\"\n[analysis]\nfrom = \"10s\"\nto = \"40s\"\n\
         [[flow]]\ncc = \"ledbatpp\"\nstart = \"0s\"\nstop = \"40s\"\n[[flow]]\ncc = \"cubic\"\nstart = \"10s\"\nstop = \"40s\"\n",
    )?;
    Ok(())
}
