//! Parameter-sweep figures: a metric against a swept parameter, one line
//! per series (mean over repetitions, with the min–max range as a band),
//! and reference points (a paper's numbers) beside them.

use plotters::prelude::*;

use crate::error::{Error, Result};
use crate::plot::PALETTE;

/// One line of an x–y figure.
#[derive(Debug, Clone, PartialEq)]
pub struct XySeries {
    /// Legend label.
    pub label: String,
    /// (x, mean, min, max), ascending in x.
    pub points: Vec<(f64, f64, f64, f64)>,
}

/// An x–y figure.
#[derive(Debug, Clone, PartialEq)]
pub struct XyChart {
    /// Title drawn above the plot.
    pub title: String,
    /// The x axis' title (with its unit).
    pub x_desc: String,
    /// The y axis' title (with its unit).
    pub y_desc: String,
    /// The lines, one per series.
    pub series: Vec<XySeries>,
    /// Reference points drawn as black crosses, e.g. a paper's figure.
    pub reference: Option<(String, Vec<(f64, f64)>)>,
    /// Logarithmic x axis (RTTs from 10 to 400 ms, rates from 1 to 40 Mbit/s).
    pub log_x: bool,
}

fn range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(v), h.max(v))
        });
    (lo <= hi).then_some((lo, hi))
}

fn draw_err(e: impl std::fmt::Display) -> Error {
    Error::Invalid(format!("cannot draw the figure: {e}"))
}

/// Renders `chart` as SVG.
pub fn draw(chart: &XyChart, width: u32, height: u32) -> Result<String> {
    let refs = chart.reference.iter().flat_map(|(_, p)| p.iter());
    let xs = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .chain(refs.clone().map(|p| p.0));
    let ys = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().flat_map(|p| [p.2, p.3]))
        .chain(refs.map(|p| p.1));
    let (x0, x1) = range(xs).ok_or_else(|| Error::Invalid("nothing to plot".into()))?;
    let (_, y1) = range(ys).ok_or_else(|| Error::Invalid("nothing to plot".into()))?;
    let y1 = if y1 > 0.0 { y1 * 1.08 } else { 1.0 };
    let (x0, x1) = if x1 > x0 {
        (x0, x1)
    } else {
        (x0 - 0.5, x1 + 0.5)
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let mut builder = ChartBuilder::on(&root);
        builder
            .caption(&chart.title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60);
        macro_rules! body {
            ($ctx:expr) => {{
                let mut ctx = $ctx;
                ctx.configure_mesh()
                    .light_line_style(WHITE)
                    .x_label_formatter(&|v| format!("{}", (v * 1000.0).round() / 1000.0))
                    .x_desc(chart.x_desc.as_str())
                    .y_desc(chart.y_desc.as_str())
                    .draw()
                    .map_err(draw_err)?;
                for (i, s) in chart.series.iter().enumerate() {
                    let color = PALETTE[i % PALETTE.len()];
                    let band: Vec<(f64, f64)> = s
                        .points
                        .iter()
                        .map(|p| (p.0, p.3))
                        .chain(s.points.iter().rev().map(|p| (p.0, p.2)))
                        .collect();
                    ctx.draw_series(std::iter::once(Polygon::new(band, color.mix(0.15))))
                        .map_err(draw_err)?;
                    ctx.draw_series(LineSeries::new(
                        s.points.iter().map(|p| (p.0, p.1)),
                        color.stroke_width(2),
                    ))
                    .map_err(draw_err)?
                    .label(s.label.as_str())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                    });
                    ctx.draw_series(
                        s.points
                            .iter()
                            .map(|p| Circle::new((p.0, p.1), 3, color.filled())),
                    )
                    .map_err(draw_err)?;
                }
                if let Some((label, points)) = &chart.reference {
                    ctx.draw_series(
                        points
                            .iter()
                            .map(|&(x, y)| Cross::new((x, y), 5, BLACK.stroke_width(2))),
                    )
                    .map_err(draw_err)?
                    .label(label.as_str())
                    .legend(|(x, y)| Cross::new((x + 9, y), 5, BLACK.stroke_width(2)));
                }
                ctx.configure_series_labels()
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK.mix(0.3))
                    .position(SeriesLabelPosition::LowerRight)
                    .draw()
                    .map_err(draw_err)?;
            }};
        }
        if chart.log_x && x0 > 0.0 {
            body!(builder
                .build_cartesian_2d((x0 * 0.9..x1 * 1.1).log_scale(), 0.0..y1)
                .map_err(draw_err)?);
        } else {
            body!(builder
                .build_cartesian_2d(x0..x1, 0.0..y1)
                .map_err(draw_err)?);
        }
        root.present().map_err(draw_err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_series_and_reference() {
        let chart = XyChart {
            title: "Solo rate".into(),
            x_desc: "base RTT (ms)".into(),
            y_desc: "Mbit/s".into(),
            series: vec![XySeries {
                label: "ledbatpp".into(),
                points: vec![(10.0, 17.0, 16.5, 17.5), (100.0, 17.5, 17.0, 18.0)],
            }],
            reference: Some(("seed Fig. 2".into(), vec![(10.0, 18.0)])),
            log_x: true,
        };
        let svg = draw(&chart, 640, 360).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("ledbatpp") && svg.contains("seed Fig. 2"));
    }

    #[test]
    fn nothing_to_plot_is_an_error() {
        let chart = XyChart {
            title: String::new(),
            x_desc: String::new(),
            y_desc: String::new(),
            series: vec![],
            reference: None,
            log_x: false,
        };
        assert!(draw(&chart, 100, 100).is_err());
    }
}
